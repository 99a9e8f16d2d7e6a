// Dye on the CUDA backend (src/sim/cuda/engine/dye.rs; the CPU's src/sim/cpu/state/dye.rs,
// physics::dye): the tags live by CANONICAL index (one unsigned short per atom, `dye[id]`),
// so the re-sorting never touches them. `dye_step`, after each drift while there are rakes
// or a tunnel's zone with tags: an atom whose move x - dt v -> x crossed a rake takes the
// last such rake's tag (a move wrapped across a periodic x or y edge is also tested in the
// image on the other side), then an atom in the tunnel's inflow zone loses its tag, as the
// CPU does later in the same step (the positions do not change in between). The arithmetic
// is the CPU's f64, uncontracted, so the same positions and velocities give the same tags.
// `rakes` holds 5 doubles per rake: ax, ay, bx, by, tag.
#include "dye.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) dye_step(Consts c, Bufs b, unsigned short* dye, const double* rakes, int n_rakes, int zone, double reach) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // After a blow-up the CPU stops before its rakes.
    if (i >= c.n || b.flags[FLAG_BLOWUP]) return;
    dye_atom(c, b, i, b.pos[i], b.vel + i, dye, rakes, n_rakes, zone, reach);
}
