//! Microsoft's ETW-derived traces (xperf dumps: Exchange, production servers, TPC-E) through
//! every command that replays a trace: the fixture `tests/fixtures/small-etw.csv` is written
//! in the publicly described layout for these tests (the real traces are not here).

use crate::{ok, read, TempDir};
use serde_json::Value;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small-etw.csv")
}

/// What the fixture holds: 60 DiskRead/DiskWrite lines on disks 1 and 0, and 85 lines of
/// other events after its header block.
const REQUESTS: &str = "60 requests (28 reads, 32 writes";
const OTHER_EVENTS: &str = "85 lines of events without a request passed over: DiskFlush 4, DiskFlushInit 4, \
                            DiskReadInit 28, DiskWriteInit 32, FileIoRead 6, FileIoWrite 11";

#[test]
fn sim_replays_an_etw_dump_guessed_from_its_content() {
    let trace = fixture();
    let trace = trace.to_str().unwrap();
    let dir = TempDir::new("etw-sim");
    let out = dir.join("run");
    let small = ["--rgroups", "2", "--ssds-per-rgroup", "2", "--ssd-capacity", "256MiB", "--age", "0", "--quiet"];
    let args =
        [&["sim", "--trace", trace, "--replay", "closed=8", "--out", out.to_str().unwrap()][..], &small].concat();
    let stdout = ok(&args);
    for needle in [
        "etw format (guessed from the first 20 lines)",
        REQUESTS,
        "0 malformed skipped",
        OTHER_EVENTS,
        "2 applications by the trace's DiskNum (the disk)",
        "replayed 60 requests of",
    ] {
        assert!(stdout.contains(needle), "{needle}: {stdout}");
    }
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["requests"].as_u64(), Some(60));
    assert_eq!(summary["replay"]["format"].as_str(), Some("etw"));
    assert_eq!(summary["replay"]["other_events"]["DiskReadInit"].as_u64(), Some(28));
    // The alias, and the recorded times (µs in the trace): 0.540 s from first to last.
    let out = dir.join("alias");
    let args =
        [&["sim", "--trace", trace, "--trace-format", "ms-etw", "--out", out.to_str().unwrap()][..], &small].concat();
    let stdout = ok(&args);
    assert!(stdout.contains("etw format (given)") && stdout.contains("over 0.540 s as recorded"), "{stdout}");
}

#[test]
fn apas_and_triple_a_take_an_etw_dump() {
    let trace = fixture();
    let trace = trace.to_str().unwrap();
    let out = ok(&["apas", "--trace", trace]);
    for needle in ["etw format, 60 requests (28 reads, 32 writes), 2 applications (disk 1, disk 0)", OTHER_EVENTS] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(out.contains("apas: 60 requests") && out.contains("hwsr: 60 requests"), "{out}");
    let out = ok(&["triple-a", "--trace", trace, "--preset", "4x8", "--seconds", "0.02"]);
    for needle in ["etw format", REQUESTS, OTHER_EVENTS, "non-autonomic", "passes over the trace"] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
}
