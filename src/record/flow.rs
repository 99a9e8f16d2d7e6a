//! `record --fields LAYER`: the flow layer in recorded demos. The flags (`FlowArgs`: the
//! colour layer, streamlines, arrows, how the atoms show, sampling), turned into the view's
//! `FlowView` and the backend's `FieldSpec`, with errors naming the flag.

use anyhow::{Result, anyhow, bail};
use clap::Args;

use crate::flow::{FieldKind, FieldSpec};
use crate::physics::sim_box::SimBox;
use crate::render::flow_layer::{AtomsShown, FlowView};

#[derive(Args, Debug, Clone, Default)]
pub struct FlowArgs {
    /// Draw the flow: this field in colour (density, vx, vy, vz, speed, temperature,
    /// vorticity, mach, count, dye; `none`: streamlines or arrows only), with streamlines.
    #[arg(long, value_name = "LAYER")]
    pub fields: Option<String>,
    /// Leave out the streamlines of the flow layer.
    #[arg(long)]
    pub no_streamlines: bool,
    /// Draw velocity arrows (every this many bins; 2 when given without a number).
    #[arg(long, value_name = "BINS", num_args = 0..=1, default_missing_value = "2")]
    pub arrows: Option<u32>,
    /// Atoms under the flow layer.
    #[arg(long, value_enum, default_value = "dimmed")]
    pub atoms: AtomsArg,
    /// Field bin edge in sigma.
    #[arg(long, value_name = "SIGMA", default_value_t = 2.0)]
    pub field_bin: f64,
    /// Sample the fields every this many steps.
    #[arg(long, value_name = "STEPS", default_value_t = 10)]
    pub field_every: u64,
    /// Average the fields over windows of this many tau (the picture changes once a window).
    #[arg(long, value_name = "TAU", default_value_t = 5.0)]
    pub field_window: f64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AtomsArg {
    Shown,
    #[default]
    Dimmed,
    Hidden,
}

impl FlowArgs {
    /// The flow view and sampling asked for (None without `--fields`), checked against the
    /// box and the time step.
    pub fn resolve(&self, b: &SimBox, dt: f64) -> Result<Option<(FlowView, FieldSpec)>> {
        let Some(layer) = &self.fields else {
            if self.arrows.is_some() || self.no_streamlines {
                bail!("--arrows and --no-streamlines need --fields LAYER (the flow layer to draw)");
            }
            return Ok(None);
        };
        let layer = if layer.trim().eq_ignore_ascii_case("none") {
            None
        } else {
            Some(FieldKind::from_name(layer).map_err(|e| anyhow!("--fields {layer}: {}", e.reason))?)
        };
        if let Some(a) = self.arrows
            && !(1..=64).contains(&a)
        {
            bail!("--arrows {a}: draw an arrow every 1 to 64 bins");
        }
        let view = FlowView {
            on: true,
            layer,
            streamlines: !self.no_streamlines,
            arrows: self.arrows.is_some(),
            arrow_every: self.arrows.unwrap_or(2),
            atoms: match self.atoms {
                AtomsArg::Shown => AtomsShown::Normal,
                AtomsArg::Dimmed => AtomsShown::Dimmed,
                AtomsArg::Hidden => AtomsShown::Hidden,
            },
            ..FlowView::default()
        };
        if view.layer.is_none() && !view.streamlines && !view.arrows {
            bail!("--fields none --no-streamlines draws nothing: name a layer, keep the streamlines or add --arrows");
        }
        let spec = FieldSpec {
            bin: self.field_bin,
            every: self.field_every,
            window_tau: self.field_window,
            ..FieldSpec::default()
        };
        spec.validate(b, dt).map_err(|e| {
            let flag = match e.field {
                "bin" => "--field-bin",
                "every" => "--field-every",
                _ => "--field-window",
            };
            anyhow!("invalid {flag}: {e}")
        })?;
        Ok(Some((view, spec)))
    }
}
