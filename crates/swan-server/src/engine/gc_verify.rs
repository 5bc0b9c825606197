//! GC verifies what it moves.
//!
//! A GC job reads a victim's live blocks into its staging buffer, then writes them to their
//! new slots; the CRCs of the staged copies go to the journal and the new summary. A block
//! that rotted in the victim would come out of that with a fresh, matching CRC: the
//! corruption laundered. So between the job's reads and its writes every staged
//! block is checked against the CRC the victim's summary holds for it (in a segment adopted
//! at recovery, which has no summary, the CRC of the journal entry that last mapped it,
//! where recovery replayed one). A mismatch is rebuilt from the block's stripe row where the
//! R-group has parity (and checked again); otherwise the block is moved as it is but its
//! new slot is *poisoned*: the CRC recorded for it is deliberately wrong, so every later
//! read of it fails (EIO) rather than return bad data, as a read of the victim would have.

use super::{GcRun, Worker};
use crate::member::BLOCK;
use std::collections::HashMap;
use swan_core::geometry::Geometry;
use swan_core::io::{Dst, IoKind, Src};
use swan_core::summary::{Summary, DEAD};

/// What GC's checks found (for `swan status`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GcChecks {
    pub verified: u64,
    pub repaired: u64,
    pub lost: u64,
    /// Blocks moved without a CRC to check (adopted at recovery, named by no replayed
    /// journal entry).
    pub unverified: u64,
}

impl GcRun {
    /// The slot each staged block is written to (physical block address to staging slot),
    /// from the job's write phase.
    pub(super) fn destinations(&self, geo: &Geometry) -> HashMap<u64, u32> {
        let mut dest = HashMap::new();
        if self.plan.phase_count() < 2 {
            return dest;
        }
        for io in self.plan.phase(1) {
            if let IoKind::Write(Src::Staged { slot }) = io.kind {
                for i in 0..io.count {
                    if let Some((seg, s)) = geo.slot_at(io.member, io.block + u64::from(i)) {
                        dest.insert(geo.pba(seg, s), slot + i);
                    }
                }
            }
        }
        dest
    }
}

impl Worker {
    /// Check `run`'s staged blocks (its read phase is done, its writes are not).
    pub(super) fn verify_gc_copies(&mut self, run: &mut GcRun) {
        let Some(la) = self.scheme.log_array() else { return };
        let geo = *la.geometry();
        if run.plan.phase_count() < 2 {
            return;
        }
        // Where each staged block goes.
        let dest: HashMap<u32, u64> = run.destinations(&geo).into_iter().map(|(pba, slot)| (slot, pba)).collect();
        let mut checks = GcChecks::default();
        let mut summary: Option<(u64, Option<Summary>)> = None;
        let mut buf = Vec::new();
        let mut rebuilt = vec![0u8; BLOCK];
        for io in run.plan.phase(0) {
            let IoKind::Read(Dst::Staged { slot }) = io.kind else { continue };
            for i in 0..io.count {
                let block = io.block + u64::from(i);
                let Some((seg, s)) = geo.slot_at(io.member, block) else { continue };
                if summary.as_ref().map(|x| x.0) != Some(seg) {
                    // Adopted segments (sequence 0) have no summary.
                    let seq = la.segments().seq(seg);
                    let sealed = (seq != 0)
                        .then(|| crate::summaries::read_sealed(&self.members, &geo, seg, seq, &mut buf))
                        .flatten()
                        .filter(|sum| sum.block_crcs);
                    summary = Some((seg, sealed));
                }
                // What the block must match: its summary's entry; in an adopted segment, the
                // CRC of the journal entry that last mapped it, where recovery replayed one.
                let pba = geo.pba(seg, s);
                let expected = match summary.as_ref().and_then(|x| x.1.as_ref()) {
                    Some(sum) => sum.entries.get(s as usize).map(|e| (e.lba, e.crc)),
                    None => self.adopted_crcs.get(&pba).map(|&crc| (la.live_lba(pba).unwrap_or(DEAD), crc)),
                };
                let Some((lba, crc)) = expected else {
                    checks.unverified += 1;
                    continue;
                };
                if lba == DEAD && summary.as_ref().is_some_and(|x| x.1.is_some()) {
                    continue;
                }
                let at = (slot + i) as usize * BLOCK;
                let Some(data) = run.staged.get_mut(at..at + BLOCK) else { continue };
                if crc32c::crc32c(data) == crc {
                    checks.verified += 1;
                    continue;
                }
                let repaired = self.has_parity
                    && self.reconstruct(io.member, block, &mut rebuilt).is_ok()
                    && crc32c::crc32c(&rebuilt) == crc;
                if repaired {
                    data.copy_from_slice(&rebuilt);
                    checks.repaired += 1;
                    eprintln!(
                        "swan: GC: block {} (member {}, block {block}) did not match its CRC; rebuilt from parity before moving it",
                        lba, io.member
                    );
                } else {
                    checks.lost += 1;
                    if let Some(&to) = dest.get(&(slot + i)) {
                        run.poisoned.push(to);
                    }
                    eprintln!(
                        "swan: GC: block {} (member {}, block {block}) does not match its CRC and cannot be rebuilt: \
                         LOST; moved marked bad, so reads of it answer EIO",
                        lba, io.member
                    );
                }
            }
        }
        self.gc_checks.verified += checks.verified;
        self.gc_checks.repaired += checks.repaired;
        self.gc_checks.lost += checks.lost;
        self.gc_checks.unverified += checks.unverified;
    }
}
