//! The CPU backend's innermost pair loops, written once over precision and pair coefficients
//! and shaped for the compiler's vectoriser: neighbours are processed `LANES` at a time in
//! fixed-size arrays, the cutoff test is a select (no branch), and a lane with r^2 = 0 (the
//! atom itself, used as padding) contributes exactly zero.
//!
//! Two loops: [`full_contiguous`] (one atom against a contiguous run of atoms, both partners
//! accumulate separately: all-pairs and cell list) and [`half_list`] (one atom against its
//! half neighbour list, Newton's third law scattered into a per-thread buffer).

use crate::physics::lj::PairCoeffs;
use crate::physics::real::Real;
use crate::physics::sim_box::SimBox;

/// Neighbours processed together.
pub const LANES: usize = 8;

/// Minimum-image displacement: `d - L * rint(d / L)` on periodic axes, identity on walled
/// axes (where the inverse length is zero).
#[derive(Clone, Copy, Debug)]
pub struct MinImage<F> {
    pub len: [F; 3],
    pub inv: [F; 3],
}

impl<F: Real> MinImage<F> {
    pub fn new(b: &SimBox) -> Self {
        let l = b.length();
        MinImage {
            len: std::array::from_fn(|k| F::of(l[k])),
            inv: std::array::from_fn(|k| if b.periodic[k] { F::of(1.0 / l[k]) } else { F::zero() }),
        }
    }

    #[inline(always)]
    pub fn apply(&self, d: [F; 3]) -> [F; 3] {
        [
            d[0] - self.len[0] * (d[0] * self.inv[0]).rint(),
            d[1] - self.len[1] * (d[1] * self.inv[1]).rint(),
            d[2] - self.len[2] * (d[2] * self.inv[2]).rint(),
        ]
    }
}

/// What a force pass sums besides the forces: the `M` parameter of every pair loop, a set
/// of these bits.
pub mod mode {
    /// Forces only.
    pub const FORCES: u8 = 0;
    /// Energy and virial (telemetry steps).
    pub const ENERGY: u8 = 1;
    /// The pair virial tensor (stress steps of a viscosity measurement).
    pub const STRESS: u8 = 2;
    /// Both (a telemetry step that is also a stress step).
    pub const BOTH: u8 = ENERGY | STRESS;
}

/// Energy, virial and (in [`mode::STRESS`]) pair virial tensor sums of a set of pairs, the
/// tensor as `sum r_a f_b` in the order xx, yy, zz, xy, xz, yz. Parallel loops collect
/// per-chunk sums in order and add them sequentially, so results do not depend on thread
/// scheduling.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyVirial<A> {
    pub energy: A,
    pub virial: A,
    pub tensor: [A; 6],
}

impl<A: Real> EnergyVirial<A> {
    /// Energy and virial, no tensor.
    pub fn new(energy: A, virial: A) -> Self {
        EnergyVirial { energy, virial, tensor: [A::zero(); 6] }
    }

    pub fn add(&mut self, o: EnergyVirial<A>) {
        self.energy += o.energy;
        self.virial += o.virial;
        for k in 0..6 {
            self.tensor[k] += o.tensor[k];
        }
    }

    /// The same sums in f64.
    pub fn to_f64(self) -> EnergyVirial<f64> {
        EnergyVirial { energy: self.energy.f64(), virial: self.virial.f64(), tensor: self.tensor.map(|t| t.f64()) }
    }
}

/// The axes (a, b) of each component of [`EnergyVirial::tensor`].
pub const TENSOR_AXES: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];

/// Per-lane accumulators of the pair virial tensor (see [`EnergyVirial::tensor`]).
#[derive(Clone, Copy)]
struct LaneTensor<A>([[A; LANES]; 6]);

impl<A: Real> LaneTensor<A> {
    fn new() -> Self {
        LaneTensor([[A::zero(); LANES]; 6])
    }

    /// Adds `fd d_a d_b` to lane `l`.
    #[inline(always)]
    fn add<F: Real>(&mut self, l: usize, d: [F; 3], fd: F) {
        for (q, &(a, b)) in TENSOR_AXES.iter().enumerate() {
            self.0[q][l] += A::of((d[a] * (d[b] * fd)).f64());
        }
    }

    /// Adds `scale` times the lane sums to `out`.
    #[inline(always)]
    fn fold_into(&self, scale: A, out: &mut [A; 6]) {
        for k in 0..6 {
            out[k] += scale * self.0[k].iter().fold(A::zero(), |a, &b| a + b);
        }
    }
}

#[inline(always)]
fn type_of<F: Real>(w: F) -> u32 {
    w.to_u32().unwrap_or(0)
}

/// Force on `pi` from every atom in `js` (r^2 = 0 partners are skipped). Returns the force;
/// with [`mode::ENERGY`], adds the pair energy and virial, with [`mode::STRESS`] the tensor,
/// to `ev`, halved because every pair is visited from both sides.
#[inline(always)]
pub fn full_contiguous<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    pi: [F; 4],
    js: &[[F; 4]],
    coeffs: &C,
    img: &MinImage<F>,
    ev: &mut EnergyVirial<A>,
) -> [F; 3] {
    let ti = type_of(pi[3]);
    let mut fx = [F::zero(); LANES];
    let mut fy = [F::zero(); LANES];
    let mut fz = [F::zero(); LANES];
    let mut e = [A::zero(); LANES];
    let mut w = [A::zero(); LANES];
    let mut t = LaneTensor::<A>::new();
    let mut body = |c: &[[F; 4]; LANES]| {
        for l in 0..LANES {
            let pj = c[l];
            let d = img.apply([pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]]);
            let rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let p = coeffs.get(ti, type_of(pj[3]));
            let inside = rsq < p.rcut_sq && rsq > F::zero();
            let (fd, en) = p.eval(rsq);
            let fd = if inside { fd } else { F::zero() };
            fx[l] += d[0] * fd;
            fy[l] += d[1] * fd;
            fz[l] += d[2] * fd;
            if M & mode::ENERGY != 0 {
                let en = if inside { en } else { F::zero() };
                e[l] += A::of(en.f64());
                w[l] += A::of((rsq * fd).f64());
            }
            if M & mode::STRESS != 0 {
                t.add(l, d, fd);
            }
        }
    };
    let mut chunks = js.chunks_exact(LANES);
    for c in &mut chunks {
        body(c.try_into().expect("chunk of LANES"));
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut pad = [pi; LANES];
        pad[..rem.len()].copy_from_slice(rem);
        body(&pad);
    }
    if M & mode::ENERGY != 0 {
        let half = A::of(0.5);
        ev.energy += half * e.iter().fold(A::zero(), |a, &b| a + b);
        ev.virial += half * w.iter().fold(A::zero(), |a, &b| a + b);
    }
    if M & mode::STRESS != 0 {
        t.fold_into(A::of(0.5), &mut ev.tensor);
    }
    [sum(&fx), sum(&fy), sum(&fz)]
}

#[inline(always)]
fn sum<F: Real>(x: &[F; LANES]) -> F {
    x.iter().fold(F::zero(), |a, &b| a + b)
}

/// Pairs of atom `i` with its half neighbour list `nbrs` (a multiple of `LANES` long,
/// padded with `i` itself). Adds the force on `i` and the reactions on its neighbours into
/// `force`; with [`mode::ENERGY`], adds energy and virial, with [`mode::STRESS`] the
/// tensor, each pair once.
///
/// # Safety
/// Every index in `nbrs` and `i` must be below `pos.len()` and `force.len()`.
#[inline(always)]
pub unsafe fn half_list<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    i: usize,
    pos: &[[F; 4]],
    nbrs: &[u32],
    coeffs: &C,
    img: &MinImage<F>,
    force: &mut [[F; 4]],
    ev: &mut EnergyVirial<A>,
) {
    debug_assert_eq!(nbrs.len() % LANES, 0);
    // SAFETY: the caller guarantees every index is in bounds.
    let pi = unsafe { *pos.get_unchecked(i) };
    let ti = type_of(pi[3]);
    let mut fxi = [F::zero(); LANES];
    let mut fyi = [F::zero(); LANES];
    let mut fzi = [F::zero(); LANES];
    let mut e = [A::zero(); LANES];
    let mut w = [A::zero(); LANES];
    let mut t = LaneTensor::<A>::new();
    for c in nbrs.chunks_exact(LANES) {
        let mut dx = [F::zero(); LANES];
        let mut dy = [F::zero(); LANES];
        let mut dz = [F::zero(); LANES];
        let mut tj = [0u32; LANES];
        for l in 0..LANES {
            // SAFETY: in bounds by the caller's contract.
            let pj = unsafe { *pos.get_unchecked(c[l] as usize) };
            dx[l] = pi[0] - pj[0];
            dy[l] = pi[1] - pj[1];
            dz[l] = pi[2] - pj[2];
            tj[l] = type_of(pj[3]);
        }
        let mut fd = [F::zero(); LANES];
        for l in 0..LANES {
            let d = img.apply([dx[l], dy[l], dz[l]]);
            dx[l] = d[0];
            dy[l] = d[1];
            dz[l] = d[2];
            let rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let p = coeffs.get(ti, tj[l]);
            let inside = rsq < p.rcut_sq && rsq > F::zero();
            let (f, en) = p.eval(rsq);
            fd[l] = if inside { f } else { F::zero() };
            fxi[l] += dx[l] * fd[l];
            fyi[l] += dy[l] * fd[l];
            fzi[l] += dz[l] * fd[l];
            if M & mode::ENERGY != 0 {
                let en = if inside { en } else { F::zero() };
                e[l] += A::of(en.f64());
                w[l] += A::of((rsq * fd[l]).f64());
            }
            if M & mode::STRESS != 0 {
                t.add(l, d, fd[l]);
            }
        }
        for l in 0..LANES {
            // SAFETY: in bounds by the caller's contract.
            let fj = unsafe { force.get_unchecked_mut(c[l] as usize) };
            fj[0] -= dx[l] * fd[l];
            fj[1] -= dy[l] * fd[l];
            fj[2] -= dz[l] * fd[l];
        }
    }
    // SAFETY: in bounds by the caller's contract.
    let fi = unsafe { force.get_unchecked_mut(i) };
    fi[0] += sum(&fxi);
    fi[1] += sum(&fyi);
    fi[2] += sum(&fzi);
    if M & mode::ENERGY != 0 {
        ev.energy += e.iter().fold(A::zero(), |a, &b| a + b);
        ev.virial += w.iter().fold(A::zero(), |a, &b| a + b);
    }
    if M & mode::STRESS != 0 {
        t.fold_into(A::one(), &mut ev.tensor);
    }
}
