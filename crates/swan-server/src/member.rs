//! One member of an array: a regular file or a block device, addressed in 4 KiB blocks.
//!
//! Everything above this module thinks in member blocks; this is the only place that turns them
//! into system calls. The choices, and why:
//!
//! - **Positioned I/O** (`pread`/`pwrite` through [`FileExt`]) on one shared [`File`]: there is no
//!   file offset to race on, so every method takes `&self` and any number of threads may call
//!   them at once without a lock.
//! - **`O_DIRECT`** (optional): the array does its own caching and ordering, so going through the
//!   page cache only doubles memory use and hides the device's real latency. The kernel then
//!   wants the buffer address aligned; callers hand us ordinary `Vec<u8>`s, so unaligned buffers
//!   are bounced through an aligned per-thread scratch buffer (safe code: over-allocate and use
//!   the aligned sub-slice). 4096-byte alignment covers every logical block size up to 4 KiB.
//! - **Discard is a hole punch** (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), for files and devices
//!   alike. On a file it gives the space back to the filesystem; on a block device Linux turns it
//!   into a write-zeroes request that must not fall back to writing data
//!   (`blkdev_fallocate`), i.e. a cheap unmap on devices that can. Either way the range reads as
//!   zeroes afterwards, which the layers above rely on (a trimmed block must never resurrect old
//!   data). Where the kernel refuses with `EOPNOTSUPP` we write zeroes ourselves, keeping that
//!   guarantee at the cost of speed (and, for files, without freeing space).
//! - **Durability is `fdatasync`**: the members never change size after creation, so the file
//!   metadata `fsync` would also flush (timestamps) buys nothing; `fdatasync` still flushes the
//!   device's volatile write cache.
//! - **Errors say which member and which operation**, keep the OS error as their source, and
//!   separate the member failing ([`MemberError::is_io_error`]) from the caller misusing it, because
//!   the array marks a member failed on the former and must not on the latter.
//! - **A tap seam** ([`Tap`], off by default): a member may carry an observer that sees every
//!   operation in order, and may fail it. [`crate::recorder`] uses it to record every write,
//!   trim and sync (in the spirit of dm-log-writes) for crash replay, and to inject I/O
//!   errors. Without a tap the only cost is one branch per operation.

use std::cell::RefCell;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{FallocateFlags, FlockOperation, OFlags};
use rustix::io::Errno;

/// The member block size: the unit of every offset and length in this module.
pub const BLOCK: usize = 4096;
const BLOCK_U64: u64 = BLOCK as u64;

/// Unaligned `O_DIRECT` transfers are bounced this much at a time, so the per-thread scratch
/// buffer stays small however large the request.
const BOUNCE_CHUNK: usize = 1 << 20;

/// What a member is backed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberKind {
    File,
    BlockDevice,
}

/// How to open a member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open with `O_DIRECT`, bypassing the page cache.
    pub direct: bool,
    /// Open read-only; writes and trims fail with [`MemberError::ReadOnly`].
    pub read_only: bool,
}

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
    #[error("member {}: open: the filesystem does not support O_DIRECT: {source}", .path.display())]
    DirectUnsupported {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "member {}: open: the device is in use (mounted, or held open exclusively by another process): {source}",
        .path.display()
    )]
    DeviceBusy {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("member {}: {op}: the member ends before the range (truncated behind our back?): {source}", .path.display())]
    Truncated {
        path: PathBuf,
        op: Op,
        #[source]
        source: io::Error,
    },
    /// A failed member's block that its parity group could not give back either.
    #[error("member {}: {op}: {why}", .path.display())]
    Lost { path: PathBuf, op: Op, why: String },
    #[error("member {}: {op} failed: {source}", .path.display())]
    Io {
        path: PathBuf,
        op: Op,
        #[source]
        source: io::Error,
    },
}

impl MemberError {
    /// True when the member itself failed while serving I/O (an OS error from a read, write,
    /// trim or sync, or a read past a member that shrank), so the array should mark it failed.
    /// False for misuse (range, length, read-only) and for errors creating or opening a member,
    /// which are reported to whoever asked instead.
    ///
    /// Every OS error on the data path counts, not just `EIO`: with the alignment and range
    /// checks done here, anything else (`ENOSPC` under a sparse file, `ENXIO` from a vanished
    /// device) still means the member can no longer be trusted to hold its blocks.
    pub fn is_io_error(&self) -> bool {
        match self {
            MemberError::Truncated { .. } => true,
            MemberError::Io { op, .. } => op.is_data(),
            _ => false,
        }
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
            | MemberError::Io { op, .. } => *op,
            MemberError::BadSize { .. } | MemberError::AlreadyExists { .. } => Op::Create,
            MemberError::DirectUnsupported { .. } | MemberError::DeviceBusy { .. } | MemberError::InUse { .. } => {
                Op::Open
            }
        }
    }

    /// The OS error behind this one, if any.
    pub fn io_source(&self) -> Option<&io::Error> {
        match self {
            MemberError::AlreadyExists { source, .. }
            | MemberError::DirectUnsupported { source, .. }
            | MemberError::DeviceBusy { source, .. }
            | MemberError::Truncated { source, .. }
            | MemberError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An observer (and fault injector) placed under a member with [`Member::set_tap`].
///
/// Called on the thread doing the I/O, in the order the operations happen. `before` may
/// fail an operation without performing it; `after` sees each write (with its bytes), trim
/// and sync the member performed, and may still report it failed (an I/O error after the
/// device took the data). Reads are offered to `before` only.
pub trait Tap: Send + Sync + fmt::Debug {
    fn before(&self, member: u32, op: Op) -> io::Result<()>;
    fn after(&self, member: u32, op: Op, data: &[u8]) -> io::Result<()>;
    /// A note from the layers above (e.g. "a GC copy is done"), kept in order with the I/O.
    fn mark(&self, what: &'static str);
}

/// One open member.
#[derive(Debug)]
pub struct Member {
    path: PathBuf,
    /// `None` for an absent member (given as `missing`): every operation on it fails.
    file: Option<File>,
    /// On an O_DIRECT member, a second, buffered descriptor for small metadata reads
    /// ([`Member::read_bytes_cached`]).
    cached: Option<File>,
    kind: MemberKind,
    blocks: u64,
    direct: bool,
    read_only: bool,
    tap: Option<(Arc<dyn Tap>, u32)>,
}

impl Member {
    /// Create a regular file of `bytes` bytes (a positive multiple of 4096) to serve as a member.
    ///
    /// Fails with [`MemberError::AlreadyExists`] if `path` exists, unless `overwrite`, in which
    /// case an existing regular file is truncated and regrown (its old contents are gone); an
    /// existing non-file (a device, a directory) is never overwritten. The file is sparse: it
    /// reads as zeroes and takes space only as blocks are written. The file and its directory
    /// entry are made durable before returning, so a crash right after array creation cannot
    /// lose a member.
    pub fn create_file(path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        let io_err = |source| MemberError::Io { path: path.to_owned(), op: Op::Create, source };
        if bytes == 0 || bytes % BLOCK_U64 != 0 {
            return Err(MemberError::BadSize { path: path.to_owned(), bytes });
        }
        let mut opts = fs::OpenOptions::new();
        opts.write(true);
        if overwrite {
            match fs::metadata(path) {
                Ok(meta) if !meta.is_file() => {
                    return Err(MemberError::NotFileOrDevice { path: path.to_owned(), op: Op::Create })
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(e)),
            }
            opts.create(true).truncate(true);
        } else {
            opts.create_new(true);
        }
        let file = opts.open(path).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                MemberError::AlreadyExists { path: path.to_owned(), source: e }
            } else {
                io_err(e)
            }
        })?;
        file.set_len(bytes).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(dir).and_then(|d| d.sync_all()).map_err(io_err)
    }

    /// Open an existing regular file or block device as a member: read-write, or read-only if
    /// `opts.read_only`; with `O_DIRECT` if `opts.direct`.
    ///
    /// The size comes from the file's metadata, or for a block device from seeking to its end.
    /// A size that is not a multiple of 4096 rounds down: the trailing partial block is never
    /// read or written.
    ///
    /// A block device opened read-write is claimed exclusively (`O_EXCL`), so a mounted device,
    /// or one another array (or this one, listed twice) already holds, is refused with
    /// [`MemberError::DeviceBusy`] instead of being scribbled over.
    pub fn open(path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        let io_err = |source| MemberError::Io { path: path.to_owned(), op: Op::Open, source };
        let not_file_or_device = || MemberError::NotFileOrDevice { path: path.to_owned(), op: Op::Open };
        // Look before opening: opening a directory read-only would succeed, and O_EXCL must only
        // be asked of block devices (on other files its meaning without O_CREAT is undefined).
        let is_device = match fs::metadata(path).map_err(io_err)?.file_type() {
            t if t.is_file() => false,
            t if t.is_block_device() => true,
            _ => return Err(not_file_or_device()),
        };
        let mut flags = OFlags::empty();
        if opts.direct {
            flags |= OFlags::DIRECT;
        }
        if is_device && !opts.read_only {
            flags |= OFlags::EXCL;
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .write(!opts.read_only)
            .custom_flags(flags.bits() as i32)
            .open(path)
            .map_err(|e| match Errno::from_io_error(&e) {
                Some(Errno::INVAL) if opts.direct => {
                    MemberError::DirectUnsupported { path: path.to_owned(), source: e }
                }
                Some(Errno::BUSY) if is_device => MemberError::DeviceBusy { path: path.to_owned(), source: e },
                _ => io_err(e),
            })?;
        // What we opened is what counts (the path may have changed since we looked).
        let meta = file.metadata().map_err(io_err)?;
        let (kind, bytes) = if meta.is_file() {
            (MemberKind::File, meta.len())
        } else if meta.file_type().is_block_device() {
            // A device's metadata reports size 0; its end is its size.
            (MemberKind::BlockDevice, (&file).seek(SeekFrom::End(0)).map_err(io_err)?)
        } else {
            return Err(not_file_or_device());
        };
        // Segment summaries are read on every verified read of a sealed block; on an O_DIRECT
        // member each would be a device read. Through the page cache the hot ones stay in
        // memory the kernel can reclaim, not in the server's. (A direct write or a discard
        // drops the cached pages it covers, so what this reads is never stale.)
        let cached =
            if opts.direct { Some(fs::OpenOptions::new().read(true).open(path).map_err(io_err)?) } else { None };
        Ok(Member {
            path: path.to_owned(),
            file: Some(file),
            cached,
            kind,
            blocks: bytes / BLOCK_U64,
            direct: opts.direct,
            read_only: opts.read_only,
            tap: None,
        })
    }

    /// Claim the member for this process: exclusively to change it, shared to only read it.
    /// Two servers over one array would each believe its map is the truth and overwrite the
    /// other's data; `flock(2)` on the open file stops the second one at the door, and the
    /// claim ends with this `Member` (or with the process, however it dies).
    pub fn lock(&self, exclusive: bool) -> Result<(), MemberError> {
        let Some(file) = &self.file else { return Ok(()) };
        let how =
            if exclusive { FlockOperation::NonBlockingLockExclusive } else { FlockOperation::NonBlockingLockShared };
        match rustix::fs::flock(file, how) {
            Ok(()) => Ok(()),
            Err(Errno::WOULDBLOCK) => Err(MemberError::InUse { path: self.path.clone() }),
            Err(e) => Err(MemberError::Io { path: self.path.clone(), op: Op::Open, source: e.into() }),
        }
    }

    /// A second handle on the same open member (the file descriptor duplicated; the lock,
    /// held by the open file description, is shared).
    pub fn try_clone(&self) -> Result<Member, MemberError> {
        let file = match &self.file {
            Some(f) => Some(f.try_clone().map_err(|e| self.io_err(Op::Open, e))?),
            None => None,
        };
        let cached = match &self.cached {
            Some(f) => Some(f.try_clone().map_err(|e| self.io_err(Op::Open, e))?),
            None => None,
        };
        Ok(Member { path: self.path.clone(), file, cached, tap: self.tap.clone(), ..*self })
    }

    /// A stand-in for a member that is not there (a dead device, given as `missing` in the
    /// member list): it has the array's member size, and every read, write, trim and sync
    /// on it fails with [`MemberError::Lost`]. The array serves around it from parity.
    pub fn absent(index: u32, blocks: u64) -> Member {
        Member {
            path: PathBuf::from(format!("missing(member {index})")),
            file: None,
            cached: None,
            kind: MemberKind::File,
            blocks,
            direct: false,
            read_only: false,
            tap: None,
        }
    }

    /// Whether this is the stand-in for an absent member.
    pub fn is_absent(&self) -> bool {
        self.file.is_none()
    }

    /// The open file, or the error an absent member gives for `op`.
    fn file_for(&self, op: Op) -> Result<&File, MemberError> {
        self.file.as_ref().ok_or_else(|| MemberError::Lost {
            path: self.path.clone(),
            op,
            why: "the member is absent (given as `missing`)".into(),
        })
    }

    /// Put `tap` under this member, which it knows as member `index`.
    pub fn set_tap(&mut self, tap: Arc<dyn Tap>, index: u32) {
        self.tap = Some((tap, index));
    }

    /// Put the tap that is under `other` under this member too, with `other`'s index (a
    /// replacement taking a failed member's place).
    pub fn inherit_tap(&mut self, other: &Member) {
        self.tap = other.tap.clone();
    }

    pub fn has_tap(&self) -> bool {
        self.tap.is_some()
    }

    /// Pass a note to the tap, if there is one (in order with this member's I/O).
    pub fn mark(&self, what: &'static str) {
        if let Some((tap, _)) = &self.tap {
            tap.mark(what);
        }
    }

    /// The tap's verdict before `op` (no tap: go ahead).
    fn tap_before(&self, op: Op) -> Result<(), MemberError> {
        match &self.tap {
            None => Ok(()),
            Some((tap, i)) => tap.before(*i, op).map_err(|e| self.io_err(op, e)),
        }
    }

    /// Tell the tap `op` was done (no tap: nothing to do).
    fn tap_after(&self, op: Op, data: &[u8]) -> Result<(), MemberError> {
        match &self.tap {
            None => Ok(()),
            Some((tap, i)) => tap.after(*i, op, data).map_err(|e| self.io_err(op, e)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kind(&self) -> MemberKind {
        self.kind
    }

    /// Whether a log array's TRIM of its free segments is worth carrying out here. On an SSD
    /// (a block device) it lets the drive erase them without copying; on a regular file it
    /// only punches holes that the log's next lap fills again, allocating the blocks anew at
    /// a cost the file system charges every write (docs/server-speed.md, "File members").
    pub fn trims_free_space(&self) -> bool {
        self.kind != MemberKind::File
    }

    /// The usable size in blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    pub fn is_direct(&self) -> bool {
        self.direct
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Read `buf.len() / 4096` blocks starting at `block` into `buf`.
    ///
    /// A member that has shrunk under us (a file truncated behind our back) is an error
    /// ([`MemberError::Truncated`]), never a silent run of zeroes.
    pub fn read(&self, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        let count = self.buf_blocks(buf.len(), |count| Op::Read { block, count })?;
        let op = Op::Read { block, count };
        self.check_range(op, block, count)?;
        let file = self.file_for(op)?;
        self.tap_before(op)?;
        let read = self.pread(file, block * BLOCK_U64, buf);
        self.read_result(op, read)
    }

    /// Read `buf.len() / 4096` blocks at `block` only if the page cache holds all of them
    /// (`preadv2(RWF_NOWAIT)`): true if `buf` is filled. False if any would wait for the
    /// device, and for anything else the caller should leave to a thread that may block
    /// (an O_DIRECT or absent member, a tapped one, an error, a short read): the engine
    /// answers cached reads itself and hands the rest to the I/O threads.
    pub fn read_if_cached(&self, block: u64, buf: &mut [u8]) -> bool {
        let Some(file) = self.file.as_ref() else { return false };
        if self.direct || self.tap.is_some() || buf.is_empty() {
            return false;
        }
        let Ok(count) = self.buf_blocks(buf.len(), |count| Op::Read { block, count }) else { return false };
        if self.check_range(Op::Read { block, count }, block, count).is_err() {
            return false;
        }
        let len = buf.len();
        let flags = rustix::io::ReadWriteFlags::NOWAIT;
        matches!(
            rustix::io::preadv2(file, &mut [std::io::IoSliceMut::new(buf)], block * BLOCK_U64, flags),
            Ok(n) if n == len
        )
    }

    /// Read `buf.len()` bytes at byte `offset` of block `block`, all inside that block,
    /// through the page cache, even when the member is O_DIRECT: for a few bytes of metadata read
    /// on every user read (one segment-summary entry, 12 bytes), where a whole block would
    /// copy 4 KiB to use 12. An O_DIRECT member without a buffered descriptor reads the
    /// whole block.
    pub fn read_bytes_cached(&self, block: u64, offset: usize, buf: &mut [u8]) -> Result<(), MemberError> {
        let op = Op::Read { block, count: 1 };
        if offset + buf.len() > BLOCK {
            return Err(MemberError::CrossesBlock { path: self.path.clone(), op, offset, end: offset + buf.len() });
        }
        self.check_range(op, block, 1)?;
        let file = self.file_for(op)?;
        self.tap_before(op)?;
        let at = block * BLOCK_U64 + offset as u64;
        let read = match (&self.cached, self.direct) {
            (Some(buffered), _) => buffered.read_exact_at(buf, at),
            (None, false) => file.read_exact_at(buf, at),
            (None, true) => {
                let mut whole = vec![0u8; BLOCK];
                self.pread(file, block * BLOCK_U64, &mut whole)
                    .map(|()| buf.copy_from_slice(&whole[offset..offset + buf.len()]))
            }
        };
        self.read_result(op, read)
    }

    /// A read's outcome as a member error: a short read is a truncated member.
    fn read_result(&self, op: Op, read: io::Result<()>) -> Result<(), MemberError> {
        read.map_err(|source| {
            if source.kind() == io::ErrorKind::UnexpectedEof {
                MemberError::Truncated { path: self.path.clone(), op, source }
            } else {
                self.io_err(op, source)
            }
        })
    }

    /// Write `buf` (a multiple of 4096 bytes) to the blocks starting at `block`. Not durable
    /// until [`Member::sync`].
    pub fn write(&self, block: u64, buf: &[u8]) -> Result<(), MemberError> {
        let count = self.buf_blocks(buf.len(), |count| Op::Write { block, count })?;
        let op = Op::Write { block, count };
        self.check_range(op, block, count)?;
        self.check_writable(op)?;
        let file = self.file_for(op)?;
        self.tap_before(op)?;
        self.pwrite(file, block * BLOCK_U64, buf).map_err(|e| self.io_err(op, e))?;
        self.tap_after(op, buf)
    }

    /// Start writing back `count` blocks at `block` from the page cache, without waiting
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): write-behind for a log, whose pages are
    /// not written again soon, so that the next sync point finds them clean or on their
    /// way rather than writing everything back while the engine waits. Not a durability
    /// step (that stays the sync point's `fdatasync`); advisory, so errors are ignored (a
    /// failed writeback shows at the next sync). Nothing to do for O_DIRECT members.
    pub fn write_behind(&self, block: u64, count: u64) {
        if self.direct || count == 0 {
            return;
        }
        if let Some(file) = self.file.as_ref() {
            use std::os::fd::AsRawFd;
            let (offset, len) = ((block * BLOCK_U64) as libc::off64_t, (count * BLOCK_U64) as libc::off64_t);
            // SAFETY: plain integers and a descriptor that `file` keeps open for the call;
            // the kernel touches no memory of ours. (Neither rustix nor nix wraps it.)
            #[allow(unsafe_code)]
            let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE) };
        }
    }

    /// Discard `count` blocks starting at `block`; afterwards they read as zeroes.
    ///
    /// Punches a hole (`fallocate(PUNCH_HOLE | KEEP_SIZE)`): a file gives the space back to its
    /// filesystem, a block device gets a write-zeroes request that may not fall back to writing
    /// (Linux `blkdev_fallocate`). If the kernel refuses with `EOPNOTSUPP` the zeroes are written
    /// instead, so the read-as-zeroes guarantee holds everywhere. Not durable until
    /// [`Member::sync`].
    pub fn trim(&self, block: u64, count: u64) -> Result<(), MemberError> {
        let op = Op::Trim { block, count };
        self.check_range(op, block, count)?;
        self.check_writable(op)?;
        if count == 0 {
            return Ok(());
        }
        let file = self.file_for(op)?;
        self.tap_before(op)?;
        let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        let punched = loop {
            match rustix::fs::fallocate(file, flags, block * BLOCK_U64, count * BLOCK_U64) {
                Err(Errno::INTR) => continue,
                r => break r,
            }
        };
        match punched {
            Ok(()) => {}
            Err(Errno::OPNOTSUPP) => self.write_zeroes(file, block, count).map_err(|e| self.io_err(op, e))?,
            Err(e) => return Err(self.io_err(op, e.into())),
        }
        self.tap_after(op, &[])
    }

    /// Make every completed write and trim durable (`fdatasync`, which also flushes the
    /// device's volatile cache).
    pub fn sync(&self) -> Result<(), MemberError> {
        // std's sync_data is fdatasync on Linux, retried on EINTR.
        let file = self.file_for(Op::Sync)?;
        self.tap_before(Op::Sync)?;
        file.sync_data().map_err(|e| self.io_err(Op::Sync, e))?;
        self.tap_after(Op::Sync, &[])
    }

    /// The number of blocks in a buffer of `len` bytes, or the misuse error.
    fn buf_blocks(&self, len: usize, op: impl Fn(u64) -> Op) -> Result<u64, MemberError> {
        if len % BLOCK != 0 {
            return Err(MemberError::BadLength { path: self.path.clone(), op: op((len / BLOCK) as u64), len });
        }
        Ok((len / BLOCK) as u64)
    }

    fn check_range(&self, op: Op, block: u64, count: u64) -> Result<(), MemberError> {
        match block.checked_add(count) {
            Some(end) if end <= self.blocks => Ok(()),
            _ => Err(MemberError::OutOfRange { path: self.path.clone(), op, blocks: self.blocks }),
        }
    }

    fn check_writable(&self, op: Op) -> Result<(), MemberError> {
        if self.read_only {
            return Err(MemberError::ReadOnly { path: self.path.clone(), op });
        }
        Ok(())
    }

    fn io_err(&self, op: Op, source: io::Error) -> MemberError {
        MemberError::Io { path: self.path.clone(), op, source }
    }

    /// `pread` the whole of `buf` from `offset`, bouncing if O_DIRECT needs an aligned buffer.
    /// A short read (end of file) comes back as `UnexpectedEof`.
    fn pread(&self, file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if !self.direct || is_aligned(buf) {
            return file.read_exact_at(buf, offset);
        }
        let mut at = offset;
        for chunk in buf.chunks_mut(BOUNCE_CHUNK) {
            with_bounce(chunk.len(), |b| -> io::Result<()> {
                file.read_exact_at(b, at)?;
                chunk.copy_from_slice(b);
                Ok(())
            })?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// `pwrite` the whole of `buf` at `offset`, bouncing if O_DIRECT needs an aligned buffer.
    fn pwrite(&self, file: &File, offset: u64, buf: &[u8]) -> io::Result<()> {
        if !self.direct || is_aligned(buf) {
            return file.write_all_at(buf, offset);
        }
        let mut at = offset;
        for chunk in buf.chunks(BOUNCE_CHUNK) {
            with_bounce(chunk.len(), |b| {
                b.copy_from_slice(chunk);
                file.write_all_at(b, at)
            })?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// Trim's fallback: write zeroes over the range, a bounded chunk at a time.
    fn write_zeroes(&self, file: &File, block: u64, count: u64) -> io::Result<()> {
        let end = (block + count) * BLOCK_U64;
        let mut at = block * BLOCK_U64;
        while at < end {
            let len = (end - at).min(BOUNCE_CHUNK as u64) as usize;
            // The bounce buffer is aligned, so this works with and without O_DIRECT.
            with_bounce(len, |b| {
                b.fill(0);
                file.write_all_at(b, at)
            })?;
            at += len as u64;
        }
        Ok(())
    }
}

/// Whether `buf` starts on a 4096-byte boundary (its length is checked elsewhere).
fn is_aligned(buf: &[u8]) -> bool {
    (buf.as_ptr() as usize) % BLOCK == 0
}

/// Run `f` on a 4096-aligned scratch slice of `len` bytes (at most [`BOUNCE_CHUNK`]).
///
/// The scratch buffer is cached per thread, so steady-state unaligned O_DIRECT I/O does not
/// allocate. Its previous contents are left in place: callers overwrite all of it.
fn with_bounce<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static BOUNCE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BOUNCE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => f(aligned_slice(&mut v, len)),
        // Only reachable if `f` itself bounced; don't panic, just use a fresh buffer.
        Err(_) => f(aligned_slice(&mut Vec::new(), len)),
    })
}

/// The 4096-aligned `len`-byte window of `v`, growing `v` so that one exists. Safe code can't
/// ask the allocator for alignment, so over-allocate by a block and skip to the boundary.
fn aligned_slice(v: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if v.len() < len + BLOCK {
        v.resize(len + BLOCK, 0);
    }
    // Computed after any resize: reallocation moves the buffer.
    let skip = (v.as_ptr() as usize).wrapping_neg() % BLOCK;
    &mut v[skip..skip + len]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::process::Command;

    const MIB: u64 = 1 << 20;

    fn pattern(seed: u8, len: usize) -> Vec<u8> {
        (0..len).map(|i| seed.wrapping_add((i / 7) as u8).wrapping_mul(31) | 1).collect()
    }

    fn new_file(dir: &Path, name: &str, bytes: u64) -> PathBuf {
        let p = dir.join(name);
        Member::create_file(&p, bytes, false).unwrap();
        p
    }

    fn rw() -> OpenOptions {
        OpenOptions::default()
    }

    fn direct() -> OpenOptions {
        OpenOptions { direct: true, read_only: false }
    }

    /// A buffer of `len` bytes that is deliberately not 4096-aligned: the bounce path.
    fn unaligned(len: usize) -> (Vec<u8>, usize) {
        let v = vec![0u8; len + BLOCK + 1];
        let skip = ((v.as_ptr() as usize).wrapping_neg() % BLOCK) + 1;
        (v, skip)
    }

    /// Write, read back, and check untouched blocks still read as zeroes.
    fn round_trip(m: &Member) {
        let data = pattern(7, 3 * BLOCK);
        m.write(5, &data).unwrap();
        let mut back = vec![0u8; 3 * BLOCK];
        m.read(5, &mut back).unwrap();
        assert!(back == data);
        let mut zero = vec![1u8; BLOCK];
        m.read(4, &mut zero).unwrap();
        assert!(zero.iter().all(|&b| b == 0));
        m.read(m.blocks() - 1, &mut zero).unwrap();
        assert!(zero.iter().all(|&b| b == 0));
        m.sync().unwrap();
    }

    /// Trim the middle of a written range: it reads as zeroes, its neighbours survive.
    fn trim_reads_zero(m: &Member) {
        let data = pattern(3, 16 * BLOCK);
        m.write(0, &data).unwrap();
        m.sync().unwrap();
        m.trim(4, 8).unwrap();
        let mut back = vec![0u8; 16 * BLOCK];
        m.read(0, &mut back).unwrap();
        assert!(back[..4 * BLOCK] == data[..4 * BLOCK]);
        assert!(back[4 * BLOCK..12 * BLOCK].iter().all(|&b| b == 0), "trimmed blocks must read as zeroes");
        assert!(back[12 * BLOCK..] == data[12 * BLOCK..]);
        m.trim(0, 0).unwrap();
        m.sync().unwrap();
    }

    /// Four threads write disjoint blocks of one shared member at once.
    fn concurrent_disjoint(m: &Member) {
        const PER: u64 = 32;
        std::thread::scope(|s| {
            for t in 0..4u64 {
                s.spawn(move || {
                    for i in 0..PER {
                        // Interleaved so that neighbouring blocks belong to different threads.
                        let block = i * 4 + t;
                        m.write(block, &pattern((t * 100 + i) as u8, BLOCK)).unwrap();
                    }
                });
            }
        });
        let mut back = vec![0u8; BLOCK];
        for t in 0..4u64 {
            for i in 0..PER {
                m.read(i * 4 + t, &mut back).unwrap();
                assert!(back == pattern((t * 100 + i) as u8, BLOCK), "thread {t} block {}", i * 4 + t);
            }
        }
    }

    #[test]
    fn create_open_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", 4 * MIB);
        assert_eq!(fs::metadata(&p).unwrap().len(), 4 * MIB);
        let m = Member::open(&p, rw()).unwrap();
        assert_eq!(m.path(), p);
        assert_eq!(m.kind(), MemberKind::File);
        assert_eq!(m.blocks(), 1024);
        assert!(!m.is_direct());
        assert!(!m.is_read_only());

        // A size that is not a whole number of blocks rounds down.
        let odd = dir.path().join("odd");
        File::create(&odd).unwrap().set_len(10 * BLOCK_U64 + 100).unwrap();
        assert_eq!(Member::open(&odd, rw()).unwrap().blocks(), 10);

        let e = Member::open(&dir.path().join("missing"), rw()).unwrap_err();
        assert!(matches!(e, MemberError::Io { op: Op::Open, .. }), "{e}");
        assert!(!e.is_io_error());
        let e = Member::open(dir.path(), rw()).unwrap_err();
        assert!(matches!(e, MemberError::NotFileOrDevice { .. }), "{e}");
    }

    #[test]
    fn create_refuses_existing_unless_overwrite_and_bad_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        {
            let m = Member::open(&p, rw()).unwrap();
            m.write(0, &pattern(1, BLOCK)).unwrap();
        }
        let e = Member::create_file(&p, 2 * MIB, false).unwrap_err();
        assert!(matches!(e, MemberError::AlreadyExists { .. }), "{e}");
        assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
        assert_eq!(fs::metadata(&p).unwrap().len(), MIB, "refused create must leave the file alone");

        Member::create_file(&p, 2 * MIB, true).unwrap();
        let m = Member::open(&p, rw()).unwrap();
        assert_eq!(m.blocks(), 512);
        let mut b = vec![1u8; BLOCK];
        m.read(0, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 0), "overwrite starts from zeroes");

        // Overwrite never replaces something that is not a regular file.
        let e = Member::create_file(dir.path(), MIB, true).unwrap_err();
        assert!(matches!(e, MemberError::NotFileOrDevice { op: Op::Create, .. }), "{e}");

        for bytes in [0, 100, BLOCK_U64 + 1] {
            let e = Member::create_file(&dir.path().join("bad"), bytes, false).unwrap_err();
            assert!(matches!(e, MemberError::BadSize { .. }), "{bytes}: {e}");
        }
        assert!(!dir.path().join("bad").exists());
    }

    #[test]
    fn write_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        let m = Member::open(&p, rw()).unwrap();
        round_trip(&m);
        // Survives reopening.
        drop(m);
        let m = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
        let mut back = vec![0u8; 3 * BLOCK];
        m.read(5, &mut back).unwrap();
        assert!(back == pattern(7, 3 * BLOCK));
    }

    #[test]
    fn out_of_range_and_misuse_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        let m = Member::open(&p, rw()).unwrap();
        let mut b = vec![0u8; 2 * BLOCK];
        let errors = [
            m.read(256, &mut b[..BLOCK]).unwrap_err(),
            m.read(255, &mut b).unwrap_err(),
            m.write(255, &b).unwrap_err(),
            m.write(u64::MAX, &b).unwrap_err(),
            m.trim(200, 57).unwrap_err(),
            m.trim(u64::MAX, 2).unwrap_err(),
        ];
        for e in &errors {
            assert!(matches!(e, MemberError::OutOfRange { blocks: 256, .. }), "{e}");
            assert!(!e.is_io_error());
            assert_eq!(e.path(), p);
            assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
        }
        assert_eq!(errors[1].op(), Op::Read { block: 255, count: 2 });
        assert!(errors[1].to_string().contains("read of blocks 255..257"), "{}", errors[1]);
        // The last block and an empty transfer at the very end are in range.
        m.write(255, &b[..BLOCK]).unwrap();
        m.read(256, &mut []).unwrap();
        m.trim(256, 0).unwrap();

        let e = m.read(0, &mut b[..100]).unwrap_err();
        assert!(matches!(e, MemberError::BadLength { len: 100, .. }), "{e}");
        assert!(!e.is_io_error());
        let e = m.write(0, &b[..BLOCK + 1]).unwrap_err();
        assert!(matches!(e, MemberError::BadLength { .. }), "{e}");

        let ro = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
        assert!(ro.is_read_only());
        for e in [ro.write(0, &b).unwrap_err(), ro.trim(0, 1).unwrap_err()] {
            assert!(matches!(e, MemberError::ReadOnly { .. }), "{e}");
            assert!(!e.is_io_error());
        }
        ro.read(0, &mut b).unwrap();
    }

    #[test]
    fn bytes_inside_one_block_are_read_and_crossing_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        let m = Member::open(&p, rw()).unwrap();
        let data = pattern(3, 2 * BLOCK);
        m.write(7, &data).unwrap();
        for (offset, len) in [(0, 8), (100, 12), (BLOCK - 12, 12), (0, BLOCK)] {
            let mut got = vec![0u8; len];
            m.read_bytes_cached(8, offset, &mut got).unwrap();
            assert_eq!(got, data[BLOCK + offset..BLOCK + offset + len], "bytes {offset}+{len} of block 8");
        }
        let mut got = [0u8; 12];
        let e = m.read_bytes_cached(7, BLOCK - 6, &mut got).unwrap_err();
        assert!(matches!(e, MemberError::CrossesBlock { offset: 4090, end: 4102, .. }), "{e}");
        assert!(!e.is_io_error());
        assert!(e.to_string().contains("4090..4102"), "{e}");
        let e = m.read_bytes_cached(256, 0, &mut got).unwrap_err();
        assert!(matches!(e, MemberError::OutOfRange { blocks: 256, .. }), "{e}");
    }

    #[test]
    fn short_read_after_truncation_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        let m = Member::open(&p, rw()).unwrap();
        // Someone else shrinks the file behind our back.
        fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(10 * BLOCK_U64 + 10).unwrap();
        let mut b = vec![0u8; 2 * BLOCK];
        m.read(0, &mut b).unwrap();
        for block in [10, 20] {
            let e = m.read(block, &mut b).unwrap_err();
            assert!(matches!(e, MemberError::Truncated { .. }), "{e}");
            assert!(e.is_io_error(), "a shrunken member has failed");
            assert!(e.io_source().is_some());
        }
    }

    #[test]
    fn trim_reads_zero_and_frees_file_space() {
        let dir = tempfile::tempdir().unwrap();
        let p = new_file(dir.path(), "m0", 4 * MIB);
        let m = Member::open(&p, rw()).unwrap();
        m.write(0, &pattern(9, 512 * BLOCK)).unwrap();
        m.sync().unwrap();
        let before = fs::metadata(&p).unwrap().blocks();
        assert!(before * 512 >= 512 * BLOCK_U64, "written blocks take space ({before} sectors)");

        m.trim(64, 256).unwrap();
        m.sync().unwrap();
        let after = fs::metadata(&p).unwrap().blocks();
        assert!(before - after >= 256 * BLOCK_U64 / 512, "punching 1 MiB must free it: {before} -> {after} sectors");
        assert_eq!(fs::metadata(&p).unwrap().len(), 4 * MIB, "trim keeps the size");
        let mut back = vec![1u8; 512 * BLOCK];
        m.read(0, &mut back).unwrap();
        let data = pattern(9, 512 * BLOCK);
        assert!(back[..64 * BLOCK] == data[..64 * BLOCK]);
        assert!(back[64 * BLOCK..320 * BLOCK].iter().all(|&b| b == 0));
        assert!(back[320 * BLOCK..] == data[320 * BLOCK..]);

        trim_reads_zero(&m);
    }

    #[test]
    fn zero_writing_fallback_reads_zero() {
        // The EOPNOTSUPP path can't be provoked on ext4; exercise it directly, buffered and
        // direct, across more than one bounce chunk.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = new_file(dir.path(), "m0", 4 * MIB);
        for opts in [rw(), direct()] {
            let m = match Member::open(&p, opts) {
                Err(e @ MemberError::DirectUnsupported { .. }) => {
                    eprintln!("skipping O_DIRECT part: {e}");
                    continue;
                }
                r => r.unwrap(),
            };
            let n = 600;
            let data = pattern(5, n * BLOCK);
            m.write(0, &data).unwrap();
            m.write_zeroes(m.file.as_ref().unwrap(), 1, n as u64 - 2).unwrap();
            let mut back = vec![1u8; n * BLOCK];
            m.read(0, &mut back).unwrap();
            assert!(back[..BLOCK] == data[..BLOCK]);
            assert!(back[BLOCK..(n - 1) * BLOCK].iter().all(|&b| b == 0));
            assert!(back[(n - 1) * BLOCK..] == data[(n - 1) * BLOCK..]);
        }
    }

    #[test]
    fn direct_io_round_trip_aligned_and_not() {
        // /var/tmp is on a disk filesystem here (ext4); tmpfs may refuse O_DIRECT.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = new_file(dir.path(), "m0", 4 * MIB);
        let m = match Member::open(&p, direct()) {
            Err(e @ MemberError::DirectUnsupported { .. }) => {
                eprintln!("skipping: {e}");
                return;
            }
            r => r.unwrap(),
        };
        assert!(m.is_direct());
        round_trip(&m);
        // A few bytes inside a block, through the buffered descriptor beside O_DIRECT.
        let mut got = [0u8; 12];
        m.read_bytes_cached(6, 30, &mut got).unwrap();
        assert_eq!(got, pattern(7, 3 * BLOCK)[BLOCK + 30..BLOCK + 42]);

        // Unaligned buffers, larger than one bounce chunk, both ways.
        let len = BOUNCE_CHUNK + 2 * BLOCK;
        let data = pattern(11, len);
        let (mut src, skip) = unaligned(len);
        assert!(!is_aligned(&src[skip..skip + len]));
        src[skip..skip + len].copy_from_slice(&data);
        m.write(100, &src[skip..skip + len]).unwrap();
        let (mut dst, skip) = unaligned(len);
        m.read(100, &mut dst[skip..skip + len]).unwrap();
        assert!(dst[skip..skip + len] == data[..]);

        // And read back through the page cache, to be sure the bytes are on the file.
        let buffered = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
        let mut back = vec![0u8; len];
        buffered.read(100, &mut back).unwrap();
        assert!(back == data);

        trim_reads_zero(&m);
    }

    #[test]
    fn concurrent_writes_to_disjoint_blocks() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = new_file(dir.path(), "m0", MIB);
        concurrent_disjoint(&Member::open(&p, rw()).unwrap());
        match Member::open(&p, direct()) {
            Err(e @ MemberError::DirectUnsupported { .. }) => eprintln!("skipping O_DIRECT part: {e}"),
            r => concurrent_disjoint(&r.unwrap()),
        }
    }

    /// A loop device over a file, detached when dropped (also when a test fails).
    struct LoopDevice {
        dev: PathBuf,
    }

    impl LoopDevice {
        fn attach(file: &Path) -> LoopDevice {
            let out = Command::new("losetup")
                .args(["-f", "--show"])
                .arg(file)
                .output()
                .expect("losetup must be available to test block devices (util-linux)");
            assert!(out.status.success(), "losetup -f --show failed: {}", String::from_utf8_lossy(&out.stderr));
            let dev = String::from_utf8(out.stdout).unwrap().trim().to_owned();
            assert!(dev.starts_with("/dev/"), "losetup printed {dev:?}");
            LoopDevice { dev: dev.into() }
        }
    }

    impl Drop for LoopDevice {
        fn drop(&mut self) {
            match Command::new("losetup").arg("-d").arg(&self.dev).status() {
                Ok(s) if s.success() => {}
                r => eprintln!("could not detach {}: {r:?}", self.dev.display()),
            }
        }
    }

    #[test]
    fn block_device_via_loop() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        // Not a whole number of blocks: the device's usable size rounds down too.
        let backing = dir.path().join("backing");
        File::create(&backing).unwrap().set_len(8 * MIB + 512).unwrap();
        let lo = LoopDevice::attach(&backing);

        let m = Member::open(&lo.dev, rw()).unwrap();
        assert_eq!(m.kind(), MemberKind::BlockDevice);
        assert_eq!(m.blocks(), 2048);
        assert_eq!(m.path(), lo.dev);
        round_trip(&m);
        trim_reads_zero(&m);
        concurrent_disjoint(&m);
        let e = m.read(2048, &mut [0u8; BLOCK]).unwrap_err();
        assert!(matches!(e, MemberError::OutOfRange { .. }), "{e}");
        assert!(e.to_string().contains(&*lo.dev.to_string_lossy()), "{e}");

        // Claimed exclusively while open read-write; read-only opens still work.
        let e = Member::open(&lo.dev, rw()).unwrap_err();
        assert!(matches!(e, MemberError::DeviceBusy { .. }), "{e}");
        m.write(2000, &pattern(21, BLOCK)).unwrap();
        let ro = Member::open(&lo.dev, OpenOptions { direct: false, read_only: true }).unwrap();
        let mut back = vec![0u8; BLOCK];
        ro.read(2000, &mut back).unwrap();
        assert!(back == pattern(21, BLOCK));
        drop((m, ro));

        // O_DIRECT on the device, with an unaligned buffer.
        let m = Member::open(&lo.dev, direct()).unwrap();
        assert!(m.is_direct());
        let data = pattern(13, 8 * BLOCK);
        let (mut src, skip) = unaligned(8 * BLOCK);
        src[skip..skip + 8 * BLOCK].copy_from_slice(&data);
        m.write(1000, &src[skip..skip + 8 * BLOCK]).unwrap();
        m.sync().unwrap();
        let (mut dst, skip) = unaligned(8 * BLOCK);
        m.read(1000, &mut dst[skip..skip + 8 * BLOCK]).unwrap();
        assert!(dst[skip..skip + 8 * BLOCK] == data[..]);
        m.trim(1002, 4).unwrap();
        m.read(1000, &mut dst[skip..skip + 8 * BLOCK]).unwrap();
        assert!(dst[skip + 2 * BLOCK..skip + 6 * BLOCK].iter().all(|&b| b == 0));
        assert!(dst[skip + 6 * BLOCK..skip + 8 * BLOCK] == data[6 * BLOCK..]);
        m.sync().unwrap();
        drop(m);

        // The bytes really went through to the backing file.
        let mut raw = vec![0u8; 2 * BLOCK];
        File::open(&backing).unwrap().read_exact_at(&mut raw, 1006 * BLOCK_U64).unwrap();
        assert!(raw == data[6 * BLOCK..]);
    }

    #[test]
    fn an_absent_member_fails_every_operation_and_says_why() {
        let m = Member::absent(3, 100);
        assert!(m.is_absent());
        assert_eq!(m.blocks(), 100);
        m.lock(true).unwrap();
        let mut buf = vec![0u8; BLOCK];
        let errs = [
            m.read(0, &mut buf).unwrap_err(),
            m.write(0, &buf).unwrap_err(),
            m.trim(0, 1).unwrap_err(),
            m.sync().unwrap_err(),
        ];
        for e in errs {
            assert!(matches!(e, MemberError::Lost { .. }), "{e:?}");
            let text = e.to_string();
            assert!(text.contains("missing(member 3)") && text.contains("absent"), "{text}");
        }
        // Range checks come first, as for any member.
        assert!(matches!(m.read(100, &mut buf), Err(MemberError::OutOfRange { .. })));
    }
}
