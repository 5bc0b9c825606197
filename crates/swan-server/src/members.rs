//! The array's members with their health: which are failed, and how a block of a failed
//! member is read back from its parity group (the other members of its R-group, or of the
//! whole array for Log-RAID and in-place RAID).
//!
//! A member that fails is never read again: its blocks are rebuilt from the row's other
//! data and parity, and writes to it are dropped (the parity written beside them keeps them
//! recoverable). This is md's degraded mode. Only `swan replace` brings the index back,
//! rebuilding the member onto a new device while the array serves (`engine::rebuild`).
//!
//! What is here reconstructs whole stripe rows, whose parity is on the members. A row still
//! filling (a log-structured segment's open row, whose parity is written when the row
//! completes) is reconstructed by the engine from the parity it accumulates in memory.

use crate::member::{Member, MemberError, BLOCK};
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};

/// A member's health.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Healthy,
    /// Failed: never read, never written.
    Failed,
    /// A replacement being rebuilt: written like a healthy member, but read only where the
    /// rebuild has passed (the engine keeps the cursor).
    Rebuilding,
}

impl Health {
    fn code(self) -> u8 {
        match self {
            Health::Healthy => 0,
            Health::Failed => 1,
            Health::Rebuilding => 2,
        }
    }

    fn from_code(c: u8) -> Health {
        match c {
            0 => Health::Healthy,
            1 => Health::Failed,
            _ => Health::Rebuilding,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Health::Healthy => "healthy",
            Health::Failed => "failed",
            Health::Rebuilding => "rebuilding",
        }
    }
}

/// The members in array order, shared by the engine and the I/O pool. Dereferences to the
/// raw members (for what is not data: superblocks, syncs of healthy members).
#[derive(Debug)]
pub struct Members {
    list: Vec<Member>,
    health: Vec<AtomicU8>,
    /// Members per parity group (0: no parity, RAID0).
    width: u32,
}

impl Deref for Members {
    type Target = [Member];

    fn deref(&self) -> &[Member] {
        &self.list
    }
}

/// Why a block cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum DegradedError {
    #[error("member {member} has failed and the array has no parity to rebuild it from (RAID0): its data is lost")]
    NoParity { member: u32 },
    #[error("member {member} has failed and so has member {peer} of its parity group: the row cannot be rebuilt")]
    SecondFailure { member: u32, peer: u32 },
    #[error(transparent)]
    Member(#[from] MemberError),
}

impl Members {
    /// `width` members per parity group, or 0 without parity.
    pub fn new(list: Vec<Member>, width: u32) -> Members {
        let health = list.iter().map(|_| AtomicU8::new(0)).collect();
        Members { list, health, width }
    }

    /// The same members with `replacement` in place of member `index`, the others' health
    /// carried over (the new one starts [`Health::Rebuilding`]).
    pub fn with_replacement(&self, index: u32, replacement: Member) -> Members {
        let mut list = self.list.clone();
        list[index as usize] = replacement;
        let next = Members::new(list, self.width);
        for (i, h) in self.health.iter().enumerate() {
            next.health[i].store(h.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        next.set(index, Health::Rebuilding);
        next
    }

    pub fn health(&self, m: u32) -> Health {
        Health::from_code(self.health[m as usize].load(Ordering::Acquire))
    }

    pub fn set(&self, m: u32, h: Health) {
        self.health[m as usize].store(h.code(), Ordering::Release);
    }

    pub fn is_healthy(&self, m: u32) -> bool {
        self.health(m) == Health::Healthy
    }

    /// Whether no member is failed or being rebuilt.
    pub fn all_healthy(&self) -> bool {
        (0..self.len() as u32).all(|m| self.is_healthy(m))
    }

    pub fn has_parity(&self) -> bool {
        self.width > 0
    }

    /// The other members of `m`'s parity group.
    pub fn peers(&self, m: u32) -> impl Iterator<Item = u32> {
        let w = self.width.max(1);
        let first = m / w * w;
        (first..first + w).filter(move |&p| p != m)
    }

    /// The parity group `m` belongs to.
    pub fn group(&self, m: u32) -> u32 {
        m / self.width.max(1)
    }

    /// Whether `m` may fail without losing data: the array has parity and every other
    /// member of its group is healthy.
    pub fn can_lose(&self, m: u32) -> bool {
        self.has_parity() && self.is_healthy(m) && self.peers(m).all(|p| self.is_healthy(p))
    }

    /// Read `buf.len() / 4096` blocks of member `m` from `block`: from the member while it
    /// is healthy, else rebuilt from its parity group's whole rows.
    pub fn read(&self, m: u32, block: u64, buf: &mut [u8]) -> Result<(), DegradedError> {
        if self.is_healthy(m) {
            return Ok(self.list[m as usize].read(block, buf)?);
        }
        self.reconstruct(m, block, buf)
    }

    /// As [`Member::read_bytes_cached`]: a few bytes inside one block; a failed member's
    /// block is rebuilt whole from its parity group and the bytes taken from it.
    pub fn read_bytes_cached(&self, m: u32, block: u64, offset: usize, buf: &mut [u8]) -> Result<(), DegradedError> {
        if self.is_healthy(m) {
            return Ok(self.list[m as usize].read_bytes_cached(block, offset, buf)?);
        }
        let mut whole = vec![0u8; BLOCK];
        self.reconstruct(m, block, &mut whole)?;
        let bytes = whole.get(offset..offset + buf.len()).ok_or_else(|| {
            let op = crate::member::Op::Read { block, count: 1 };
            let path = self.list[m as usize].path().to_path_buf();
            MemberError::CrossesBlock { path, op, offset, end: offset + buf.len() }
        })?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    /// The block at `at` on member `m`, rebuilt into `out` from the other blocks of its
    /// stripe row (data and parity): `None` without parity.
    pub fn rebuild(&self, m: u32, at: u64, out: &mut [u8]) -> Result<Option<()>, MemberError> {
        if !self.has_parity() {
            return Ok(None);
        }
        self.reconstruct(m, at, out).map_err(|e| e.into_member_error(self, m, at, 1))?;
        Ok(Some(()))
    }

    /// Member `m`'s blocks from `block`, rebuilt as the XOR of the same blocks on every other
    /// member of its parity group (data and parity alike).
    pub fn reconstruct(&self, m: u32, block: u64, out: &mut [u8]) -> Result<(), DegradedError> {
        if !self.has_parity() {
            return Err(DegradedError::NoParity { member: m });
        }
        if let Some(p) = self.peers(m).find(|&p| !self.is_healthy(p)) {
            return Err(DegradedError::SecondFailure { member: m, peer: p });
        }
        let peers = self.peers(m).map(|p| &self.list[p as usize]);
        crate::parity::row_xor(peers, block, &mut vec![0u8; out.len()], out)?;
        Ok(())
    }
}

impl DegradedError {
    /// As a member error (what callers of member reads report).
    pub fn into_member_error(self, members: &Members, m: u32, block: u64, count: u64) -> MemberError {
        match self {
            DegradedError::Member(e) => e,
            other => MemberError::Lost {
                path: members[m as usize].path().to_owned(),
                op: crate::member::Op::Read { block, count },
                why: other.to_string(),
            },
        }
    }
}
