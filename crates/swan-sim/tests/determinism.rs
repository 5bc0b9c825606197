//! One seed, one result: the same configuration run twice writes byte-identical outputs,
//! and a different seed writes different ones.

use std::fs;
use std::path::{Path, PathBuf};
use swan_sim::engine::Engine;
use swan_sim::experiments::{fig5, Scale};
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
