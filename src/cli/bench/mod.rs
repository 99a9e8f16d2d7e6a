//! `argon-sandbox bench`: throughput measurements. `common.rs` holds the arguments and the
//! systems every mode measures; each mode has a file: `steps.rs` the step rate (default),
//! `render.rs` the renderer alone (`--render`), `interactive.rs` the whole app loop
//! (`--interactive`), the cost of handing positions to the renderer (`--publish`), and
//! `rdf.rs` the time of one g(r) (`--rdf`).

mod common;
mod interactive;
mod rdf;
mod render;
mod scrub;
mod steps;

pub use common::BenchArgs;

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    if args.interactive {
        interactive::run(args)
    } else if args.publish {
        interactive::publish_bench(args)
    } else if args.rdf {
        rdf::run(args)
    } else if args.render {
        render::run(args)
    } else {
        steps::run(args)
    }
}
