//! Output of a sweep: the CSV (`rho,P,P_err,U,U_err`, written atomically) and the printed
//! table, which adds the JZG values and deviations where T and rho are inside the fit's range.

use std::fmt::Write as _;
use std::path::Path;

use super::EosPoint;
use crate::physics::jzg;

/// The CSV header.
pub const CSV_HEADER: &str = "rho,P,P_err,U,U_err";

/// The CSV text of a sweep.
pub fn csv(points: &[EosPoint]) -> String {
    let mut s = format!("{CSV_HEADER}\n");
    for p in points {
        let _ = writeln!(s, "{},{:.8},{:.8},{:.8},{:.8}", p.rho, p.p, p.p_err, p.u, p.u_err);
    }
    s
}

/// Writes the CSV atomically (a temporary beside `path`, renamed over it).
pub fn write_csv(path: &Path, points: &[EosPoint]) -> std::io::Result<()> {
    crate::io::atomic::write_atomic(path, csv(points).as_bytes())
}

/// The JZG pressure and energy at the point, when inside the fit's range.
pub fn jzg_reference(rho: f64, t: f64) -> Option<(f64, f64)> {
    jzg::in_fit_range(rho, t).then(|| (jzg::pressure(rho, t), jzg::energy_per_atom(rho, t)))
}

/// A plain-text table: rho, P +- err, U/N +- err, and (in the fit's range) JZG with the
/// deviation in percent.
pub fn format_table(points: &[EosPoint], t: f64) -> String {
    let mut s = format!(
        "{:>7}  {:>21}  {:>10}  {:>7}  {:>21}  {:>10}  {:>7}  {:>7}\n",
        "rho", "P", "P (JZG)", "dev %", "U/N", "U/N (JZG)", "dev %", "<T>"
    );
    for p in points {
        let pm = format!("{:.5} ± {:.5}", p.p, p.p_err);
        let um = format!("{:.5} ± {:.5}", p.u, p.u_err);
        let (pj, pd, uj, ud) = match jzg_reference(p.rho, t) {
            Some((pj, uj)) => (
                format!("{pj:.5}"),
                format!("{:+.2}", 100.0 * (p.p - pj) / pj.abs()),
                format!("{uj:.5}"),
                format!("{:+.2}", 100.0 * (p.u - uj) / uj.abs()),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        let _ =
            writeln!(s, "{:>7.4}  {pm:>21}  {pj:>10}  {pd:>7}  {um:>21}  {uj:>10}  {ud:>7}  {:>7.4}", p.rho, p.t_mean);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rho: f64) -> EosPoint {
        EosPoint { rho, p: 1.1, p_err: 0.01, u: -3.1, u_err: 0.002, t_mean: 2.0, t_err: 0.001, n_atoms: 500 }
    }

    #[test]
    fn csv_and_table() {
        let text = csv(&[point(0.5), point(0.7)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "rho,P,P_err,U,U_err",
                "0.5,1.10000000,0.01000000,-3.10000000,0.00200000",
                "0.7,1.10000000,0.01000000,-3.10000000,0.00200000"
            ]
        );
        let t = format_table(&[point(0.5)], 2.0);
        // JZG at (0.5, 2.0): P 1.07745, U -3.14494 (the validation table).
        assert!(t.contains("1.07745") && t.contains("-3.14494") && t.contains("+2.09"), "{t}");
        assert!(format_table(&[point(0.5)], 8.0).contains(" - "), "outside the fit: no JZG column");
    }
}
