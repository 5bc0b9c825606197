//! What every block the engine reads must match, and the check of a read against it.
//!
//! A log-structured array keeps the CRC32C of each block in its segment's summary once the
//! segment is sealed; until then the engine holds the CRCs of an open segment's blocks
//! here ([`Crcs::note`]), and hands them to the summary when it is written. Segments
//! adopted at recovery have no summary: the CRCs the replayed journal named are kept
//! ([`Recovered::adopted_crcs`](crate::array::Recovered)). In-place RAID keeps a table of
//! every member block's CRC ([`crate::blockcrc`]), updated with every write.

use super::member_io::MemberIo;
use crate::blockcrc::BlockCrcs;
use crate::member::BLOCK;
use crate::members::Members;
use crate::pool::{Check, ReadChecks, Verify};
use std::collections::HashMap;
use std::sync::Arc;
use swan_core::geometry::Geometry;
use swan_core::io::{Dst, IoKind, IoPlan};
use swan_core::scheme::{ArrayScheme, LogSlot};

pub(super) struct Crcs {
    /// CRC32C of every block written into each open segment, by slot, until the segment's
    /// summary carries them (FORMAT.md, summary).
    pub open: HashMap<u64, Vec<u32>>,
    /// CRCs of blocks in segments adopted at recovery, by slot; looked up only while the
    /// slot's segment is still adopted (no seal, not open).
    pub adopted: HashMap<u64, u32>,
    /// In-place RAID: the CRC of every member block; None for log schemes (their summaries
    /// hold CRCs) and arrays made before the table existed.
    pub table: Option<BlockCrcs>,
    /// Read verification counters, shared with the pool's readers.
    pub counts: Arc<ReadChecks>,
}

impl Crcs {
    pub fn new(adopted: HashMap<u64, u32>, counts: Arc<ReadChecks>) -> Crcs {
        Crcs { open: HashMap::new(), adopted, table: None, counts }
    }

    /// Block `pba` of an open segment now holds data with CRC `crc`.
    pub fn note(&mut self, geo: &Geometry, pba: u64, crc: u32) {
        // Kept until the segment's summary is written with it (open segments only: a few
        // per R-group).
        let (seg, slot) = geo.split_pba(pba);
        let table = self.open.entry(seg).or_insert_with(|| vec![0; geo.payload_slots() as usize]);
        table[slot as usize] = crc;
    }

    /// The CRC held for slot `slot` of open segment `seg`.
    pub fn open_crc(&self, seg: u64, slot: u32) -> Option<u32> {
        self.open.get(&seg).and_then(|t| t.get(slot as usize)).copied()
    }

    /// What each block of a read of `len` bytes from `first` must match: the CRC held for
    /// an open segment, or the one its sealed segment's summary recorded. None for in-place
    /// schemes.
    pub fn checks_for(&self, scheme: &ArrayScheme, first: u64, len: usize) -> Option<(Geometry, Vec<Check>)> {
        let geo = *scheme.log_geometry()?;
        let checks = (first..first + (len / BLOCK) as u64)
            .map(|lba| {
                let Some(LogSlot { pba, segment, slot, seq }) = scheme.log_slot(lba) else { return Check::Nothing };
                if let Some(table) = self.open.get(&segment) {
                    return Check::Crc(table[slot as usize]);
                }
                match seq {
                    // Adopted at recovery: no summary; the journal may have named it.
                    0 => self.adopted.get(&pba).map_or(Check::Unknown, |&crc| Check::Crc(crc)),
                    seq => Check::Summary { segment, seq, slot, lba },
                }
            })
            .collect();
        Some((geo, checks))
    }

    /// Verify a read the engine carried out itself (the pool's reads verify themselves),
    /// repairing from parity what it can. False: the read must fail.
    pub fn verify_read(
        &self,
        io: &MemberIo,
        scheme: &ArrayScheme,
        plan: &IoPlan,
        first: u64,
        reply: &mut [u8],
    ) -> bool {
        if self.table.is_some() {
            let mut ok = true;
            for mio in plan.ios() {
                let IoKind::Read(Dst::User { offset }) = mio.kind else { continue };
                let at = offset as usize * BLOCK;
                let buf = &mut reply[at..at + mio.count as usize * BLOCK];
                ok &= self.verify_member_blocks(&io.members, mio.member, mio.block, buf);
            }
            return ok;
        }
        let Some((geo, checks)) = self.checks_for(scheme, first, reply.len()) else { return true };
        let v = Verify { geo: Some(geo), checks, counts: Arc::clone(&self.counts) };
        let mut rebuilt = Vec::new();
        for mio in plan.ios() {
            let offset = match mio.kind {
                IoKind::Read(Dst::User { offset }) => offset,
                IoKind::Read(Dst::Rebuild { offset }) => {
                    rebuilt.push(offset);
                    continue;
                }
                _ => continue,
            };
            for k in 0..mio.count {
                let i = (offset + k) as usize;
                let block = &mut reply[i * BLOCK..(i + 1) * BLOCK];
                if !crate::pool::verify_block(&io.members, &v, i, mio.member, mio.block + u64::from(k), block) {
                    return false;
                }
            }
        }
        rebuilt.sort_unstable();
        rebuilt.dedup();
        for offset in rebuilt {
            let i = offset as usize;
            let Some((member, at)) = scheme.locate(first + u64::from(offset)) else { continue };
            let block = &mut reply[i * BLOCK..(i + 1) * BLOCK];
            if crate::pool::expected_crc(&io.members, &v, i).is_some_and(|crc| crc32c::crc32c(block) != crc) {
                // A column of the row is damaged: the block's own member, verified (and
                // repaired) as any read is, answers instead.
                if io.members[member as usize].read(at, block).is_err()
                    || !crate::pool::verify_block(&io.members, &v, i, member, at, block)
                {
                    return false;
                }
            }
        }
        true
    }

    /// In-place RAID: check blocks read from member `m` at `block` against the block CRC
    /// table, as [`crate::pool::verify_block`] checks any read: a mismatch is rebuilt from
    /// its stripe row, checked again and written back. False if a block is bad and cannot
    /// be rebuilt: the read must fail. Every block is checked (and counted) either way.
    pub fn verify_member_blocks(&self, members: &Members, m: u32, block: u64, buf: &mut [u8]) -> bool {
        let Some(table) = self.table.as_ref() else { return true };
        let checks = (0..(buf.len() / BLOCK) as u64).map(|k| Check::Row(table.expected(m, block + k).unwrap_or(0)));
        let v = Verify { geo: None, checks: checks.collect(), counts: Arc::clone(&self.counts) };
        buf.chunks_exact_mut(BLOCK)
            .enumerate()
            .fold(true, |ok, (k, data)| crate::pool::verify_block(members, &v, k, m, block + k as u64, data) && ok)
    }
}
