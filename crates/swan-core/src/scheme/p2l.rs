//! The reverse (P2L) map: which logical block each physical slot was written for.
//!
//! GC needs it to know what it moves out of a victim, and a segment's summary records it on
//! the members when the segment is sealed (§4.1: the summary holds "the physical to logical
//! mapping (P2L) for GC"). Where it lives is the driver's choice:
//!
//! - [`ReverseMap::Dense`]: every slot, in memory. The simulator's members carry no bytes,
//!   so there is no summary to read back.
//! - [`ReverseMap::OpenOnly`]: only segments whose summary is not on the members yet (open
//!   ones, and sealed ones until the driver says it wrote their summaries). A victim's P2L
//!   is read back from its summary when GC picks it. A server's memory is then the L2P map
//!   and little else.

use crate::l2p::{PackedMap, UNMAPPED};
use std::collections::HashMap;

pub(super) enum ReverseMap {
    Dense(PackedMap),
    OpenOnly {
        /// Slots per segment.
        slots: u32,
        segments: HashMap<u64, Vec<u64>>,
        /// Tables of forgotten segments, for reuse.
        pool: Vec<Vec<u64>>,
    },
}

impl ReverseMap {
    pub(super) fn dense(segments: u64, slots: u32, max_lba: u64) -> Self {
        ReverseMap::Dense(PackedMap::for_values(segments * u64::from(slots), max_lba))
    }

    pub(super) fn open_only(slots: u32) -> Self {
        ReverseMap::OpenOnly { slots, segments: HashMap::new(), pool: Vec::new() }
    }

    pub(super) fn is_dense(&self) -> bool {
        matches!(self, ReverseMap::Dense(_))
    }

    /// Whether the map holds `segment`'s slots (else they are in its summary).
    pub(super) fn knows(&self, segment: u64) -> bool {
        match self {
            ReverseMap::Dense(_) => true,
            ReverseMap::OpenOnly { segments, .. } => segments.contains_key(&segment),
        }
    }

    /// The block slot `pba` was written for; [`UNMAPPED`] if none, or if the map does not
    /// hold its segment (ask [`ReverseMap::knows`] first).
    pub(super) fn get(&self, pba: u64) -> u64 {
        match self {
            ReverseMap::Dense(m) => m.get(pba),
            ReverseMap::OpenOnly { slots, segments, .. } => {
                let s = u64::from(*slots);
                segments.get(&(pba / s)).map_or(UNMAPPED, |t| t[(pba % s) as usize])
            }
        }
    }

    pub(super) fn set(&mut self, pba: u64, lba: u64) {
        match self {
            ReverseMap::Dense(m) => m.set(pba, lba),
            ReverseMap::OpenOnly { slots, segments, pool } => {
                let s = u64::from(*slots);
                let table = segments.entry(pba / s).or_insert_with(|| {
                    let mut t = pool.pop().unwrap_or_default();
                    t.clear();
                    t.resize(s as usize, UNMAPPED);
                    t
                });
                table[(pba % s) as usize] = lba;
            }
        }
    }

    /// Drop the tables of segments for which `keep` says no (their summaries are written).
    pub(super) fn forget_unless(&mut self, keep: impl Fn(u64) -> bool) {
        if let ReverseMap::OpenOnly { segments, pool, .. } = self {
            segments.retain(|&seg, t| {
                let k = keep(seg);
                if !k {
                    pool.push(std::mem::take(t));
                }
                k
            });
        }
    }

    pub(super) fn heap_bytes(&self) -> u64 {
        match self {
            ReverseMap::Dense(m) => m.heap_bytes(),
            ReverseMap::OpenOnly { slots, segments, pool } => {
                (segments.len() + pool.len()) as u64 * u64::from(*slots) * 8 + segments.capacity() as u64 * 32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_only_holds_the_segments_it_was_told_about_until_they_are_forgotten() {
        let mut m = ReverseMap::open_only(4);
        assert!(!m.knows(2));
        m.set(9, 100); // segment 2, slot 1
        assert!(m.knows(2) && !m.knows(1));
        assert_eq!(m.get(9), 100);
        assert_eq!(m.get(8), UNMAPPED);
        m.forget_unless(|seg| seg != 2);
        assert!(!m.knows(2));
        // A reused table starts empty.
        m.set(12, 5);
        assert_eq!(m.get(13), UNMAPPED);
        assert_eq!(m.get(12), 5);
    }
}
