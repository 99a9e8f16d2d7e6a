"""Reads an extended XYZ trajectory with ASE and prints what ASE got, as JSON.

Usage: python ase_read.py FILE
Prints [{positions, velo, cell, pbc, symbols, step}, ...], one entry per frame.
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
        "cell": a.get_cell().tolist(),
        "pbc": [bool(x) for x in a.get_pbc()],
        "symbols": a.get_chemical_symbols(),
        "step": int(a.info["Step"]),
    })
print(json.dumps(out))
