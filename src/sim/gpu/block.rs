//! The bytes of a WGSL struct as the shaders read it from a uniform or storage buffer
//! (`Block`): members one after another, each at the next multiple of its alignment, reals in
//! the precision's widths (the state's `real_s` and the forces' `real_f` of
//! `shaders/sim/common.wgsl`: f32 or f64), so one description of a constants block serves
//! the three precisions. `layout.rs` and `flow.rs` describe theirs with it.

use crate::physics::real::Precision;

/// A struct's bytes being laid out.
pub struct Block {
    bytes: Vec<u8>,
    /// Where each member starts (for the test against naga's layout of the shaders).
    offsets: Vec<usize>,
    /// The largest alignment of a member so far.
    align: usize,
    /// f64 state (`real_s`) and forces (`real_f`).
    wide_s: bool,
    wide_f: bool,
}

impl Block {
    pub fn new(precision: Precision) -> Block {
        Block {
            bytes: Vec::new(),
            offsets: Vec::new(),
            align: 4,
            wide_s: precision != Precision::Single,
            wide_f: precision == Precision::Double,
        }
    }

    /// Pads to the next multiple of `align` (a power of two).
    fn at(&mut self, align: usize) {
        self.align = self.align.max(align);
        self.bytes.resize(self.bytes.len().next_multiple_of(align), 0);
    }

    /// Starts a member aligned to `align`.
    fn member(&mut self, align: usize) {
        self.at(align);
        self.offsets.push(self.bytes.len());
    }

    /// Where each member starts.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    fn reals(&mut self, v: &[f64], wide: bool) {
        let size = if wide { 8 } else { 4 };
        // vec2: twice the scalar's alignment; vec3 and vec4: four times.
        let lanes = if v.len() > 2 { 4 } else { v.len() };
        self.member(size * lanes);
        for &x in v {
            if wide {
                self.bytes.extend_from_slice(&x.to_le_bytes());
            } else {
                self.bytes.extend_from_slice(&(x as f32).to_le_bytes());
            }
        }
    }

    /// A `u32`, or a `vecN<u32>` of `v`'s length.
    pub fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.member(4 * if v.len() > 2 { 4 } else { v.len() });
        for x in v {
            self.bytes.extend_from_slice(&x.to_le_bytes());
        }
        self
    }

    /// An `array<vec4<i32>, N>` of `v` (4 N values).
    pub fn i32x4s(&mut self, v: &[i32]) -> &mut Self {
        self.member(16);
        for x in v {
            self.bytes.extend_from_slice(&x.to_le_bytes());
        }
        self
    }

    /// A `real_s`, or a `vecN<real_s>` of `v`'s length.
    pub fn s(&mut self, v: &[f64]) -> &mut Self {
        self.reals(v, self.wide_s);
        self
    }

    /// A `real_f`, or a `vecN<real_f>` of `v`'s length.
    pub fn f(&mut self, v: &[f64]) -> &mut Self {
        self.reals(v, self.wide_f);
        self
    }

    /// A `vecN<f64>` (a member only some precisions have).
    pub fn f64s(&mut self, v: &[f64]) -> &mut Self {
        self.reals(v, true);
        self
    }

    /// A struct member laid out by `inner` (at least 16-aligned, as uniform buffers want it).
    pub fn nested(&mut self, inner: Block) -> &mut Self {
        let align = inner.align.max(16);
        let bytes = inner.finish();
        self.member(align);
        self.bytes.extend_from_slice(&bytes);
        self
    }

    /// The struct's size: its bytes so far padded to a multiple of its alignment.
    pub fn size(&self) -> usize {
        self.bytes.len().next_multiple_of(self.align)
    }

    /// The struct's bytes, padded to a multiple of its alignment (an array element's stride).
    pub fn finish(mut self) -> Vec<u8> {
        let align = self.align;
        self.at(align);
        self.bytes
    }

    /// The struct's bytes padded to a multiple of 16 as well (a uniform buffer's size).
    pub fn finish_uniform(mut self) -> Vec<u8> {
        self.at(16);
        self.finish()
    }
}
