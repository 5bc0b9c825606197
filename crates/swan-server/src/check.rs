//! `swan check`: an offline consistency check of an array.
//!
//! It recovers the array exactly as `swan serve` would (without writing anything), then
//! checks what the recovered state and the members say against each other: the core's
//! invariants over the map, each sealed segment's summary (checksum, sequence number, and
//! that it names every live block the map puts in that segment), and the parity of every
//! stripe row that should have it.

use crate::array::{self, OpenError, Opened, RecoverError};
use crate::layout::ImpossibleGeometry;
use crate::member::{MemberError, BLOCK};
use crate::parity::row_is_consistent;
use std::fmt::Write as _;
use std::path::PathBuf;
use swan_core::geometry::{RaidLevel, StripeGeometry};
use swan_core::l2p::UNMAPPED;
use swan_core::scheme::{ArrayScheme, LogArray, SchemeKind};
use swan_core::segment::SegState;
use swan_core::summary::{Summary, DEAD};

/// Why `swan check` or `swan scrub` could not look an array over. What they find wrong
/// with it is not an error but their report.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Recover(#[from] RecoverError),
    #[error(transparent)]
    Geometry(#[from] ImpossibleGeometry),
    /// Scrub of in-place RAID: the CRC table is stale after a crash until a resync.
    #[error(
        "the array was not stopped cleanly: its block CRCs are not known until a resync (start `swan serve` on it \
         once: it resyncs before serving), then scrub"
    )]
    NotStoppedCleanly,
    #[error(transparent)]
    Member(#[from] MemberError),
}

pub struct CheckReport {
    pub text: String,
    pub problems: u64,
}

impl CheckReport {
    fn problem(&mut self, msg: String) {
        self.problems += 1;
        if self.problems <= 50 {
            let _ = writeln!(self.text, "PROBLEM: {msg}");
        }
    }
}

pub fn check(paths: &[PathBuf]) -> Result<CheckReport, CheckError> {
    check_opened(array::open(paths, false, true)?)
}

/// [`check`] of an array already opened (read-only, so nothing but recovery's reads touch it).
pub fn check_opened(opened: array::Opened) -> Result<CheckReport, CheckError> {
    opened.require_all_healthy("swan check")?;
    let rec = array::recover(&opened)?;
    let mut r = CheckReport { text: String::new(), problems: 0 };
    let sb = &opened.sb;
    let _ = writeln!(
        r.text,
        "array {} ({}, {} R-group(s) × {}): checkpoint {}, {} journal record(s), {} change(s) replayed",
        sb.uuid_string(),
        sb.kind,
        sb.rgroups,
        sb.ssds_per_rgroup,
        rec.checkpoint_seq,
        rec.records_replayed,
        rec.changes_replayed
    );
    // Not a problem: a crash between the copies of a checkpoint leaves exactly this, and the
    // map is whole on the other copy. But the operator must hear that one copy is all there is.
    for lost in &rec.checkpoint_copies_lost {
        let _ = writeln!(
            r.text,
            "note: checkpoint copy not whole: {lost}; the map has one whole copy until the array is served \
             read-write (its first checkpoint writes every copy). Expected after a crash during a checkpoint; \
             otherwise that member's metadata area was damaged"
        );
    }
    if let Err(e) = rec.scheme.check() {
        r.problem(format!("map: {e}"));
    } else {
        let _ = writeln!(r.text, "map: consistent");
    }
    match (sb.kind, &rec.scheme) {
        (_, ArrayScheme::Log(la)) => check_log(&opened, la, &rec.unsynced_seals, &mut r)?,
        (SchemeKind::Raid(raid), ArrayScheme::InPlace(_)) if raid != RaidLevel::Raid0 => {
            check_inplace_parity(&opened, &sb.stripe_geometry()?, &mut r)?;
        }
        _ => {}
    }
    let _ = writeln!(
        r.text,
        "{}",
        if r.problems == 0 { "clean".to_string() } else { format!("{} problem(s)", r.problems) }
    );
    Ok(r)
}

/// Live blocks of each segment, from the map: (slot, logical block), in logical order.
pub(crate) fn live_by_segment(la: &LogArray) -> Vec<Vec<(u32, u64)>> {
    let geo = la.geometry();
    let mut live: Vec<Vec<(u32, u64)>> = vec![Vec::new(); geo.segments() as usize];
    for lba in 0..la.config().volume_blocks {
        let pba = la.l2p().get(lba);
        if pba != UNMAPPED {
            let (seg, slot) = geo.split_pba(pba);
            live[seg as usize].push((slot, lba));
        }
    }
    live
}

fn check_log(o: &Opened, la: &LogArray, unsynced: &[u64], r: &mut CheckReport) -> Result<(), MemberError> {
    let geo = *la.geometry();
    let segs = la.segments();
    let live = live_by_segment(la);
    let (mut summaries, mut adopted, mut rows) = (0u64, 0u64, 0u64);
    let mut buf = vec![0u8; geo.summary_blocks as usize * BLOCK];
    let mut one = vec![0u8; BLOCK];
    let mut row_xor = vec![0u8; BLOCK];
    for seg in 0..geo.segments() {
        let state = segs.state(seg);
        if state == SegState::Free {
            continue;
        }
        let seq = segs.seq(seg);
        if seq == 0 {
            // Open at the last crash: adopted without a summary; nothing on disk to check.
            adopted += 1;
            continue;
        }
        crate::summaries::read_raw(&o.members, &geo, seg, &mut buf)?;
        match Summary::decode(&buf) {
            Err(e) => r.problem(format!("segment {seg}: summary: {e}")),
            Ok(s) => {
                summaries += 1;
                if s.segment != seg || s.seq != seq {
                    r.problem(format!(
                        "segment {seg}: summary is of segment {} seq {}, expected seq {seq}",
                        s.segment, s.seq
                    ));
                }
                for &(slot, lba) in &live[seg as usize] {
                    let named = s.entries.get(slot as usize).map_or(DEAD, |e| e.lba);
                    if named != lba {
                        r.problem(format!(
                            "segment {seg} slot {slot}: the map puts block {lba} here, the summary says {named:#x}"
                        ));
                    }
                }
            }
        }
        // Sealed after the last sync: its last rows' parity may not have landed before the
        // crash; serving read-write rewrites it.
        if geo.raid != RaidLevel::Raid0 && !unsynced.contains(&seg) {
            let group = geo.group_of_segment(seg);
            for row in 0..geo.segment_rows {
                let block = geo.row_block(seg, row);
                let members = geo.group_members(group).map(|m| &o.members[m as usize]);
                rows += 1;
                if !row_is_consistent(members, block, &mut one, &mut row_xor)? {
                    r.problem(format!("segment {seg} row {row}: parity does not match the data"));
                }
            }
        }
    }
    let _ = writeln!(
        r.text,
        "segments: {} sealed with summaries checked, {} adopted at recovery (open at the last stop, no summary \
         yet: serving read-write seals them), {} free",
        summaries,
        adopted,
        segs.free_total()
    );
    if geo.raid != RaidLevel::Raid0 {
        let _ = writeln!(r.text, "parity: {rows} stripe rows checked");
    }
    Ok(())
}

fn check_inplace_parity(o: &Opened, geo: &StripeGeometry, r: &mut CheckReport) -> Result<(), MemberError> {
    let mut one = vec![0u8; BLOCK];
    let mut acc = vec![0u8; BLOCK];
    let rows = geo.stripes * u64::from(geo.chunk_blocks);
    for i in 0..rows {
        let block = geo.member_offset + i;
        if !row_is_consistent(o.members.iter(), block, &mut one, &mut acc)? {
            r.problem(format!("stripe row at member block {block}: parity does not match the data"));
        }
    }
    let _ = writeln!(r.text, "parity: {rows} stripe rows checked");
    Ok(())
}
