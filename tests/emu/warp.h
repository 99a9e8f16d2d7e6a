// Host emulation of the CUDA features the cell kernels (kernels/cells.cu: the list build and
// the cell sort) use, so tests/cells_emulated.rs can run their own source on a machine
// without a GPU:
// one fiber (ucontext) per lane of a warp, run in turn by a scheduler; every warp collective
// (shuffles, ballots, __syncwarp) is a barrier at which each lane yields until all lanes of
// the warp have arrived. `__shared__` arrays become function statics, which one block at a
// time may use. Only warp-uniform control flow around collectives is supported (the kernels
// are written that way); block-wide barriers abort.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>

using std::copysign;
using std::fabs;
using std::floor;
using std::fmod;
using std::isfinite;
using std::rint;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct float4 { float x, y, z, w; };
struct double4 { double x, y, z, w; };
struct double2 { double x, y; };
struct int4 { int x, y, z, w; };
struct uint4 { unsigned int x, y, z, w; };
struct dim3 { unsigned int x, y, z; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline double4 make_double4(double a, double b, double c, double d) { return {a, b, c, d}; }
inline int4 make_int4(int a, int b, int c, int d) { return {a, b, c, d}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }

inline dim3 threadIdx, blockIdx, blockDim;

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
inline unsigned int __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s & 31)) >> 32);
}
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline int atomicAdd(int* p, int v) { int o = *p; *p += v; return o; }
inline int atomicMax(int* p, int v) { int o = *p; if (v > o) *p = v; return o; }
inline void __syncthreads() { abort(); }

// The warp being run: its lanes' fibers, the scheduler's context, the lane running now and
// the exchange slots of a collective.
struct Warp {
    ucontext_t sched, lane[32];
    int cur;
    unsigned long long slot[32];
};
// The warp being run (emu_launch sets it).
inline Warp* cur_warp;

inline int emu_lane() { return (int)(threadIdx.x & 31); }
// Every lane of the warp reaches this point before any goes on.
inline void emu_barrier() { swapcontext(&cur_warp->lane[cur_warp->cur], &cur_warp->sched); }
template <class T> inline T emu_exchange(T v, int src) {
    unsigned long long u = 0;
    memcpy(&u, &v, sizeof(T));
    cur_warp->slot[emu_lane()] = u;
    emu_barrier();
    unsigned long long r = cur_warp->slot[src & 31];
    emu_barrier();
    T out;
    memcpy(&out, &r, sizeof(T));
    return out;
}
template <class T> inline T __shfl_sync(unsigned, T v, int src) { return emu_exchange(v, src); }
template <class T> inline T __shfl_up_sync(unsigned, T v, int d) {
    int l = emu_lane();
    return emu_exchange(v, l < d ? l : l - d);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) { return emu_exchange(v, emu_lane() ^ m); }
inline unsigned __ballot_sync(unsigned, bool p) {
    cur_warp->slot[emu_lane()] = p;
    emu_barrier();
    unsigned m = 0;
    for (int i = 0; i < 32; i++) m |= (unsigned)(cur_warp->slot[i] != 0) << i;
    emu_barrier();
    return m;
}
inline bool __all_sync(unsigned, bool p) { return __ballot_sync(0xffffffffu, p) == 0xffffffffu; }
// The lanes of `mask` whose v equals this lane's.
inline unsigned __match_any_sync(unsigned mask, int v) {
    cur_warp->slot[emu_lane()] = (unsigned long long)(unsigned)v;
    emu_barrier();
    unsigned m = 0;
    for (int i = 0; i < 32; i++) m |= (unsigned)(((mask >> i) & 1u) && cur_warp->slot[i] == (unsigned)v) << i;
    emu_barrier();
    return m;
}
inline void __syncwarp() { emu_barrier(); }

inline void (*emu_kernel)();
inline bool emu_lane_done[32];
inline void emu_lane_main(int l) {
    emu_kernel();
    emu_lane_done[l] = true;
    swapcontext(&cur_warp->lane[l], &cur_warp->sched);
}

// The launch of `kernel` (a function that calls the kernel with arguments held in globals)
// on `blocks` blocks of `threads` threads (a multiple of 32), one warp at a time: a fiber per
// lane, each run until it reaches a collective or ends, in turn.
inline void emu_launch(int blocks, int threads, void (*kernel)()) {
    static char stacks[32][1 << 18];
    static Warp warp;
    cur_warp = &warp;
    emu_kernel = kernel;
    blockDim.x = threads;
    for (int blk = 0; blk < blocks; blk++)
        for (int w = 0; w < threads / 32; w++) {
            blockIdx.x = blk;
            for (int l = 0; l < 32; l++) {
                emu_lane_done[l] = false;
                getcontext(&warp.lane[l]);
                warp.lane[l].uc_stack.ss_sp = stacks[l];
                warp.lane[l].uc_stack.ss_size = sizeof stacks[l];
                warp.lane[l].uc_link = nullptr;
                makecontext(&warp.lane[l], (void (*)())emu_lane_main, 1, l);
            }
            for (bool any = true; any;) {
                any = false;
                for (int l = 0; l < 32; l++)
                    if (!emu_lane_done[l]) {
                        any = true;
                        warp.cur = l;
                        threadIdx.x = w * 32 + l;
                        swapcontext(&warp.sched, &warp.lane[l]);
                    }
            }
        }
}
