//! Saves survive crashes: a child process killed with SIGKILL while it writes leaves either
//! the old file or the new one under the name, never a broken one. Checked for a trajectory
//! (written for seconds, renamed at the end) and for the LAMMPS deck (two files written
//! atomically), each killed at many moments.

mod common;

use std::path::Path;

use common::temp_dir;
use std::process::Command;
use std::time::{Duration, Instant};

fn bin() -> String {
    std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string())
}

/// Starts `args`, kills it (SIGKILL) after `after`, and says whether it was still running.
fn kill_after(args: &[&str], after: Duration) -> bool {
    let mut child = Command::new(bin()).args(args).spawn().unwrap();
    let end = Instant::now() + after;
    while Instant::now() < end {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    running
}

fn scene(dir: &Path, atoms: &str) -> String {
    let text = format!(
        r#"(version: 1, name: "crash", box: (size: (60.0, 40.0, 20.0), boundaries: (Wall, Wall, Periodic)),
            temperature_k: 100.0, atoms: [Lattice(kind: Fcc, density: {atoms})], seed: 4)"#
    );
    let path = dir.join("crash.ron");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_killed_trajectory_leaves_the_old_file() {
    let dir = temp_dir("crash-xyz");
    let scene = scene(&dir, "0.3");
    let target = dir.join("t.xyz");
    let old = "1\nLattice=\"1 0 0 0 1 0 0 0 1\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\nAr 0.5 0.5 0.5\n";
    std::fs::write(&target, old).unwrap();
    let t = target.to_str().unwrap();
    let mut caught_writing = 0;
    for k in 0..8 {
        let args = ["run", &scene, "--steps", "1000000", "--backend", "cpu", "--quiet", "--xyz", t, "--xyz-every", "5"];
        if kill_after(&args, Duration::from_millis(300 + 150 * k)) {
            caught_writing += 1;
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), old, "kill {k}: the old file was damaged");
    }
    assert!(caught_writing >= 6, "the child finished before it could be killed");
    // An uninterrupted run replaces it with a complete trajectory.
    let out = Command::new(bin())
        .args(["run", &scene, "--steps", "20", "--backend", "cpu", "--quiet", "--xyz", t, "--xyz-every", "10"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&target).unwrap();
    assert_eq!(text.matches("Step=").count(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_export_leaves_old_or_new_files_never_broken_ones() {
    let dir = temp_dir("crash-deck");
    let scene = scene(&dir, "0.8");
    // The new deck, written without interruption elsewhere.
    let fresh = dir.join("fresh");
    let out = Command::new(bin())
        .args(["export-lammps", &scene, "--quiet", "--out", fresh.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let new_data = std::fs::read(fresh.join("data.argon")).unwrap();
    let new_input = std::fs::read(fresh.join("in.argon")).unwrap();
    let deck = dir.join("deck");
    std::fs::create_dir_all(&deck).unwrap();
    let (old_data, old_input) = (b"old data\n".to_vec(), b"old input\n".to_vec());
    let mut outcomes = [0usize; 2];
    for k in 0..40 {
        std::fs::write(deck.join("data.argon"), &old_data).unwrap();
        std::fs::write(deck.join("in.argon"), &old_input).unwrap();
        kill_after(
            &["export-lammps", &scene, "--quiet", "--out", deck.to_str().unwrap()],
            Duration::from_millis(5 * k),
        );
        let data = std::fs::read(deck.join("data.argon")).unwrap();
        let input = std::fs::read(deck.join("in.argon")).unwrap();
        assert!(data == old_data || data == new_data, "kill {k}: data.argon is broken ({} bytes)", data.len());
        assert!(input == old_input || input == new_input, "kill {k}: in.argon is broken");
        outcomes[usize::from(data == new_data)] += 1;
    }
    // Some kills landed before the rename and some after.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends SIGINT (Ctrl+C) to `child` after `after` and waits for it to end.
fn interrupt_after(child: &mut std::process::Child, after: Duration) -> std::process::ExitStatus {
    std::thread::sleep(after);
    // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
    let ok = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(ok, 0, "could not signal the child");
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < end, "the child did not stop after Ctrl+C");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_finishes_runs_and_recordings_into_whole_files() {
    let dir = temp_dir("crash-sigint");
    let scene = scene(&dir, "0.3");
    // A run: its trajectory is finished and in place.
    let xyz = dir.join("t.xyz");
    let mut child = Command::new(bin())
        .args(["run", &scene, "--steps", "100000000", "--backend", "cpu", "--quiet", "--xyz-every", "10", "--xyz"])
        .arg(&xyz)
        .spawn()
        .unwrap();
    let status = interrupt_after(&mut child, Duration::from_millis(1500));
    assert!(status.success(), "run ended with {status}");
    let frames = argon_sandbox::io::extxyz::read_extxyz(&xyz).map(|_| std::fs::read_to_string(&xyz).unwrap());
    let text = frames.expect("the trajectory is readable");
    assert!(text.matches("Step=").count() >= 2, "the trajectory holds too little");
    // A recording: a playable MP4 with the frames made so far.
    let mp4 = dir.join("r.mp4");
    let mut child = Command::new(bin())
        .args(["record", &scene, "--frames", "100000", "--size", "320x240", "--backend", "cpu", "--quiet", "--out"])
        .arg(&mp4)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = interrupt_after(&mut child, Duration::from_millis(4000));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    if !status.success() && err.contains("adapter") && std::env::var_os("ARGON_REQUIRE_RENDER").is_none() {
        println!("skipped: no GPU adapter for the recording ({err})");
        return;
    }
    assert!(status.success(), "record ended with {status}: {err}");
    let file = std::fs::File::open(&mp4).expect("the recording is in place");
    let len = file.metadata().unwrap().len();
    let reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), len).expect("a playable MP4");
    let track = reader.tracks().values().next().unwrap();
    assert!(track.sample_count() >= 1, "no frames in the recording");
    let _ = std::fs::remove_dir_all(&dir);
}
