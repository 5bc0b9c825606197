//! Live blocks of a member, for the fault soak: a block that a segment sealed with block
//! CRCs names live is found through the segment summaries on the member files; the soak
//! flips one of its bits in the file behind the running server, or reads it to make the
//! server meet a hung member.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use swan_core::geometry::Geometry;
use swan_core::summary::{Summary, DEAD};
use swan_server::layout::Superblock;
use swan_testkit::rng::SplitMix64;

const BLOCK: u64 = 4096;

/// Reads `len` bytes of `path` at `at`.
pub fn read_at(path: &Path, at: u64, len: usize) -> Vec<u8> {
    let mut f = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.seek(SeekFrom::Start(at)).expect("seek");
    let mut b = vec![0u8; len];
    f.read_exact(&mut b).expect("read a member");
    b
}

/// A live block of a member (and, once flipped, the flip's place).
pub struct Flip {
    pub member: usize,
    pub block: u64,
    pub lba: u64,
    pub segment: u64,
    pub row: u32,
}

/// Flips one bit of a block that a segment sealed with block CRCs names live, with a
/// logical address in `lbas`, on a random member; or says why none was found. (The block
/// may have been overwritten since the seal: then no read meets the flip, and only `swan
/// check`, as a parity mismatch in its row, and `swan scrub` do.)
pub fn flip_a_bit(members: &[PathBuf], lbas: std::ops::Range<u64>, rng: &mut SplitMix64) -> Result<Flip, String> {
    let f = find_live(members, lbas, None, rng)?;
    let path = &members[f.member];
    let bit = rng.below(BLOCK * 8);
    let at = f.block * BLOCK + bit / 8;
    let mut byte = read_at(path, at, 1);
    byte[0] ^= 1 << (bit % 8);
    let mut file = std::fs::OpenOptions::new().write(true).open(path).expect("open a member");
    file.seek(SeekFrom::Start(at)).expect("seek");
    file.write_all(&byte).expect("flip a bit");
    Ok(f)
}

/// A block that a segment sealed with block CRCs names live, with a logical address in
/// `lbas`, on member `on` (or any): read from the member files, so the server need not
/// stop. Several tries at random segments; says why none was found.
pub fn find_live(
    members: &[PathBuf],
    lbas: std::ops::Range<u64>,
    on: Option<usize>,
    rng: &mut SplitMix64,
) -> Result<Flip, String> {
    let sb = Superblock::decode(&read_at(&members[0], 0, BLOCK as usize)).map_err(|e| format!("{e}"))?;
    if !sb.kind.is_log_structured() {
        return Err("in-place RAID: this soak finds live blocks through segment summaries, which it has not".into());
    }
    let g = Geometry::new(
        sb.rgroups,
        sb.ssds_per_rgroup,
        sb.kind.raid(),
        sb.member_blocks,
        sb.meta_blocks,
        sb.segment_rows,
    )
    .map_err(|e| format!("{e}"))?;
    // Several tries at random segments: most are free, open, or hold other regions.
    for _ in 0..400 {
        let segment = rng.below(g.segments());
        let area: Vec<u8> = (g.payload_slots()..g.data_slots)
            .flat_map(|slot| {
                let (m, b) = g.slot_location(segment, slot);
                read_at(&members[m as usize], b * BLOCK, BLOCK as usize)
            })
            .collect();
        let Ok(summary) = Summary::decode(&area) else { continue };
        if summary.segment != segment || !summary.block_crcs {
            continue;
        }
        let live: Vec<(u32, u64)> = summary
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.lba != DEAD && lbas.contains(&e.lba) && e.crc != 0)
            .map(|(slot, e)| (slot as u32, e.lba))
            .filter(|&(slot, _)| on.is_none_or(|on| g.slot_location(segment, slot).0 as usize == on))
            .collect();
        if live.is_empty() {
            continue;
        }
        let (slot, lba) = live[rng.below(live.len() as u64) as usize];
        let (m, b) = g.slot_location(segment, slot);
        let path = &members[m as usize];
        // A segment reused since this summary was written (open again) still carries it
        // until it is sealed anew: the block must hold what the summary says it holds.
        if crc32c::crc32c(&read_at(path, b * BLOCK, BLOCK as usize)) != summary.entries[slot as usize].crc {
            continue;
        }
        return Ok(Flip { member: m as usize, block: b, lba, segment, row: slot / g.data_members });
    }
    Err("no live block of a sealed segment in the range asked".into())
}
