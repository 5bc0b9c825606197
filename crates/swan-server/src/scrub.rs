//! `swan scrub`: read every live block of an array, verify it against the CRC32C its
//! segment's summary recorded, repair what redundancy allows, and report the rest.
//!
//! A block whose bytes do not match (a bit flipped on the medium, a block zeroed, another
//! block's data written in its place — a misdirected write, which an old checksum stored
//! *in* the block would not notice) is rebuilt, in an R-group with parity, from the other
//! blocks of its stripe row: the XOR of the row's other data blocks and its parity. The
//! rebuilt block is written back only if it matches the CRC; otherwise, and always without
//! parity (RAID0), the block is reported as lost, by logical address. A row whose data all
//! verify but whose parity does not match them gets its parity rewritten.
//!
//! Offline, like `swan check`: it recovers the array as `swan serve` would, then reads the
//! members directly. Segments sealed by servers older than the block CRCs (summary version
//! 1), and segments adopted at recovery (open at a crash, no summary), carry no CRCs: they
//! are counted as unverified, not guessed at.

use crate::array::{self, Opened};
use crate::check::CheckError;
use crate::member::{MemberError, BLOCK};
use crate::parity;
use std::fmt::Write as _;
use std::path::PathBuf;
use swan_core::geometry::{Geometry, RaidLevel};
use swan_core::scheme::{ArrayScheme, LogArray};
use swan_core::summary::{Summary, DEAD};

#[derive(Debug, Default)]
pub struct ScrubReport {
    pub text: String,
    /// Live blocks read and compared with their CRC.
    pub verified: u64,
    /// Live blocks in segments without CRCs (old summaries, adopted segments).
    pub unverified: u64,
    pub mismatches: u64,
    pub repaired: u64,
    pub parity_rewritten: u64,
    /// Logical blocks whose data is lost (no redundancy, or the reconstruction failed too).
    pub lost: Vec<u64>,
    /// Other problems (unreadable summaries, summaries that disagree with the map).
    pub problems: u64,
}

impl ScrubReport {
    fn say(&mut self, line: String) {
        let _ = writeln!(self.text, "{line}");
    }

    /// Lost blocks as ranges "a-b" of logical blocks.
    pub fn lost_ranges(&self) -> Vec<(u64, u64)> {
        let mut lost = self.lost.clone();
        lost.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for lba in lost {
            match out.last_mut() {
                Some((_, end)) if *end + 1 == lba => *end = lba,
                _ => out.push((lba, lba)),
            }
        }
        out
    }
}

/// Scrub the array on `paths`; with `repair`, write back what can be rebuilt.
pub fn scrub(paths: &[PathBuf], repair: bool) -> Result<ScrubReport, CheckError> {
    let opened = array::open(paths, false, !repair)?;
    opened.require_all_healthy("swan scrub")?;
    let rec = array::recover(&opened)?;
    let mut r = ScrubReport::default();
    let sb = &opened.sb;
    r.say(format!("array {} ({}, {} R-group(s) × {})", sb.uuid_string(), sb.kind, sb.rgroups, sb.ssds_per_rgroup));
    match &rec.scheme {
        ArrayScheme::Log(la) => scrub_log(&opened, la, repair, &mut r)?,
        ArrayScheme::InPlace(_) if sb.crc_table_blocks == 0 => {
            r.say(
                "this in-place array was made before swan kept per-block CRCs for in-place RAID: nothing to verify \
                 block by block (swan check verifies its parity)"
                    .into(),
            );
            return Ok(r);
        }
        ArrayScheme::InPlace(_) => scrub_inplace(&opened, repair, &mut r)?,
    }
    if repair && (r.repaired > 0 || r.parity_rewritten > 0) {
        for m in opened.members.iter() {
            m.sync()?;
        }
    }
    r.say(format!(
        "blocks: {} verified ({} MiB), {} without CRCs; {} mismatched, {} repaired{}",
        r.verified,
        (r.verified * BLOCK as u64) >> 20,
        r.unverified,
        r.mismatches,
        r.repaired,
        if repair { "" } else { " (--no-repair: nothing written)" }
    ));
    if r.parity_rewritten > 0 {
        r.say(format!("parity: {} stripe row(s) rewritten from verified data", r.parity_rewritten));
    }
    let ranges = r.lost_ranges();
    if !ranges.is_empty() {
        let shown: Vec<String> =
            ranges.iter().take(20).map(|&(a, b)| if a == b { format!("{a}") } else { format!("{a}-{b}") }).collect();
        r.say(format!(
            "LOST: {} block(s) of 4 KiB cannot be recovered, at logical blocks {}{}",
            r.lost.len(),
            shown.join(", "),
            if ranges.len() > 20 { ", ..." } else { "" }
        ));
    }
    Ok(r)
}

/// In-place RAID: every member block with a known CRC ([`crate::blockcrc`]) read and
/// compared; a mismatch rebuilt from its stripe row (RAID4/5), checked, written back.
fn scrub_inplace(o: &Opened, repair: bool, r: &mut ScrubReport) -> Result<(), CheckError> {
    use crate::blockcrc::{BlockCrcs, Opened as TableState};
    let sb = &o.sb;
    let (crcs, state) = BlockCrcs::load(&o.members, sb)?;
    if state == TableState::Dirty {
        return Err(CheckError::NotStoppedCleanly);
    }
    let geo = sb.stripe_geometry()?;
    let rows = geo.stripes * u64::from(geo.chunk_blocks);
    let mut block = vec![0u8; BLOCK];
    let mut rebuilt = vec![0u8; BLOCK];
    for i in 0..rows {
        let at = sb.meta_blocks + i;
        for m in 0..sb.members {
            let Some(want) = crcs.expected(m, at) else {
                r.unverified += 1;
                continue;
            };
            o.members[m as usize].read(at, &mut block)?;
            r.verified += 1;
            if crc32c::crc32c(&block) == want {
                continue;
            }
            r.mismatches += 1;
            let good =
                matches!(o.members.rebuild(m, at, &mut rebuilt), Ok(Some(()))) && crc32c::crc32c(&rebuilt) == want;
            let lba = geo.lba_at(m, at);
            let what = lba.map_or_else(|| "parity".to_string(), |l| format!("logical block {l}"));
            if good {
                if repair {
                    o.members[m as usize].write(at, &rebuilt)?;
                    r.repaired += 1;
                }
                r.say(format!("member {m} block {at} ({what}): did not match its CRC; rebuilt from parity"));
            } else {
                r.say(format!("member {m} block {at} ({what}): does not match its CRC and cannot be rebuilt"));
                match lba {
                    Some(l) => r.lost.push(l),
                    None => r.problems += 1,
                }
            }
        }
    }
    Ok(())
}

fn scrub_log(o: &Opened, la: &LogArray, repair: bool, r: &mut ScrubReport) -> Result<(), MemberError> {
    let geo = *la.geometry();
    let segs = la.segments();
    let live = crate::check::live_by_segment(la);
    let mut buf = Vec::new();
    let mut block = vec![0u8; BLOCK];
    for seg in 0..geo.segments() {
        if live[seg as usize].is_empty() {
            continue;
        }
        let summary = if segs.seq(seg) == 0 {
            None
        } else {
            crate::summaries::read_raw(&o.members, &geo, seg, &mut buf)?;
            match Summary::decode(&buf) {
                Ok(s) => Some(s),
                Err(e) => {
                    r.problems += 1;
                    r.say(format!("PROBLEM: segment {seg}: summary: {e}"));
                    None
                }
            }
        };
        let Some(summary) = summary.filter(|s| s.block_crcs) else {
            r.unverified += live[seg as usize].len() as u64;
            continue;
        };
        let mut bad_rows = Vec::new();
        for &(slot, lba) in &live[seg as usize] {
            let Some(entry) = summary.entries.get(slot as usize).filter(|e| e.lba == lba && e.lba != DEAD) else {
                r.problems += 1;
                r.say(format!("PROBLEM: segment {seg} slot {slot}: the summary does not name block {lba}"));
                r.unverified += 1;
                // Its row's parity is not rewritten from a block nothing vouches for.
                bad_rows.push(geo.slot_location(seg, slot).1);
                continue;
            };
            let (m, at) = geo.slot_location(seg, slot);
            o.members[m as usize].read(at, &mut block)?;
            r.verified += 1;
            if crc32c::crc32c(&block) == entry.crc {
                continue;
            }
            r.mismatches += 1;
            match o.members.rebuild(m, at, &mut block)? {
                Some(()) if crc32c::crc32c(&block) == entry.crc => {
                    // A zone takes no rewrite: reads rebuild the block until GC moves it.
                    let zoned = o.members[m as usize].zoned().is_some();
                    r.say(format!(
                        "segment {seg} slot {slot} (member {m} block {at}, logical block {lba}): checksum mismatch, \
                         rebuilt from parity{}",
                        match (repair, zoned) {
                            (true, false) => " and rewritten",
                            (_, true) => " (a zone takes no rewrite: reads rebuild it until GC moves it)",
                            (false, false) => "",
                        }
                    ));
                    if repair && !zoned {
                        o.members[m as usize].write(at, &block)?;
                        r.repaired += 1;
                    }
                }
                rebuilt => {
                    r.say(format!(
                        "segment {seg} slot {slot} (member {m} block {at}, logical block {lba}): checksum mismatch, \
                         {}",
                        if rebuilt.is_some() {
                            "and the rebuild from parity does not match either"
                        } else {
                            "no parity"
                        }
                    ));
                    r.lost.push(lba);
                    bad_rows.push(at);
                }
            }
        }
        if geo.raid != RaidLevel::Raid0 {
            scrub_parity(o, &geo, seg, &bad_rows, repair, r)?;
        }
    }
    Ok(())
}

/// Rows of `segment` whose parity does not match their data: rewrite the parity when the
/// row's data verified (rows with lost or unverified data, `bad_rows`, are left as they
/// are: parity rewritten from such a block would make its damage permanent).
fn scrub_parity(
    o: &Opened,
    geo: &Geometry,
    segment: u64,
    bad_rows: &[u64],
    repair: bool,
    r: &mut ScrubReport,
) -> Result<(), MemberError> {
    let group = geo.group_of_segment(segment);
    let mut acc = vec![0u8; BLOCK];
    let mut one = vec![0u8; BLOCK];
    for row in 0..geo.segment_rows {
        let at = geo.row_block(segment, row);
        if bad_rows.contains(&at) {
            continue;
        }
        let Some(parity_col) = geo.parity_column(at) else { continue };
        let members = geo.group_members(group).map(|m| &o.members[m as usize]);
        if parity::row_is_consistent(members, at, &mut one, &mut acc)? {
            continue;
        }
        let pm = geo.member(group, parity_col);
        r.say(format!("segment {segment} row {row}: parity (member {pm} block {at}) does not match the data"));
        if o.members[pm as usize].zoned().is_some() {
            // Its data verified, but a member lost now would take the row's blocks with it.
            r.problems += 1;
            r.say(format!(
                "PROBLEM: segment {segment} row {row}: a zone takes no rewrite, so the parity stays wrong until GC \
                 moves the segment's blocks"
            ));
        } else if repair {
            // XOR of the data alone: the current parity XOR the mismatch.
            o.members[pm as usize].read(at, &mut one)?;
            parity::xor(&mut one, &acc);
            o.members[pm as usize].write(at, &one)?;
            r.parity_rewritten += 1;
        }
    }
    Ok(())
}
