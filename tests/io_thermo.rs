//! Thermo CSV logs: exact headers for both unit systems, per-atom values in round-trip
//! precision, rows readable while the log is still open, the thermal temperature's column in
//! flows, and reader errors with line numbers.

use std::path::PathBuf;

use argon_sandbox::io::thermo::{ThermoWriter, read_thermo_csv};
use argon_sandbox::sim::Telemetry;
use argon_sandbox::units::{
    UnitSystem, reduced_energy_to_kj_per_mol, reduced_pressure_to_mpa, reduced_time_to_ps, reduced_to_kelvin,
};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-thermo-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sample(step: u64) -> Telemetry {
    Telemetry {
        step,
        time: step as f64 * 0.005,
        n_atoms: 4000,
        dof: 11997.0,
        temperature: 1.44 + 1e-3 / (step as f64 + 3.0),
        kinetic_energy: 8637.84 + step as f64 / 7.0,
        pair_energy: -27466.9 - 0.1 / 3.0,
        external_energy: 0.1,
        virial: 1.0,
        pressure: -0.7 + 1.0 / 3.0,
        momentum: [0.0; 3],
        piston: None,
        steps_per_s: 1e3,
        ..Telemetry::default()
    }
}

#[test]
fn lj_log_has_lammps_columns_and_exact_values() {
    let dir = temp_dir("lj");
    let path = dir.join("thermo.csv");
    let mut w = ThermoWriter::create(&path, UnitSystem::Lj).unwrap();
    let rows: Vec<Telemetry> = (0..5).map(|i| sample(i * 50)).collect();
    for (i, t) in rows.iter().enumerate() {
        w.write_row(t).unwrap();
        // Flushed per row: readable while the writer is still open.
        assert_eq!(read_thermo_csv(&path).unwrap().len(), i + 1);
    }
    w.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().next(), Some("step,temp,pe,ke,etotal,press"));
    let read = read_thermo_csv(&path).unwrap();
    for (r, t) in read.iter().zip(&rows) {
        assert_eq!(r.step, t.step);
        let want = [
            ("temp", t.temperature),
            ("pe", t.pe_per_atom()),
            ("ke", t.ke_per_atom()),
            ("etotal", t.etotal_per_atom()),
            ("press", t.pressure),
        ];
        assert_eq!(r.values.len(), want.len());
        for (name, v) in want {
            assert_eq!(r.get(name).unwrap().to_bits(), v.to_bits(), "{name} at step {}", t.step);
        }
    }
    assert_eq!(read[1].get("pe").unwrap(), (-27466.9 - 0.1 / 3.0 + 0.1) / 4000.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn argon_log_converts_units() {
    let dir = temp_dir("argon");
    let path = dir.join("thermo.csv");
    let mut w = ThermoWriter::create(&path, UnitSystem::Argon).unwrap();
    let t = sample(200);
    w.write_row(&t).unwrap();
    w.write_row(&Telemetry { n_atoms: 0, ..sample(300) }).unwrap();
    w.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("step,time_ps,temperature_K,pe_kJ_per_mol,ke_kJ_per_mol,etotal_kJ_per_mol,pressure_MPa")
    );
    let read = read_thermo_csv(&path).unwrap();
    let r = &read[0];
    assert_eq!(r.step, 200);
    assert_eq!(r.get("time_ps").unwrap(), reduced_time_to_ps(1.0));
    assert!((r.get("time_ps").unwrap() - 2.156).abs() < 2e-3);
    assert_eq!(r.get("temperature_K").unwrap(), reduced_to_kelvin(t.temperature));
    assert_eq!(r.get("pe_kJ_per_mol").unwrap(), reduced_energy_to_kj_per_mol(t.pe_per_atom()));
    assert_eq!(r.get("ke_kJ_per_mol").unwrap(), reduced_energy_to_kj_per_mol(t.ke_per_atom()));
    assert_eq!(r.get("etotal_kJ_per_mol").unwrap(), reduced_energy_to_kj_per_mol(t.etotal_per_atom()));
    assert_eq!(r.get("pressure_MPa").unwrap(), reduced_pressure_to_mpa(t.pressure));
    // epsilon of argon is about 0.996 kJ/mol.
    assert!((reduced_energy_to_kj_per_mol(1.0) - 0.996).abs() < 1e-3);
    assert_eq!(read[1].get("pe_kJ_per_mol"), Some(0.0), "no atoms: per-atom values are 0");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// In a flow the log has the thermal temperature right after the temperature, exact in LJ
/// units and converted to K in argon units; a record without one writes NaN there. A whole-CSV
/// export has the column exactly when some record has a thermal temperature.
#[test]
fn flow_logs_carry_the_thermal_temperature_after_the_temperature() {
    use argon_sandbox::io::thermo::{ARGON_COLUMNS, LJ_COLUMNS, thermo_csv};
    use argon_sandbox::sim::ThermalTelemetry;
    let dir = temp_dir("thermal");
    let thermal = ThermalTelemetry { temperature: 3.0 + 1.0 / 7.0, kinetic_energy: 1.0, dof: 9.0, occupied_bins: 1 };
    let flowing = Telemetry { thermal: Some(thermal), ..sample(100) };
    for (units, header, column, want) in [
        (UnitSystem::Lj, "step,temp,temp_thermal,pe,ke,etotal,press", "temp_thermal", thermal.temperature),
        (
            UnitSystem::Argon,
            "step,time_ps,temperature_K,thermal_temperature_K,pe_kJ_per_mol,ke_kJ_per_mol,etotal_kJ_per_mol,pressure_MPa",
            "thermal_temperature_K",
            reduced_to_kelvin(thermal.temperature),
        ),
    ] {
        let path = dir.join(format!("{units:?}.csv"));
        let mut w = ThermoWriter::create_with(&path, units, true).unwrap();
        w.write_row(&flowing).unwrap();
        w.write_row(&sample(200)).unwrap();
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().next(), Some(header));
        let read = read_thermo_csv(&path).unwrap();
        assert_eq!(read[0].get(column).unwrap().to_bits(), want.to_bits(), "{units:?}");
        assert!(read[1].get(column).unwrap().is_nan(), "a record without a thermal temperature");
        // Every other column as in a plain log.
        let plain = dir.join(format!("{units:?}_plain.csv"));
        let mut w = ThermoWriter::create(&plain, units).unwrap();
        w.write_row(&flowing).unwrap();
        w.finish().unwrap();
        let base = &read_thermo_csv(&plain).unwrap()[0];
        assert_eq!(base.values.len() + 1, read[0].values.len());
        for (name, v) in &base.values {
            assert_eq!(read[0].get(name).unwrap().to_bits(), v.to_bits(), "{name}");
        }
    }
    // The app's export: the column only when a record has a thermal temperature.
    let plain = thermo_csv(&[sample(0), sample(100)], UnitSystem::Lj);
    assert_eq!(plain.lines().next().unwrap(), LJ_COLUMNS.join(","));
    let mixed = thermo_csv(&[sample(0), flowing.clone()], UnitSystem::Argon);
    let header = mixed.lines().next().unwrap();
    assert!(header.contains("thermal_temperature_K") && header != ARGON_COLUMNS.join(","), "{header}");
    assert!(mixed.lines().nth(1).unwrap().split(',').nth(3) == Some("NaN"), "{mixed}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reader_reports_bad_rows() {
    let dir = temp_dir("bad");
    let path = dir.join("bad.csv");
    let cases = [
        ("", 1, "header: the file is empty"),
        ("temp,pe\n1,2\n", 1, "no step column"),
        ("step,temp,temp\n", 1, "repeated"),
        ("step,temp\n0,1.0\n10,abc\n", 3, "column 2 (temp): \"abc\" is not a number"),
        ("step,temp\n0,1.0,2.0\n", 2, "3 cells, header has 2"),
        ("step,temp\n-1,1.0\n", 2, "column 1 (step)"),
    ];
    for (text, line, needle) in cases {
        std::fs::write(&path, text).unwrap();
        let e = read_thermo_csv(&path).unwrap_err();
        assert_eq!(e.line(), Some(line), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
