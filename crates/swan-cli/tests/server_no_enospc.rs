//! No write inside the volume gets ENOSPC, over NBD.
//!
//! The operator's run that found the fault: `swan create` an array (swan0, 4 R-groups × 2
//! SSDs, 8 MiB segments, the default spare), `swan serve` it, and let fio's nbd engine write
//! 8 KiB blocks at random (iodepth 32) over 60 % of the volume until it has written the volume
//! three times over; then once more with writes as large as the export's advertised maximum
//! block size, over the whole volume. fio must report no error, the server must log no write
//! refused, and `swan check` must find the array clean afterwards. The same for swan5 and
//! Log-RAID5, and for the smallest segments on two R-groups. Members are 64 MiB so a run
//! takes seconds; before the fix the first geometry refused every write within the first
//! overwrite of its log.

mod common;

use common::{check_clean, create_array, describe, fio_randwrite as fio, require, run, status, u64_of, Server};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// `nbdinfo --json` of the export: (size, maximum block size) in bytes.
fn export_limits(uri: &str) -> (u64, u64) {
    let out = run(Command::new("nbdinfo").args(["--json", uri]), "nbdinfo --json", Duration::from_secs(60));
    assert!(out.status.success(), "{}", describe("nbdinfo --json", &out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("nbdinfo prints JSON");
    let export = &v["exports"][0];
    (u64_of(export, "export-size"), u64_of(export, "block_size_maximum"))
}

fn never_refused(scheme: &str, rgroups: u32, ssds: u32, segment: &str) {
    require("fio", "fio");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().expect("temporary directory");
    let members = create_array(dir.path(), scheme, rgroups, ssds, "64M", &["--segment", segment]);
    let server = Server::start(dir.path(), &members);
    let (volume, max_block) = export_limits(&server.uri());
    let size = volume * 6 / 10 / 8192 * 8192;
    let small = fio(dir.path(), &server.uri(), 8192, size, 3 * volume / 8192 * 8192, 1);
    // Writes as large as the server says it takes, over the whole volume.
    let large_bs = max_block / 4096 * 4096;
    let large = fio(dir.path(), &server.uri(), large_bs, volume / large_bs * large_bs, volume / large_bs * large_bs, 2);
    let log = server.log();
    assert!(!log.contains("no space"), "{scheme}: the server refused writes for want of space:\n{log}");
    let st = status(&members[0], dir.path());
    assert!(u64_of(&st, "victims") > 0, "{scheme}: GC never ran, so the test proved nothing:\n{st:#}");
    eprintln!(
        "{scheme} {rgroups}×{ssds}, {segment} segments: volume {} MiB, {} MiB in 8 KiB writes and {} MiB in {} KiB \
         writes, {} victims, none refused",
        volume >> 20,
        small >> 20,
        large >> 20,
        large_bs >> 10,
        u64_of(&st, "victims")
    );
    server.stop();
    check_clean(&members, dir.path(), "after the writes");
}

#[test]
fn swan0_4x2_8m_segments_never_refuses_a_write() {
    never_refused("swan0", 4, 2, "8M");
}

#[test]
fn swan0_2x2_smallest_segments_never_refuses_a_write() {
    never_refused("swan0", 2, 2, "16K");
}

#[test]
fn swan5_3x3_never_refuses_a_write() {
    never_refused("swan5", 3, 3, "1M");
}

#[test]
fn lograid5_1x4_never_refuses_a_write() {
    never_refused("lograid5", 1, 4, "1M");
}
