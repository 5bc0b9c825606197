//! What a broken invariant of a device's mapping says, apart from the mappings that check
//! them so that both page- and block-level FTLs can name it without depending on each other.

/// An invariant of a device's mapping found broken ([`super::Ssd::check_invariants`]),
/// naming the page or block it was found at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FtlInvariantError {
    #[error("physical page {ppn} holds no live page but carries token {token:#x}")]
    TokenOnDeadPage { ppn: usize, token: u64 },
    #[error("physical page {ppn} is not valid but carries token {token:#x}")]
    TokenOnInvalidPage { ppn: usize, token: u64 },
    #[error("L2P[{lpn}] = {ppn} but P2L[{ppn}] = {p2l}")]
    L2pNotP2l { lpn: usize, ppn: u32, p2l: u32 },
    #[error("P2L[{ppn}] = {lpn} but L2P[{lpn}] = {l2p}")]
    P2lNotL2p { ppn: u32, lpn: u32, l2p: u32 },
    #[error("free block {block} is in domain {domain}'s pool, not its own")]
    FreeInOtherDomain { block: u32, domain: usize },
    #[error("closed block {block} is in domain {domain}'s victims, not its own")]
    ClosedInOtherDomain { block: u32, domain: usize },
    #[error("block {block} in bucket {bucket} has {valid} valid")]
    WrongBucket { block: u32, bucket: u32, valid: u16 },
    #[error("unit {unit}'s open block {block} is not domain {domain}'s")]
    OpenInOtherDomain { unit: u32, block: u32, domain: usize },
    #[error("unit {unit}'s open block {block} was opened on unit {opened_on}")]
    OpenOnOtherUnit { unit: u32, block: u32, opened_on: u32 },
    #[error("block {block} is open for writing in two places (host and GC frontier)")]
    OpenTwice { block: u32 },
    #[error("{at_soft} domains at their soft limit, counted {counted}")]
    SoftLimitCount { at_soft: u32, counted: u32 },
    #[error("block {block}: count {count} but {live} live pages")]
    LiveCount { block: usize, count: u16, live: usize },
    #[error("free block {block} holds {live} valid pages")]
    FreeBlockLive { block: usize, live: usize },
    #[error("block {block} has state flags {flags:#b}; want exactly one of free, open, closed")]
    StateFlags { block: usize, flags: u8 },
    #[error("free block {block} has valid pages")]
    FreeBlockValid { block: u32 },
    #[error("logical block {lbn} maps to block {block} with no valid page")]
    MappedEmpty { lbn: usize, block: u32 },
    #[error("block {block} has valid pages past its write pointer {wp}")]
    ValidPastWritePointer { block: u32, wp: u32 },
    #[error("block {block} is free or mapped {owners} times, not once")]
    Owners { block: usize, owners: u32 },
}
