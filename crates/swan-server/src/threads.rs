//! The CPU time of the server's threads, by the stage of a request's path each one serves:
//! what `swan status` and `/metrics` show, and what a host model of this machine is fitted
//! to (`swan host fit`, `docs/host-model.md`).
//!
//! Read from `/proc/self/task/*/schedstat` when asked, so that measuring costs the request
//! path nothing: the first field is the thread's time on a CPU in nanoseconds, the second
//! its time runnable but waiting for one (the cores it shares with the client and with the
//! other stages). Threads that have ended (closed connections) are no longer counted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;

/// One stage's threads and their CPU time since they started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageCpu {
    /// `nbd-reader`, `nbd-reply`, `tls`, `engine`, `member-pool`, `member-deadline`,
    /// `uring`, `control`, `metrics`, `trace`, or `main` (the rest).
    pub stage: String,
    pub threads: u32,
    /// Time on a CPU, seconds.
    pub cpu_s: f64,
    /// Time runnable but waiting for a CPU, seconds.
    pub runq_wait_s: f64,
}

/// The stage a thread serves, from the name the server gave it.
pub fn stage_of(thread_name: &str) -> &'static str {
    const PREFIXES: [(&str, &str); 10] = [
        ("nbd-conn", "nbd-reader"),
        ("nbd-send", "nbd-reply"),
        ("nbd-tls", "tls"),
        ("swan-engine", "engine"),
        ("swan-io", "member-pool"),
        ("swan-member", "member-deadline"),
        ("swan-uring", "uring"),
        ("swan-control", "control"),
        ("swan-metrics", "metrics"),
        ("swan-trace", "trace"),
    ];
    PREFIXES.iter().find(|(p, _)| thread_name.starts_with(p)).map_or("main", |(_, s)| s)
}

/// Every live thread of this process, summed by stage (in stage-name order). Empty where
/// `/proc` does not say (not Linux, or schedstat not built in).
pub fn by_stage() -> Vec<StageCpu> {
    let mut stages: BTreeMap<&'static str, StageCpu> = BTreeMap::new();
    let Ok(tasks) = fs::read_dir("/proc/self/task") else { return Vec::new() };
    for task in tasks.flatten() {
        let dir = task.path();
        let (Ok(name), Ok(sched)) = (fs::read_to_string(dir.join("comm")), fs::read_to_string(dir.join("schedstat")))
        else {
            continue; // the thread ended while we looked
        };
        let Some((cpu_ns, wait_ns)) = parse_schedstat(&sched) else { continue };
        let stage = stage_of(name.trim_end());
        let s = stages.entry(stage).or_insert_with(|| StageCpu { stage: stage.into(), ..StageCpu::default() });
        s.threads += 1;
        s.cpu_s += cpu_ns as f64 / 1e9;
        s.runq_wait_s += wait_ns as f64 / 1e9;
    }
    stages.into_values().collect()
}

/// `schedstat`'s first two fields: nanoseconds on a CPU, nanoseconds waiting for one.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(str::parse::<u64>);
    Some((f.next()?.ok()?, f.next()?.ok()?))
}

/// CPU time the calling thread has used, in nanoseconds (a system call: for coarse
/// accounting, a few times per engine round, never per block).
pub fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_named_by_their_stage() {
        assert_eq!(stage_of("nbd-conn-12"), "nbd-reader");
        assert_eq!(stage_of("nbd-send-3"), "nbd-reply");
        assert_eq!(stage_of("swan-engine"), "engine");
        assert_eq!(stage_of("swan-io-0"), "member-pool");
        assert_eq!(stage_of("swan"), "main");
    }

    #[test]
    fn schedstat_gives_cpu_and_wait() {
        assert_eq!(parse_schedstat("123456 789 42\n"), Some((123_456, 789)));
        assert_eq!(parse_schedstat("garbage"), None);
    }

    #[test]
    fn this_process_is_seen_and_its_cpu_grows() {
        let before = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_ns() > before);
        if std::path::Path::new("/proc/self/task").exists() {
            let stages = by_stage();
            assert!(stages.iter().map(|s| s.threads).sum::<u32>() >= 1, "{stages:?}");
        }
    }
}
