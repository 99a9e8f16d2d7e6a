// The one kernel of the conditional graph module, compiled apart from the others so a driver
// without conditional graph nodes (CUDA < 12.3) still loads every other kernel: it starts a
// time step inside a CUDA graph by advancing the device step clock and setting the IF node
// that holds the neighbour-list rebuild from the skin test's flag (set by integrate_first).
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);

extern "C" __global__ void step_begin_if(unsigned long long* clock, const int* flags, cudaGraphConditionalHandle h) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        clock[0] += 1;
        cudaGraphSetConditional(h, flags[0] != 0 ? 1u : 0u);
    }
}
