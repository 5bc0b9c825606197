//! What GC passed over at each pick (`Counters::victim_choice`, summary.json
//! `victim_choice`), and the experiment of SWAN's GC taking victims in the front-end too
//! (`gc_in_front_end`, off by default).

use swan_lab::experiments::{fig5, Scale};
use swan_sim::engine::{Engine, RunOutput, SimConfig};

/// Fig. 5's arrays on 0.25 GiB SSDs, random writes of twice the capacity: GC runs.
/// Index 1 is Log-RAID0, 2 is SWAN0 4R-2SSD.
fn fig5_small(index: usize) -> SimConfig {
    fig5(Scale { ssd_gib: 0.25, footprint: 2.0 }, 1).remove(index)
}

fn run(cfg: SimConfig) -> RunOutput {
    Engine::new(cfg).unwrap().run(&mut |_| {}).unwrap()
}

#[test]
fn swan_passes_over_nothing_emptier_than_what_one_pool_would_take() {
    let out = run(fig5_small(2));
    let (c, v) = (&out.counters, out.counters.victim_choice);
    assert!(c.victims > 10, "{c:?}");
    // The emptiest segment anywhere is never fuller than the victim, and some victims are
    // GC's own segments (the cold blocks it moved earlier).
    assert!(v.best_anywhere_valid_blocks <= c.victim_valid_blocks, "{c:?}");
    assert!(v.gc_written_victims > 0 && v.gc_written_victims <= c.victims, "{c:?}");
    assert!(v.gc_written_valid_blocks <= c.victim_valid_blocks, "{c:?}");
    let picks = v.emptier_in_front_end + v.emptier_in_collecting + v.emptier_without_room;
    assert!(picks <= 3 * c.victims, "{c:?}");

    // With GC free to enter the front-end, the front-end's rule passes nothing over.
    let on = run(SimConfig { gc_in_front_end: true, ..fig5_small(2) });
    assert_eq!(on.counters.victim_choice.emptier_in_front_end, 0, "{:?}", on.counters);
    assert!(on.counters.victims > 10);
}

#[test]
fn one_pool_has_no_front_end_and_takes_the_emptiest_segment() {
    let out = run(fig5_small(1));
    let (c, v) = (&out.counters, out.counters.victim_choice);
    assert!(c.victims > 10, "{c:?}");
    assert_eq!(v.emptier_in_front_end, 0, "{c:?}");
    assert_eq!(v.best_anywhere_valid_blocks, c.victim_valid_blocks, "{c:?}");
}

#[test]
fn gc_in_front_end_is_refused_for_log_raid_and_left_out_of_the_printed_options() {
    let e = Engine::new(SimConfig { gc_in_front_end: true, ..fig5_small(1) })
        .err()
        .expect("Log-RAID0 has no front-end")
        .to_string();
    assert!(e.contains("--gc-in-front-end on") && e.contains("lograid0"), "{e}");
    let cfg = fig5_small(2);
    assert!(!cfg.gc_in_front_end);
    let json = serde_json::to_string(&cfg).unwrap();
    assert!(!json.contains("gc_in_front_end"), "{json}");
    let on = serde_json::to_string(&SimConfig { gc_in_front_end: true, ..cfg }).unwrap();
    assert!(on.contains("\"gc_in_front_end\":true"), "{on}");
}
