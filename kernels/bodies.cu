// The per-step latch of the body forces (src/sim/bodies.rs, bodies.cuh): after a step's force
// pass, each body's fixed-point sums in b.body_fix are added to the running f64 sums in
// b.body_sum (3 per body, then the count of steps summed) and zeroed. mode 1 (a telemetry
// step) then copies the running sums into the record b.clock[1] of b.body_records (before
// finish_step advances the record count) and restarts them; mode -1 (a force pass outside
// the step loop: measure, forces, the first pass of an advance) only zeroes the fixed-point
// sums. One block of BLOCK threads, each body component on its own thread (a fixed order).
#include "common.cuh"
#include "bodies.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) bodies_latch(Consts c, Bufs b, int mode) {
    bodies_latch_block(c, b, mode);
}
