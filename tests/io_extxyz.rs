//! Extended XYZ reader and writer: bit-identical round trips, the shared LAMMPS validation
//! state, a table of hostile inputs with their line numbers, and a no-panic mutation sweep.

use std::path::PathBuf;

use argon_sandbox::io::extxyz::{ExtXyzWriter, FrameRef, XyzError, parse_extxyz, read_extxyz, write_extxyz};
use argon_sandbox::io::validation_dir;
use argon_sandbox::physics::sim_box::SimBox;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-io-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A deterministic xorshift stream of f64 in [0, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn multi_frame_round_trip_is_bit_identical() {
    let dir = temp_dir("roundtrip");
    let path = dir.join("traj.xyz");
    let b =
        SimBox { lo: [0.1, -3.3, 1e-3], hi: [0.7, 5.123456789, 16.795961913825074], periodic: [true, false, false] };
    let names = vec!["Ar".to_string(), "Kr".to_string()];
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let n = 500;
    let mut pos: Vec<[f64; 3]> = (0..n)
        .map(|_| std::array::from_fn(|k| b.lo[k] + (b.hi[k] - b.lo[k]) * rng.next() * if k == 0 { 3.0 } else { 1.0 }))
        .collect();
    pos[0] = [b.lo[0] - 1e-300, b.lo[1], b.hi[2]];
    let mut vel: Vec<[f64; 3]> = (0..n).map(|_| std::array::from_fn(|_| (rng.next() - 0.5) * 10.0)).collect();
    vel[0] = [-0.0, 5e-324, 1.7976931348623157e308];
    vel[1] = [1e-7, -1e16, 0.1 + 0.2];
    let types: Vec<u32> = (0..n).map(|i| (i % 3 == 0) as u32).collect();
    let frame = |step, time, velocities| FrameRef {
        sim_box: &b,
        species_names: &names,
        types: &types,
        positions: &pos,
        velocities,
        step,
        time,
        units: "lj",
        masses: None,
        dye: None,
    };
    let mut w = ExtXyzWriter::create(&path).unwrap();
    w.write_frame(&frame(0, 0.0, Some(&vel))).unwrap();
    assert!(!path.exists(), "the trajectory appears only on finish");
    let t2 = 7.0 * (0.1 + 0.2);
    w.write_frame(&frame(7, t2, None)).unwrap();
    assert_eq!(w.frames_written(), 2);
    w.finish().unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let first = read_extxyz(&path).unwrap();
    let split = text.match_indices('\n').nth(n + 1).unwrap().0 + 1;
    let second = parse_extxyz(&text[split..], "frame 2").unwrap();
    for (f, step, has_vel) in [(&first, 0, true), (&second, 7, false)] {
        assert_eq!(f.step, Some(step));
        assert_eq!(f.units.as_deref(), Some("lj"));
        assert_eq!(f.sim_box.periodic, b.periodic);
        for k in 0..3 {
            assert_eq!(f.sim_box.lo[k].to_bits(), b.lo[k].to_bits());
            assert_eq!(f.sim_box.hi[k].to_bits(), b.hi[k].to_bits(), "hi along axis {k}");
        }
        assert_eq!(f.positions.len(), n);
        for i in 0..n {
            assert_eq!(f.species[i], names[types[i] as usize]);
            assert_eq!(f.positions[i].map(f64::to_bits), pos[i].map(f64::to_bits), "atom {i}");
        }
        assert_eq!(f.velocities.is_some(), has_vel);
    }
    assert_eq!(second.time.unwrap().to_bits(), t2.to_bits());
    for (a, e) in first.velocities.as_ref().unwrap().iter().zip(&vel) {
        assert_eq!(a.map(f64::to_bits), e.map(f64::to_bits));
    }
    let header = text.lines().nth(1).unwrap();
    assert!(header.starts_with("Lattice=\"0.6 0.0 0.0 0.0 "), "{header}");
    assert!(
        header.contains("Properties=species:S:1:pos:R:3:velo:R:3 pbc=\"T F F\" Time=0.0 Step=0 units=lj"),
        "{header}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn single_frame_and_refused_frames() {
    let dir = temp_dir("single");
    let path = dir.join("one.xyz");
    let b = SimBox::new([5.0; 3], [true; 3]);
    let names = vec!["Ar".to_string()];
    let good = FrameRef {
        sim_box: &b,
        species_names: &names,
        types: &[0],
        positions: &[[1.0, 2.0, 3.0]],
        velocities: None,
        step: 3,
        time: 0.015,
        units: "lj",
        masses: None,
        dye: None,
    };
    write_extxyz(&path, &good).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "1\nLattice=\"5.0 0.0 0.0 0.0 5.0 0.0 0.0 0.0 5.0\" Origin=\"0.0 0.0 0.0\" \
         Properties=species:S:1:pos:R:3 pbc=\"T T T\" Time=0.015 Step=3 units=lj\nAr 1.0 2.0 3.0\n"
    );
    let bad_names = vec!["A r".to_string()];
    let bad = [
        FrameRef { types: &[0, 0], ..good },
        FrameRef { types: &[1], ..good },
        FrameRef { velocities: Some(&[]), ..good },
        FrameRef { species_names: &bad_names, ..good },
        FrameRef { velocities: Some(&[[0.1, 0.2, 0.3]]), masses: Some(&[]), ..good },
        FrameRef { velocities: Some(&[[0.1, 0.2, 0.3]]), masses: Some(&[-1.0]), ..good },
        FrameRef { units: "real units", ..good },
    ];
    for f in bad {
        let mut w = ExtXyzWriter::create(&dir.join("bad.xyz")).unwrap();
        assert_eq!(w.write_frame(&f).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    }
    assert!(!dir.join("bad.xyz").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reads_the_lammps_validation_state() {
    let path = validation_dir().join("lammps_fcc4000_T1.44_initial.extxyz");
    let f = read_extxyz(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.positions.len(), 4000);
    assert_eq!(f.species.len(), 4000);
    assert!(f.species.iter().all(|s| s == "Ar"));
    // The file's Lattice has 14 significant digits (16.795961913825); LAMMPS's box is
    // 16.795961913825074, 4.4e-15 relative away.
    assert_eq!(f.sim_box.lo, [0.0; 3]);
    assert_eq!(f.sim_box.hi, [16.795961913825; 3]);
    assert!((f.sim_box.hi[0] / 16.795961913825074 - 1.0).abs() < 1e-14);
    assert_eq!(f.sim_box.periodic, [true; 3]);
    assert_eq!(f.units.as_deref(), Some("lj"));
    assert_eq!(f.step, None);
    assert_eq!(f.positions[1], [0.839798095691254, 0.839798095691254, 0.0]);
    let v = f.velocities.as_ref().expect("the file has vel:R:3");
    assert_eq!(v.len(), 4000);
    assert_eq!(v[0], [-0.127588317062561, -0.672731010354124, -2.033162133344073]);
    assert_eq!(v[3999], [-1.211410699855875, 1.848551133728415, 1.845729588176399]);
}

const LATTICE: &str = r#"Lattice="10 0 0 0 10 0 0 0 10""#;

fn frame(n: &str, comment: &str, atoms: &[&str]) -> String {
    let mut s = format!("{n}\n{comment}\n");
    for a in atoms {
        s.push_str(a);
        s.push('\n');
    }
    s
}

fn plain(atoms: &[&str]) -> String {
    frame(&atoms.len().to_string(), &format!("{LATTICE} Properties=species:S:1:pos:R:3:vel:R:3"), atoms)
}

#[test]
fn hostile_inputs_are_refused_with_line_and_field() {
    let walls = format!(r#"{LATTICE} Origin="0 0 -5" pbc="T T F""#);
    let atom = "Ar 1 2 3";
    let long_comment = format!("{LATTICE} junk={}", "x".repeat(2 << 20));
    let cases: Vec<(String, u64, &[&str])> = vec![
        (String::new(), 1, &["atom count: the file is empty"]),
        ("abc\n".into(), 1, &["atom count: \"abc\" is not a positive integer"]),
        ("-5\nx\n".into(), 1, &["\"-5\" is not a positive integer"]),
        (frame("2 atoms", LATTICE, &[atom, atom]), 1, &["\"2 atoms\" is not a positive integer"]),
        (frame("0", LATTICE, &[]), 1, &["atom count: 0 atoms; a frame needs at least one"]),
        (frame("99999999999999999999999", LATTICE, &[atom]), 1, &["is too large"]),
        (frame("60000000", LATTICE, &[atom]), 1, &["60000000 is more than the 50000000 atoms"]),
        (frame("100", LATTICE, &[atom]), 1, &["100 atoms cannot fit in a file of"]),
        ("1        \n".into(), 2, &["comment line: missing"]),
        (frame("3", &format!("{LATTICE} note=\"{}\"", "y".repeat(60)), &[atom, atom]), 5, &["atom 3 of 3: missing"]),
        (frame("1", "Properties=species:S:1:pos:R:3", &[atom]), 2, &["Lattice: missing", "--init"]),
        (frame("1", r#"Lattice="10 1 0 0 10 0 0 0 10""#, &[atom]), 2, &["number 2 is 1: only orthogonal"]),
        (frame("1", r#"Lattice="10 0 0 0 10 0 0 0""#, &[atom]), 2, &["Lattice: has 8 numbers, expected 9"]),
        (frame("1", r#"Lattice="abc 0 0 0 10 0 0 0 10""#, &[atom]), 2, &["number 1: \"abc\" is not a number"]),
        (frame("1", r#"Lattice="10 0 0 0 -10 0 0 0 10""#, &[atom]), 2, &["along y is -10; it must be positive"]),
        (frame("1", r#"Lattice="10 0 0 0 10 0 0 0 10"#, &[atom]), 2, &["Lattice: the quoted value has no closing"]),
        (frame("1", &format!("{LATTICE} {LATTICE}"), &[atom]), 2, &["Lattice: appears twice"]),
        (frame("1", &format!("{LATTICE} pbc=\"T T\""), &[atom]), 2, &["pbc: \"T T\" is not three of T/F"]),
        (frame("1", &format!("{LATTICE} pbc=\"T X T\""), &[atom]), 2, &["pbc:"]),
        (frame("1", &format!("{LATTICE} Origin=\"0 0\""), &[atom]), 2, &["Origin: has 2 numbers"]),
        (frame("1", &format!("{LATTICE} Properties=species:S:1:id:I:1"), &[atom]), 2, &["no position property"]),
        (frame("1", &format!("{LATTICE} Properties=pos:R:3"), &[atom]), 2, &["no species property"]),
        (frame("1", &format!("{LATTICE} Properties=species:S:1:pos:R"), &[atom]), 2, &["triples"]),
        (frame("1", &format!("{LATTICE} Properties=species:S:1:pos:R:2"), &[atom]), 2, &["pos is R:2; it must be R:3"]),
        (frame("1", &format!("{LATTICE} Properties=species:S:1:pos:Q:3"), &[atom]), 2, &["type \"Q\""]),
        (
            frame("1", &format!("{LATTICE} Properties=species:S:1:pos:R:3:x:R:1000000000"), &[atom]),
            2,
            &["column count"],
        ),
        (
            frame("1", &format!("{LATTICE} Properties=species:S:1:pos:R:3:velo:R:3:vel:R:3"), &[atom]),
            2,
            &["vel is a second velocity property"],
        ),
        (frame("1", &format!("{LATTICE} Step=abc"), &[atom]), 2, &["Step: \"abc\" is not a non-negative integer"]),
        (frame("1", &format!("{LATTICE} Time=nan"), &[atom]), 2, &["Time: \"nan\" is not a finite number"]),
        (frame("1", &long_comment, &[atom]), 2, &["line: longer than"]),
        (plain(&["Ar 1.0 abc 3.0 0 0 0"]), 3, &["column 3 (pos y): \"abc\" is not a number"]),
        (
            plain(&["Ar 1 2 3 0 0"]),
            3,
            &["atom 1 of 1: has 6 columns but Properties=species:S:1:pos:R:3:vel:R:3 declares 7"],
        ),
        (plain(&["Ar 1 2 3 0 0 0 9"]), 3, &["has 8 columns"]),
        (plain(&[""]), 3, &["has 0 columns"]),
        (plain(&["Ar 1 2 3 0 0 0", "Ar NaN 2 3 0 0 0"]), 4, &["column 2 (pos x): \"NaN\" is not a finite number"]),
        (plain(&["Ar 1 2 3 0 -inf 0"]), 3, &["column 6 (vel y): \"-inf\" is not a finite number"]),
        (plain(&["Ar 1 2 3 0 0 1e999"]), 3, &["column 7 (vel z)", "not a finite number"]),
        (
            frame("1", &walls, &["Ar 1 2 5.5"]),
            3,
            &["column 4 (pos z): 5.5 is outside the box [-5.0, 5.0] along z", "walls"],
        ),
        (frame("1", &walls, &["Ar 1 2 -5.01"]), 3, &["outside the box"]),
    ];
    assert!(cases.len() >= 12);
    for (text, line, needles) in &cases {
        let short: String = text.chars().take(120).collect();
        let e: XyzError = match parse_extxyz(text, "case.xyz") {
            Ok(_) => panic!("accepted: {short:?}"),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert_eq!(e.line(), Some(*line), "{msg}\n for {short:?}");
        assert!(msg.starts_with(&format!("case.xyz:{line}: ")), "{msg}");
        for needle in *needles {
            assert!(msg.contains(needle), "{msg:?} lacks {needle:?}\n for {short:?}");
        }
    }
}

#[test]
fn accepted_variants() {
    // Any property order, unknown properties skipped by their column counts, ASE/QUIP names,
    // CRLF line ends, spaces around '=', pbc spelled True/False/1/0, atoms on walls.
    let text = "2\r\n  Properties = id:I:1:vel:R:3:Z:I:1:species:S:1:forces:R:3:pos:R:3:charge:R:1 \
                Lattice=\"4 0 0 0 5 0 0 0 6\" Origin=\"-1 -2 -3\" pbc=\"True false 1\" step=12 UNITS=lj\r\n\
                7 0.1 0.2 0.3 18 Ar 9 9 9 -1.0 3.0 3.0 0.5\r\n\
                8 0.4 0.5 0.6 36 Kr 9 9 9 0.5 -2.0 -3.0 0.5\r\n";
    let f = parse_extxyz(text, "v.xyz").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.species, ["Ar", "Kr"]);
    assert_eq!(f.positions, [[-1.0, 3.0, 3.0], [0.5, -2.0, -3.0]]);
    assert_eq!(f.velocities.unwrap(), [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]);
    assert_eq!(f.sim_box, SimBox { lo: [-1.0, -2.0, -3.0], hi: [3.0, 3.0, 3.0], periodic: [true, false, true] });
    assert_eq!((f.step, f.units.as_deref()), (Some(12), Some("lj")));

    // Plain XYZ columns (no Properties key) with a box; trailing frames are not read.
    let f = parse_extxyz(&format!("1\n{LATTICE}\nAr 1 2 3\n1\nbroken\n"), "p.xyz").unwrap();
    assert_eq!((f.positions.len(), f.velocities, f.units), (1, None, None));
    assert_eq!(f.sim_box.periodic, [true; 3]);
}

#[test]
fn file_errors_name_the_file() {
    let dir = temp_dir("files");
    let missing = dir.join("nope.xyz");
    let msg = read_extxyz(&missing).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}: cannot read", missing.display())), "{msg}");
    let binary = dir.join("bin.xyz");
    let mut bytes = format!("1\n{LATTICE}\nAr 1 2 3\n").into_bytes();
    let at = bytes.len() - 3;
    bytes[at] = 0xff;
    std::fs::write(&binary, &bytes).unwrap();
    let e = read_extxyz(&binary).unwrap_err();
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mutated_files_never_panic() {
    let base = plain(&["Ar 1 2 3 0.5 -0.5 1e-3", "Kr 4 5 6 0 0 0", "Ar 7 8 9 1 1 1"]);
    let pieces = ["", " ", "\n", "\"", "=", ":", "0", "-", "1e400", "nan", "Lattice=", "{", "\r", "999999999999", "é"];
    let mut rng = Rng(12345);
    let mut accepted = 0;
    for _ in 0..100_000 {
        let mut s: Vec<char> = base.chars().collect();
        for _ in 0..1 + (rng.next() * 4.0) as usize {
            let at = (rng.next() * s.len() as f64) as usize;
            let cut = (rng.next() * 4.0) as usize;
            let end = (at + cut).min(s.len());
            let piece = pieces[(rng.next() * pieces.len() as f64) as usize];
            s.splice(at..end, piece.chars());
        }
        let text: String = s.into_iter().collect();
        if let Ok(f) = parse_extxyz(&text, "m.xyz") {
            accepted += 1;
            assert!(f.positions.iter().flatten().all(|x| x.is_finite()));
        }
    }
    assert!(accepted > 0 && accepted < 100_000, "{accepted}");
}

/// With masses, the frame also carries ASE's `masses` and `momenta` columns (m v, per ASE
/// time unit in `metal` units); our reader skips them and reads the rest back bit for bit.
#[test]
fn ase_momenta_columns_are_written_and_skipped_on_reading() {
    let dir = std::env::temp_dir().join(format!("argon-xyz-ase-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.xyz");
    let b = SimBox::new([5.0; 3], [true; 3]);
    let names = vec!["Ar".to_string(), "Kr".to_string()];
    let (pos, vel) = ([[1.0, 2.0, 3.0], [2.5, 1.5, 0.5]], [[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]]);
    let frame = FrameRef {
        sim_box: &b,
        species_names: &names,
        types: &[0, 1],
        positions: &pos,
        velocities: Some(&vel),
        step: 1,
        time: 0.5,
        units: "metal",
        masses: Some(&[39.948, 83.798]),
        dye: None,
    };
    write_extxyz(&path, &frame).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("Properties=species:S:1:pos:R:3:velo:R:3:masses:R:1:momenta:R:3"), "{text}");
    let kr: Vec<f64> = text.lines().nth(3).unwrap().split_whitespace().skip(7).map(|x| x.parse().unwrap()).collect();
    let t = argon_sandbox::io::extxyz::ASE_TIME_PS;
    assert_eq!(kr, vec![83.798, 83.798 * (3.0 * t), 83.798 * (0.0 * t), 83.798 * (-0.25 * t)]);
    let back = read_extxyz(&path).unwrap();
    assert_eq!(back.positions, pos.to_vec());
    assert_eq!(back.velocities, Some(vel.to_vec()));
    let _ = std::fs::remove_dir_all(&dir);
}
