// The one kernel of the conditional graph module, compiled apart from the others so a driver
// without conditional graph nodes (CUDA < 12.3) still loads every other kernel: it starts a
// time step inside a CUDA graph by advancing the device step clock and setting the IF node
// that holds the neighbour-list rebuild from the skin test's flag (set by the integrator).
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);

// With the flag set it also does what rebuild_done does after a rebuild launched without a
// graph: clears the flag (flags[0], FLAG_REBUILD) and counts the build (flags[3],
// FLAG_BUILDS), so the node's body runs ungated and one launch shorter; the skin test that
// sets the flag again comes after the body.
extern "C" __global__ void step_begin_if(unsigned long long* clock, int* flags, cudaGraphConditionalHandle h) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        clock[0] += 1;
        bool rebuild = flags[0] != 0;
        cudaGraphSetConditional(h, rebuild ? 1u : 0u);
        if (rebuild) {
            flags[0] = 0;
            flags[3] += 1;
        }
    }
}
