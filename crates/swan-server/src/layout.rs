//! The on-disk layout of a member: superblock, metadata area, data area (FORMAT.md).
//!
//! Every member starts with the same metadata area, so every member has the same geometry
//! and a member can be recognised (and refused) on its own:
//!
//! ```text
//! block 0                     superblock (this array's UUID, this member's index, geometry)
//! 1 .. 1+C                    checkpoint slot A   } written on the first two members
//! 1+C .. 1+2C                 checkpoint slot B   } (mirrored), reserved on the others
//! 1+2C .. 1+2C+J              journal ring        }
//! meta_blocks .. member_blocks  data area: segments (log schemes) or stripes (in-place)
//! ```
//!
//! `meta_blocks` is rounded up to a whole segment so segments stay aligned on the member.

use crate::member::BLOCK;
use std::collections::BTreeSet;
use swan_core::geometry::{GeometryError, RaidLevel, StripeGeometry};
use swan_core::scheme::{ArraySpec, LogTuning, SchemeKind};
use swan_core::victim::VictimPolicy;
use thiserror::Error;

pub const SUPERBLOCK_MAGIC: [u8; 8] = *b"SWANARR1";
pub const FORMAT_VERSION: u32 = 1;
/// Copies of the checkpoints and journal: two, so one failed member loses neither.
pub const META_COPIES: u32 = 2;
/// Most members an array may have (the failed-member bitmap's size).
pub const MAX_MEMBERS: u32 = 4096;
/// Where the superblock's failed-member bitmap starts (one bit per member index).
const FAILED_AT: usize = 512;

pub(crate) use crate::field_crc::crc_with_field_zeroed;

/// What every member's block 0 says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub uuid: [u8; 16],
    pub member_index: u32,
    pub members: u32,
    pub kind: SchemeKind,
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    pub segment_rows: u32,
    pub chunk_blocks: u32,
    pub victim: VictimPolicy,
    /// Blocks of each member the array uses (members may be larger).
    pub member_blocks: u64,
    /// Where the data area starts.
    pub meta_blocks: u64,
    /// Size of one checkpoint slot.
    pub checkpoint_blocks: u64,
    pub journal_blocks: u64,
    /// In-place RAID: blocks of the per-block CRC table after the superblock (a header and
    /// 4 bytes per member block, [`crate::blockcrc`]); 0 in arrays made before it existed.
    pub crc_table_blocks: u64,
    pub volume_blocks: u64,
    /// Seconds since the Unix epoch when the array was created (informational).
    pub created: u64,
    /// Raised on every surviving member each time the array's membership changes (a member
    /// failed, a replacement finished): a member whose count lags the highest is stale (it
    /// missed writes while failed or away) and is treated as failed, as md's event counter.
    pub events: u64,
    /// Members known failed (array indexes), as the members that wrote this saw it. A failed
    /// member is never read again; only `swan replace` brings its index back.
    pub failed: BTreeSet<u32>,
    /// The members are zoned devices: the metadata area is their conventional zones and
    /// each segment one sequential zone of each member of its R-group
    /// (`member/zoned.rs`).
    pub zoned: bool,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SuperblockError {
    #[error("no swan superblock (this is not a swan array member, or its first block was overwritten)")]
    NotSwan,
    #[error(
        "superblock checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the superblock is corrupt"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error("superblock of format version {0}; this swan reads version {FORMAT_VERSION}")]
    Version(u32),
    #[error("superblock field {field} holds an impossible value {value}")]
    Field { field: &'static str, value: u64 },
}

/// A superblock whose geometry cannot be built, though its checksum holds: written by
/// another swan version, or corrupt in a way the checksum missed. Every reader of a
/// superblock says so the same way.
#[derive(Debug, Error)]
#[error("the superblock's geometry is impossible: {0}")]
pub struct ImpossibleGeometry(pub GeometryError);

fn kind_code(kind: SchemeKind) -> (u8, u8) {
    let family = match kind {
        SchemeKind::Raid(_) => 0,
        SchemeKind::LogRaid(_) => 1,
        SchemeKind::Swan(_) => 2,
    };
    (family, kind.raid().digit())
}

fn kind_from(family: u8, digit: u8) -> Option<SchemeKind> {
    let raid = match digit {
        0 => RaidLevel::Raid0,
        4 => RaidLevel::Raid4,
        5 => RaidLevel::Raid5,
        _ => return None,
    };
    Some(match family {
        0 => SchemeKind::Raid(raid),
        1 => SchemeKind::LogRaid(raid),
        2 => SchemeKind::Swan(raid),
        _ => return None,
    })
}

impl Superblock {
    /// Block 0 of a member, little-endian, CRC32C at offset 12 over the block with it zeroed.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[0..8].copy_from_slice(&SUPERBLOCK_MAGIC);
        b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[16..32].copy_from_slice(&self.uuid);
        b[32..36].copy_from_slice(&self.member_index.to_le_bytes());
        b[36..40].copy_from_slice(&self.members.to_le_bytes());
        let (family, digit) = kind_code(self.kind);
        b[40] = family;
        b[41] = digit;
        b[44..48].copy_from_slice(&self.rgroups.to_le_bytes());
        b[48..52].copy_from_slice(&self.ssds_per_rgroup.to_le_bytes());
        b[52..56].copy_from_slice(&self.segment_rows.to_le_bytes());
        b[56..60].copy_from_slice(&self.chunk_blocks.to_le_bytes());
        b[60] = match self.victim {
            VictimPolicy::Greedy => 0,
            VictimPolicy::CostBenefit => 1,
        };
        b[61] = u8::from(self.zoned);
        for (at, v) in [
            (64, self.member_blocks),
            (72, self.meta_blocks),
            (80, self.checkpoint_blocks),
            (88, self.journal_blocks),
            (96, self.volume_blocks),
            (104, self.created),
            (112, self.events),
            (120, self.crc_table_blocks),
        ] {
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        for &m in &self.failed {
            b[FAILED_AT + m as usize / 8] |= 1 << (m % 8);
        }
        let crc = crc32c::crc32c(&b);
        b[12..16].copy_from_slice(&crc.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<Self, SuperblockError> {
        Superblock::decode_with(b, true)
    }

    /// Decode a superblock whose checksum does not match, from its first 512-byte sector
    /// alone: every field but the failed-member bitmap is there, and a sector is written
    /// whole or not at all, so a superblock update torn by a crash still says (in its old or
    /// its new version) which array and index the member is. The bitmap (second sector) is
    /// not trusted: the set comes back empty. [`crate::array::open`] uses it only for a
    /// member whose other superblocks agree with it, and rewrites it.
    pub fn decode_torn(b: &[u8]) -> Result<Self, SuperblockError> {
        let mut sb = Superblock::decode_with(b, false)?;
        sb.failed.clear();
        Ok(sb)
    }

    fn decode_with(b: &[u8], verify: bool) -> Result<Self, SuperblockError> {
        if b.len() < BLOCK || b[0..8] != SUPERBLOCK_MAGIC {
            return Err(SuperblockError::NotSwan);
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let stored = u32_at(12);
        let computed = crc_with_field_zeroed(0, &b[..BLOCK], 12);
        if verify && stored != computed {
            return Err(SuperblockError::Checksum { stored, computed });
        }
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(SuperblockError::Version(version));
        }
        let kind = kind_from(b[40], b[41])
            .ok_or(SuperblockError::Field { field: "scheme", value: u64::from(b[40]) << 8 | u64::from(b[41]) })?;
        let victim = match b[60] {
            0 => VictimPolicy::Greedy,
            1 => VictimPolicy::CostBenefit,
            v => return Err(SuperblockError::Field { field: "victim policy", value: u64::from(v) }),
        };
        let zoned = match b[61] {
            0 => false,
            1 => true,
            v => return Err(SuperblockError::Field { field: "zoned", value: u64::from(v) }),
        };
        let sb = Superblock {
            uuid: b[16..32].try_into().expect("16 bytes"),
            member_index: u32_at(32),
            members: u32_at(36),
            kind,
            rgroups: u32_at(44),
            ssds_per_rgroup: u32_at(48),
            segment_rows: u32_at(52),
            chunk_blocks: u32_at(56),
            victim,
            member_blocks: u64_at(64),
            meta_blocks: u64_at(72),
            checkpoint_blocks: u64_at(80),
            journal_blocks: u64_at(88),
            crc_table_blocks: u64_at(120),
            volume_blocks: u64_at(96),
            created: u64_at(104),
            events: u64_at(112),
            failed: (0..u32_at(36).min(MAX_MEMBERS))
                .filter(|&m| b[FAILED_AT + m as usize / 8] & (1 << (m % 8)) != 0)
                .collect(),
            zoned,
        };
        sb.sanity()?;
        Ok(sb)
    }

    /// Reject fields no `swan create` would have written, before anything trusts them.
    fn sanity(&self) -> Result<(), SuperblockError> {
        let bad = |field, value: u64| Err(SuperblockError::Field { field, value });
        if self.members == 0 || self.members > MAX_MEMBERS {
            return bad("members", u64::from(self.members));
        }
        if self.member_index >= self.members {
            return bad("member index", u64::from(self.member_index));
        }
        if u64::from(self.rgroups) * u64::from(self.ssds_per_rgroup) != u64::from(self.members) {
            return bad("R-groups × SSDs per R-group", u64::from(self.rgroups) * u64::from(self.ssds_per_rgroup));
        }
        let meta_end = 1 + 2 * self.checkpoint_blocks + self.journal_blocks + self.crc_table_blocks;
        if self.meta_blocks < meta_end || self.meta_blocks >= self.member_blocks {
            return bad("metadata blocks", self.meta_blocks);
        }
        if self.segment_rows == 0 || self.chunk_blocks == 0 {
            return bad("segment rows or chunk", u64::from(self.segment_rows.min(self.chunk_blocks)));
        }
        if self.zoned && (!self.kind.is_log_structured() || self.meta_blocks % u64::from(self.segment_rows) != 0) {
            return bad("zoned", 1);
        }
        Ok(())
    }

    pub fn checkpoint_slot(&self, slot: u32) -> u64 {
        1 + u64::from(slot) * self.checkpoint_blocks
    }

    pub fn journal_start(&self) -> u64 {
        1 + 2 * self.checkpoint_blocks
    }

    /// The members that hold checkpoint and journal copies.
    pub fn meta_members(&self) -> u32 {
        self.members.min(META_COPIES)
    }

    /// The stripes of this array's members as in-place RAID lays them out (its CRC table,
    /// resync, scrub and `swan check` walk them).
    pub fn stripe_geometry(&self) -> Result<StripeGeometry, ImpossibleGeometry> {
        StripeGeometry::new(self.members, self.kind.raid(), self.chunk_blocks, self.member_blocks, self.meta_blocks)
            .map_err(ImpossibleGeometry)
    }

    /// The core's description of this array.
    pub fn array_spec(&self) -> ArraySpec {
        ArraySpec {
            kind: self.kind,
            rgroups: self.rgroups,
            ssds_per_rgroup: self.ssds_per_rgroup,
            member_blocks: self.member_blocks,
            member_offset: self.meta_blocks,
            segment_rows: self.segment_rows,
            chunk_blocks: self.chunk_blocks,
            victim: self.victim,
            // Zero while `create` works out the largest volume the geometry allows.
            tuning: LogTuning {
                zoned_members: self.zoned,
                ..LogTuning::served((self.volume_blocks > 0).then_some(self.volume_blocks))
            },
        }
    }

    pub fn uuid_string(&self) -> String {
        uuid_string(&self.uuid)
    }
}

pub fn uuid_string(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Superblock {
        Superblock {
            uuid: [7; 16],
            member_index: 3,
            members: 6,
            kind: SchemeKind::Swan(RaidLevel::Raid5),
            rgroups: 2,
            ssds_per_rgroup: 3,
            segment_rows: 256,
            chunk_blocks: 128,
            victim: VictimPolicy::CostBenefit,
            member_blocks: 32_768,
            meta_blocks: 1024,
            checkpoint_blocks: 100,
            journal_blocks: 512,
            crc_table_blocks: 0,
            volume_blocks: 50_000,
            created: 1_790_000_000,
            events: 3,
            failed: BTreeSet::from([1, 5]),
            zoned: false,
        }
    }

    #[test]
    fn superblock_round_trips() {
        let sb = sample();
        assert_eq!(Superblock::decode(&sb.encode()), Ok(sb));
        let zoned = Superblock { zoned: true, meta_blocks: 1024, segment_rows: 256, ..sample() };
        assert_eq!(Superblock::decode(&zoned.encode()), Ok(zoned));
    }

    #[test]
    fn corrupt_superblocks_are_named() {
        let mut b = sample().encode();
        b[70] ^= 1;
        assert!(matches!(Superblock::decode(&b), Err(SuperblockError::Checksum { .. })));
        assert_eq!(Superblock::decode(&[0u8; BLOCK]), Err(SuperblockError::NotSwan));
        let mut bad = sample();
        bad.member_index = 6;
        let err = Superblock::decode(&bad.encode()).unwrap_err();
        assert!(err.to_string().contains("member index"), "{err}");
    }
}
