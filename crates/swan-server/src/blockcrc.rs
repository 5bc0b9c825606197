//! Per-block CRCs of in-place RAID (issue 5, item 2: every block read is verified).
//!
//! Log-structured schemes keep a block's CRC in its segment's summary. In-place RAID
//! overwrites blocks where they are, so it keeps a table instead: the CRC32C of every member
//! block of the data area (data and parity alike), 4 bytes each, in memory while serving and
//! on each member (its own blocks' CRCs) after the superblock. A CRC of 0 means "none
//! known" (a block never written, trimmed, or on a member whose table was lost): such a
//! block is read unverified.
//!
//! The table is written only when the server stops cleanly; its header then says `clean`.
//! Opening it for writes turns the header `dirty` first. A start that finds a header dirty
//! or torn (a crash) cannot know which blocks were written since, so it resyncs, as md does
//! after an unclean shutdown without a write-intent bitmap: every stripe row's parity is
//! recomputed from its data (which also closes the RAID4/5 write hole) and every CRC from
//! what the members hold. A FLUSH therefore needs nothing of the table: after a crash the
//! resync rebuilds it from the data the FLUSH made durable.
//!
//! Header (block 1 of each member, little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `SWANCRC1` |
//! | 8 | 4 | CRC32C of the header block with this field zeroed |
//! | 16 | 16 | array UUID |
//! | 32 | 4 | state: 1 clean, 2 dirty |
//! | 36 | 4 | CRC32C of the table's bytes |
//! | 40 | 8 | entries `n` (member blocks from the data area's start) |
//!
//! Table (from block 2): `n` × 4-byte CRC32C.

use crate::layout::Superblock;
use crate::member::{Member, MemberError, BLOCK};
use crate::members::Members;
use swan_core::geometry::{RaidLevel, StripeGeometry};

pub const MAGIC: [u8; 8] = *b"SWANCRC1";
const PER_BLOCK: u64 = (BLOCK / 4) as u64;
const CLEAN: u32 = 1;
const DIRTY: u32 = 2;

/// Blocks of the header and table for members of `member_blocks` blocks.
pub fn table_blocks(member_blocks: u64) -> u64 {
    1 + member_blocks.div_ceil(PER_BLOCK)
}

/// The CRCs of every member block of an in-place array's data area.
#[derive(Debug)]
pub struct BlockCrcs {
    /// The data area's first member block.
    start: u64,
    /// Per member, per data-area block; 0 = none known.
    crcs: Vec<Vec<u32>>,
}

/// What opening the tables found.
#[derive(Debug, PartialEq, Eq)]
pub enum Opened {
    /// Every healthy member's table was written at a clean stop.
    Clean,
    /// At least one was not (a crash, or a torn header): the array needs a resync.
    Dirty,
}

impl BlockCrcs {
    /// All unknown.
    pub fn empty(sb: &Superblock) -> BlockCrcs {
        let n = (sb.member_blocks - sb.meta_blocks) as usize;
        BlockCrcs { start: sb.meta_blocks, crcs: vec![vec![0; n]; sb.members as usize] }
    }

    fn index(&self, m: u32, block: u64) -> Option<(usize, usize)> {
        let i = block.checked_sub(self.start)? as usize;
        let col = self.crcs.get(m as usize)?;
        (i < col.len()).then_some((m as usize, i))
    }

    /// The CRC member block `block` of member `m` must have, if one is known.
    pub fn expected(&self, m: u32, block: u64) -> Option<u32> {
        let (m, i) = self.index(m, block)?;
        Some(self.crcs[m][i]).filter(|&c| c != 0)
    }

    /// `data` (whole blocks) was written to member `m` from `block` on.
    pub fn record(&mut self, m: u32, block: u64, data: &[u8]) {
        for (k, b) in data.chunks_exact(BLOCK).enumerate() {
            if let Some((m, i)) = self.index(m, block + k as u64) {
                // A block whose CRC happens to be 0 reads as "none known": not checked.
                self.crcs[m][i] = crc32c::crc32c(b);
            }
        }
    }

    /// `count` blocks from `block` on member `m` were trimmed: what they read is undefined.
    pub fn forget(&mut self, m: u32, block: u64, count: u64) {
        for b in block..block + count {
            if let Some((m, i)) = self.index(m, b) {
                self.crcs[m][i] = 0;
            }
        }
    }

    /// Read every healthy member's table. A failed member's table is not read: its blocks'
    /// CRCs are unknown (its reads are rebuilt from parity, unverified).
    pub fn load(members: &Members, sb: &Superblock) -> Result<(BlockCrcs, Opened), MemberError> {
        let mut me = BlockCrcs::empty(sb);
        let mut state = Opened::Clean;
        let n = me.crcs[0].len();
        let mut head = vec![0u8; BLOCK];
        let mut table = vec![0u8; n.div_ceil(PER_BLOCK as usize) * BLOCK];
        for m in 0..sb.members {
            if !members.is_healthy(m) {
                continue;
            }
            let member = &members[m as usize];
            member.read(1, &mut head)?;
            let Some((s, table_crc, entries)) = decode_header(&head, sb) else {
                state = Opened::Dirty;
                continue;
            };
            if s != CLEAN || entries != n as u64 {
                state = Opened::Dirty;
                continue;
            }
            member.read(2, &mut table)?;
            if crc32c::crc32c(&table[..n * 4]) != table_crc {
                state = Opened::Dirty;
                continue;
            }
            for (i, c) in table[..n * 4].chunks_exact(4).enumerate() {
                me.crcs[m as usize][i] = u32::from_le_bytes(c.try_into().expect("4"));
            }
        }
        Ok((me, state))
    }

    /// Mark every healthy member's table dirty (made durable) before the first write.
    pub fn mark_dirty(&self, members: &Members, sb: &Superblock) -> Result<(), MemberError> {
        for m in (0..sb.members).filter(|&m| members.is_healthy(m)) {
            members[m as usize].write(1, &encode_header(sb, DIRTY, 0, self.crcs[m as usize].len() as u64))?;
            members[m as usize].sync()?;
        }
        Ok(())
    }

    /// At a clean stop: every member's table (but a failed one's), then its header `clean`.
    pub fn write_clean(&self, members: &Members, sb: &Superblock) -> Result<(), MemberError> {
        for m in (0..sb.members).filter(|&m| members.health(m) != crate::members::Health::Failed) {
            self.write_member(m, &members[m as usize], sb)?;
        }
        Ok(())
    }

    /// Member `m`'s table, made durable, then its header `clean` (at `swan create` too).
    pub fn write_member(&self, m: u32, member: &Member, sb: &Superblock) -> Result<(), MemberError> {
        let col = &self.crcs[m as usize];
        let mut table = Vec::with_capacity(col.len().div_ceil(PER_BLOCK as usize) * BLOCK);
        for c in col {
            table.extend_from_slice(&c.to_le_bytes());
        }
        let crc = crc32c::crc32c(&table);
        table.resize(table.len().div_ceil(BLOCK) * BLOCK, 0);
        member.write(2, &table)?;
        member.sync()?;
        member.write(1, &encode_header(sb, CLEAN, crc, col.len() as u64))?;
        member.sync()
    }

    /// After an unclean stop: every stripe row's parity from its data (RAID4/5, when every
    /// member is healthy), then every healthy member block's CRC from what it holds.
    /// Returns the rows whose parity had to be rewritten.
    pub fn resync(
        members: &Members,
        sb: &Superblock,
        geo: &StripeGeometry,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<(BlockCrcs, u64), MemberError> {
        let mut me = BlockCrcs::empty(sb);
        let raid = sb.kind.raid();
        let rows = geo.stripes * u64::from(geo.chunk_blocks);
        let all_healthy = (0..sb.members).all(|m| members.is_healthy(m));
        let mut fixed = 0;
        let k = sb.members as usize;
        let mut row = vec![0u8; k * BLOCK];
        for i in 0..rows {
            let block = sb.meta_blocks + i;
            for m in (0..sb.members).filter(|&m| members.is_healthy(m)) {
                let at = m as usize * BLOCK;
                members[m as usize].read(block, &mut row[at..at + BLOCK])?;
            }
            if raid != RaidLevel::Raid0 && all_healthy {
                let stripe = i / u64::from(geo.chunk_blocks);
                let p = geo.parity_member(stripe).expect("parity level") as usize;
                let mut acc = vec![0u8; BLOCK];
                for m in (0..k).filter(|&m| m != p) {
                    crate::parity::xor(&mut acc, &row[m * BLOCK..(m + 1) * BLOCK]);
                }
                if acc[..] != row[p * BLOCK..(p + 1) * BLOCK] {
                    members[p].write(block, &acc)?;
                    row[p * BLOCK..(p + 1) * BLOCK].copy_from_slice(&acc);
                    fixed += 1;
                }
            }
            for m in (0..sb.members).filter(|&m| members.is_healthy(m)) {
                let at = m as usize * BLOCK;
                me.record(m, block, &row[at..at + BLOCK]);
            }
            if i % 4096 == 0 {
                progress(i, rows);
            }
        }
        for m in (0..sb.members).filter(|&m| members.is_healthy(m)) {
            members[m as usize].sync()?;
        }
        Ok((me, fixed))
    }
}

fn encode_header(sb: &Superblock, state: u32, table_crc: u32, entries: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[0..8].copy_from_slice(&MAGIC);
    b[16..32].copy_from_slice(&sb.uuid);
    b[32..36].copy_from_slice(&state.to_le_bytes());
    b[36..40].copy_from_slice(&table_crc.to_le_bytes());
    b[40..48].copy_from_slice(&entries.to_le_bytes());
    let crc = crc32c::crc32c(&b);
    b[8..12].copy_from_slice(&crc.to_le_bytes());
    b
}

/// (state, table CRC, entries) of a whole header of this array.
fn decode_header(b: &[u8], sb: &Superblock) -> Option<(u32, u32, u64)> {
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4"));
    if b[0..8] != MAGIC || crate::layout::crc_with_field_zeroed(0, &b[..BLOCK], 8) != u32_at(8) || b[16..32] != sb.uuid
    {
        return None;
    }
    Some((u32_at(32), u32_at(36), u64::from_le_bytes(b[40..48].try_into().expect("8"))))
}
