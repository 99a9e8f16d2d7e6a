//! `ARGON_WGPU_PROFILE=1`: GPU time per kernel of the wgpu backend, from timestamps written
//! between the dispatches of the first command buffer of every call (where the adapter has
//! timestamp queries inside passes), summed per kernel and printed to stderr when the system
//! is dropped. Each dispatch's time includes the barrier before the next.

use std::collections::BTreeMap;

use super::device::SimDevice;

/// Timestamps one call may write.
const CAPACITY: u32 = 2048;

pub struct Profile {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    names: Vec<&'static str>,
    totals: BTreeMap<&'static str, (f64, u64)>,
    period_ns: f64,
    /// Writing timestamps in this command buffer.
    pub on: bool,
    /// Steps advanced and list builds among them (all, not only the timed ones).
    pub steps: u64,
    pub builds: u64,
}

/// The features profiling needs, when it is asked for and the adapter has them.
pub fn features(adapter: &wgpu::Adapter) -> wgpu::Features {
    let want = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
    if std::env::var_os("ARGON_WGPU_PROFILE").is_some() && adapter.features().contains(want) {
        want
    } else {
        wgpu::Features::empty()
    }
}

impl Profile {
    pub fn new(dev: &SimDevice) -> Option<Profile> {
        if !dev.device.features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES) {
            return None;
        }
        Some(Profile {
            set: dev.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("profile"),
                ty: wgpu::QueryType::Timestamp,
                count: CAPACITY,
            }),
            resolve: dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("profile resolve"),
                size: CAPACITY as u64 * 8,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            names: Vec::new(),
            totals: BTreeMap::new(),
            period_ns: dev.queue.get_timestamp_period() as f64,
            on: false,
            steps: 0,
            builds: 0,
        })
    }

    /// A timestamp before the dispatch of `name` (or, with "end", after the last).
    pub fn mark(&mut self, pass: &mut wgpu::ComputePass<'_>, name: &'static str) {
        if self.on && (self.names.len() as u32) < CAPACITY {
            pass.write_timestamp(&self.set, self.names.len() as u32);
            self.names.push(name);
        }
    }

    /// Resolves this call's timestamps into `resolve` (to be read back).
    pub fn finish(&mut self, enc: &mut wgpu::CommandEncoder) -> Option<(&wgpu::Buffer, u64)> {
        self.on = false;
        let n = self.names.len() as u32;
        if n < 2 {
            self.names.clear();
            return None;
        }
        enc.resolve_query_set(&self.set, 0..n, &self.resolve, 0);
        Some((&self.resolve, n as u64 * 8))
    }

    /// Adds the read-back timestamps to the totals.
    pub fn add(&mut self, raw: &[u8]) {
        let t: Vec<u64> = bytemuck::pod_collect_to_vec(raw);
        for (k, w) in t.windows(2).enumerate() {
            let e = self.totals.entry(self.names[k]).or_default();
            e.0 += w[1].saturating_sub(w[0]) as f64 * self.period_ns;
            e.1 += 1;
        }
        self.names.clear();
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let all: f64 = self.totals.values().map(|v| v.0).sum();
        eprintln!(
            "wgpu kernel times (first command buffer of each call); {} list builds in {} steps (one every {:.1})",
            self.builds,
            self.steps,
            self.steps as f64 / self.builds.max(1) as f64
        );
        for (name, (ns, calls)) in &self.totals {
            eprintln!(
                "  {name:>16}: {:>10.1} us in {calls:>6} dispatches, {:>8.2} us each, {:>5.1} %",
                ns / 1e3,
                ns / 1e3 / *calls as f64,
                100.0 * ns / all.max(1.0)
            );
        }
    }
}
