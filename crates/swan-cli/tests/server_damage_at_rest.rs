//! Damage done to an array's members while it is stopped, and what the next start and
//! `swan check` / `swan scrub` make of it.
//!
//! Blocks written into a segment still open when the server is killed: the restart adopts
//! that segment without a summary. These tests hold the array to what FORMAT.md promises
//! of such blocks: the first start that serves the array read-write seals the segment with
//! each block's CRC (checked against the CRC the replayed journal named for it), so that
//! after any number of clean restarts a byte changed in a member file is found — rebuilt
//! from parity on SWAN5, answered with EIO on SWAN0 — and never served as data; `swan scrub`
//! verifies those blocks instead of counting them as without CRCs; and damage done while
//! the array is stopped after the crash is caught against the journal's CRC at the restart.
//!
//! A checkpoint copy lost on one metadata member: `swan check` says so (the array is still
//! consistent: the map is whole on the other copy) and the next serve writes it again; lost on both: the start is refused, naming every slot
//! it tried and the way out.
//!
//! The writes go through a real NBD client (nbdsh, libnbd's Python shell), with no FLUSH or
//! with one, then the server gets SIGKILL; the damage is a byte changed in a member file, found by looking
//! for the marked block ([`common::marked`]).

mod common;

use common::marked::{count, image, marked_blocks, patch, read_at, scrub, BLOCK};
use common::{create_array, describe, require, run, status, text, u64_of, Server, SWAN};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(120);
/// Blocks written before the kill, one NBD write each.
const BLOCKS: usize = 64;

/// Write `data` at offset 0 in 4 KiB NBD writes, then a FLUSH if `flush`, and disconnect.
fn write_blocks(uri: &str, data: &[u8], dir: &Path, flush: bool) {
    require("nbdsh", "python3-libnbd");
    let file = dir.join("unflushed.in");
    std::fs::write(&file, data).unwrap();
    let script = format!(
        "data = open({file:?}, 'rb').read()\nh.connect_uri({uri:?})\n\
         for i in range(0, len(data), {BLOCK}):\n    h.pwrite(data[i:i + {BLOCK}], i)\n{flush}",
        file = file.to_str().unwrap(),
        flush = if flush { "h.flush()\n" } else { "" }
    );
    // Debian's python3 (which has the libnbd module) before any other on PATH.
    let path = format!("/usr/bin:/bin:{}", std::env::var("PATH").unwrap_or_default());
    let out = run(Command::new("nbdsh").env("PATH", path).args(["-c", &script]), "nbdsh", DEADLINE);
    assert!(out.status.success(), "nbdsh failed: {}{}", text(&out.stdout), text(&out.stderr));
}

/// An array of `scheme` with `BLOCKS` marked blocks written (and flushed, if `flush`) into
/// its first segment, then SIGKILL.
fn crashed_with_open_segment(
    dir: &Path,
    scheme: &str,
    rgroups: u32,
    ssds: u32,
    flush: bool,
) -> (Vec<PathBuf>, Vec<u8>) {
    let members = create_array(dir, scheme, rgroups, ssds, "64M", &[]);
    let data = image(BLOCKS);
    let server = Server::start(dir, &members);
    write_blocks(&server.uri(), &data, dir, flush);
    server.kill9();
    (members, data)
}

/// The first `len` bytes of the volume through a fresh server: Ok(bytes), or Err(the
/// client's complaint) when a read failed.
fn read_volume(dir: &Path, members: &[PathBuf], len: usize) -> (Result<Vec<u8>, String>, serde_json::Value, String) {
    let server = Server::start(dir, members);
    let file = dir.join("volume.out");
    let _ = std::fs::remove_file(&file);
    let out = run(Command::new("nbdcopy").arg(server.uri()).arg(&file), "nbdcopy", DEADLINE);
    let st = status(&members[0], dir);
    let log = server.stop();
    let got = if out.status.success() {
        let mut back = std::fs::read(&file).unwrap();
        back.truncate(len);
        Ok(back)
    } else {
        Err(text(&out.stderr))
    };
    (got, st, log)
}

/// Change one byte of the marked block `lba` in its member file.
fn change_a_byte(members: &[PathBuf], lba: u64) {
    let &(m, offset, _) = marked_blocks(members, BLOCKS as u64)
        .iter()
        .find(|b| b.2 == lba)
        .unwrap_or_else(|| panic!("block {lba} not found on the members"));
    let mut b = read_at(&members[m], offset);
    b[2000] ^= 0x5a;
    patch(&members[m], offset, &b);
}

/// Kill -9 with a segment open, two clean restarts, then a byte changed: the restart that
/// serves it finds the change against the CRC the segment was sealed with.
fn damage_after_clean_restarts_is_found(scheme: &str, rgroups: u32, ssds: u32, parity: bool) {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-adopted-").tempdir().unwrap();
    let (members, data) = crashed_with_open_segment(dir.path(), scheme, rgroups, ssds, false);
    for _ in 0..2 {
        Server::start(dir.path(), &members).stop();
    }
    let (ok, report) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok, "{report}");
    assert_eq!(count(&report, "without"), 0, "blocks written before the crash still carry no CRC:\n{report}");
    assert!(count(&report, "verified") >= BLOCKS as u64, "{report}");

    let lba = 17;
    change_a_byte(&members, lba);
    let (ok, found) = scrub(dir.path(), &members, &["--no-repair"]);
    assert_eq!(count(&found, "mismatched"), 1, "scrub did not find the changed byte:\n{found}");
    assert_eq!(ok, parity, "{found}");

    let (got, st, log) = read_volume(dir.path(), &members, data.len());
    assert_eq!(u64_of(&st, "read_mismatches"), 1, "the read did not notice the change: {st:#}\n{log}");
    if parity {
        assert!(got.as_ref().is_ok_and(|b| *b == data), "SWAN5 served something else than was written: {got:?}");
        assert_eq!(u64_of(&st, "read_repairs"), 1, "{st:#}");
    } else {
        assert!(got.is_err(), "SWAN0 served a changed block as data");
        assert!(u64_of(&st, "read_failures") >= 1, "{st:#}");
    }
}

#[test]
fn a_block_open_at_a_crash_is_verified_after_clean_restarts_swan5() {
    damage_after_clean_restarts_is_found("swan5", 2, 3, true);
}

#[test]
fn a_block_open_at_a_crash_is_verified_after_clean_restarts_swan0() {
    damage_after_clean_restarts_is_found("swan0", 2, 2, false);
}

/// Damage done while the array is down after the crash, before any restart (the writes were
/// flushed, so recovery trusts their records without reading the blocks): scrub, which
/// recovers offline, must not rewrite parity from the unverified block, and the restart
/// checks it against its journaled CRC and rebuilds it from parity.
#[test]
fn damage_before_the_first_restart_is_rebuilt_and_never_blessed_swan5() {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-adopted-down-").tempdir().unwrap();
    let (members, data) = crashed_with_open_segment(dir.path(), "swan5", 2, 3, true);
    let lba = 40;
    change_a_byte(&members, lba);
    let (_, report) = scrub(dir.path(), &members, &[]);
    assert_eq!(count(&report, "repaired"), 0, "{report}");
    assert!(
        !report.contains("rewritten from verified data"),
        "scrub rewrote parity over an unverified block:\n{report}"
    );

    let server = Server::start(dir.path(), &members);
    let log = server.stop();
    assert!(
        log.contains(&format!("logical block {lba} ")) && log.contains("rebuilt from parity"),
        "the restart did not check the block against its journaled CRC:\n{log}"
    );
    let (got, st, _) = read_volume(dir.path(), &members, data.len());
    assert!(got.as_ref().is_ok_and(|b| *b == data), "the volume differs from what was written: {got:?}");
    assert_eq!(u64_of(&st, "read_mismatches"), 0, "{st:#}");
    let (ok, clean) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok && count(&clean, "mismatched") == 0 && count(&clean, "without") == 0, "{clean}");
}

/// Blank every checkpoint header on member file `m` (found by its magic in the metadata
/// area), as a member whose first megabytes were overwritten would be; how many it blanked.
fn blank_checkpoints(m: &Path) -> usize {
    let bytes = std::fs::read(m).unwrap();
    let mut blanked = 0;
    for (k, b) in bytes.chunks(BLOCK).enumerate().take(4096) {
        if b.starts_with(b"SWANCKP1") {
            patch(m, (k * BLOCK) as u64, &[0u8; BLOCK]);
            blanked += 1;
        }
    }
    blanked
}

fn swan_check(dir: &Path, members: &[PathBuf]) -> (bool, String) {
    let out = run(Command::new(SWAN).arg("check").args(members).env("SWAN_RUN_DIR", dir), "swan check", DEADLINE);
    assert!(out.status.code().is_some(), "{}", describe("swan check died", &out));
    (out.status.success(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn a_checkpoint_copy_lost_on_one_metadata_member_is_reported_and_written_again() {
    let dir = tempfile::Builder::new().prefix("swan-ckpt-").tempdir().unwrap();
    let members = create_array(dir.path(), "swan5", 2, 3, "64M", &[]);
    let data = image(BLOCKS);
    let server = Server::start(dir.path(), &members);
    write_blocks(&server.uri(), &data, dir.path(), true);
    server.stop();
    assert!(blank_checkpoints(&members[1]) >= 1, "no checkpoint header found on member 1");
    let (ok, report) = swan_check(dir.path(), &members);
    let m1 = members[1].display().to_string();
    // The map is whole on the other copy: consistent, but said.
    assert!(ok, "{report}");
    assert!(
        report.contains("note: checkpoint copy not whole") && report.contains(&m1) && report.contains("blank"),
        "swan check does not name the lost copy:\n{report}"
    );
    let log = Server::start(dir.path(), &members).stop();
    assert!(log.contains("checkpoint copy not whole") && log.contains(&m1), "{log}");
    let (ok, report) = swan_check(dir.path(), &members);
    assert!(
        ok && report.contains("clean") && !report.contains("not whole"),
        "the serve did not write the lost copy again:\n{report}"
    );
    let (got, _, _) = read_volume(dir.path(), &members, data.len());
    assert!(got.is_ok_and(|b| b == data), "the volume differs from what was written");
}

#[test]
fn checkpoints_lost_on_every_metadata_member_refuse_the_start_naming_each_slot() {
    let dir = tempfile::Builder::new().prefix("swan-ckpt-both-").tempdir().unwrap();
    let members = create_array(dir.path(), "swan0", 2, 2, "64M", &[]);
    Server::start(dir.path(), &members).stop();
    for m in &members[..2] {
        assert!(blank_checkpoints(m) >= 1, "no checkpoint header found on {}", m.display());
    }
    let (ok, report) = swan_check(dir.path(), &members);
    assert!(!ok, "{report}");
    for m in &members[..2] {
        for slot in 0..2 {
            let named = format!("{} slot {slot}: blank", m.display());
            assert!(report.contains(&named), "'{named}' is not in:\n{report}");
        }
    }
    assert!(report.contains("map is lost") && report.contains("Restore the metadata members"), "{report}");
}
