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
//!
//! Body (from block 1): `v` × 5-byte map entries, then `s` × 8-byte seal sequence numbers.
//! It is written and read in chunks, so a checkpoint of a large map never needs a second
//! copy of the map in memory.

use crate::member::{Member, MemberError, BLOCK};
use swan_core::l2p::PackedMap;
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
}

#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error("no checkpoint here")]
    Missing,
    #[error("checkpoint header checksum mismatch")]
    HeaderChecksum,
    #[error("checkpoint belongs to another array")]
    ForeignUuid,
    #[error("checkpoint is for {got} blocks / {got_segments} segments, the array has {want} / {want_segments}")]
    Shape { got: u64, want: u64, got_segments: u64, want_segments: u64 },
    #[error("checkpoint body checksum mismatch (torn or corrupt)")]
    BodyChecksum,
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
        })
    }
}

/// The body bytes in order, chunk by chunk, without building them all at once.
fn body_chunks(
    map: &PackedMap,
    seqs: &[u64],
    mut emit: impl FnMut(&[u8]) -> Result<(), CheckpointError>,
) -> Result<(), CheckpointError> {
    for chunk in map.as_bytes().chunks(CHUNK) {
        emit(chunk)?;
    }
    let mut buf = Vec::with_capacity(CHUNK);
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

/// Read and verify the body of the checkpoint whose header [`read_header`] returned.
pub fn read_body(member: &Member, start: u64, header: &Header) -> Result<(PackedMap, Vec<u64>), CheckpointError> {
    let (volume_blocks, segments) = (header.volume_blocks, header.segments);
    let map_bytes = (volume_blocks * MAP_ENTRY) as usize;
    let total = map_bytes + (segments * SEQ_ENTRY) as usize;
    let mut map = Vec::with_capacity(map_bytes);
    let mut seq_bytes = Vec::with_capacity(total - map_bytes);
    let mut crc = 0u32;
    let mut at = start + 1;
    let mut left = total;
    let mut buf = vec![0u8; CHUNK];
    while left > 0 {
        let n = left.min(CHUNK);
        let whole = n.div_ceil(BLOCK) * BLOCK;
        member.read(at, &mut buf[..whole])?;
        let data = &buf[..n];
        crc = crc32c::crc32c_append(crc, data);
        let to_map = (map_bytes - map.len()).min(n);
        map.extend_from_slice(&data[..to_map]);
        seq_bytes.extend_from_slice(&data[to_map..]);
        at += (whole / BLOCK) as u64;
        left -= n;
    }
    if crc != header.body_crc {
        return Err(CheckpointError::BodyChecksum);
    }
    let map = PackedMap::from_bytes(map).expect("whole entries");
    let seqs = seq_bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
    Ok((map, seqs))
}
