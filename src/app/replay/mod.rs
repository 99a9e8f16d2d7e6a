//! Instant replay: the app keeps the recent past within a memory budget (the settings'
//! `replay_budget_mb`, capped by what the machine has) and shows it on the timeline under the
//! view. Kept are the drawn frames (`ring.rs`: host frames as drawn, GPU frames copied on the
//! device by `gpu.rs`), the flow windows the view showed, and full states on a schedule of
//! steps with the control changes between them (`states.rs`; the simulation thread's side is
//! `sim_thread/replay.rs`).
//! While the timeline shows a stored frame the view draws it through the same renderer path
//! and the live simulation runs on; "resume from here" restarts the simulation from that
//! frame; "save the last N seconds" writes the frames like a recording (`save.rs`).
//! `actions.rs` holds what the timeline's buttons and keys do; `hooks.rs` what the app's
//! frame loop calls.

pub mod actions;
pub mod gpu;
pub mod hooks;
pub mod ring;
pub mod save;
pub mod states;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crate::flow::Fields;

/// The default budget, MiB.
pub const DEFAULT_BUDGET_MB: u64 = 3072;
/// Playback speeds offered: normal, half, quarter.
pub const SPEEDS: [f64; 3] = [1.0, 0.5, 0.25];
/// Full states take at most this share of the budget (the oldest go first).
pub const STATE_SHARE: usize = 4;
/// Sequence numbers of stored frames for the view start here (apart from the live ones).
pub const REPLAY_SEQ: u64 = 1 << 62;

/// What "Save the last N seconds" writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SaveFormat {
    #[default]
    Mp4,
    Gif,
    Png,
}

impl SaveFormat {
    pub fn name(self) -> &'static str {
        match self {
            SaveFormat::Mp4 => "MP4",
            SaveFormat::Gif => "GIF",
            SaveFormat::Png => "PNG frames",
        }
    }
}

/// The replay's state in the app.
pub struct Replay {
    pub ring: ring::FrameRing,
    pub states: states::StateLog,
    /// Flow windows, each with the id of the first stored frame that showed it.
    flows: VecDeque<(u64, Arc<Fields>)>,
    /// The stored frame on display (its id); None: the view is live.
    pub cursor: Option<u64>,
    pub playing: bool,
    /// Playback speed (1, 1/2, 1/4).
    pub speed: f64,
    /// Playback time not yet spent on a frame, seconds of drawn time.
    play_acc: f64,
    last_tick: Option<Instant>,
    pub gpu: gpu::GpuStore,
    queue: Option<wgpu::Queue>,
    /// Storing GPU frames stopped (the device had no memory for more).
    pub gpu_failed: bool,
    pub save: Option<save::SaveJob>,
    /// Seconds and format "Save the last N seconds" uses.
    pub save_seconds: f64,
    pub save_format: SaveFormat,
    /// Whether keyframes were asked of the simulation thread.
    keep_sent: Option<bool>,
    /// A resume was asked for, to this step.
    pub resuming: Option<u64>,
    /// Half the memory available when the app started (bytes), when known.
    host_cap: Option<usize>,
    /// The timeline is shown while the pointer is near it, the replay is in use, or pinned.
    pub pinned: bool,
}

impl Default for Replay {
    fn default() -> Self {
        Replay {
            ring: Default::default(),
            states: Default::default(),
            flows: VecDeque::new(),
            cursor: None,
            playing: false,
            speed: 1.0,
            play_acc: 0.0,
            last_tick: None,
            gpu: Default::default(),
            queue: None,
            gpu_failed: false,
            save: None,
            save_seconds: 10.0,
            save_format: SaveFormat::Mp4,
            keep_sent: None,
            resuming: None,
            host_cap: available_memory().map(|b| b / 2),
            pinned: false,
        }
    }
}

/// Bytes of memory available now (Linux: `MemAvailable` of /proc/meminfo), when known.
pub fn available_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Replay {
    /// The budget in bytes for `mb` MiB, capped by half the memory available at the start.
    pub fn budget(&self, mb: u64) -> usize {
        let asked = (mb as usize).saturating_mul(1 << 20);
        self.host_cap.map_or(asked, |c| asked.min(c))
    }

    /// Whether the budget was capped below what the settings ask.
    pub fn capped(&self, mb: u64) -> bool {
        self.budget(mb) < (mb as usize).saturating_mul(1 << 20)
    }

    /// The stored frame on display, if any.
    pub fn shown(&self) -> Option<&ring::StoredFrame> {
        let i = self.ring.index_of(self.cursor?)?;
        self.ring.get(i)
    }

    /// The index of the frame on display (the newest while live).
    pub fn index(&self) -> Option<usize> {
        match self.cursor {
            Some(id) => self.ring.index_of(id),
            None => self.ring.len().checked_sub(1),
        }
    }

    /// The flow window the view showed with stored frame `id`.
    pub fn window_for(&self, id: u64) -> Option<Arc<Fields>> {
        self.flows.iter().rev().find(|(first, _)| *first <= id).map(|(_, f)| f.clone())
    }

    /// Seconds of history held (drawn time from the oldest stored frame to the newest).
    pub fn seconds(&self) -> f64 {
        self.ring.seconds()
    }

    /// Drops flow windows no stored frame showed.
    fn forget_flows(&mut self) {
        let Some(oldest) = self.ring.get(0).map(|f| f.id) else {
            self.flows.clear();
            return;
        };
        while self.flows.len() > 1 && self.flows[1].0 <= oldest {
            self.flows.pop_front();
        }
    }
}
