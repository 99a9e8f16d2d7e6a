# Self-diffusion of the Lennard-Jones fluid from the Einstein relation, cut and shifted at
# 2.5 sigma (the app's potential: potential (cutoff: 2.5, shift: true)), in reduced units,
# at the state of ../viscosity_gk/in.gk: 4,000 atoms (fcc 10 x 10 x 10 at density rho),
# Nose-Hoover equilibration at T for `neq` steps, then `nprod` production steps under
# velocity Verlet with a weak stochastic velocity rescaling (fix temp/csvr, tau 10, as in.gk),
# sampling the mean-squared displacement of unwrapped positions from the start of production
# (compute msd, centre-of-mass drift removed) and the temperature every 100 steps into
# msd_<tag>.dat. reduce.py fits D = slope / 6 per run.
#   lmp -in in.msd -var rho 0.8 -var T 1.0 -var seed 1 -var tag r0.80_s1
variable rho index 0.8
variable T index 1.0
variable seed index 1
variable tag index test
variable neq index 10000
variable nprod index 20000

units lj
atom_style atomic
lattice fcc ${rho}
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create ${T} ${seed} mom yes rot no dist gaussian
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
pair_modify shift yes
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
timestep 0.005
thermo 5000
fix eq all nvt temp ${T} ${T} 0.5
run ${neq}
unfix eq

reset_timestep 0
fix prod all nve
fix hold all temp/csvr ${T} ${T} 10.0 ${seed}
compute msd all msd com yes
variable t equal temp
fix out all ave/time 100 1 100 v_t c_msd[4] file msd_${tag}.dat
run ${nprod}
