//! fio writes 8 KiB blocks with crc32c verification over 90 % of the export, with enough
//! overwrites that every R-group of the log-structured schemes has collected victims (and
//! in-place RAID none); clean stop, `swan check`, restart with the members in reverse order,
//! and a `--verify_only` replay of the same job must find every block fio wrote last.

use crate::common::{export_size, fio_job, require, Array};
use crate::MIB;
use serde_json::Value;

/// The fio job of these tests: the same options for the write run and the `--verify_only`
/// run after the restart, so fio replays the same offsets and headers.
fn verify_job(size_mib: u64, io_mib: u64, seed: u64) -> Vec<String> {
    [
        "--name=swan-e2e",
        "--rw=randwrite",
        "--bs=8k",
        "--iodepth=16",
        "--verify=crc32c",
        "--do_verify=1",
        "--verify_fatal=1",
        &format!("--size={size_mib}M"),
        // io_size beyond size: with norandommap fio keeps choosing random blocks (so blocks
        // are overwritten and the log schemes must collect garbage), and it verifies the
        // last version of each block it wrote.
        &format!("--io_size={io_mib}M"),
        "--norandommap",
        // fio 3.33 ignores randseed while randrepeat=1 (the default).
        "--randrepeat=0",
        &format!("--randseed={seed}"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

struct FioCase {
    scheme: &'static str,
    rgroups: usize,
    ssds_per_rgroup: usize,
    /// Written beyond `--size`, as a percentage of the export, so that GC reaches every R-group.
    extra_percent: u64,
    seed: u64,
    /// O_DIRECT members: reads go through the io_uring, writes bypass the page cache.
    direct: bool,
}

fn fio_verify_gc_restart(case: FioCase) {
    require("fio", "fio");
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let mut array = Array::create(case.scheme, case.rgroups, case.ssds_per_rgroup);
    array.direct = case.direct;
    let server = array.serve();
    let export = export_size(&server.uri());
    let size_mib = export * 9 / 10 / MIB;
    let io_mib = size_mib + export * case.extra_percent / 100 / MIB;
    let written = fio_job(array.path(), &server.uri(), &verify_job(size_mib, io_mib, case.seed));
    assert_eq!(written["write"]["io_bytes"].as_u64(), Some(io_mib * MIB), "fio wrote less than --io_size");
    let verified = written["read"]["io_bytes"].as_u64().unwrap_or(0);
    assert!(verified >= size_mib * MIB / 2, "fio verified only {verified} bytes of a {size_mib} MiB region");

    let status = array.status();
    assert_eq!(status["volume_bytes"].as_u64(), Some(export), "status and NBD disagree on the export size");
    assert_eq!(status["user_bytes_written"].as_u64(), Some(io_mib * MIB), "status counts other user writes than fio's");
    if array.log_structured() {
        assert_gc_in_every_group(&array, &status);
    } else {
        assert_eq!(status["victims"].as_u64(), Some(0), "in-place RAID collected victims:\n{status:#}");
        assert_eq!(status["gc_blocks_moved"].as_u64(), Some(0), "in-place RAID moved blocks:\n{status:#}");
    }
    server.stop();
    array.check_clean();

    // Same job, same seed, nothing written: every block must still carry what fio wrote last.
    let server = array.serve_reversed();
    assert_eq!(export_size(&server.uri()), export, "the export changed size across a restart");
    let mut args = verify_job(size_mib, io_mib, case.seed);
    args.push("--verify_only".into());
    let replayed = fio_job(array.path(), &server.uri(), &args);
    assert_eq!(
        replayed["read"]["io_bytes"].as_u64(),
        Some(verified),
        "the verify_only replay checked other blocks than the first run verified"
    );
    let status = array.status();
    assert_eq!(status["user_bytes_written"].as_u64(), Some(0), "verify_only wrote:\n{status:#}");
    server.stop();
    array.check_clean();
}

/// Every R-group GC runs in has collected at least one victim.
fn assert_gc_in_every_group(array: &Array, status: &Value) {
    let victims = status["victims"].as_u64().unwrap_or(0);
    assert!(victims > 0, "{}: no victim collected:\n{status:#}", array.scheme);
    let groups = status["groups"].as_array().unwrap_or_else(|| panic!("no groups in status:\n{status:#}"));
    assert_eq!(groups.len(), array.gc_groups(), "R-groups in status:\n{status:#}");
    // GC reads a victim's live blocks from its own R-group's members.
    let members = status["members"].as_array().unwrap_or_else(|| panic!("no members in status:\n{status:#}"));
    let mut gc_read = vec![0u64; groups.len()];
    for m in members {
        let path = m["path"].as_str().unwrap_or_default();
        let index = array
            .members
            .iter()
            .position(|p| p.as_os_str() == path)
            .unwrap_or_else(|| panic!("status names member {path:?}, not one of {:?}", array.members));
        gc_read[array.group_of(index)] += m["gc_bytes_read"].as_u64().unwrap_or(0);
    }
    for (g, bytes) in gc_read.iter().enumerate() {
        assert!(*bytes > 0, "{}: GC read nothing from R-group {g}'s members:\n{status:#}", array.scheme);
    }
    for (i, g) in groups.iter().enumerate() {
        let Some(jobs) = g.get("gc_jobs").and_then(Value::as_u64) else {
            panic!("{}: status has no groups[{i}].gc_jobs counter:\n{status:#}", array.scheme);
        };
        assert!(jobs >= 1, "{}: R-group {i} collected no victim (gc_jobs {jobs}):\n{status:#}", array.scheme);
    }
}

#[test]
fn fio_swan0_3x2_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan0",
        rgroups: 3,
        ssds_per_rgroup: 2,
        extra_percent: 30,
        seed: 1,
        direct: false,
    });
}

#[test]
fn fio_swan5_2x3_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan5",
        rgroups: 2,
        ssds_per_rgroup: 3,
        extra_percent: 40,
        seed: 2,
        direct: false,
    });
}

/// O_DIRECT members: plain reads go through the io_uring (`swan_server::uring`) and are
/// verified there, GC and parity as above.
#[test]
fn fio_swan5_2x3_direct_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan5",
        rgroups: 2,
        ssds_per_rgroup: 3,
        extra_percent: 40,
        seed: 6,
        direct: true,
    });
}

#[test]
fn fio_lograid5_1x4_gc_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "lograid5",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 25,
        seed: 3,
        direct: false,
    });
}

#[test]
fn fio_raid5_1x4_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "raid5",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 0,
        seed: 4,
        direct: false,
    });
}

#[test]
fn fio_raid0_1x4_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "raid0",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 0,
        seed: 5,
        direct: false,
    });
}
