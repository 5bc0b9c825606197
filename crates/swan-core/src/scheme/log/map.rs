//! The maps a log-structured array keeps in step: L2P (where each block lives), P2L (what
//! each slot was written for), and the live bits (which slots hold live copies), with the
//! change log a server journals; and what drivers read of them (live blocks, open and
//! adopted segments, summaries).

use super::LogArray;
use crate::io::{MemberBlock, MemberId};
use crate::l2p::UNMAPPED;
use crate::scheme::MapChange;
use crate::segment::SegState;
use crate::summary::{self, Entry, Summary};

impl LogArray {
    #[inline]
    pub(super) fn is_live(&self, pba: u64) -> bool {
        self.live[(pba / 64) as usize] & (1 << (pba % 64)) != 0
    }

    #[inline]
    pub(super) fn set_live(&mut self, pba: u64, live: bool) {
        let (word, bit) = ((pba / 64) as usize, 1u64 << (pba % 64));
        if live {
            self.live[word] |= bit;
        } else {
            self.live[word] &= !bit;
        }
    }

    /// Whether slot `pba`'s P2L entry names `lba`, where the P2L of its segment is in memory
    /// (for the debug checks of the remaps: a live slot's P2L names the block living there).
    fn p2l_names(&self, pba: u64, lba: u64) -> bool {
        !self.p2l.knows(self.seg_of(pba)) || self.p2l.get(pba) == lba
    }

    /// [`LogArray::remap`] of a block known to live at `from` now: the map entry need not
    /// be read first (GC knows where each block it moves lived).
    pub(super) fn remap_live(&mut self, lba: u64, from: u64, to: u64) {
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Map { lba, pba: to });
        }
        debug_assert!(!self.is_live(to), "GC moved block {lba} onto slot {to}, which holds a live block");
        debug_assert!(self.p2l_names(from, lba), "P2L of slot {from} does not name block {lba}, which lives there");
        self.segs.remove_valid(self.seg_of(from));
        self.set_live(from, false);
        self.l2p.set(lba, to);
        self.segs.add_valid(self.seg_of(to));
        self.set_live(to, true);
    }

    /// Point `lba` at `pba`, killing its old copy.
    pub(super) fn remap(&mut self, lba: u64, pba: u64) {
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Map { lba, pba });
        }
        let old = self.l2p.get(lba);
        if old != UNMAPPED {
            debug_assert!(self.is_live(old), "block {lba} maps to slot {old}, which is not marked live");
            debug_assert!(self.p2l_names(old, lba), "P2L of slot {old} does not name block {lba}, which lives there");
            self.segs.remove_valid(self.seg_of(old));
            self.set_live(old, false);
        }
        self.l2p.set(lba, pba);
        if pba != UNMAPPED {
            debug_assert!(!self.is_live(pba), "block {lba} written to slot {pba}, which holds a live block");
            self.segs.add_valid(self.seg_of(pba));
            self.set_live(pba, true);
        }
    }

    /// The logical block whose live copy slot `pba` holds, if the slot is live and its
    /// segment's P2L is in memory (it is for every segment not yet sealed).
    pub fn live_lba(&self, pba: u64) -> Option<u64> {
        (self.is_live(pba) && self.p2l.knows(self.seg_of(pba))).then(|| self.p2l.get(pba))
    }

    /// The live block at `member`'s `block`, as (slot, logical block), if that block is a
    /// slot of a segment not yet sealed: what a server must move or restate when the member
    /// fails, or a crash comes, before the block's stripe row has its parity.
    pub fn live_at(&self, member: MemberId, block: MemberBlock) -> Option<(u64, u64)> {
        let (seg, slot) = self.geo.slot_at(member, block)?;
        let pba = self.geo.pba(seg, slot);
        self.live_lba(pba).map(|lba| (pba, lba))
    }

    /// Segments still filling (the user's and GC's open segments): their last stripe rows
    /// get their parity only when they complete.
    pub fn open_segments(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.geo.segments()).filter(|&s| self.segs.state(s) == SegState::Open)
    }

    /// Segments holding data but no seal (sequence 0): open when the array last stopped, and
    /// adopted by [`LogArray::restore`]. Their last rows may lack parity.
    pub fn adopted_segments(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.geo.segments()).filter(|&s| self.segs.seq(s) == 0 && self.segs.valid(s) > 0)
    }

    /// Start recording [`MapChange`]s (servers journal them; the simulator does not).
    pub fn enable_change_log(&mut self) {
        self.changes.get_or_insert_with(Vec::new);
    }

    /// Move the changes recorded so far into `out`, oldest first.
    pub fn take_changes(&mut self, out: &mut Vec<MapChange>) {
        if let Some(log) = self.changes.as_mut() {
            out.append(log);
        }
    }

    /// The driver has written every summary planned so far: with
    /// [`LogConfig::p2l_in_summaries`] the P2L of sealed segments is dropped.
    ///
    /// [`LogConfig::p2l_in_summaries`]: super::LogConfig::p2l_in_summaries
    pub fn summaries_written(&mut self) {
        let segs = &self.segs;
        self.p2l.forget_unless(|seg| segs.state(seg) == SegState::Open);
    }

    /// The summary content of `segment` as it stands (for executors that write real bytes).
    pub fn summary_of(&self, segment: u64) -> Summary {
        let live: Vec<u64> = if self.p2l.knows(segment) {
            (0..self.geo.payload_slots())
                .map(|slot| {
                    let pba = self.geo.pba(segment, slot);
                    let lba = self.p2l.get(pba);
                    let live = lba != UNMAPPED && lba < self.cfg.volume_blocks && self.l2p.get(lba) == pba;
                    if live {
                        lba
                    } else {
                        UNMAPPED
                    }
                })
                .collect()
        } else {
            // A driver asking after it said the summaries were written: not expected, but the
            // map alone still gives the right answer.
            self.scan_p2l(segment)
        };
        let entries =
            live.iter().map(|&lba| Entry { lba: if lba == UNMAPPED { summary::DEAD } else { lba }, crc: 0 }).collect();
        Summary { segment, seq: self.segs.seq(segment), entries, block_crcs: false }
    }
}
