// The obstacle forces and surface friction (surface.cuh) as a pass of their own over every
// atom slot, just before the force kernel, whose epilogue adds them in: surface_pass, or
// obstacle_pass where there is no friction (the default tank), whose kernel without the
// friction code takes 70 registers instead of 80 (the merged kernel there was 1% slower).
#include "surface.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) surface_pass(Consts c, Bufs a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    surface_atom<true>(c, a, i < c.n ? i : -1);
}

extern "C" __global__ void __launch_bounds__(BLOCK) obstacle_pass(Consts c, Bufs a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    surface_atom<false>(c, a, i < c.n ? i : -1);
}
