//! Fault runs: a seed picks a moment (GC, a front-end rotation, a checkpoint, a rebuild)
//! and an I/O error to arm there, and the run is crashed inside that moment's windows of
//! the log, each crash recovered and checked.

use super::replay::ReplayReport;
use super::workload::{MEMBER_FAILED, REPLACE};
use super::{Config, Run, Stats};
use crate::recorder::{Entry, Fault, FaultOp};
use crate::rng::SplitMix64;
use anyhow::Result;

/// Where a fault run strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Between a GC job's start and its victim's release.
    Gc,
    /// Around SWAN moving the front-end to another R-group.
    Rotation,
    /// While a checkpoint is written (body, then header).
    Checkpoint,
    /// From a member's failure on: serving degraded, then rebuilding onto a replacement
    /// (arrays with parity only).
    Rebuild,
}

impl Moment {
    pub const ALL: [Moment; 4] = [Moment::Gc, Moment::Rotation, Moment::Checkpoint, Moment::Rebuild];

    pub fn name(self) -> &'static str {
        match self {
            Moment::Gc => "gc",
            Moment::Rotation => "rotation",
            Moment::Checkpoint => "checkpoint",
            Moment::Rebuild => "rebuild",
        }
    }
}

/// A fault run's plan, drawn from its seed.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub moment: Moment,
    /// An I/O error armed at the moment (or none: a crash alone).
    pub fault: Option<Fault>,
}

impl FaultPlan {
    /// The plan of `seed` for an array with or without parity (a rebuild needs parity).
    pub fn from_seed(seed: u64, parity: bool) -> FaultPlan {
        let mut r = SplitMix64(seed ^ 0xfa17_5eed);
        let moment = Moment::ALL[r.below(if parity { 4 } else { 3 }) as usize];
        let fault = if r.chance(1, 3) {
            None
        } else {
            let (mark, ops): (&'static str, &[FaultOp]) = match moment {
                Moment::Gc => {
                    if r.chance(1, 2) {
                        ("gc-start", &[FaultOp::Read, FaultOp::Write])
                    } else {
                        ("gc-copied", &[FaultOp::Write, FaultOp::Sync, FaultOp::Trim])
                    }
                }
                Moment::Rotation => ("rotation", &[FaultOp::Write, FaultOp::Read, FaultOp::Sync]),
                Moment::Rebuild => (REPLACE, &[FaultOp::Read, FaultOp::Write, FaultOp::Sync]),
                Moment::Checkpoint => {
                    if r.chance(1, 2) {
                        ("checkpoint-start", &[FaultOp::Write, FaultOp::Sync])
                    } else {
                        ("checkpoint-body-durable", &[FaultOp::Write, FaultOp::Sync])
                    }
                }
            };
            let op = ops[r.below(ops.len() as u64) as usize];
            Some(Fault { after_mark: Some(mark), op, member: None, skip: r.below(3) as u32, performed: r.chance(1, 2) })
        };
        FaultPlan { moment, fault }
    }
}

/// What one fault run did and found.
#[derive(Clone, Debug)]
pub struct FaultOutcome {
    pub seed: u64,
    pub plan: FaultPlan,
    pub stats: Stats,
    pub replay: ReplayReport,
    pub injected: Vec<String>,
    pub problems: Vec<String>,
}

/// Log windows of the moment `m` in a run's log.
fn windows(run: &Run, m: Moment) -> Vec<(usize, usize)> {
    let log = run.recorder.log();
    let pos = |what: &str| -> Vec<usize> {
        log.iter().enumerate().filter_map(|(i, e)| matches!(e, Entry::Mark(x) if *x == what).then_some(i)).collect()
    };
    let after = |from: usize, what: &str| -> usize {
        log[from..].iter().position(|e| matches!(e, Entry::Mark(x) if *x == what)).map_or(log.len(), |p| from + p)
    };
    match m {
        Moment::Gc => pos("gc-start").into_iter().map(|s| (s, after(after(s, "gc-copied"), "release"))).collect(),
        Moment::Rotation => pos("rotation").into_iter().map(|s| (s, (s + 200).min(log.len()))).collect(),
        Moment::Checkpoint => pos("checkpoint-start").into_iter().map(|s| (s, after(s, "checkpoint-end"))).collect(),
        Moment::Rebuild => pos(MEMBER_FAILED).into_iter().map(|s| (s, log.len())).collect(),
    }
}

/// One deterministic fault run: the workload with the seed's fault armed, then crashes cut
/// inside the windows of its moment (and at the end of the log), each recovered and checked.
pub fn fault_run(base: &Config, seed: u64, cuts: usize) -> Result<FaultOutcome> {
    let parity = base.scheme.raid() != swan_core::geometry::RaidLevel::Raid0;
    let plan = FaultPlan::from_seed(seed, parity);
    let members = u64::from(base.rgroups * base.ssds_per_rgroup);
    let replace = (plan.moment == Moment::Rebuild).then(|| SplitMix64(seed ^ 0x4e9).below(members) as u32);
    let cfg = Config { seed, replace, ..base.clone() };
    let faults: Vec<Fault> = plan.fault.iter().cloned().collect();
    let run = Run::new(cfg, &faults)?;
    let mut rng = SplitMix64(seed ^ 0xc075);
    let mut problems = run.live_errors.clone();
    let injected: Vec<String> = run
        .recorder
        .injected()
        .iter()
        .map(|i| {
            format!(
                "EIO on member {} {} at log entry {} after mark {:?}{}",
                i.member,
                i.op,
                i.at,
                i.after_mark,
                if i.performed { " (performed, reported failed)" } else { "" }
            )
        })
        .collect();
    let mut wins = windows(&run, plan.moment);
    if let Some(first) = run.recorder.injected().first() {
        // With an error injected, crash after it.
        wins.retain(|w| w.1 >= first.at);
        wins.push((first.at, (first.at + 400).min(run.stats.log_entries)));
    }
    let mut points = vec![run.stats.log_entries];
    if !wins.is_empty() {
        for _ in 0..cuts {
            let (a, b) = wins[rng.below(wins.len() as u64) as usize];
            points.push(a + rng.below((b - a) as u64 + 1) as usize);
        }
    }
    let replay = run.replay(&points, seed ^ 0x7e97)?;
    problems.extend(replay.failures.iter().cloned());
    if wins.is_empty() {
        problems.push(format!(
            "seed {seed:#x}: the workload never reached the moment {} (no window to crash in)",
            plan.moment.name()
        ));
    }
    Ok(FaultOutcome { seed, plan, stats: run.stats.clone(), replay, injected, problems })
}
