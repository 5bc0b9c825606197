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

use super::member_io::MemberIo;
use crate::member::BLOCK;
use std::collections::HashMap;
use swan_core::scheme::{ArrayScheme, GcJobId};
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

impl GcChecks {
    pub fn add(&mut self, o: GcChecks) {
        self.verified += o.verified;
        self.repaired += o.repaired;
        self.lost += o.lost;
        self.unverified += o.unverified;
    }
}

/// Check the staged blocks of GC job `job` (its read phase is done, its writes are not)
/// against what `scheme`'s victim summaries, or `adopted` (the CRCs recovery kept), say they
/// must hold. Destinations of blocks found bad beyond repair go to `poisoned`. In-place
/// RAID's jobs move nothing, so there is nothing to check.
pub(super) fn verify_copies(
    job: GcJobId,
    staged: &mut [u8],
    poisoned: &mut Vec<u64>,
    scheme: &ArrayScheme,
    io: &MemberIo,
    adopted: &HashMap<u64, u32>,
) -> GcChecks {
    let mut checks = GcChecks::default();
    let Some(&geo) = scheme.log_geometry() else { return checks };
    let mut summary: Option<(u64, Option<Summary>)> = None;
    let mut buf = Vec::new();
    let mut rebuilt = vec![0u8; BLOCK];
    // Move `j` is staged in slot `j`.
    for (j, mv) in scheme.gc_moves(job).iter().enumerate() {
        let pba = mv.from;
        let (seg, s) = geo.split_pba(pba);
        let (member, block) = geo.slot_location(seg, s);
        if summary.as_ref().map(|x| x.0) != Some(seg) {
            // Adopted segments (sequence 0) have no summary.
            let seq = scheme.segment_seq(seg);
            let sealed = (seq != 0)
                .then(|| crate::summaries::read_sealed(&io.members, &geo, seg, seq, &mut buf))
                .flatten()
                .filter(|sum| sum.block_crcs);
            summary = Some((seg, sealed));
        }
        // What the block must match: its summary's entry; in an adopted segment, the
        // CRC of the journal entry that last mapped it, where recovery replayed one.
        let expected = match summary.as_ref().and_then(|x| x.1.as_ref()) {
            Some(sum) => sum.entries.get(s as usize).map(|e| (e.lba, e.crc)),
            None => adopted.get(&pba).map(|&crc| (scheme.live_lba(pba).unwrap_or(DEAD), crc)),
        };
        let Some((lba, crc)) = expected else {
            checks.unverified += 1;
            continue;
        };
        if lba == DEAD && summary.as_ref().is_some_and(|x| x.1.is_some()) {
            continue;
        }
        let at = j * BLOCK;
        let Some(data) = staged.get_mut(at..at + BLOCK) else { continue };
        if crc32c::crc32c(data) == crc {
            checks.verified += 1;
            continue;
        }
        let repaired = io.members.has_parity()
            && io.reconstruct(member, block, &mut rebuilt).is_ok()
            && crc32c::crc32c(&rebuilt) == crc;
        if repaired {
            data.copy_from_slice(&rebuilt);
            checks.repaired += 1;
            eprintln!(
                "swan: GC: block {} (member {}, block {block}) did not match its CRC; rebuilt from parity before moving it",
                lba, member
            );
        } else {
            checks.lost += 1;
            poisoned.push(mv.to);
            eprintln!(
                "swan: GC: block {} (member {}, block {block}) does not match its CRC and cannot be rebuilt: \
                 LOST; moved marked bad, so reads of it answer EIO",
                lba, member
            );
        }
    }
    checks
}
