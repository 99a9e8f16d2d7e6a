//! Dye tags on the wgpu backend (issue 47): the device backends' dye checks
//! (`tests/common/dye.rs`) on whatever adapter wgpu finds, with checked shader modules (an
//! index out of bounds is caught, not read). Without an adapter each test prints `skipped: no
//! wgpu adapter` and passes (lavapipe runs them here).

mod common;

use argon_sandbox::physics::params::SimParams;
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomState, Backend};

use common::dye;
use common::wgpu_adapter as adapter;

fn wgpu(b: SimBox, params: SimParams, atoms: &AtomState) -> Box<dyn Backend> {
    Box::new(GpuBackend::with_checks(b, params, atoms, None, true).expect("wgpu backend"))
}

fn single() -> SimParams {
    SimParams { precision: Precision::Single, ..SimParams::default() }
}

#[test]
fn tags_follow_their_atoms_through_re_sorting() {
    if adapter() {
        dye::tags_follow_their_atoms_through_re_sorting(&wgpu, &single());
    }
}

#[test]
fn add_remove_rollback_and_a_switch_keep_each_atoms_tag() {
    if adapter() {
        dye::add_remove_rollback_and_a_switch_keep_each_atoms_tag(&wgpu, &single());
    }
}

#[test]
fn a_checkpoint_without_dye_clears_tags_rakes_made_since() {
    if adapter() {
        dye::a_checkpoint_without_dye_clears_tags_rakes_made_since(&wgpu, &single());
    }
}

#[test]
fn the_published_dye_scalar_is_each_atoms_tag() {
    if adapter() {
        dye::the_published_dye_scalar_is_each_atoms_tag(&wgpu, &single());
    }
}

#[test]
fn rakes_tag_the_cpus_atoms_while_the_trajectories_agree() {
    if common::wgpu_f64_adapter() {
        dye::rakes_tag_the_cpus_atoms_while_the_trajectories_agree(&wgpu);
    }
}

#[test]
fn a_rake_in_a_uniform_stream_draws_the_cpus_straight_streak() {
    if adapter() {
        dye::a_rake_in_a_uniform_stream_draws_the_cpus_straight_streak(&wgpu, &single());
    }
}

#[test]
fn the_tunnels_inflow_zone_clears_tags() {
    if adapter() {
        dye::the_tunnels_inflow_zone_clears_tags(&wgpu, "Single");
    }
}

#[test]
fn the_dye_fraction_layer_is_the_host_count() {
    if adapter() {
        dye::the_dye_fraction_layer_is_the_host_count(&wgpu, &single());
    }
    if common::wgpu_f64_adapter() {
        let double = SimParams { precision: Precision::Double, ..SimParams::default() };
        dye::the_dye_fraction_layer_is_the_host_count(&wgpu, &double);
    }
}
