//! Corruption on one member, found by `swan scrub` against the per-block CRC32C in segment
//! summaries (SWAN) or in the block CRC table (in-place RAID): a flipped bit, a zeroed block and a misdirected write (another block's data
//! in a block's place) on a RAID5 array are rebuilt from parity and rewritten, and the
//! volume read back through a real NBD client is what was written; on RAID0 the damaged
//! block is reported as lost by its logical address, and scrub fails.
//!
//! The same damage met by reads while serving: on RAID5 every read still returns what was
//! written (rebuilt from parity, rewritten, counted in `swan status`); on RAID0 the read of
//! the damaged block fails with EIO rather than return bad data.
//!
//! The data is written through `swan serve` with nbdcopy, marked ([`common::marked`]).
//! In-place RAID5 runs on 3 members: with 3 data blocks per row, the parity of three marked
//! blocks carries the marker too.

mod common;

use common::marked::{
    count, image, marked_blocks, patch, read_at, read_through_server, scrub, write_through_server, BLOCK,
};
use common::{check_clean, create_array, nbdcopy, require, run, status, u64_of, Server};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(120);

/// A flipped bit, a zeroed block and a misdirected write on the member holding most of the
/// first half of the data; their logical blocks.
fn damage_one_member(members: &[PathBuf], blocks: usize) -> [u64; 3] {
    let marked = marked_blocks(members, blocks as u64 / 2);
    let victim = marked.iter().map(|m| m.0).max_by_key(|&i| marked.iter().filter(|m| m.0 == i).count()).unwrap();
    let on: Vec<&(usize, u64, u64)> = marked.iter().filter(|m| m.0 == victim).collect();
    assert!(on.len() >= 10, "member {victim} holds too few marked blocks: {}", on.len());
    let m = &members[victim];
    let (flip, zero, src, dst) = (on[1], on[3], on[5], on[7]);
    let mut b = read_at(m, flip.1);
    b[1000] ^= 0x10;
    patch(m, flip.1, &b);
    patch(m, zero.1, &[0u8; BLOCK]);
    patch(m, dst.1, &read_at(m, src.1)); // misdirected: src's data lands on dst
    [flip.2, zero.2, dst.2]
}

#[test]
fn damage_met_by_reads_is_rebuilt_and_never_returned_swan5() {
    raid5_damage_met_by_reads_is_rebuilt_and_never_returned("swan5", 2, 3);
}

#[test]
fn damage_met_by_reads_is_rebuilt_and_never_returned_raid5() {
    raid5_damage_met_by_reads_is_rebuilt_and_never_returned("raid5", 1, 3);
}

fn raid5_damage_met_by_reads_is_rebuilt_and_never_returned(scheme: &str, rgroups: u32, ssds: u32) {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-verify-r5-").tempdir().unwrap();
    let members = create_array(dir.path(), scheme, rgroups, ssds, "64M", &[]);
    let blocks = 12 << 8;
    let data = image(blocks);
    write_through_server(dir.path(), &members, &data);
    damage_one_member(&members, blocks);
    let server = Server::start(dir.path(), &members);
    let file = dir.path().join("image.out");
    nbdcopy(&server.uri(), file.to_str().unwrap());
    let st = status(&members[0], dir.path());
    assert_eq!(u64_of(&st, "read_mismatches"), 3, "{st:#}");
    assert_eq!(u64_of(&st, "read_repairs"), 3, "{st:#}");
    assert_eq!(u64_of(&st, "read_failures"), 0, "{st:#}");
    assert!(u64_of(&st, "reads_verified") >= blocks as u64 / 2, "{st:#}");
    let log = server.log();
    server.stop();
    assert_eq!(log.matches("rebuilt from parity and rewritten").count(), 3, "{log}");
    let mut back = std::fs::read(&file).unwrap();
    back.truncate(data.len());
    assert!(back == data, "a read returned something else than what was written");
    // The reads rewrote the blocks: nothing is left for scrub.
    let (ok, after) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok && count(&after, "mismatched") == 0, "{after}");
}

#[test]
fn damage_met_by_a_read_is_an_io_error_swan0() {
    raid0_damage_met_by_a_read_is_an_io_error("swan0", 2, 2);
}

#[test]
fn damage_met_by_a_read_is_an_io_error_raid0() {
    raid0_damage_met_by_a_read_is_an_io_error("raid0", 1, 3);
}

fn raid0_damage_met_by_a_read_is_an_io_error(scheme: &str, rgroups: u32, ssds: u32) {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-verify-r0-").tempdir().unwrap();
    let members = create_array(dir.path(), scheme, rgroups, ssds, "64M", &[]);
    let blocks = 8 << 8;
    write_through_server(dir.path(), &members, &image(blocks));
    let marked = marked_blocks(&members, blocks as u64 / 2);
    let (i, offset, _) = marked[marked.len() / 3];
    let mut b = read_at(&members[i], offset);
    b[7] ^= 0x80;
    patch(&members[i], offset, &b);
    let server = Server::start(dir.path(), &members);
    let file = dir.path().join("image.out");
    let out = run(Command::new("nbdcopy").arg(server.uri()).arg(&file), "nbdcopy", DEADLINE);
    assert!(!out.status.success(), "nbdcopy read a damaged RAID0 block without an error");
    let st = status(&members[0], dir.path());
    assert!(u64_of(&st, "read_failures") >= 1 && u64_of(&st, "read_repairs") == 0, "{st:#}");
    let log = server.log();
    server.stop();
    assert!(log.contains("answered with EIO"), "{log}");
}

#[test]
fn bit_flip_zeroed_block_and_misdirected_write_are_rebuilt_from_parity_swan5() {
    raid5_bit_flip_zeroed_block_and_misdirected_write_are_rebuilt_from_parity("swan5", 2, 3);
}

#[test]
fn bit_flip_zeroed_block_and_misdirected_write_are_rebuilt_from_parity_raid5() {
    raid5_bit_flip_zeroed_block_and_misdirected_write_are_rebuilt_from_parity("raid5", 1, 3);
}

fn raid5_bit_flip_zeroed_block_and_misdirected_write_are_rebuilt_from_parity(scheme: &str, rgroups: u32, ssds: u32) {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-scrub-r5-").tempdir().unwrap();
    let members = create_array(dir.path(), scheme, rgroups, ssds, "64M", &[]);
    let blocks = 12 << 8; // 48 MiB: 24 segments of 2 MiB of data, all but the last sealed
    let data = image(blocks);
    write_through_server(dir.path(), &members, &data);
    let (ok, clean) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok && count(&clean, "mismatched") == 0, "a fresh array does not scrub clean:\n{clean}");
    assert!(count(&clean, "verified") >= (blocks as u64) * 3 / 4, "too few blocks verified:\n{clean}");

    // Damage one member only, in segments sealed long before the end of the write.
    let damaged = damage_one_member(&members, blocks);

    let (ok, found) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok, "repairable damage made --no-repair fail:\n{found}");
    assert_eq!(count(&found, "mismatched"), 3, "{found}");
    assert_eq!(count(&found, "repaired"), 0, "--no-repair repaired something:\n{found}");
    for lba in damaged {
        assert!(found.contains(&format!("logical block {lba})")), "block {lba} not reported:\n{found}");
    }
    let (ok, repaired) = scrub(dir.path(), &members, &[]);
    assert!(ok && count(&repaired, "repaired") == 3, "scrub did not repair the three blocks:\n{repaired}");
    let (ok, again) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(ok && count(&again, "mismatched") == 0, "damage left after the repair:\n{again}");
    check_clean(&members, dir.path(), "after scrub");
    let back = read_through_server(dir.path(), &members, data.len());
    assert!(back == data, "the volume read back after scrub differs from what was written");
}

#[test]
fn damage_is_reported_as_lost_by_logical_block_swan0() {
    raid0_damage_is_reported_as_lost_by_logical_block("swan0", 2, 2);
}

#[test]
fn damage_is_reported_as_lost_by_logical_block_raid0() {
    raid0_damage_is_reported_as_lost_by_logical_block("raid0", 1, 3);
}

fn raid0_damage_is_reported_as_lost_by_logical_block(scheme: &str, rgroups: u32, ssds: u32) {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-scrub-r0-").tempdir().unwrap();
    let members = create_array(dir.path(), scheme, rgroups, ssds, "64M", &[]);
    let blocks = 8 << 8; // 32 MiB
    write_through_server(dir.path(), &members, &image(blocks));
    let marked = marked_blocks(&members, blocks as u64 / 2);
    let (i, offset, lba) = marked[marked.len() / 2];
    let mut b = read_at(&members[i], offset);
    b[4000] ^= 0x01;
    patch(&members[i], offset, &b);
    let (ok, report) = scrub(dir.path(), &members, &[]);
    assert!(!ok, "scrub succeeded with a lost block:\n{report}");
    assert!(
        report.contains(&format!("LOST: 1 block(s) of 4 KiB cannot be recovered, at logical blocks {lba}")),
        "{report}"
    );
    assert_eq!(count(&report, "repaired"), 0, "{report}");
    // Nothing was written: the damage is still there to be found.
    let (ok, again) = scrub(dir.path(), &members, &["--no-repair"]);
    assert!(!ok && count(&again, "mismatched") == 1, "{again}");
}
