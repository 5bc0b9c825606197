//! What can go wrong on a member, and on which operation: errors that name the member and
//! carry the OS error. Where the message says what the OS error was, the error is not also
//! the source: the engine logs these errors with their message alone, and a chain printed
//! whole (the CLI's `{e:#}`) would say it twice.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The operation an error is about, with the block range where there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Create,
    Open,
    Read { block: u64, count: u64 },
    Write { block: u64, count: u64 },
    Trim { block: u64, count: u64 },
    Sync,
}

impl Op {
    /// An operation on the data (as opposed to creating or opening the member).
    fn is_data(self) -> bool {
        matches!(self, Op::Read { .. } | Op::Write { .. } | Op::Trim { .. } | Op::Sync)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, block, count) = match *self {
            Op::Create => return f.write_str("create"),
            Op::Open => return f.write_str("open"),
            Op::Sync => return f.write_str("sync"),
            Op::Read { block, count } => ("read", block, count),
            Op::Write { block, count } => ("write", block, count),
            Op::Trim { block, count } => ("trim", block, count),
        };
        // Saturating: an out-of-range request may name an end beyond u64.
        write!(f, "{name} of blocks {block}..{}", block.saturating_add(count))
    }
}

/// Everything that can go wrong on a member. Every variant names the member's path.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    #[error(
        "member {}: open: another process is using it (a running `swan serve`, or `swan create`, `check` or \
         `serve` on the same array); stop that first",
        .path.display()
    )]
    InUse { path: PathBuf },
    #[error("member {}: {op} is out of range: the member has {blocks} blocks", .path.display())]
    OutOfRange { path: PathBuf, op: Op, blocks: u64 },
    #[error("member {}: {op}: buffer of {len} bytes is not a multiple of 4096", .path.display())]
    BadLength { path: PathBuf, op: Op, len: usize },
    #[error("member {}: {op}: bytes {offset}..{end} do not lie inside one 4096-byte block", .path.display())]
    CrossesBlock { path: PathBuf, op: Op, offset: usize, end: usize },
    #[error("member {}: {op}: the member is open read-only", .path.display())]
    ReadOnly { path: PathBuf, op: Op },
    #[error("member {}: create: size {bytes} bytes is not a positive multiple of 4096", .path.display())]
    BadSize { path: PathBuf, bytes: u64 },
    #[error("member {}: create: it already exists (ask to overwrite it to replace it)", .path.display())]
    AlreadyExists {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("member {}: {op}: not a regular file or block device", .path.display())]
    NotFileOrDevice { path: PathBuf, op: Op },
    #[error("member {}: open: the filesystem does not support O_DIRECT: {error}", .path.display())]
    DirectUnsupported { path: PathBuf, error: io::Error },
    #[error(
        "member {}: open: the device is in use (mounted, or held open exclusively by another process): {error}",
        .path.display()
    )]
    DeviceBusy { path: PathBuf, error: io::Error },
    #[error("member {}: {op}: the member ends before the range (truncated behind our back?): {error}", .path.display())]
    Truncated { path: PathBuf, op: Op, error: io::Error },
    /// A failed member's block that its parity group could not give back either.
    #[error("member {}: {op}: {why}", .path.display())]
    Lost { path: PathBuf, op: Op, why: String },
    /// A member that did not answer within the member timeout (`--member-timeout`).
    #[error("member {}: {op}: the member hangs: {hung}", .path.display())]
    Hung { path: PathBuf, op: Op, hung: super::Hung },
    /// ENOSPC (or EDQUOT) from a write or trim: the file system under a sparse member had no
    /// room for blocks the member had not used before. The member still holds every block
    /// it held.
    #[error(
        "member {}: {op}: the file system holding the member is full ({error}); the member keeps what it held: \
         free space there",
        .path.display()
    )]
    Full { path: PathBuf, op: Op, error: io::Error },
    /// A command the member's zones refuse (a write off a zone's write pointer, a TRIM of
    /// part of a zone): the array broke the zoned contract, a fault of swan's, not the
    /// member's, which still holds every block it held.
    #[error("member {}: {op}: the zoned device refuses it: {error}", .path.display())]
    Zoned { path: PathBuf, op: Op, error: swan_models::zns::zones::ZoneError },
    /// A file that says it emulates a zoned device and cannot be one.
    #[error("member {}: open: {why}", .path.display())]
    BadZonedDevice { path: PathBuf, why: String },
    #[error("member {}: {op} failed: {error}", .path.display())]
    Io { path: PathBuf, op: Op, error: io::Error },
}

impl MemberError {
    /// True when the member itself failed while serving I/O (an OS error from a read, write,
    /// trim or sync, or a read past a member that shrank), so the array should mark it failed.
    /// False for misuse (range, length, read-only) and for errors creating or opening a member,
    /// which are reported to whoever asked instead.
    ///
    /// Every OS error on the data path counts, not just `EIO`: with the alignment and range
    /// checks done here, anything else (`ENXIO` from a vanished device) still means the
    /// member can no longer be trusted to hold its blocks. So does a member that stops
    /// answering ([`MemberError::Hung`]). A full file system ([`MemberError::Full`]) does
    /// not: the member keeps every block it held, and failing it would cost a rebuild for
    /// what freeing space cures.
    pub fn is_io_error(&self) -> bool {
        match self {
            MemberError::Truncated { .. } | MemberError::Hung { .. } => true,
            MemberError::Io { op, .. } => op.is_data(),
            _ => false,
        }
    }

    /// Whether the member's file system is full ([`MemberError::Full`]).
    pub fn is_full(&self) -> bool {
        matches!(self, MemberError::Full { .. })
    }

    /// The member the error is about.
    pub fn path(&self) -> &Path {
        match self {
            MemberError::InUse { path }
            | MemberError::OutOfRange { path, .. }
            | MemberError::BadLength { path, .. }
            | MemberError::CrossesBlock { path, .. }
            | MemberError::ReadOnly { path, .. }
            | MemberError::BadSize { path, .. }
            | MemberError::AlreadyExists { path, .. }
            | MemberError::NotFileOrDevice { path, .. }
            | MemberError::DirectUnsupported { path, .. }
            | MemberError::DeviceBusy { path, .. }
            | MemberError::Truncated { path, .. }
            | MemberError::Lost { path, .. }
            | MemberError::Hung { path, .. }
            | MemberError::Full { path, .. }
            | MemberError::Zoned { path, .. }
            | MemberError::BadZonedDevice { path, .. }
            | MemberError::Io { path, .. } => path,
        }
    }

    /// The operation that failed.
    pub fn op(&self) -> Op {
        match self {
            MemberError::OutOfRange { op, .. }
            | MemberError::BadLength { op, .. }
            | MemberError::CrossesBlock { op, .. }
            | MemberError::ReadOnly { op, .. }
            | MemberError::NotFileOrDevice { op, .. }
            | MemberError::Truncated { op, .. }
            | MemberError::Lost { op, .. }
            | MemberError::Hung { op, .. }
            | MemberError::Full { op, .. }
            | MemberError::Zoned { op, .. }
            | MemberError::Io { op, .. } => *op,
            MemberError::BadSize { .. } | MemberError::AlreadyExists { .. } => Op::Create,
            MemberError::DirectUnsupported { .. }
            | MemberError::DeviceBusy { .. }
            | MemberError::InUse { .. }
            | MemberError::BadZonedDevice { .. } => Op::Open,
        }
    }

    /// The OS error behind this one, if any.
    pub fn io_source(&self) -> Option<&io::Error> {
        match self {
            MemberError::AlreadyExists { source, .. } => Some(source),
            MemberError::DirectUnsupported { error, .. }
            | MemberError::DeviceBusy { error, .. }
            | MemberError::Truncated { error, .. }
            | MemberError::Full { error, .. }
            | MemberError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}
