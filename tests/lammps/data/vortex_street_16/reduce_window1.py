"""The vortex street in argon-sandbox (CUDA) and in LAMMPS on 16 ranks over the same steps
(tests/lammps/vortex_street_16_device.sh): the first field window (0-10 tau, the only one both
closed), side by side: C_d and the stream temperature (wake.csv row 1), the near-wake thermal
temperature (count-weighted over the bins from the cylinder's rear to 3 D behind it,
|y - y_c| < D/2: ../../near_wake.py, as compare_tunnel.py), and the drag force per 500 steps (forces_series.csv).

Usage: python reduce_window1.py WORKDIR   (WORKDIR holds app/, lammps/ and deck/fields.json, as
the device script's archive unpacks; the .vti files are needed for the near-wake temperature
and are not kept in the repository, 5 MB each)."""
import csv
import json
import os
import sys
import xml.etree.ElementTree as ET

work = sys.argv[1]
meta = json.load(open(os.path.join(work, "deck", "fields.json")))
shape = meta["shapes"][0]
c = shape.get("Circle") or shape.get("circle")
centre, diam = c["centre"], 2.0 * c["radius"]


def near_wake_t(d):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from near_wake import near_wake_temperature

    first = next(ET.parse(os.path.join(d, "fields.pvd")).getroot().iter("DataSet")).get("file")
    return near_wake_temperature(os.path.join(d, first), centre, diam)


rows = {}
for d in ("app", "lammps"):
    row = list(csv.DictReader(open(os.path.join(work, d, "wake.csv"))))[0]
    rows[d] = (float(row["drag_coefficient"]), float(row["drag_coefficient_stderr"]), float(row["temperature"]),
               near_wake_t(os.path.join(work, d)))
    print(f"{d:7s} window 0-{float(row['time_tau']):.0f} tau: C_d {rows[d][0]:.4f} +- {rows[d][1]:.4f}, "
          f"stream T {rows[d][2]:.4f}, near-wake T {rows[d][3]:.4f}")
for k, name in ((0, "C_d"), (2, "stream T"), (3, "near-wake T")):
    print(f"  {name:11s} differ {100 * abs(rows['lammps'][k] / rows['app'][k] - 1):.2f} %")
series = {d: list(csv.DictReader(open(os.path.join(work, d, "forces_series.csv")))) for d in ("app", "lammps")}
print("drag force F_x (eps/sigma) per 500 steps: step, app, LAMMPS, differ %")
for a, b in zip(series["app"], series["lammps"]):
    fa, fb = float(a["circle_1_fx_eps_per_sigma"]), float(b["circle_1_fx_eps_per_sigma"])
    print(f"  {a['step']:>6s} {fa:9.1f} {fb:9.1f} {100 * (fb / fa - 1):+6.1f}")
