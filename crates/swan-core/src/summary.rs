//! The segment summary: the last blocks of every segment, describing it.
//!
//! "The segment summary metadata contains information about each segment such as the
//! segment checksum, sequence number, and the physical to logical mapping (P2L) for GC.
//! It is located in the last block of a segment" (§4.1). swan's summary also carries a
//! CRC32C of every payload block so that reads can be verified, and sizes itself to as
//! many blocks as the segment's P2L needs (one block per 1 MiB of data at 12 bytes per
//! entry would not fit, so a 2-SSD R-group with 1 MiB per member takes two).
//!
//! Encoding (little-endian), padded with zeroes to whole blocks:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `SWANSUM2` (`SWANSUM1`: written before block CRCs, every CRC 0) |
//! | 8 | 8 | segment number |
//! | 16 | 8 | sequence number (order in which segments were sealed, array-wide) |
//! | 24 | 4 | payload entry count `n` |
//! | 28 | 4 | CRC32C of the whole summary area with this field zeroed |
//! | 32 | 12·n | entries: logical block (8 bytes, all-ones = dead slot), CRC32C of the block (4) |

use crate::BLOCK_SIZE;
use thiserror::Error;

/// A summary whose entries carry no block CRCs (format version 1: every CRC is 0).
pub const MAGIC: [u8; 8] = *b"SWANSUM1";
/// A summary whose entries carry the CRC32C of each live block.
pub const MAGIC_CRC: [u8; 8] = *b"SWANSUM2";
const HEADER_BYTES: usize = 32;
/// Bytes of one entry: logical block (8) and block CRC32C (4).
pub const ENTRY_BYTES: usize = 12;
/// Logical block value of a slot that holds no live data.
pub const DEAD: u64 = u64::MAX;

/// How many of a segment's `data_slots` its summary needs.
pub fn blocks_needed(data_slots: u32) -> u32 {
    let mut s = 1u32;
    while HEADER_BYTES + (data_slots.saturating_sub(s) as usize) * ENTRY_BYTES > s as usize * BLOCK_SIZE {
        s += 1;
    }
    s
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub lba: u64,
    pub crc: u32,
}

impl Entry {
    /// Where slot `slot`'s entry lies in the encoded summary: a reader that wants one entry
    /// reads only the blocks that hold it.
    pub fn span(slot: u32) -> std::ops::Range<usize> {
        let at = HEADER_BYTES + slot as usize * ENTRY_BYTES;
        at..at + ENTRY_BYTES
    }

    /// The entry encoded in `bytes` (exactly [`Entry::span`]'s length).
    pub fn decode(bytes: &[u8]) -> Entry {
        Entry {
            lba: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            crc: u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")),
        }
    }

    fn encode(&self, bytes: &mut [u8]) {
        bytes[..8].copy_from_slice(&self.lba.to_le_bytes());
        bytes[8..12].copy_from_slice(&self.crc.to_le_bytes());
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub segment: u64,
    pub seq: u64,
    pub entries: Vec<Entry>,
    /// Each live entry's `crc` is the CRC32C of its block (else they mean nothing). The
    /// core knows no block contents: whoever writes the bytes fills the CRCs in.
    pub block_crcs: bool,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SummaryError {
    #[error("summary area is {got} bytes, expected a whole number of blocks")]
    Size { got: usize },
    #[error("no segment summary here (magic mismatch): the segment was never sealed or is torn")]
    Magic,
    #[error("summary checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): torn or corrupt summary")]
    Checksum { stored: u32, computed: u32 },
    #[error("summary claims {count} entries but its area holds at most {max}")]
    Count { count: usize, max: usize },
}

impl Summary {
    /// Encode into `blocks` blocks.
    pub fn encode(&self, blocks: u32) -> Vec<u8> {
        let len = blocks as usize * BLOCK_SIZE;
        assert!(HEADER_BYTES + self.entries.len() * ENTRY_BYTES <= len, "summary does not fit {blocks} blocks");
        let mut buf = vec![0u8; len];
        buf[0..8].copy_from_slice(if self.block_crcs { &MAGIC_CRC } else { &MAGIC });
        buf[8..16].copy_from_slice(&self.segment.to_le_bytes());
        buf[16..24].copy_from_slice(&self.seq.to_le_bytes());
        buf[24..28].copy_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for (i, e) in self.entries.iter().enumerate() {
            e.encode(&mut buf[Entry::span(i as u32)]);
        }
        let crc = crc32c::crc32c(&buf);
        buf[28..32].copy_from_slice(&crc.to_le_bytes());
        buf
    }

    pub fn decode(buf: &[u8]) -> Result<Self, SummaryError> {
        if buf.is_empty() || !buf.len().is_multiple_of(BLOCK_SIZE) {
            return Err(SummaryError::Size { got: buf.len() });
        }
        let block_crcs = match &buf[0..8] {
            m if m == MAGIC => false,
            m if m == MAGIC_CRC => true,
            _ => return Err(SummaryError::Magic),
        };
        let stored = u32::from_le_bytes(buf[28..32].try_into().expect("4 bytes"));
        let mut copy = buf.to_vec();
        copy[28..32].fill(0);
        let computed = crc32c::crc32c(&copy);
        if stored != computed {
            return Err(SummaryError::Checksum { stored, computed });
        }
        let u64_at = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
        let count = u32::from_le_bytes(buf[24..28].try_into().expect("4 bytes")) as usize;
        let max = (buf.len() - HEADER_BYTES) / ENTRY_BYTES;
        if count > max {
            return Err(SummaryError::Count { count, max });
        }
        let entries = (0..count).map(|i| Entry::decode(&buf[Entry::span(i as u32)])).collect();
        Ok(Self { segment: u64_at(8), seq: u64_at(16), entries, block_crcs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_itself_to_the_segment() {
        assert_eq!(blocks_needed(256), 1);
        assert_eq!(blocks_needed(512), 2);
        for slots in [16, 256, 512, 768, 4096] {
            let s = blocks_needed(slots);
            assert!(HEADER_BYTES + (slots - s) as usize * ENTRY_BYTES <= s as usize * BLOCK_SIZE);
            assert!(s == 1 || HEADER_BYTES + (slots - s + 1) as usize * ENTRY_BYTES > (s - 1) as usize * BLOCK_SIZE);
        }
    }

    #[test]
    fn round_trips_and_detects_damage() {
        let s = Summary {
            segment: 42,
            seq: 7,
            entries: (0..300).map(|i| Entry { lba: if i == 5 { DEAD } else { i * 3 }, crc: i as u32 }).collect(),
            block_crcs: true,
        };
        let mut buf = s.encode(1);
        assert_eq!(&buf[0..8], b"SWANSUM2");
        assert_eq!(Summary::decode(&buf), Ok(s.clone()));
        // A version-1 summary (no block CRCs) still reads, and says so.
        let v1 = Summary { block_crcs: false, ..s.clone() };
        let old = v1.encode(1);
        assert_eq!(&old[0..8], b"SWANSUM1");
        assert_eq!(Summary::decode(&old), Ok(v1));
        buf[100] ^= 1;
        assert!(matches!(Summary::decode(&buf), Err(SummaryError::Checksum { .. })));
        assert_eq!(Summary::decode(&[0u8; 4096]), Err(SummaryError::Magic));
        assert_eq!(Summary::decode(&[0u8; 100]), Err(SummaryError::Size { got: 100 }));
    }
}
