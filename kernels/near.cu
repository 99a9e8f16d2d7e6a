// Which atoms can feel a surface before the next list rebuild, so the obstacle and surface
// friction passes and the force epilogue touch only those (a wind tunnel's cylinder reaches a
// few thousand of a million atoms). With lists or cells permute_copy sets them as it puts
// the re-sorted atoms back (on the positions the list is built from); near_pass, every step
// without lists (margin 0), sets, per atom slot, b.near[i] (near_bits, near.cuh):
//   NEAR_OBSTACLE  the obstacle field's distance is below the obstacle cut-off plus `margin`
//   NEAR_FRICTION  a wall face or obstacle surface is within the friction range plus `margin`
// `margin` is half the skin: until the next rebuild no atom moves farther from its build
// position (integrate_first's skin test), and distances to surfaces change by at most that.
// A reach at or beyond the field's clamp (c.obs_far) flags every atom, as does a moving wall
// (the piston) for friction. Bits of an atom that cannot feel the surface are what the
// passes would have computed: a zero force.
#include "near.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) near_pass(Consts c, Bufs b, int gate, double margin) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    b.near[i] = near_bits(c, b, b.pos[i], margin);
}
