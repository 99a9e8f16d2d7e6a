"""Runs an exported deck unchanged with the `lmp` executable on N MPI ranks (mpiexec from the
mpich wheel, beside this Python) and prints its thermo table as JSON.

Usage: python run_lmp.py DIR RANKS
Runs `mpiexec -n RANKS lmp -in in.argon -log log.RANKS -screen none -nocite` in DIR and
prints {"ranks": N, "rows": [{Step, Temp, PotEng, ...}, ...], "atoms": n} from the log.
"""
import json
import os
import subprocess
import sys

deck, ranks = sys.argv[1], int(sys.argv[2])
bindir = os.path.dirname(sys.executable)
log = f"log.{ranks}"
cmd = [os.path.join(bindir, "mpiexec"), "-n", str(ranks), os.path.join(bindir, "lmp"),
       "-in", "in.argon", "-log", log, "-screen", "none", "-nocite"]
p = subprocess.run(cmd, cwd=deck, capture_output=True, text=True)
text = open(os.path.join(deck, log)).read() if os.path.exists(os.path.join(deck, log)) else ""
if p.returncode != 0 or "ERROR" in text:
    err = [l for l in text.splitlines() if "ERROR" in l]
    raise SystemExit(f"LAMMPS failed on {ranks} ranks (rc {p.returncode}): {err or p.stderr[-2000:]}")
rows, header, atoms = [], None, None
for line in text.splitlines():
    w = line.split()
    if w[:1] == ["Step"]:
        header = w
        continue
    if header and w[:2] == ["Loop", "time"]:
        atoms = int(w[-2])
        header = None
        continue
    if header and len(w) == len(header):
        try:
            rows.append(dict(zip(header, map(float, w))))
        except ValueError:
            header = None
print(json.dumps({"ranks": ranks, "rows": rows, "atoms": atoms}))
