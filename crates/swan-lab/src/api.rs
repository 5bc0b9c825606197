//! The simulator and SWAN's plan for front-ends other than the command line (the Python
//! package): the options are `swan sim`'s and `swan plan`'s own, given as the words one
//! would type after the command, so every front-end shares one set of tunables and one set
//! of checks. Nothing is printed; results come back as values.

use crate::plan::{self, PlanArgs};
use crate::runner::run_into;
use crate::sim_cmd::SimArgs;
use anyhow::anyhow;
use clap::Parser;
use std::path::Path;
use swan_core::analytic::Plan;
use swan_sim::output::RunSummary;

#[derive(Parser, Debug)]
#[command(name = "swan sim", no_binary_name = true)]
struct SimLine {
    #[command(flatten)]
    args: SimArgs,
}

#[derive(Parser, Debug)]
#[command(name = "swan plan", no_binary_name = true)]
struct PlanLine {
    #[command(flatten)]
    args: PlanArgs,
}

fn parse<T: Parser>(words: &[String]) -> anyhow::Result<T> {
    T::try_parse_from(words).map_err(|e| anyhow!("{}", e.render().to_string().trim_end()))
}

/// `swan sim WORDS`, its run directory written into `out` (`--out` is ignored); returns the
/// run's summary (`out/summary.json` holds the same).
pub fn sim(words: &[String], out: &Path) -> anyhow::Result<RunSummary> {
    let line: SimLine = parse(words)?;
    let cfg = line.args.to_config()?;
    run_into(&cfg, out, &|_| {}, &mut |_| {})
}

/// `swan plan WORDS`: Eq. 1's plan (`--json`, `--verify` are ignored).
pub fn plan(words: &[String]) -> anyhow::Result<Plan> {
    let line: PlanLine = parse(words)?;
    plan::compute(&line.args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_bad_option_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = sim(&words("--scheme swan9"), dir.path()).unwrap_err().to_string();
        assert!(e.contains("swan9"), "{e}");
        let e = sim(&words("--no-such-option 1"), dir.path()).unwrap_err().to_string();
        assert!(e.contains("--no-such-option"), "{e}");
        let e = plan(&words("--disk-utilization 2")).unwrap_err().to_string();
        assert!(e.contains("disk-utilization") || e.contains("swan plan"), "{e}");
    }

    #[test]
    fn a_run_writes_its_directory_and_returns_its_summary() {
        let dir = tempfile::tempdir().unwrap();
        let s =
            sim(&words("--scheme swan0 --rgroups 2 --ssds-per-rgroup 1 --ssd-capacity 256MiB --time 0.2"), dir.path())
                .unwrap();
        assert!(s.requests > 0);
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
        assert_eq!(written["requests"], s.requests);
    }
}
