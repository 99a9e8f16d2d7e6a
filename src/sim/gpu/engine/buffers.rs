//! The device arrays of one system (`Buffers`) and the bind groups that hand them to every
//! kernel: storage buffers sized for the atoms, cells and lists in the precision's widths (at
//! least 16 bytes, as wgpu wants), and `plan`'s own group for the indirect arguments.

use super::super::device::SimDevice;
use super::super::layout::StepInfo;
use super::Pipelines;
use wgpu::util::DeviceExt;

/// The device arrays of a system.
pub(super) struct Buffers {
    pub(super) params: wgpu::Buffer,
    pub(super) steps: wgpu::Buffer,
    /// StepInfo slots `steps` holds.
    pub(super) step_slots: usize,
    pub(super) pos: wgpu::Buffer,
    pub(super) vel: wgpu::Buffer,
    pub(super) force: wgpu::Buffer,
    pub(super) ids: wgpu::Buffer,
    pub(super) pos_build: wgpu::Buffer,
    pub(super) flags: wgpu::Buffer,
    pub(super) cell_count: wgpu::Buffer,
    pub(super) cell_start: wgpu::Buffer,
    pub(super) cell_of: wgpu::Buffer,
    pub(super) nlist: wgpu::Buffer,
    pub(super) ncount: wgpu::Buffer,
    pub(super) tmp_pos: wgpu::Buffer,
    pub(super) tmp_vel: wgpu::Buffer,
    pub(super) tmp_ids: wgpu::Buffer,
    pub(super) partials: wgpu::Buffer,
    pub(super) lambda: wgpu::Buffer,
    pub(super) records: wgpu::Buffer,
    /// Records `records` holds.
    pub(super) record_slots: usize,
    pub(super) pairs: wgpu::Buffer,
    pub(super) masses: wgpu::Buffer,
    pub(super) plan: wgpu::Buffer,
    pub(super) cell_fill: wgpu::Buffer,
    pub(super) block_sums: wgpu::Buffer,
    /// In mixed precision, the positions in f32 that the forces read (common.wgsl `posf`).
    pub(super) posf: Option<wgpu::Buffer>,
    /// The wind tunnel's parts (obstacles, bodies, zone, fields; `flow.rs`).
    pub(super) flow: super::flow::FlowBuffers,
}

pub(super) fn storage(dev: &SimDevice, label: &str, bytes: u64) -> wgpu::Buffer {
    dev.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

pub(super) fn storage_init(dev: &SimDevice, label: &str, data: &[u8]) -> wgpu::Buffer {
    let mut padded = data.to_vec();
    padded.resize(data.len().max(16).next_multiple_of(4), 0);
    dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

pub(super) fn bind_group(dev: &SimDevice, pipes: &Pipelines, b: &Buffers) -> (wgpu::BindGroup, wgpu::BindGroup) {
    fn whole(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry { binding, resource: buf.as_entire_binding() }
    }
    let entries = [
        whole(0, &b.params),
        wgpu::BindGroupEntry {
            binding: 1,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &b.steps,
                offset: 0,
                size: wgpu::BufferSize::new(StepInfo::size(pipes.precision)),
            }),
        },
        whole(2, &b.pos),
        whole(3, &b.vel),
        whole(4, &b.force),
        whole(5, &b.ids),
        whole(6, &b.pos_build),
        whole(7, &b.flags),
        whole(8, &b.cell_count),
        whole(9, &b.cell_start),
        whole(10, &b.cell_of),
        whole(11, &b.nlist),
        whole(12, &b.ncount),
        whole(13, &b.tmp_pos),
        whole(14, &b.tmp_vel),
        whole(15, &b.tmp_ids),
        whole(16, &b.partials),
        whole(17, &b.lambda),
        whole(18, &b.records),
        whole(19, &b.pairs),
        whole(20, &b.masses),
        whole(22, &b.cell_fill),
        whole(23, &b.block_sums),
        whole(24, &b.flow.params),
        whole(25, &b.flow.obs),
        whole(26, &b.flow.body_part),
    ];
    let mut entries = entries.to_vec();
    entries.extend(b.posf.as_ref().map(|p| whole(21, p)));
    let main = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sim"),
        layout: &pipes.layout,
        entries: &entries,
    });
    let plan = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sim plan"),
        layout: &pipes.plan_layout,
        entries: &[whole(0, &b.plan)],
    });
    (main, plan)
}
