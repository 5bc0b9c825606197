//! Marked test data: every 4 KiB block starts with a marker and its own logical block
//! number, so a test finds live data blocks in the member files by looking, not by
//! re-deriving the layout; and `swan scrub`'s report, read back.

use super::{describe, nbdcopy, run, text, Server, SWAN};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use swan_testkit::rng::xorshift64;

pub const BLOCK: usize = 4096;
const MARK: &[u8; 8] = b"SCRUBTST";
const DEADLINE: Duration = Duration::from_secs(120);

/// `blocks` blocks of test data: marker, logical block number, then bytes that differ per block.
pub fn image(blocks: usize) -> Vec<u8> {
    let mut data = vec![0u8; blocks * BLOCK];
    for (lba, b) in data.chunks_mut(BLOCK).enumerate() {
        b[..8].copy_from_slice(MARK);
        b[8..16].copy_from_slice(&(lba as u64).to_le_bytes());
        let mut x = (lba as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for byte in &mut b[16..] {
            *byte = xorshift64(&mut x) as u8;
        }
    }
    data
}

/// Serve, write `data` at offset 0, stop cleanly.
pub fn write_through_server(dir: &Path, members: &[PathBuf], data: &[u8]) {
    let file = dir.join("image.in");
    std::fs::write(&file, data).expect("write the image");
    let server = Server::start(dir, members);
    nbdcopy(file.to_str().unwrap(), &server.uri());
    server.stop();
}

/// The first `len` bytes of the volume, read through a fresh server.
pub fn read_through_server(dir: &Path, members: &[PathBuf], len: usize) -> Vec<u8> {
    let file = dir.join("image.out");
    let server = Server::start(dir, members);
    nbdcopy(&server.uri(), file.to_str().unwrap());
    server.stop();
    let mut data = std::fs::read(&file).expect("read the image back");
    data.truncate(len);
    data
}

/// (member index, byte offset in its file, logical block) of every marked block with a
/// logical block below `below`, member by member.
pub fn marked_blocks(members: &[PathBuf], below: u64) -> Vec<(usize, u64, u64)> {
    let mut found = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let bytes = std::fs::read(m).expect("read a member");
        for (k, b) in bytes.chunks(BLOCK).enumerate() {
            if b.len() == BLOCK && &b[..8] == MARK {
                let lba = u64::from_le_bytes(b[8..16].try_into().unwrap());
                if lba < below {
                    found.push((i, (k * BLOCK) as u64, lba));
                }
            }
        }
    }
    found
}

pub fn patch(member: &Path, offset: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(member).expect("open a member");
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

pub fn read_at(member: &Path, offset: u64) -> Vec<u8> {
    let bytes = std::fs::read(member).expect("read a member");
    bytes[offset as usize..offset as usize + BLOCK].to_vec()
}

pub fn scrub(dir: &Path, members: &[PathBuf], extra: &[&str]) -> (bool, String) {
    let out =
        run(Command::new(SWAN).arg("scrub").args(extra).args(members).env("SWAN_RUN_DIR", dir), "swan scrub", DEADLINE);
    assert!(out.status.code().is_some(), "{}", describe("swan scrub died", &out));
    (out.status.success(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

pub fn count(report: &str, what: &str) -> u64 {
    // "blocks: N verified (...), U without CRCs; M mismatched, R repaired"
    let line =
        report.lines().find(|l| l.starts_with("blocks: ")).unwrap_or_else(|| panic!("no blocks line:\n{report}"));
    let words: Vec<&str> = line.split([' ', ',', ';']).filter(|w| !w.is_empty()).collect();
    let at = words.iter().position(|w| *w == what).unwrap_or_else(|| panic!("no '{what}' in: {line}"));
    words[at - 1].parse().unwrap_or_else(|_| panic!("no count before '{what}' in: {line}"))
}
