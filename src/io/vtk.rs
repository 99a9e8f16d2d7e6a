//! VTK XML files of flow fields for ParaView (and VTK, VisIt, PyVista): one `.vti` image per
//! finished window, each bin a cell, every layer a `Float64` cell array in ASCII (the dye
//! fraction too, where the sums counted dye: every backend's, not a LAMMPS run's rebuilt
//! ones), plus the velocity as a 3-component vector; and the `.pvd` collection that strings them into a time
//! series. Lengths in sigma, times in tau, values in reduced LJ units (listed in a comment at
//! the top of each file).
//!
//! `nan` in an ASCII array is not portable (VTK 9.7 reads it except as an array's last token,
//! where the whole array is refused; readers that parse with C++ streams refuse it anywhere), so
//! values that are NaN (no atoms in the bin, or too few for a temperature) are written as 0.
//! Bins no atom visited are also marked hidden in the standard `vtkGhostType` array (value 32,
//! `HIDDENCELL`), which ParaView and VTK filters skip; the `count` layer says how many
//! atom-samples back every bin.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::flow::{FieldKind, Fields};
use crate::io::atomic::write_atomic;

/// `vtkDataSetAttributes::HIDDENCELL`: the ghost-array bit that blanks a cell.
pub const HIDDEN_CELL: u8 = 32;

/// Values per line inside a data array.
const PER_LINE: usize = 6;

/// Writes `fields` as VTK XML image data (`.vti`) at simulation time `time_tau`, atomically.
pub fn write_vti(path: &Path, fields: &Fields, time_tau: f64) -> io::Result<()> {
    write_atomic(path, vti_string(fields, time_tau).as_bytes())
}

/// The text of a `.vti` file of `fields` at time `time_tau`.
pub fn vti_string(fields: &Fields, time_tau: f64) -> String {
    let g = &fields.grid;
    let [nx, ny, nz] = g.n;
    let extent = format!("0 {nx} 0 {ny} 0 {nz}");
    let mut s = String::with_capacity(g.len() * 16 * (FieldKind::ALL.len() + 4) + 2048);
    s.push_str("<?xml version=\"1.0\"?>\n<!-- argon-sandbox flow field: ");
    let _ = write!(
        s,
        "{} samples from t = {} to {} tau; reduced LJ units (sigma = epsilon = m_Ar = k_B = 1):",
        fields.samples,
        num(fields.time[0]),
        num(fields.time[1])
    );
    for k in fields.kinds() {
        let _ = write!(s, " {} [{}]", k.name(), k.unit_lj());
    }
    s.push_str(". Empty values are written as 0; bins without atoms are hidden (vtkGhostType). -->\n");
    s.push_str("<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    let _ = writeln!(
        s,
        "  <ImageData WholeExtent=\"{extent}\" Origin=\"{}\" Spacing=\"{}\">",
        triple(g.origin),
        triple(g.cell)
    );
    s.push_str("    <FieldData>\n");
    for (name, v) in [("TimeValue", time_tau), ("samples", fields.samples as f64), ("span_tau", fields.span())] {
        let _ = writeln!(
            s,
            "      <DataArray type=\"Float64\" Name=\"{name}\" NumberOfTuples=\"1\" format=\"ascii\">{}</DataArray>",
            num(v)
        );
    }
    s.push_str("    </FieldData>\n");
    let _ = writeln!(s, "    <Piece Extent=\"{extent}\">");
    s.push_str("      <CellData Scalars=\"density\" Vectors=\"velocity\">\n");
    for k in fields.kinds() {
        array(&mut s, k.name(), 1, fields.layer(k).iter().copied());
    }
    let velocity = (0..g.len()).flat_map(|b| [fields.vx[b], fields.vy[b], fields.vz[b]]);
    array(&mut s, "velocity", 3, velocity);
    s.push_str("        <DataArray type=\"UInt8\" Name=\"vtkGhostType\" format=\"ascii\">\n");
    for line in fields.count.chunks(PER_LINE * 4) {
        s.push_str("         ");
        for &c in line {
            let _ = write!(s, " {}", if c > 0.0 { 0 } else { HIDDEN_CELL });
        }
        s.push('\n');
    }
    s.push_str("        </DataArray>\n      </CellData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n");
    s
}

/// One `Float64` cell array; NaN and infinities written as 0.
fn array(s: &mut String, name: &str, components: usize, values: impl Iterator<Item = f64>) {
    let _ = writeln!(
        s,
        "        <DataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"{components}\" format=\"ascii\">"
    );
    for (i, v) in values.enumerate() {
        s.push_str(if i % PER_LINE == 0 { if i == 0 { "          " } else { "\n          " } } else { " " });
        s.push_str(&num(if v.is_finite() { v } else { 0.0 }));
    }
    s.push_str("\n        </DataArray>\n");
}

/// A number in shortest round-trip form, with an exponent when very small or large (never
/// hundreds of digits).
fn num(v: f64) -> String {
    if v == 0.0 || (1e-4..1e15).contains(&v.abs()) { format!("{v}") } else { format!("{v:e}") }
}

fn triple(v: [f64; 3]) -> String {
    format!("{} {} {}", num(v[0]), num(v[1]), num(v[2]))
}

/// Writes a `.pvd` collection listing `datasets` (time in tau, file path as written into the
/// collection: relative to the `.pvd`'s folder), atomically.
pub fn write_pvd(path: &Path, datasets: &[(f64, String)]) -> io::Result<()> {
    write_atomic(path, pvd_string(datasets).as_bytes())
}

/// The text of a `.pvd` collection of `datasets` (time in tau, file).
pub fn pvd_string(datasets: &[(f64, String)]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for (t, file) in datasets {
        let _ = writeln!(s, "    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>", num(*t), escape(file));
    }
    s.push_str("  </Collection>\n</VTKFile>\n");
    s
}

/// A time series of field files in one folder: `fields_0001.vti`, `fields_0002.vti`, ... and
/// `fields.pvd` listing them, rewritten (atomically) after each file, so a run stopped at any
/// point leaves a collection ParaView opens.
pub struct VtkSeries {
    dir: std::path::PathBuf,
    datasets: Vec<(f64, String)>,
}

impl VtkSeries {
    /// A series in `dir`, created if missing.
    pub fn create(dir: &Path) -> io::Result<VtkSeries> {
        std::fs::create_dir_all(dir)?;
        Ok(VtkSeries { dir: dir.to_path_buf(), datasets: Vec::new() })
    }

    /// Writes one window (stamped with its end time) and the updated collection; returns the
    /// file's path.
    pub fn write(&mut self, fields: &Fields) -> io::Result<std::path::PathBuf> {
        let name = format!("fields_{:04}.vti", self.datasets.len() + 1);
        let path = self.dir.join(&name);
        write_vti(&path, fields, fields.time[1])?;
        self.datasets.push((fields.time[1], name));
        write_pvd(&self.dir.join("fields.pvd"), &self.datasets)?;
        Ok(path)
    }

    /// Files written so far.
    pub fn len(&self) -> usize {
        self.datasets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.datasets.is_empty()
    }
}

/// `text` escaped for an XML attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    /// A 3 x 2 x 2 field with one empty bin and two atoms moving at (1, 2, 3).
    fn small_field() -> Fields {
        let b = SimBox::new([6.0, 4.0, 4.0], [true, true, true]);
        let spec = FieldSpec { bin: 2.0, three_d: true, ..FieldSpec::default() };
        let grid = Grid::new(&spec, &b).unwrap();
        let mut acc = Accumulator::new(&grid);
        let pos: Vec<[f64; 3]> = (0..grid.len() - 1).flat_map(|bin| [grid.centre(bin); 2]).collect();
        let vel = vec![[1.0, 2.0, 3.0]; pos.len()];
        acc.sample(&grid, &pos, &vel, &[1.0], &vec![0; pos.len()]);
        // One of the two atoms in each bin carries dye.
        let dye: Vec<u16> = (0..pos.len()).map(|i| (i % 2) as u16).collect();
        acc.sample_dye(&grid, &dye, |i| pos[i]);
        finish(&acc, &grid, [10.0, 12.5])
    }

    /// The numbers inside `<DataArray ... Name="name" ...> ... </DataArray>`.
    fn array_values(xml: &str, name: &str) -> Vec<f64> {
        let start = xml.find(&format!("Name=\"{name}\"")).unwrap_or_else(|| panic!("no array {name}"));
        let body = &xml[start..];
        let open = body.find('>').unwrap() + 1;
        let close = body.find("</DataArray>").unwrap();
        body[open..close].split_whitespace().map(|v| v.parse().unwrap()).collect()
    }

    #[test]
    fn vti_holds_the_grid_and_every_layer() {
        let f = small_field();
        let xml = vti_string(&f, 12.5);
        assert!(xml.starts_with("<?xml version=\"1.0\"?>"));
        assert!(xml.contains("<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\""));
        assert!(xml.contains("WholeExtent=\"0 3 0 2 0 2\" Origin=\"0 0 0\" Spacing=\"2 2 2\""));
        assert!(xml.contains("<Piece Extent=\"0 3 0 2 0 2\">"));
        assert_eq!(array_values(&xml, "TimeValue"), vec![12.5]);
        assert_eq!(array_values(&xml, "samples"), vec![1.0]);
        assert!(f.dye_sampled, "the backends' sums count dye");
        assert_eq!(array_values(&xml, "dye")[0], 0.5);
        assert!(xml.contains(" dye [1]"), "the header lists the dye layer");
        for k in FieldKind::every() {
            let values = array_values(&xml, k.name());
            let want: Vec<f64> = f.layer(k).iter().map(|v| if v.is_finite() { *v } else { 0.0 }).collect();
            assert_eq!(values, want, "{k}");
        }
        let last = f.grid.len() - 1;
        assert_eq!(array_values(&xml, "vx")[0], 1.0);
        assert_eq!(array_values(&xml, "count")[last], 0.0);
        assert_eq!(array_values(&xml, "density")[0], 2.0 / 8.0);
        let v = array_values(&xml, "velocity");
        assert_eq!(v.len(), 3 * f.grid.len());
        assert_eq!(&v[..3], &[1.0, 2.0, 3.0]);
        assert_eq!(&v[3 * last..], &[0.0, 0.0, 0.0], "the empty bin is written as 0");
        let ghost = array_values(&xml, "vtkGhostType");
        assert_eq!(ghost.len(), f.grid.len());
        assert!(ghost[..last].iter().all(|&g| g == 0.0) && ghost[last] == 32.0);
        assert!(!xml.to_lowercase().contains("nan") && !xml.contains("inf"));
        assert_eq!(xml.matches("<DataArray").count(), xml.matches("</DataArray>").count());
    }

    /// Sums that did not count dye (a LAMMPS run's, rebuilt from its dumps) have no dye
    /// layer to write, rather than a layer of zeros.
    #[test]
    fn vti_has_a_dye_layer_only_where_the_sums_counted_dye() {
        let mut f = small_field();
        f.dye_sampled = false;
        let xml = vti_string(&f, 1.0);
        assert!(!xml.contains("Name=\"dye\""), "a dye layer from sums that did not count dye");
        assert!(!xml.contains(" dye [1]"));
        assert_eq!(array_values(&xml, "count").len(), f.grid.len());
    }

    #[test]
    fn pvd_lists_the_datasets_and_files_are_written_atomically() {
        let s = pvd_string(&[(0.5, "a_0001.vti".into()), (1e-7, "b&<\"c\".vti".into())]);
        assert!(s.contains("<VTKFile type=\"Collection\""));
        assert!(s.contains("<DataSet timestep=\"0.5\" group=\"\" part=\"0\" file=\"a_0001.vti\"/>"));
        assert!(s.contains("timestep=\"1e-7\""));
        assert!(s.contains("file=\"b&amp;&lt;&quot;c&quot;.vti\""));
        let dir = std::env::temp_dir().join(format!("argon-vtk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = small_field();
        write_vti(&dir.join("f.vti"), &f, 12.5).unwrap();
        write_pvd(&dir.join("f.pvd"), &[(12.5, "f.vti".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("f.vti")).unwrap(), vti_string(&f, 12.5));
        assert!(std::fs::read_to_string(dir.join("f.pvd")).unwrap().contains("file=\"f.vti\""));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "no temporaries left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
