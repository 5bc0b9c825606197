//! The journal: every map change since the last checkpoint, in the order it happened.
//!
//! Two kinds of record share the ring:
//!
//! - a **tail** record is written (not synced) after every batch of requests, before their
//!   replies go out, so a process that dies (kill -9: the page cache survives) never loses
//!   an acknowledged write. While the newest record is a tail record of one block, the
//!   next batch's entries are added to it instead (the block is written again, same
//!   sequence number, more entries), until it is full or another record follows. Its data may not be durable yet, so each entry carries the
//!   CRC32C of the block it names, and recovery replays tail records only while every block
//!   still matches;
//! - a **synced** record is written at a sync point (FLUSH, FUA, GC victim release) after
//!   the data is durable, and made durable itself: everything it and earlier records name
//!   is on stable storage, so recovery trusts them without reading the data.
//!
//! Records go into a ring after the checkpoint slots; a checkpoint is taken before the ring
//! could overwrite a record it does not cover.
//!
//! Record (little-endian, padded with zeroes to whole blocks):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `SWANJRN1` |
//! | 8 | 8 | record sequence number (consecutive from the checkpoint's) |
//! | 16 | 4 | entry count `n` |
//! | 20 | 4 | blocks the record spans |
//! | 24 | 4 | CRC32C (seeded with the array UUID) of the record's `32 + 16·n` bytes with this field zeroed |
//! | 28 | 1 | 1 = synced record, 0 = tail record |
//! | 32 | 16·n | entries: tag (1 = map, 2 = sealed), 5-byte a, 5-byte b, CRC32C of the named block (4), 1 byte zero |
//!
//! A map entry is (logical block, physical slot or all-ones for none); a sealed entry is
//! (segment, seal sequence number). Recovery reads records from the checkpoint's position
//! while each is whole and has the next sequence number; a record that does not fit
//! before the end of the ring is written at its start instead, so recovery looks there
//! when the next record is not where the previous one ended.

use crate::member::BLOCK;
use swan_core::scheme::MapChange;

pub const MAGIC: [u8; 8] = *b"SWANJRN1";
const HEADER: usize = 32;
const ENTRY: usize = 16;
/// Entries per record at most, so one record stays a bounded write.
pub const MAX_ENTRIES: usize = 64 * 1024;
/// Entries a record of one block holds.
pub const BLOCK_ENTRIES: usize = (BLOCK - HEADER) / ENTRY;

fn put40(b: &mut [u8], v: u64) {
    b[..5].copy_from_slice(&v.to_le_bytes()[..5]);
}

fn get40(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..5].copy_from_slice(&b[..5]);
    u64::from_le_bytes(w)
}

/// The record CRC is seeded with the array's UUID, so a record left in the ring by an
/// earlier array on the same members can never pass for one of this array's.
fn crc(uuid: &[u8; 16], bytes: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(uuid), bytes)
}

/// A journaled change with the CRC32C of the block it maps (0 for trims and seals).
pub type Entry = (MapChange, u32);

/// Encode `changes` (at most [`MAX_ENTRIES`]) as record `seq`, padded to whole blocks.
pub fn encode(uuid: &[u8; 16], seq: u64, synced: bool, changes: &[Entry]) -> Vec<u8> {
    assert!(changes.len() <= MAX_ENTRIES, "record of {} entries", changes.len());
    let len = HEADER + ENTRY * changes.len();
    let blocks = len.div_ceil(BLOCK);
    let mut b = vec![0u8; blocks * BLOCK];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..16].copy_from_slice(&seq.to_le_bytes());
    b[16..20].copy_from_slice(&(changes.len() as u32).to_le_bytes());
    b[20..24].copy_from_slice(&(blocks as u32).to_le_bytes());
    b[28] = u8::from(synced);
    for (i, (c, block_crc)) in changes.iter().enumerate() {
        let e = &mut b[HEADER + i * ENTRY..HEADER + (i + 1) * ENTRY];
        let (tag, a, v) = match *c {
            MapChange::Map { lba, pba } => (1, lba, pba),
            MapChange::Sealed { segment, seq } => (2, segment, seq),
        };
        e[0] = tag;
        put40(&mut e[1..6], a);
        put40(&mut e[6..11], v);
        e[11..15].copy_from_slice(&block_crc.to_le_bytes());
    }
    let crc = crc(uuid, &b[..len]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// What the first block of a record says, if it starts a record at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHead {
    pub seq: u64,
    pub entries: u32,
    pub blocks: u32,
    pub synced: bool,
}

pub fn head(first_block: &[u8]) -> Option<RecordHead> {
    if first_block.len() < HEADER || first_block[0..8] != MAGIC {
        return None;
    }
    let entries = u32::from_le_bytes(first_block[16..20].try_into().ok()?);
    let blocks = u32::from_le_bytes(first_block[20..24].try_into().ok()?);
    let len = HEADER + ENTRY * entries as usize;
    if entries as usize > MAX_ENTRIES || blocks as usize != len.div_ceil(BLOCK) {
        return None;
    }
    Some(RecordHead {
        seq: u64::from_le_bytes(first_block[8..16].try_into().ok()?),
        entries,
        blocks,
        synced: first_block[28] == 1,
    })
}

/// A decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    pub synced: bool,
    pub entries: Vec<Entry>,
}

/// Decode a whole record (all its blocks); `None` if torn or corrupt.
pub fn decode(uuid: &[u8; 16], record: &[u8]) -> Option<Record> {
    let h = head(record)?;
    let len = HEADER + ENTRY * h.entries as usize;
    if record.len() < len {
        return None;
    }
    let computed = crate::layout::crc_with_field_zeroed(crc32c::crc32c(uuid), &record[..len], 24);
    if computed != u32::from_le_bytes(record[24..28].try_into().ok()?) {
        return None;
    }
    let mut out = Vec::with_capacity(h.entries as usize);
    for e in record[HEADER..len].chunks_exact(ENTRY) {
        let (a, v) = (get40(&e[1..6]), get40(&e[6..11]));
        let change = match e[0] {
            1 => MapChange::Map { lba: a, pba: v },
            2 => MapChange::Sealed { segment: a, seq: v },
            _ => return None,
        };
        out.push((change, u32::from_le_bytes(e[11..15].try_into().ok()?)));
    }
    Some(Record { seq: h.seq, synced: h.synced, entries: out })
}

/// Where the next record goes in a ring of `blocks` blocks, and how full it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub blocks: u64,
    /// Block (within the ring) where the next record starts.
    pub pos: u64,
    /// Sequence number of the next record.
    pub next_seq: u64,
    /// Blocks written since the last checkpoint.
    pub used: u64,
}

impl Ring {
    pub fn new(blocks: u64, pos: u64, next_seq: u64) -> Self {
        Self { blocks, pos, next_seq, used: 0 }
    }

    /// Whether a record of `record_blocks` may still be appended before a checkpoint: the
    /// ring keeps half of itself free, so a record never overwrites one the checkpoint
    /// does not cover, whatever padding wrapping costs.
    pub fn has_room(&self, record_blocks: u64) -> bool {
        self.used + 2 * record_blocks <= self.blocks / 2
    }

    /// Place a record of `record_blocks`; returns its position in the ring.
    pub fn place(&mut self, record_blocks: u64) -> u64 {
        let mut at = self.pos;
        if at + record_blocks > self.blocks {
            self.used += self.blocks - at;
            at = 0;
        }
        self.pos = at + record_blocks;
        self.used += record_blocks;
        self.next_seq += 1;
        at
    }

    /// A checkpoint now covers everything written: the ring is empty from here on.
    pub fn checkpointed(&mut self) {
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::l2p::UNMAPPED;

    #[test]
    fn records_round_trip_and_tears_are_caught() {
        let changes: Vec<Entry> = (0..1000)
            .map(|i| {
                if i % 100 == 7 {
                    (MapChange::Sealed { segment: i, seq: i * 3 }, 0)
                } else {
                    (
                        MapChange::Map { lba: i, pba: if i % 5 == 0 { UNMAPPED } else { i * 7 + (1 << 39) } },
                        i as u32 * 77,
                    )
                }
            })
            .collect();
        let uuid = [9u8; 16];
        let rec = encode(&uuid, 42, true, &changes);
        assert_eq!(rec.len() % BLOCK, 0);
        assert_eq!(head(&rec).unwrap(), RecordHead { seq: 42, entries: 1000, blocks: 4, synced: true });
        assert_eq!(decode(&uuid, &rec), Some(Record { seq: 42, synced: true, entries: changes.clone() }));
        assert!(!decode(&uuid, &encode(&uuid, 43, false, &changes)).unwrap().synced);
        assert_eq!(decode(&[8u8; 16], &rec), None, "another array's record does not replay");
        let mut torn = rec.clone();
        torn[BLOCK * 3..].fill(0);
        assert_eq!(decode(&uuid, &torn), None, "a record missing its last block is torn");
        let mut flipped = rec;
        flipped[100] ^= 0x10;
        assert_eq!(decode(&uuid, &flipped), None);
        assert_eq!(head(&[0u8; BLOCK]), None);
    }

    #[test]
    fn the_ring_wraps_records_whole_and_keeps_half_free() {
        let mut r = Ring::new(100, 90, 5);
        assert_eq!(r.place(8), 90);
        assert_eq!(r.place(8), 0, "a record that would cross the end starts over");
        assert_eq!((r.pos, r.next_seq, r.used), (8, 7, 18));
        assert!(r.has_room(16));
        assert!(!r.has_room(17));
        r.checkpointed();
        assert!(r.has_room(25));
    }
}
