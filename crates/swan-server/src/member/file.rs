//! A member on a regular file or a block device: the only place member blocks become system
//! calls. The choices, and why:
//!
//! - **Positioned I/O** (`pread`/`pwrite` through [`FileExt`]) on one shared [`File`]: there is no
//!   file offset to race on, so any number of threads may use it at once without a lock.
//! - **`O_DIRECT`** (optional): the array does its own caching and ordering, so going through the
//!   page cache only doubles memory use and hides the device's real latency. The kernel then
//!   wants the buffer address aligned; callers hand us ordinary `Vec<u8>`s, so unaligned buffers
//!   are bounced through an aligned per-thread scratch buffer (safe code: over-allocate and use
//!   the aligned sub-slice). 4096-byte alignment covers every logical block size up to 4 KiB.
//! - **Discard is a hole punch** (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), for files and devices
//!   alike. On a file it gives the space back to the filesystem; on a block device Linux turns it
//!   into a write-zeroes request that must not fall back to writing data
//!   (`blkdev_fallocate`), i.e. a cheap unmap on devices that can. Either way the range reads as
//!   zeroes afterwards. Where the kernel refuses with `EOPNOTSUPP` we write zeroes ourselves,
//!   keeping that guarantee at the cost of speed (and, for files, without freeing space).
//! - **Durability is `fdatasync`**: the members never change size after creation, so the file
//!   metadata `fsync` would also flush (timestamps) buys nothing; `fdatasync` still flushes the
//!   device's volatile write cache.

use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rustix::fs::{FallocateFlags, FlockOperation, OFlags};
use rustix::io::Errno;

use super::behind::Behind;
use super::{Backing, MemberError, MemberKind, Op, OpenOptions, BLOCK};

const BLOCK_U64: u64 = BLOCK as u64;

/// Unaligned `O_DIRECT` transfers are bounced this much at a time, so the per-thread scratch
/// buffer stays small however large the request.
pub(super) const BOUNCE_CHUNK: usize = 1 << 20;

/// An open regular file or block device.
#[derive(Debug)]
pub struct FileBacking {
    file: File,
    /// On an O_DIRECT member, a second, buffered descriptor for small metadata reads
    /// ([`Backing::read_small`]) and the journal's rewritten tail ([`Backing::write_cached`]).
    cached: Option<File>,
    direct: bool,
    /// Whether a read of the page cache with `RWF_NOWAIT` really never waits here
    /// ([`nowait_never_waits`]).
    nowait: bool,
    /// Written bytes whose writeback is not started yet ([`Backing::write_behind`]).
    behind: Mutex<Behind>,
}

/// Whether `RWF_NOWAIT` reads of `file`'s page cache never wait for anything. Not on FUSE or
/// a network file system: there a read that the page cache holds may still ask the server
/// for fresh attributes first (FUSE's GETATTR under `auto_inval_data`) and wait for the
/// answer, so a member that hangs would hold the engine's thread, and every request, with it.
fn nowait_never_waits(file: &File) -> bool {
    /// `f_type` of FUSE (sshfs, GlusterFS and nbdfuse among its users), NFS, SMB (three magics), Ceph, 9p and AFS.
    const ASKS_A_SERVER: [i64; 8] =
        [0x6573_5546, 0x6969, 0x517b, 0xff53_4d42, 0xfe53_4d42, 0x00c3_6400, 0x0102_1997, 0x5346_414f];
    match rustix::fs::fstatfs(file) {
        #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
        Ok(st) => !ASKS_A_SERVER.contains(&(st.f_type as i64)),
        Err(_) => false,
    }
}

/// Create a regular file of `bytes` bytes (a positive multiple of 4096) to serve as a member.
/// See [`super::Member::create_file`].
pub(super) fn create(path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
    let io_err = |error| MemberError::Io { path: path.to_owned(), op: Op::Create, error };
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

/// Open an existing regular file or block device: the backing, what it is, and its size in
/// bytes. See [`super::Member::open`].
pub(super) fn open(
    path: &Path,
    opts: OpenOptions,
) -> Result<(FileBacking, MemberKind, u64, super::FileId), MemberError> {
    let io_err = |error| MemberError::Io { path: path.to_owned(), op: Op::Open, error };
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
    let opened = fs::OpenOptions::new().read(true).write(!opts.read_only).custom_flags(flags.bits() as i32).open(path);
    let file = opened.map_err(|error| match Errno::from_io_error(&error) {
        Some(Errno::INVAL) if opts.direct => MemberError::DirectUnsupported { path: path.to_owned(), error },
        Some(Errno::BUSY) if is_device => MemberError::DeviceBusy { path: path.to_owned(), error },
        _ => io_err(error),
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
    // drops the cached pages it covers, so what this reads is never stale; a direct read
    // writes back the dirty pages it covers first, so what the journal wrote here is seen.)
    let cached = match opts.direct {
        true => Some(fs::OpenOptions::new().read(true).write(!opts.read_only).open(path).map_err(io_err)?),
        false => None,
    };
    let id = super::FileId::from(&meta);
    let nowait = nowait_never_waits(&file);
    Ok((FileBacking { file, cached, direct: opts.direct, nowait, behind: Mutex::default() }, kind, bytes, id))
}

/// Whether the block device at `path` is zoned, as its queue says in sysfs
/// (`queue/zoned`: `host-managed` or `host-aware`; `none` for the rest).
pub(super) fn is_zoned_device(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::metadata(path) else { return false };
    let (major, minor) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
    let zoned = fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/queue/zoned"))
        .or_else(|_| fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/../queue/zoned")));
    zoned.is_ok_and(|z| z.trim() != "none")
}

impl Backing for FileBacking {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if !self.direct || is_aligned(buf) {
            return self.file.read_exact_at(buf, offset);
        }
        let mut at = offset;
        for chunk in buf.chunks_mut(BOUNCE_CHUNK) {
            with_bounce(chunk.len(), |b| -> io::Result<()> {
                self.file.read_exact_at(b, at)?;
                chunk.copy_from_slice(b);
                Ok(())
            })?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// `preadv2(RWF_NOWAIT)`: only what the page cache holds, never waiting for the device;
    /// never tried where even that may wait ([`nowait_never_waits`]).
    fn read_if_cached(&self, offset: u64, buf: &mut [u8]) -> bool {
        if self.direct || !self.nowait {
            return false;
        }
        let len = buf.len();
        let flags = rustix::io::ReadWriteFlags::NOWAIT;
        matches!(
            rustix::io::preadv2(&self.file, &mut [io::IoSliceMut::new(buf)], offset, flags),
            Ok(n) if n == len
        )
    }

    /// Through the buffered descriptor even on an O_DIRECT member, so a 12-byte summary entry
    /// does not cost a device read; without one, the whole block is read and cut.
    fn read_small(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match (&self.cached, self.direct) {
            (Some(buffered), _) => buffered.read_exact_at(buf, offset),
            (None, false) => self.file.read_exact_at(buf, offset),
            (None, true) => {
                let (block, within) = (offset / BLOCK_U64, (offset % BLOCK_U64) as usize);
                let mut whole = vec![0u8; BLOCK];
                self.read_at(block * BLOCK_U64, &mut whole)?;
                buf.copy_from_slice(&whole[within..within + buf.len()]);
                Ok(())
            }
        }
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if !self.direct || is_aligned(buf) {
            return self.file.write_all_at(buf, offset);
        }
        let mut at = offset;
        for chunk in buf.chunks(BOUNCE_CHUNK) {
            with_bounce(chunk.len(), |b| {
                b.copy_from_slice(chunk);
                self.file.write_all_at(b, at)
            })?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// Through the buffered descriptor on an O_DIRECT member: the page cache outlives the
    /// process, and `fdatasync` of the file (either descriptor) writes these pages back.
    fn write_cached(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        match &self.cached {
            Some(buffered) => buffered.write_all_at(buf, offset),
            None => self.write_at(offset, buf),
        }
    }

    fn direct_fd(&self) -> Option<RawFd> {
        self.direct.then(|| self.file.as_raw_fd())
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` of the written range once it is large
    /// ([`Behind`]); advisory, so errors are ignored (a failed writeback shows at the next
    /// sync).
    fn write_behind(&self, offset: u64, len: u64) {
        if self.direct || len == 0 {
            return;
        }
        let due = self.behind.lock().unwrap_or_else(PoisonError::into_inner).add(offset, len);
        for (offset, len) in due.into_iter().flatten() {
            // SAFETY: plain integers and a descriptor that `self.file` keeps open for the
            // call; the kernel touches no memory of ours. (Neither rustix nor nix wraps it.)
            #[allow(unsafe_code)]
            let _ = unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    offset as libc::off64_t,
                    len as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
        }
    }

    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        let punched = loop {
            match rustix::fs::fallocate(&self.file, flags, offset, len) {
                Err(Errno::INTR) => continue,
                r => break r,
            }
        };
        match punched {
            Ok(()) => Ok(()),
            Err(Errno::OPNOTSUPP) => self.write_zeroes(offset, len),
            Err(e) => Err(e.into()),
        }
    }

    fn sync(&self) -> io::Result<()> {
        // std's sync_data is fdatasync on Linux, retried on EINTR.
        self.file.sync_data()
    }

    /// `flock(2)`: held by the open file description, so it ends with the last handle on
    /// this backing, or with the process however it dies.
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        let how =
            if exclusive { FlockOperation::NonBlockingLockExclusive } else { FlockOperation::NonBlockingLockShared };
        rustix::fs::flock(&self.file, how).map_err(io::Error::from)
    }
}

impl FileBacking {
    /// Discard's fallback: write zeroes over the range, a bounded chunk at a time.
    pub(super) fn write_zeroes(&self, offset: u64, len: u64) -> io::Result<()> {
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let n = (end - at).min(BOUNCE_CHUNK as u64) as usize;
            // The bounce buffer is aligned, so this works with and without O_DIRECT.
            with_bounce(n, |b| {
                b.fill(0);
                self.file.write_all_at(b, at)
            })?;
            at += n as u64;
        }
        Ok(())
    }
}

/// Whether `buf` starts on a 4096-byte boundary (its length is checked elsewhere).
pub(super) fn is_aligned(buf: &[u8]) -> bool {
    (buf.as_ptr() as usize) % BLOCK == 0
}

/// Bytes from `at` to the next 4096-byte boundary (0 if on one): where an O_DIRECT transfer
/// may start in a buffer that safe code could not ask the allocator to align.
pub fn gap_to_boundary(at: *const u8) -> usize {
    (at as usize).wrapping_neg() % BLOCK
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
    let skip = gap_to_boundary(v.as_ptr());
    &mut v[skip..skip + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_writing_fallback_reads_zero() {
        // The EOPNOTSUPP path can't be provoked on ext4; exercise it directly, buffered and
        // direct, across more than one bounce chunk.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = dir.path().join("m0");
        create(&p, 4 << 20, false).unwrap();
        for direct in [false, true] {
            let f = match open(&p, OpenOptions { direct, read_only: false }) {
                Err(e @ MemberError::DirectUnsupported { .. }) => {
                    eprintln!("skipping O_DIRECT part: {e}");
                    continue;
                }
                r => r.unwrap().0,
            };
            let n = 600;
            let data: Vec<u8> = (0..n * BLOCK).map(|i| (i / 7) as u8 | 1).collect();
            f.write_at(0, &data).unwrap();
            f.write_zeroes(BLOCK_U64, (n as u64 - 2) * BLOCK_U64).unwrap();
            let mut back = vec![1u8; n * BLOCK];
            f.read_at(0, &mut back).unwrap();
            assert!(back[..BLOCK] == data[..BLOCK]);
            assert!(back[BLOCK..(n - 1) * BLOCK].iter().all(|&b| b == 0));
            assert!(back[(n - 1) * BLOCK..] == data[(n - 1) * BLOCK..]);
        }
    }
}
