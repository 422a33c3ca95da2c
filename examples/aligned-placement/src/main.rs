//! Runs `aligned` beside Slurm's own placement and gresim's `topology-aware`
//! on a shipped scenario, through the library, and prints one line each.
//!
//! ```sh
//! cargo run --release -p gresim-example-placement [SCENARIO]
//! ```

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use gresim::{PolicyKind, Simulation, Summary};
use gresim_example_placement::Aligned;

fn line(s: &Summary) -> String {
    let p = s.placement.as_ref();
    format!(
        "{:<15} mean wait {:>7.0} s   mean JCT {:>7.0} s   multi-GPU jobs placed ideally {:>5.1} %",
        s.policy,
        s.wait.mean,
        s.jct.mean,
        p.map_or(f64::NAN, |p| 100.0 * p.share_placed_ideally)
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/topology_4node.json"),
        PathBuf::from,
    );
    let scenario = gresim::load_runnable_scenario(&path)?;
    for kind in [PolicyKind::Slurm, PolicyKind::TopologyAware] {
        println!(
            "{}",
            line(&Simulation::new(&scenario).policy(kind).run()?.summary())
        );
    }
    let aligned = Arc::new(Aligned::default());
    let outcome = Simulation::new(&scenario)
        .custom_policy(Aligned::policy(aligned.clone()))
        .run()?;
    println!("{}", line(&outcome.summary()));
    println!(
        "aligned placed {} of the {} jobs it was asked about on an aligned block",
        aligned.aligned.load(Ordering::Relaxed),
        aligned.asked.load(Ordering::Relaxed)
    );
    Ok(())
}
