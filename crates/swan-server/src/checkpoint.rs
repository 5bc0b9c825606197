//! Checkpoints of the map: what a restart loads before it rolls the journal forward.
//!
//! A checkpoint is the whole L2P map (5 bytes per logical block, as the map holds it in
//! memory) plus every segment's seal sequence number, at one point of the change stream,
//! with the journal position that continues it. Two slots alternate, so a checkpoint torn
//! by a crash leaves the previous one intact; the CRC32C of the body tells which is whole.
//!
//! Header (block 0 of the slot, little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `SWANCKP1` |
//! | 8 | 4 | CRC32C of the header block with this field zeroed |
//! | 16 | 16 | array UUID |
//! | 32 | 8 | checkpoint sequence number (newest valid wins) |
//! | 40 | 8 | journal position (block within the ring) where the next record goes |
//! | 48 | 8 | sequence number of that next journal record |
//! | 56 | 8 | volume blocks `v` |
//! | 64 | 8 | segments `s` |
//! | 72 | 4 | CRC32C of the body |
//! | 76 | 4 | flags: bit 0 = written at a clean stop, every row of every open segment has its parity |
//!
//! Body (from block 1): `v` × 5-byte map entries, then `s` × 8-byte seal sequence numbers.
//! It is written and read in chunks, so a checkpoint of a large map never needs a second
//! copy of the map in memory. Entries are 5 bytes here whatever width the map has in memory.

use crate::member::{Member, MemberError, BLOCK};
use swan_core::l2p::{EntryBeyondLimit, PackedMap, ENTRY40_BYTES};
use thiserror::Error;

pub const MAGIC: [u8; 8] = *b"SWANCKP1";
const MAP_ENTRY: u64 = 5;
const SEQ_ENTRY: u64 = 8;
/// Bytes moved per I/O while writing or reading a body.
const CHUNK: usize = 1 << 20;

/// Blocks a checkpoint slot needs for `volume_blocks` map entries and `segments` segments.
pub fn blocks_for(volume_blocks: u64, segments: u64) -> u64 {
    1 + (volume_blocks * MAP_ENTRY + segments * SEQ_ENTRY).div_ceil(BLOCK as u64)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub uuid: [u8; 16],
    pub seq: u64,
    pub journal_pos: u64,
    pub journal_seq: u64,
    pub volume_blocks: u64,
    pub segments: u64,
    pub body_crc: u32,
    /// Written at a clean stop, after every row of every open segment got its parity from
    /// what its data columns hold: a restart that replays nothing after it needs no reparity,
    /// and a member missing at that restart loses nothing.
    pub parity_whole: bool,
}

const FLAG_PARITY_WHOLE: u32 = 1;

#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error("blank (no checkpoint header: zeroed, or never written)")]
    Missing,
    #[error("checkpoint header checksum mismatch")]
    HeaderChecksum,
    #[error("checkpoint belongs to another array")]
    ForeignUuid,
    #[error("checkpoint is for {got} blocks / {got_segments} segments, the array has {want} / {want_segments}")]
    Shape { got: u64, want: u64, got_segments: u64, want_segments: u64 },
    #[error("checkpoint body checksum mismatch (torn or corrupt)")]
    BodyChecksum,
    #[error("checkpoint map {0}: corrupt, or written for another geometry")]
    Entry(EntryBeyondLimit),
    #[error("checkpoint of {need} blocks does not fit its {have}-block slot")]
    TooBig { need: u64, have: u64 },
    #[error(transparent)]
    Member(#[from] MemberError),
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[0..8].copy_from_slice(&MAGIC);
        b[16..32].copy_from_slice(&self.uuid);
        for (at, v) in [
            (32, self.seq),
            (40, self.journal_pos),
            (48, self.journal_seq),
            (56, self.volume_blocks),
            (64, self.segments),
        ] {
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        b[72..76].copy_from_slice(&self.body_crc.to_le_bytes());
        let flags = if self.parity_whole { FLAG_PARITY_WHOLE } else { 0 };
        b[76..80].copy_from_slice(&flags.to_le_bytes());
        let crc = crc32c::crc32c(&b);
        b[8..12].copy_from_slice(&crc.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Result<Self, CheckpointError> {
        if b[0..8] != MAGIC {
            return Err(CheckpointError::Missing);
        }
        if crate::layout::crc_with_field_zeroed(0, &b[..BLOCK], 8)
            != u32::from_le_bytes(b[8..12].try_into().expect("4"))
        {
            return Err(CheckpointError::HeaderChecksum);
        }
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8"));
        Ok(Header {
            uuid: b[16..32].try_into().expect("16"),
            seq: u64_at(32),
            journal_pos: u64_at(40),
            journal_seq: u64_at(48),
            volume_blocks: u64_at(56),
            segments: u64_at(64),
            body_crc: u32::from_le_bytes(b[72..76].try_into().expect("4")),
            // Zero in checkpoints written before the flag existed: reparity as always.
            parity_whole: u32::from_le_bytes(b[76..80].try_into().expect("4")) & FLAG_PARITY_WHOLE != 0,
        })
    }
}

/// The body bytes in order, chunk by chunk, without building them all at once.
fn body_chunks(
    map: &PackedMap,
    seqs: &[u64],
    mut emit: impl FnMut(&[u8]) -> Result<(), CheckpointError>,
) -> Result<(), CheckpointError> {
    let per_chunk = (CHUNK / ENTRY40_BYTES) as u64;
    let mut buf = Vec::with_capacity(CHUNK);
    let mut first = 0;
    while first < map.len() {
        let n = per_chunk.min(map.len() - first);
        buf.clear();
        map.encode40(first, n, &mut buf);
        emit(&buf)?;
        first += n;
    }
    buf.clear();
    for s in seqs {
        buf.extend_from_slice(&s.to_le_bytes());
        if buf.len() >= CHUNK {
            emit(&buf)?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        emit(&buf)?;
    }
    Ok(())
}

/// Write a checkpoint into slot `start` (a member block) of every member in `copies`, and
/// make it durable. The header goes last, after the body is stable, so a torn checkpoint
/// never carries a valid header over a partial body.
pub fn write(
    copies: &[&Member],
    start: u64,
    slot_blocks: u64,
    header: Header,
    map: &PackedMap,
    seqs: &[u64],
) -> Result<(), CheckpointError> {
    let need = blocks_for(map.len(), seqs.len() as u64);
    if need > slot_blocks {
        return Err(CheckpointError::TooBig { need, have: slot_blocks });
    }
    // The header goes last, so the body's CRC is taken in the same pass that writes it.
    let mut crc = 0u32;
    let mut at = start + 1;
    let mut pending: Vec<u8> = Vec::with_capacity(CHUNK + BLOCK);
    let flush = |pending: &mut Vec<u8>, at: &mut u64, all: bool| -> Result<(), CheckpointError> {
        let whole = if all { pending.len().div_ceil(BLOCK) * BLOCK } else { pending.len() / BLOCK * BLOCK };
        if whole == 0 {
            return Ok(());
        }
        pending.resize(pending.len().max(whole), 0);
        for m in copies {
            m.write(*at, &pending[..whole])?;
        }
        *at += (whole / BLOCK) as u64;
        pending.drain(..whole);
        Ok(())
    };
    body_chunks(map, seqs, |c| {
        crc = crc32c::crc32c_append(crc, c);
        pending.extend_from_slice(c);
        if pending.len() >= CHUNK {
            flush(&mut pending, &mut at, false)?;
        }
        Ok(())
    })?;
    flush(&mut pending, &mut at, true)?;
    for m in copies {
        m.sync()?;
    }
    if let Some(m) = copies.first() {
        m.mark("checkpoint-body-durable");
    }
    let header = Header { volume_blocks: map.len(), segments: seqs.len() as u64, body_crc: crc, ..header };
    for m in copies {
        m.write(start, &header.encode())?;
        m.sync()?;
    }
    Ok(())
}

/// Read and check the header of the checkpoint in slot `start` of `member` (cheap: one
/// block), so a restart reads the body of only the newest candidate.
pub fn read_header(
    member: &Member,
    start: u64,
    uuid: &[u8; 16],
    volume_blocks: u64,
    segments: u64,
) -> Result<Header, CheckpointError> {
    let mut block = vec![0u8; BLOCK];
    member.read(start, &mut block)?;
    let header = Header::decode(&block)?;
    if &header.uuid != uuid {
        return Err(CheckpointError::ForeignUuid);
    }
    if header.volume_blocks != volume_blocks || header.segments != segments {
        return Err(CheckpointError::Shape {
            got: header.volume_blocks,
            want: volume_blocks,
            got_segments: header.segments,
            want_segments: segments,
        });
    }
    Ok(header)
}

/// Read and verify the body of the checkpoint whose header [`read_header`] returned, into a
/// map sized for values up to `max_value` (the array's slots). The map is decoded as it is
/// read, so only one copy of it is ever in memory; a body that fails its checksum or holds
/// a value beyond `max_value` is an error.
pub fn read_body(
    member: &Member,
    start: u64,
    header: &Header,
    max_value: u64,
) -> Result<(PackedMap, Vec<u64>), CheckpointError> {
    let (volume_blocks, segments) = (header.volume_blocks, header.segments);
    let map_bytes = (volume_blocks * MAP_ENTRY) as usize;
    let total = map_bytes + (segments * SEQ_ENTRY) as usize;
    let mut map = PackedMap::for_values(volume_blocks, max_value);
    let mut decoded = 0u64; // entries
    let mut carry: Vec<u8> = Vec::with_capacity(ENTRY40_BYTES);
    let mut map_read = 0usize;
    let mut bad: Option<EntryBeyondLimit> = None;
    let mut seq_bytes = Vec::with_capacity(total - map_bytes);
    let mut crc = 0u32;
    let mut at = start + 1;
    let mut left = total;
    let mut buf = vec![0u8; CHUNK];
    while left > 0 {
        let n = left.min(CHUNK);
        let read_len = n.div_ceil(BLOCK) * BLOCK;
        member.read(at, &mut buf[..read_len])?;
        let data = &buf[..n];
        crc = crc32c::crc32c_append(crc, data);
        let to_map = (map_bytes - map_read).min(n);
        map_read += to_map;
        let mut part = &data[..to_map];
        // An entry may straddle two chunks: finish the carried one first.
        if !carry.is_empty() {
            let take = (ENTRY40_BYTES - carry.len()).min(part.len());
            carry.extend_from_slice(&part[..take]);
            part = &part[take..];
            if carry.len() == ENTRY40_BYTES {
                if let Err(e) = map.decode40(decoded, &carry, max_value) {
                    bad.get_or_insert(e);
                }
                decoded += 1;
                carry.clear();
            }
        }
        let entries_len = part.len() / ENTRY40_BYTES * ENTRY40_BYTES;
        if bad.is_none() {
            if let Err(e) = map.decode40(decoded, &part[..entries_len], max_value) {
                bad = Some(e);
            }
        }
        decoded += (entries_len / ENTRY40_BYTES) as u64;
        carry.extend_from_slice(&part[entries_len..]);
        seq_bytes.extend_from_slice(&data[to_map..]);
        at += (read_len / BLOCK) as u64;
        left -= n;
    }
    if crc != header.body_crc {
        return Err(CheckpointError::BodyChecksum);
    }
    if let Some(e) = bad {
        return Err(CheckpointError::Entry(e));
    }
    debug_assert_eq!(decoded, volume_blocks);
    let seqs = seq_bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
    Ok((map, seqs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::member::OpenOptions;
    use swan_core::l2p::UNMAPPED;

    /// A map several chunks long, whose entries straddle chunk boundaries, survives the trip
    /// in either in-memory width; a value beyond what the reader allows is refused.
    #[test]
    fn a_large_map_round_trips_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        let entries = 3 * (CHUNK as u64 / ENTRY40_BYTES as u64) + 17;
        let segments = 1000u64;
        let blocks = blocks_for(entries, segments);
        Member::create_file(&path, (blocks + 1) * BLOCK as u64, false).unwrap();
        let m = Member::open(&path, OpenOptions::default()).unwrap();
        let max = 5 * entries;
        for mut map in [PackedMap::new(entries), PackedMap::for_values(entries, max)] {
            for i in 0..entries {
                map.set(i, if i % 11 == 0 { UNMAPPED } else { (i * 7919) % max });
            }
            let seqs: Vec<u64> = (0..segments).map(|s| s * 3).collect();
            let h = Header {
                uuid: [7; 16],
                seq: 4,
                journal_pos: 0,
                journal_seq: 1,
                volume_blocks: 0,
                segments: 0,
                body_crc: 0,
                parity_whole: map.entry_bytes() == 4,
            };
            write(&[&m], 0, blocks, h, &map, &seqs).unwrap();
            let header = read_header(&m, 0, &[7; 16], entries, segments).unwrap();
            assert_eq!(header.parity_whole, h.parity_whole, "the clean-stop flag round-trips");
            let (back, back_seqs) = read_body(&m, 0, &header, max).unwrap();
            assert_eq!(back_seqs, seqs);
            assert_eq!(back.entry_bytes(), 4, "a map of values below 2^32 is read back narrow");
            for i in 0..entries {
                assert_eq!(back.get(i), map.get(i), "entry {i}");
            }
            let Err(err) = read_body(&m, 0, &header, max / 2) else {
                panic!("a value beyond the array's slots was accepted")
            };
            assert!(err.to_string().contains("beyond"), "{err}");
        }
    }
}
