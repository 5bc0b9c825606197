//! One seed, one result: the same configuration run twice writes byte-identical outputs,
//! and a different seed writes different ones.

use std::fs;
use std::path::{Path, PathBuf};
use swan_lab::experiments::{fig5, Scale};
use swan_sim::engine::Engine;
use swan_sim::output::{write_run, RunSummary};

fn run_into(dir: &Path, seed: u64, which: usize) {
    let cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.5 }, seed).remove(which);
    let out = Engine::new(cfg.clone()).unwrap().run(&mut |_| {}).unwrap();
    // wall_s is the one field that measures the machine, not the run: pin it.
    let summary = RunSummary::new(&cfg, &out, 0.0, 0.0);
    write_run(dir, &summary, &out).unwrap();
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swan-determinism-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    for which in 0..3 {
        let (a, b, c) = (tmp(&format!("a{which}")), tmp(&format!("b{which}")), tmp(&format!("c{which}")));
        run_into(&a, 7, which);
        run_into(&b, 7, which);
        run_into(&c, 8, which);
        let (fa, fb, fc) = (files(&a), files(&b), files(&c));
        assert_eq!(fa.len(), 4, "summary.json and three CSVs");
        assert_eq!(fa, fb, "run {which}: same seed, different output");
        let ts = |f: &[(String, Vec<u8>)]| f.iter().find(|x| x.0 == "timeseries.csv").unwrap().1.clone();
        assert_ne!(ts(&fa), ts(&fc), "run {which}: the seed changed nothing");
        for d in [a, b, c] {
            let _ = fs::remove_dir_all(d);
        }
    }
}

/// The SSDs are built and aged `setup_threads` at a time; the outputs must not depend on
/// how many (spread ages and varied speeds on, so each SSD's draws differ from the others').
#[test]
fn setup_threads_change_no_output() {
    let run_with = |threads: usize| {
        let mut cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.0 }, 11).remove(2);
        cfg.age_spread = 0.5;
        cfg.ssd_variation = swan_models::ssd::Variation {
            speed_spread: 0.2,
            slow_fraction: 0.05,
            slow_factor: 2.0,
            slow_period_ms: 20.0,
        };
        cfg.setup_threads = threads;
        let dir = tmp(&format!("threads{threads}"));
        let out = Engine::new(cfg.clone()).unwrap().run(&mut |_| {}).unwrap();
        write_run(&dir, &RunSummary::new(&cfg, &out, 0.0, 0.0), &out).unwrap();
        let f = files(&dir);
        let _ = fs::remove_dir_all(dir);
        f
    };
    let one = run_with(1);
    assert_eq!(one.len(), 4, "summary.json and three CSVs");
    for threads in [2, 3, 8] {
        assert_eq!(run_with(threads), one, "{threads} setup threads changed the output");
    }
}
