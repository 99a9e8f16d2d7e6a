"""Reads frames of a LAMMPS dump written by argon-sandbox with LAMMPS's own `read_dump`, on
the system of an exported deck, and prints positions and velocities by atom id as JSON.

Usage: python read_dump.py DECK_DIR DUMP STEP [STEP ...]
"""
import json
import os
import sys

from lammps import lammps

deck, dump, steps = sys.argv[1], os.path.abspath(sys.argv[2]), [int(s) for s in sys.argv[3:]]
os.chdir(deck)
body = [l for l in open("in.argon").read().splitlines() if not l.startswith("run ")]
lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
lmp.commands_list(body)
out = []
for step in steps:
    lmp.command(f"read_dump {dump} {step} x y z vx vy vz box yes replace yes")
    n = lmp.get_natoms()
    ids = lmp.numpy.extract_atom("id")[:n].tolist()
    x = lmp.numpy.extract_atom("x")[:n].tolist()
    v = lmp.numpy.extract_atom("v")[:n].tolist()
    order = sorted(range(n), key=lambda i: ids[i])
    out.append({"step": step, "x": [x[i] for i in order], "v": [v[i] for i in order]})
print(json.dumps(out))
