"""Reads an extended XYZ trajectory with ASE and prints what ASE got, as JSON.

Usage: python ase_read.py FILE
Prints [{positions, velo, velocities, masses, cell, pbc, symbols, step, dye}, ...], one entry
per frame: `velo` the column as ASE keeps it, `velocities` what `get_velocities()` gives, `dye`
the integer dye column (None without one) with its dtype's kind ("i" for integers).
"""
import json
import sys

import ase.io

frames = ase.io.read(sys.argv[1], index=":", format="extxyz")
out = []
for a in frames:
    out.append({
        "positions": a.get_positions().tolist(),
        "velo": a.arrays["velo"].tolist(),
        "velocities": a.get_velocities().tolist(),
        "masses": a.get_masses().tolist(),
        "cell": a.get_cell().tolist(),
        "pbc": [bool(x) for x in a.get_pbc()],
        "symbols": a.get_chemical_symbols(),
        "step": int(a.info["Step"]),
        "dye": a.arrays["dye"].tolist() if "dye" in a.arrays else None,
        "dye_kind": a.arrays["dye"].dtype.kind if "dye" in a.arrays else None,
    })
print(json.dumps(out))
