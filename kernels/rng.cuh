// Philox4x32-10 counter-based random numbers, mirroring src/rng.rs exactly (same streams,
// counters and distributions), so the CPU and GPU backends draw the same noise.
#pragma once

#define STREAM_LANGEVIN 2u
#define STREAM_CSVR 3u
#define STREAM_SURFACE_FRICTION 10u
#define STREAM_TUNNEL_INFLOW 11u

__device__ __forceinline__ uint4 philox4x32(uint4 c, uint2 k) {
    const unsigned int M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    #pragma unroll
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k.x += W0;
            k.y += W1;
        }
        unsigned int hi0 = __umulhi(M0, c.x), lo0 = M0 * c.x;
        unsigned int hi1 = __umulhi(M1, c.z), lo1 = M1 * c.z;
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

__device__ __forceinline__ double u01(unsigned int x) { return ((double)x + 0.5) * (1.0 / 4294967296.0); }

__device__ __forceinline__ void uniform4(unsigned long long seed, unsigned int stream, unsigned int index,
                                         unsigned long long counter, double out[4]) {
    uint4 r = philox4x32(make_uint4(index, stream, (unsigned int)counter, (unsigned int)(counter >> 32)),
                         make_uint2((unsigned int)seed, (unsigned int)(seed >> 32)));
    out[0] = u01(r.x);
    out[1] = u01(r.y);
    out[2] = u01(r.z);
    out[3] = u01(r.w);
}

__device__ __forceinline__ void normal4(unsigned long long seed, unsigned int stream, unsigned int index,
                                        unsigned long long counter, double out[4]) {
    double u[4];
    uniform4(seed, stream, index, counter, u);
    double r0 = sqrt(-2.0 * log(u[0])), t0 = 6.283185307179586 * u[1];
    double r1 = sqrt(-2.0 * log(u[2])), t1 = 6.283185307179586 * u[3];
    out[0] = r0 * cos(t0);
    out[1] = r0 * sin(t0);
    out[2] = r1 * cos(t1);
    out[3] = r1 * sin(t1);
}

// The host's rng::Sequence: one stream read four numbers at a time.
struct Sequence {
    unsigned long long seed;
    unsigned int stream, index;
    unsigned long long counter;
    double buf[4];
    int used;
    int normal;

    __device__ void init(unsigned long long s, unsigned int st, unsigned int idx, unsigned long long ctr) {
        seed = s;
        stream = st;
        index = idx;
        counter = ctr;
        used = 4;
        normal = 0;
    }
    __device__ void refill(int want_normal) {
        if (want_normal) normal4(seed, stream, index, counter, buf);
        else uniform4(seed, stream, index, counter, buf);
        counter++;
        used = 0;
        normal = want_normal;
    }
    __device__ double uniform() {
        if (used == 4 || normal) refill(0);
        return buf[used++];
    }
    __device__ double gauss() {
        if (used == 4 || !normal) refill(1);
        return buf[used++];
    }
    // Marsaglia-Tsang, shape >= 1 (the host handles shape < 1 by boosting; so do we).
    __device__ double gamma(double shape) {
        double boost = 1.0;
        if (shape < 1.0) {
            double u = uniform();
            shape += 1.0;
            boost = pow(u, 1.0 / (shape - 1.0));
        }
        double d = shape - 1.0 / 3.0, cc = 1.0 / sqrt(9.0 * d);
        for (int tries = 0; tries < 1000; tries++) {
            double x = gauss();
            double v = 1.0 + cc * x;
            if (v <= 0.0) continue;
            v = v * v * v;
            double u = uniform();
            if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v * boost;
        }
        return d * boost;
    }
    __device__ double chi_squared(double n) { return n <= 0.0 ? 0.0 : 2.0 * gamma(0.5 * n); }
};
