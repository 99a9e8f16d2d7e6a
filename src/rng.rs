//! Counter-based random numbers (Philox4x32-10), identical on every backend.
//!
//! A random number is a pure function of (seed, stream, counter): the CPU backend and the
//! CUDA kernels (`kernels/rng.cuh`) draw the same values for the same atom and step, so
//! thermostat noise does not depend on thread count, algorithm or device.
//! Owns the generator and the distributions built on it (uniform, normal, gamma); nothing else.

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds: four 32-bit outputs from a 128-bit counter and a 64-bit key.
pub fn philox4x32(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let p0 = (PHILOX_M0 as u64) * (c[0] as u64);
        let p1 = (PHILOX_M1 as u64) * (c[2] as u64);
        c = [((p1 >> 32) as u32) ^ c[1] ^ k[0], p1 as u32, ((p0 >> 32) as u32) ^ c[3] ^ k[1], p0 as u32];
    }
    c
}

/// Purposes of random streams, so two uses never share numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Stream {
    InitialVelocities = 1,
    Langevin = 2,
    Csvr = 3,
    GasPlacement = 4,
    AddAtoms = 5,
    /// Which generated atom gets which species (`physics::species::assign_types`).
    Composition = 6,
    HmcVelocities = 7,
    HmcAccept = 8,
    HmcVolume = 9,
    /// Surface friction noise (`physics::friction`).
    SurfaceFriction = 10,
    /// The wind tunnel's inflow zone (`physics::tunnel`).
    TunnelInflow = 11,
}

/// Four uniform numbers in (0, 1) for (seed, stream, index, counter).
pub fn uniform4(seed: u64, stream: Stream, index: u32, counter: u64) -> [f64; 4] {
    let r =
        philox4x32([index, stream as u32, counter as u32, (counter >> 32) as u32], [seed as u32, (seed >> 32) as u32]);
    r.map(|x| (x as f64 + 0.5) * (1.0 / 4_294_967_296.0))
}

/// Four standard normal numbers (Box-Muller on [`uniform4`]).
pub fn normal4(seed: u64, stream: Stream, index: u32, counter: u64) -> [f64; 4] {
    let u = uniform4(seed, stream, index, counter);
    let (a, b) = box_muller(u[0], u[1]);
    let (c, d) = box_muller(u[2], u[3]);
    [a, b, c, d]
}

fn box_muller(u1: f64, u2: f64) -> (f64, f64) {
    let r = (-2.0 * u1.ln()).sqrt();
    let t = std::f64::consts::TAU * u2;
    (r * t.cos(), r * t.sin())
}

/// A sequential generator over one (seed, stream, index): convenient on the host.
#[derive(Clone, Debug)]
pub struct Sequence {
    seed: u64,
    stream: Stream,
    index: u32,
    counter: u64,
    buf: [f64; 4],
    used: usize,
    normal: bool,
}

impl Sequence {
    pub fn new(seed: u64, stream: Stream, index: u32, counter: u64) -> Self {
        Sequence { seed, stream, index, counter, buf: [0.0; 4], used: 4, normal: false }
    }

    fn refill(&mut self, normal: bool) {
        self.buf = if normal {
            normal4(self.seed, self.stream, self.index, self.counter)
        } else {
            uniform4(self.seed, self.stream, self.index, self.counter)
        };
        self.counter += 1;
        self.used = 0;
        self.normal = normal;
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        if self.used == 4 || self.normal {
            self.refill(false);
        }
        self.used += 1;
        self.buf[self.used - 1]
    }

    /// Standard normal.
    pub fn normal(&mut self) -> f64 {
        if self.used == 4 || !self.normal {
            self.refill(true);
        }
        self.used += 1;
        self.buf[self.used - 1]
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang; shape > 0.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.uniform();
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// Sum of `n` squared standard normals (chi-squared with n degrees of freedom).
    pub fn chi_squared(&mut self, n: f64) -> f64 {
        if n <= 0.0 { 0.0 } else { 2.0 * self.gamma(0.5 * n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answer() {
        // Random123 known-answer test vector for philox4x32-10 with zero counter and key.
        assert_eq!(philox4x32([0, 0, 0, 0], [0, 0]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(philox4x32([0xffffffff; 4], [0xffffffff; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
    }

    #[test]
    fn normal_moments() {
        let mut s = Sequence::new(7, Stream::Langevin, 3, 0);
        let n = 200_000;
        let (mut m1, mut m2) = (0.0, 0.0);
        for _ in 0..n {
            let x = s.normal();
            m1 += x;
            m2 += x * x;
        }
        m1 /= n as f64;
        m2 /= n as f64;
        assert!(m1.abs() < 0.01, "{m1}");
        assert!((m2 - 1.0).abs() < 0.01, "{m2}");
    }

    #[test]
    fn gamma_mean_and_variance() {
        let mut s = Sequence::new(11, Stream::Csvr, 0, 0);
        for shape in [0.5, 3.0, 500.0] {
            let n = 100_000;
            let xs: Vec<f64> = (0..n).map(|_| s.gamma(shape)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            assert!((mean / shape - 1.0).abs() < 0.02, "shape {shape} mean {mean}");
            assert!((var / shape - 1.0).abs() < 0.05, "shape {shape} var {var}");
        }
    }
}
