//! Dye tags on the wgpu device (issue 47; `shaders/sim/dye.wgsl`): the tags by canonical
//! index, two u16 to a u32 word, so the re-sorting never touches them and they follow their
//! atoms as `ids` does (`DeviceDye`, only while the state has a dye column or rakes); the
//! rakes and the tunnel zone's clearing (`dye_step`, dispatched after every drift only while
//! there are rakes, or a tunnel and tags); the tags' place in the overflow backup, the
//! checkpoints and the state read back. Nothing is allocated or dispatched without dye.

use std::sync::Arc;

use super::super::device::SimDevice;
use super::super::flow::{f32_at_or_above, split};
use super::super::pipelines::{Pipelines, SideKernels};
use super::state::state_bytes_of;
use super::{Engine, WG, storage, storage_init};
use crate::physics::dye::{Dye, DyeRake};
use crate::physics::params::SimParams;
use crate::physics::real::Precision;
use crate::sim::SimError;

/// The dye kernel built against one `Pipelines` (its group-0 layout and precision).
pub struct DyeKernels {
    built_for: Arc<Pipelines>,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl DyeKernels {
    /// Compiles `dye_step` for `ntypes` species against `pipes`.
    pub fn new(dev: &SimDevice, pipes: &Arc<Pipelines>, ntypes: usize) -> Result<DyeKernels, SimError> {
        let source = super::super::shaders::dye_module(ntypes, pipes.precision);
        let k = SideKernels::with_reads(dev, pipes, "the dye kernel (dye.wgsl)", source, (0, 1), &[2], &["dye_step"])?;
        let SideKernels { out_layout, mut pipelines } = k;
        Ok(DyeKernels { built_for: pipes.clone(), pipeline: pipelines.remove(0), layout: out_layout })
    }

    /// Whether these kernels were built for `pipes`.
    pub fn fits(&self, pipes: &Arc<Pipelines>) -> bool {
        Arc::ptr_eq(&self.built_for, pipes)
    }
}

/// A system's tags on the device.
pub(super) struct DeviceDye {
    /// Tags by canonical index: atom c in the low (even c) or high (odd c) half of word c / 2.
    pub(super) words: wgpu::Buffer,
    /// The copy an advance is redone from after a list overflow.
    bak: wgpu::Buffer,
    /// The kernel's arguments (dye.wgsl `DyeArgs`) and rakes, and its group 1, while it runs.
    step: Option<(Arc<DyeKernels>, wgpu::BindGroup)>,
}

/// Bytes of the tag words of `n` atoms.
fn word_bytes(n: usize) -> u64 {
    n.div_ceil(2) as u64 * 4
}

/// `tags` (canonical order) packed two to a word.
pub(super) fn pack(tags: &[Dye]) -> Vec<u32> {
    tags.chunks(2).map(|c| c[0] as u32 | (c.get(1).copied().unwrap_or(0) as u32) << 16).collect()
}

/// The `n` tags of packed `words`.
pub(super) fn unpack(words: &[u8], n: usize) -> Vec<Dye> {
    let w: Vec<u32> = bytemuck::pod_collect_to_vec(&words[..word_bytes(n) as usize]);
    (0..n).map(|c| (w[c / 2] >> (16 * (c % 2))) as Dye).collect()
}

/// The kernel's arguments: rakes, zone on, then the zone's edges and the longest move in the
/// state's precision (dye.wgsl `DyeArgs`).
fn args_bytes(n_rakes: usize, zone: Option<(f64, f64)>, precision: Precision) -> Vec<u8> {
    let (lo, hi) = zone.unwrap_or((0.0, 0.0));
    // f32 positions compare against the edges as the CPU's f64 ones do (flow.rs does the same).
    let edge = |x: f64| if precision == Precision::Single { f32_at_or_above(x) as f64 } else { x };
    let mut b: Vec<u8> =
        [n_rakes as u32, u32::from(zone.is_some()), 0, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
    b.extend(state_bytes_of(&[edge(lo), edge(hi), crate::sim::RUNAWAY_STEP, 0.0], precision));
    b
}

/// The rakes as dye.wgsl's `dye_rakes` reads them: per rake (ax, ay), (bx, by) as f32 (hi, lo)
/// bits, then the tag.
fn rake_words(rakes: &[DyeRake]) -> Vec<u32> {
    let pair = |p: [f64; 2]| {
        let (x, y) = (split(p[0]), split(p[1]));
        [x[0].to_bits(), x[1].to_bits(), y[0].to_bits(), y[1].to_bits()]
    };
    rakes.iter().flat_map(|r| pair(r.a).into_iter().chain(pair(r.b)).chain([r.tag as u32, 0, 0, 0])).collect()
}

impl DeviceDye {
    /// The tags of `n` atoms (`tags` canonical, or empty: all untagged) on `dev`.
    pub(super) fn new(dev: &SimDevice, tags: &[Dye], n: usize) -> DeviceDye {
        let words = match tags.is_empty() {
            true => storage(dev, "dye", word_bytes(n)),
            false => storage_init(dev, "dye", bytemuck::cast_slice(&pack(tags))),
        };
        DeviceDye { words, bak: storage(dev, "dye_bak", word_bytes(n)), step: None }
    }
}

impl Engine {
    /// Whether the state has a dye column on the device.
    pub fn has_dye(&self) -> bool {
        self.dye.is_some()
    }

    /// The tag words (for the publish kernel), while the state has a dye column.
    pub fn dye_words(&self) -> Option<&wgpu::Buffer> {
        self.dye.as_ref().map(|d| &d.words)
    }

    /// Whether the step needs `dye_step` with `rakes` and `params`: rakes, or a tunnel and a
    /// dye column.
    pub fn dye_step_needed(&self, rakes: &[DyeRake], params: &SimParams) -> bool {
        !rakes.is_empty() || (params.tunnel.is_some() && self.dye.is_some())
    }

    /// Runs `rakes` and the tunnel's zone (from `params`) after every drift, with `kernels`
    /// (given when [`Engine::dye_step_needed`]); rakes make the dye column (all untagged)
    /// where there is none.
    pub fn configure_dye(&mut self, rakes: &[DyeRake], params: &SimParams, kernels: Option<Arc<DyeKernels>>) {
        if !rakes.is_empty() && self.dye.is_none() {
            self.dye = Some(DeviceDye::new(&self.dev, &[], self.n));
            self.bind_dye_fields();
        }
        let zone = params.tunnel.as_ref().map(|t| t.bounds(&self.sim_box));
        let (dev, precision) = (&self.dev, self.precision);
        let Some(d) = self.dye.as_mut() else { return };
        d.step = kernels.filter(|_| !rakes.is_empty() || zone.is_some()).map(|k| {
            let args = storage_uniform(dev, &args_bytes(rakes.len(), zone, precision));
            let rakes = storage_init(dev, "dye rakes", bytemuck::cast_slice(&rake_words(rakes)));
            let bind = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("dye"),
                layout: &k.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: d.words.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: args.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: rakes.as_entire_binding() },
                ],
            });
            (k, bind)
        });
    }

    /// Records `dye_step` after a drift (nothing unless it runs).
    pub(super) fn encode_dye(&self, pass: &mut wgpu::ComputePass<'_>) {
        let Some((k, bind)) = self.dye.as_ref().and_then(|d| d.step.as_ref()) else { return };
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.mark(pass, "dye_step");
        }
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(1, bind, &[]);
        pass.dispatch_workgroups((self.n as u32).div_ceil(WG).max(1), 1, 1);
    }

    /// Copies the tags into the overflow backup, or (`restore`) back.
    pub(super) fn dye_backup(&self, enc: &mut wgpu::CommandEncoder, restore: bool) {
        if let Some(d) = &self.dye {
            let (src, dst) = if restore { (&d.bak, &d.words) } else { (&d.words, &d.bak) };
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size().min(dst.size()));
        }
    }

    /// Device bytes of the tags and their backup.
    pub(super) fn dye_bytes(&self) -> usize {
        self.dye.as_ref().map_or(0, |d| (d.words.size() + d.bak.size()) as usize)
    }

    /// Bytes of the tag words of this system.
    pub(super) fn dye_word_bytes(&self) -> u64 {
        word_bytes(self.n)
    }
}

/// A small uniform buffer holding `bytes`.
fn storage_uniform(dev: &SimDevice, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("dye args"),
        contents: bytes,
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_pack_two_to_a_word_and_back() {
        let tags: Vec<Dye> = vec![1, 0, 65535, 7, 3];
        let words = pack(&tags);
        assert_eq!(words, vec![1, 65535 | 7 << 16, 3]);
        assert_eq!(unpack(bytemuck::cast_slice(&words), tags.len()), tags);
    }

    #[test]
    fn args_match_the_shader_layout() {
        // Four u32 then four reals: 32 bytes in f32, 48 in f64 (uniform structs round to 16).
        assert_eq!(args_bytes(2, None, Precision::Single).len(), 32);
        assert_eq!(args_bytes(2, Some((0.0, 3.0)), Precision::Double).len(), 48);
        assert_eq!(rake_words(&[DyeRake { a: [1.0, 2.0], b: [1.0, 5.0], tag: 9 }]).len(), 12);
    }
}
