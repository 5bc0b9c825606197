//! One member of an array, addressed in 4 KiB blocks, over whatever holds its blocks.
//!
//! Everything above this module thinks in member blocks. A [`Member`] checks every request
//! (range, length, read-only, absent), names the member in every error, and hands the bytes to
//! its [`Backing`], the seam under it:
//!
//! - [`FileBacking`] (`file.rs`): a regular file or a block device, the only place member
//!   blocks become system calls; what `swan serve` runs on.
//! - [`MemoryBacking`] (`memory.rs`): an image in memory, so crash and fault tests build,
//!   cut and reopen arrays without a file system.
//! - [`ZonedFile`] (`zoned.rs`): the zoned contract emulated over either, its zone table in
//!   the bytes under it.
//! - a recording backing that wraps either, logging every write, trim and sync in order and
//!   failing chosen ones (crash replay's recorder), put under the zoned emulation by
//!   [`MemberSource::open_under`].
//!
//! Two rules hold for every backing, and the layers above rely on them: a discarded range
//! reads as zeroes (a trimmed block must never resurrect old data), and a read that would
//! run past the end is an error, never a silent run of zeroes.
//!
//! Errors separate the member failing ([`MemberError::is_io_error`]) from the caller misusing
//! it, because the array marks a member failed on the former and must not on the latter.

mod behind;
mod deadline;
mod error;
mod file;
mod memory;
mod zoned;

pub use deadline::{Deadline, Hung};
pub use error::{MemberError, Op};
pub use file::{gap_to_boundary, FileBacking};
pub use memory::{MemoryBacking, MemoryMembers};
pub use zoned::{ZonedFile, ZonedLayout};

pub use swan_models::zns::zones::{Zone, ZoneError};

use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The member block size: the unit of every offset and length in this module.
pub const BLOCK: usize = 4096;
const BLOCK_U64: u64 = BLOCK as u64;

/// What a member is backed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberKind {
    File,
    BlockDevice,
    Memory,
}

/// Which file a member is, whatever name it was given: its device and inode. Two names of
/// one file (`./f0` and `f0`, a symlink, a hard link) have one identity, and a control
/// request names the member it means by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The identity of the file `path` names (symlinks followed).
    pub fn of(path: &Path) -> io::Result<FileId> {
        Ok(FileId::from(&std::fs::metadata(path)?))
    }
}

impl From<&std::fs::Metadata> for FileId {
    fn from(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId { dev: m.dev(), ino: m.ino() }
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.dev, self.ino)
    }
}

/// Text that is not a [`FileId`] (`DEV:INO`, two decimal numbers).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not DEV:INO")]
pub struct BadFileId(pub String);

impl std::str::FromStr for FileId {
    type Err = BadFileId;

    /// `DEV:INO`, as [`FileId`] displays.
    fn from_str(s: &str) -> Result<FileId, BadFileId> {
        let bad = || BadFileId(s.to_string());
        let (dev, ino) = s.split_once(':').ok_or_else(bad)?;
        let n = |w: &str| w.parse::<u64>().map_err(|_| bad());
        Ok(FileId { dev: n(dev)?, ino: n(ino)? })
    }
}

/// How to open a member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open with `O_DIRECT`, bypassing the page cache.
    pub direct: bool,
    /// Open read-only; writes and trims fail with [`MemberError::ReadOnly`].
    pub read_only: bool,
}

/// What holds a member's bytes. Offsets and lengths are in bytes and already checked by
/// [`Member`] (inside the member; whole blocks except for [`Backing::read_small`]), so an
/// implementation only moves bytes. Shared by every thread doing the array's I/O: `&self`.
pub trait Backing: Send + Sync + fmt::Debug {
    /// Fill `buf` from `offset`; a read past the end is `UnexpectedEof`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Fill `buf` only if that needs no waiting for a device: true if it did. The engine
    /// answers such reads itself and leaves the rest to its I/O threads.
    fn read_if_cached(&self, _offset: u64, _buf: &mut [u8]) -> bool {
        false
    }
    /// A few bytes of metadata inside one block, read on every user read (one segment-summary
    /// entry): a backing may take a cheaper path than a whole-block read.
    fn read_small(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// A block rewritten often and made durable only by [`Backing::sync`] (the journal's
    /// tail record, rewritten after every batch): a backing may take a cheaper path than a
    /// device write, as long as a process that dies after it returns loses nothing.
    fn write_cached(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.write_at(offset, buf)
    }
    /// Write `buf`, which is what `offset` holds already (a probe for room on a full file
    /// system): a zoned device takes it anywhere, since nothing changes.
    fn write_back(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.write_at(offset, buf)
    }
    /// Start writing back a range without waiting: a hint, never a durability step.
    fn write_behind(&self, _offset: u64, _len: u64) {}
    /// Forget a range: afterwards it reads as zeroes.
    fn discard(&self, offset: u64, len: u64) -> io::Result<()>;
    /// Make every completed write and discard durable.
    fn sync(&self) -> io::Result<()>;
    /// Claim the backing for this process (`WouldBlock`: someone else holds it).
    fn lock(&self, exclusive: bool) -> io::Result<()>;
    /// A note from the layers above (e.g. "a GC copy is done"), for a backing that records
    /// the I/O, kept in order with it.
    fn mark(&self, _what: &'static str) {}
    /// Whether this backing records the I/O (the engine then leaves the notes it wants).
    fn is_recorded(&self) -> bool {
        false
    }
    /// The descriptor of an O_DIRECT file, for reads submitted in batches
    /// ([`crate::uring`]); None where reads must go through [`Backing::read_at`].
    fn direct_fd(&self) -> Option<RawFd> {
        None
    }
    /// How long an operation has gone unanswered past the member timeout, while one is still
    /// out ([`Deadline`]); None for a backing with no time limit.
    fn overrun(&self) -> Option<std::time::Duration> {
        None
    }
    /// How long a write or trim may wait for its file system to have room again before
    /// [`MemberError::Full`] (the member timeout; none without one).
    fn space_wait(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Each sequential zone as a zone report shows it (zoned devices only).
    fn report_zones(&self) -> io::Result<Vec<Zone>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "not a zoned device"))
    }
    /// Finish Zone (zoned devices only): the zone becomes full where its pointer is.
    fn finish_zone(&self, _zone: u32) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "not a zoned device"))
    }
}

/// A layer put over a member's bytes: a recorder, a time limit.
pub type Layer<'a> = Box<dyn FnOnce(Arc<dyn Backing>) -> Arc<dyn Backing> + 'a>;

/// ENOSPC, or EDQUOT (a quota is a full file system to this member).
fn is_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Where an array's members come from, by name: the file system ([`Files`]) for `swan`
/// itself; memory, or a recording layer over either, for tests that must cut the power at
/// any point. The array asks it to create members, to open them at start, and to open a
/// replacement (`swan replace`).
pub trait MemberSource: Send + Sync + fmt::Debug {
    fn exists(&self, path: &Path) -> bool;
    /// Create a blank member of `bytes` bytes (see [`Member::create_file`]).
    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError>;
    /// Create an empty emulated zoned device of `layout` (see [`Member::create_zoned`]).
    fn create_zoned(&self, path: &Path, _layout: &ZonedLayout, _overwrite: bool) -> Result<(), MemberError> {
        Err(MemberError::BadZonedDevice {
            path: path.to_owned(),
            why: "this member source makes no zoned devices".into(),
        })
    }
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError>;
    /// Open `path` with `layer` directly over its bytes, under an emulated zoned device's
    /// zone table, which lives in those bytes: what the layer does to them (records them,
    /// loses them in a power cut) it then does to the table too. By default the layer goes
    /// over the member, as [`Member::layered`] puts it.
    fn open_under(&self, path: &Path, opts: OpenOptions, layer: Layer<'_>) -> Result<Member, MemberError> {
        Ok(self.open(path, opts)?.layered(layer))
    }
    /// Undo a [`MemberSource::create`] of an array that failed to come together.
    fn remove(&self, path: &Path);
}

/// Members are files and block devices named by their paths.
#[derive(Clone, Copy, Debug, Default)]
pub struct Files;

impl MemberSource for Files {
    /// A symlink counts as there even when it points to nothing: it is the operator's, and
    /// no member file is created through it (nor removed when a create fails).
    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }

    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        Member::create_file(path, bytes, overwrite)
    }

    fn create_zoned(&self, path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
        Member::create_zoned(path, layout, overwrite)
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        Member::open(path, opts)
    }

    fn remove(&self, path: &Path) {
        let _ = std::fs::remove_file(path);
    }
}

/// Members from another source with a time limit on every operation ([`Deadline`]):
/// what `swan serve --member-timeout` opens, the replacements `swan replace` names included.
#[derive(Debug)]
pub struct Timed {
    pub inner: Arc<dyn MemberSource>,
    pub timeout: std::time::Duration,
}

impl MemberSource for Timed {
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        self.inner.create(path, bytes, overwrite)
    }

    fn create_zoned(&self, path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
        self.inner.create_zoned(path, layout, overwrite)
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        let timeout = self.timeout;
        Ok(self.inner.open(path, opts)?.layered(|b| Arc::new(Deadline::new(b, timeout))))
    }

    fn open_under(&self, path: &Path, opts: OpenOptions, layer: Layer<'_>) -> Result<Member, MemberError> {
        let timeout = self.timeout;
        Ok(self.inner.open_under(path, opts, layer)?.layered(|b| Arc::new(Deadline::new(b, timeout))))
    }

    fn remove(&self, path: &Path) {
        self.inner.remove(path);
    }
}

/// One open member. Clones share the backing (and its lock).
#[derive(Clone, Debug)]
pub struct Member {
    path: PathBuf,
    /// `None` for an absent member (given as `missing`): every operation on it fails.
    backing: Option<Arc<dyn Backing>>,
    kind: MemberKind,
    blocks: u64,
    direct: bool,
    read_only: bool,
    /// The file opened (None in memory and for an absent member).
    id: Option<FileId>,
    /// Its canonical path, resolved when it was opened: asking the file system again later
    /// (for `swan status`, on the engine's thread) would wait on a member that hangs, and
    /// every request would wait with it.
    canonical: Option<PathBuf>,
    /// The zoned device it is, if it is one (asked on every write the engine gathers).
    zoned: Option<ZonedLayout>,
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
        file::create(path, bytes, overwrite)
    }

    /// Create a regular file that emulates an empty zoned device of `layout` (`zoned.rs`),
    /// as [`Member::create_file`] creates a plain one.
    pub fn create_zoned(path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
        zoned::create(path, layout, overwrite)
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
    ///
    /// A regular file made by [`Member::create_zoned`] opens as the zoned device it emulates
    /// (`zoned.rs`), its size the device's blocks. A zoned block device is refused: the
    /// kernel's zone interface is not driven yet.
    pub fn open(path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        let (backing, kind, bytes, id) = file::open(path, opts)?;
        if kind == MemberKind::BlockDevice && file::is_zoned_device(path) {
            return Err(MemberError::BadZonedDevice {
                path: path.to_owned(),
                why: "a zoned block device: swan serves zoned members emulated in files (`swan create --zone-size`), \
                      not yet through the kernel's zone interface"
                    .into(),
            });
        }
        let zoned = match kind {
            MemberKind::File => zoned::probe(&backing, bytes, path)?,
            _ => None,
        };
        let backing: Arc<dyn Backing> = Arc::new(backing);
        let (backing, bytes): (Arc<dyn Backing>, u64) = match zoned {
            Some(layout) => (Arc::new(ZonedFile::open(backing, layout, path)?), layout.member_blocks() * BLOCK_U64),
            None => (backing, bytes),
        };
        Ok(Member {
            path: path.to_owned(),
            backing: Some(backing),
            kind,
            blocks: bytes / BLOCK_U64,
            direct: opts.direct,
            read_only: opts.read_only,
            id: Some(id),
            canonical: std::fs::canonicalize(path).ok(),
            zoned,
        })
    }

    /// A member named `path` over an in-memory image that is not an emulated zoned device's
    /// (one made by [`MemoryMembers::create`], or by hand).
    pub fn in_memory(path: &Path, image: Arc<MemoryBacking>, read_only: bool) -> Member {
        Self::in_memory_under(path, image, read_only, Box::new(|bytes| bytes))
            .expect("only an image that says it is a zoned device can fail to open")
    }

    /// A member named `path` over an in-memory image with `layer` over its bytes: the zoned
    /// device the image emulates if [`MemoryMembers::create_zoned`] made it one (its zone
    /// table then under `layer` too), else a plain member.
    pub fn in_memory_under(
        path: &Path,
        image: Arc<MemoryBacking>,
        read_only: bool,
        layer: Layer<'_>,
    ) -> Result<Member, MemberError> {
        let bytes = image.blocks() * BLOCK_U64;
        let bytes_of: Arc<dyn Backing> = layer(image);
        let zoned = zoned::probe(&*bytes_of, bytes, path)?;
        let (backing, blocks): (Arc<dyn Backing>, u64) = match zoned {
            Some(layout) => (Arc::new(ZonedFile::open(bytes_of, layout, path)?), layout.member_blocks()),
            None => (bytes_of, bytes / BLOCK_U64),
        };
        Ok(Member {
            path: path.to_owned(),
            backing: Some(backing),
            kind: MemberKind::Memory,
            blocks,
            direct: false,
            read_only,
            id: None,
            canonical: None,
            zoned,
        })
    }

    /// The same member with its backing wrapped by `layer` (e.g. a recorder), which sees every
    /// operation this handle performs from now on.
    pub fn layered(self, layer: impl FnOnce(Arc<dyn Backing>) -> Arc<dyn Backing>) -> Member {
        Member { backing: self.backing.map(layer), ..self }
    }

    /// Claim the member for this process: exclusively to change it, shared to only read it.
    /// Two servers over one array would each believe its map is the truth and overwrite the
    /// other's data; the claim (`flock(2)` on a file) stops the second one at the door, and
    /// ends with this `Member` and its clones (or with the process, however it dies).
    pub fn lock(&self, exclusive: bool) -> Result<(), MemberError> {
        let Some(backing) = &self.backing else { return Ok(()) };
        match backing.lock(exclusive) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(MemberError::InUse { path: self.path.clone() }),
            Err(e) => Err(MemberError::Io { path: self.path.clone(), op: Op::Open, error: e }),
        }
    }

    /// A stand-in for a member that is not there (a dead device, given as `missing` in the
    /// member list): it has the array's member size, and every read, write, trim and sync
    /// on it fails with [`MemberError::Lost`]. The array serves around it from parity.
    pub fn absent(index: u32, blocks: u64) -> Member {
        Member {
            path: PathBuf::from(format!("missing(member {index})")),
            backing: None,
            kind: MemberKind::File,
            blocks,
            direct: false,
            read_only: false,
            id: None,
            canonical: None,
            zoned: None,
        }
    }

    /// Whether this is the stand-in for an absent member.
    pub fn is_absent(&self) -> bool {
        self.backing.is_none()
    }

    /// The backing, or the error an absent member gives for `op`.
    fn backing_for(&self, op: Op) -> Result<&dyn Backing, MemberError> {
        self.backing.as_deref().ok_or_else(|| MemberError::Lost {
            path: self.path.clone(),
            op,
            why: "the member is absent (given as `missing`)".into(),
        })
    }

    /// How long an operation of this member has gone unanswered past the member timeout,
    /// while one is still out (its system call may yet complete and write).
    pub fn stuck_for(&self) -> Option<std::time::Duration> {
        self.backing.as_ref().and_then(|b| b.overrun())
    }

    /// Whether the I/O is being recorded (crash replay, fault injection).
    pub fn is_recorded(&self) -> bool {
        self.backing.as_ref().is_some_and(|b| b.is_recorded())
    }

    /// Pass a note to a recording backing, if this is one (in order with this member's I/O).
    pub fn mark(&self, what: &'static str) {
        if let Some(b) = &self.backing {
            b.mark(what);
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The device and inode of the file opened (as it was when opened), if it is a file or
    /// block device.
    pub fn identity(&self) -> Option<FileId> {
        self.id
    }

    /// The canonical path of the file opened, as it was when opened.
    pub fn canonical(&self) -> Option<&Path> {
        self.canonical.as_deref()
    }

    pub fn kind(&self) -> MemberKind {
        self.kind
    }

    /// Whether a log array's TRIM of its free segments is worth carrying out here. On an SSD
    /// (a block device) it lets the drive erase them without copying; on a regular file it
    /// only punches holes that the log's next lap fills again, allocating the blocks anew at
    /// a cost the file system charges every write (docs/server-speed.md, "File members").
    /// On a zoned member the TRIM of a free segment is its zones' reset, without which they
    /// could not be written again.
    pub fn trims_free_space(&self) -> bool {
        self.kind != MemberKind::File || self.zoned().is_some()
    }

    /// The zoned device this member is, if it is one.
    pub fn zoned(&self) -> Option<ZonedLayout> {
        self.zoned
    }

    /// Each sequential zone of a zoned member, as a zone report shows it.
    pub fn report_zones(&self) -> Result<Vec<Zone>, MemberError> {
        let op = Op::Read { block: 0, count: 0 };
        self.backing_for(op)?.report_zones().map_err(|e| self.io_err(op, e))
    }

    /// Finish Zone on a zoned member: `zone` becomes full where its write pointer is.
    pub fn finish_zone(&self, zone: u32) -> Result<(), MemberError> {
        let layout = self.zoned();
        let block = layout.map_or(0, |l| l.zone_start(zone));
        let count = layout.map_or(0, |l| l.zones.zone_blocks);
        let op = Op::Write { block, count };
        if self.read_only {
            return Err(MemberError::ReadOnly { path: self.path.clone(), op });
        }
        self.backing_for(op)?.finish_zone(zone).map_err(|e| self.io_err(op, e))
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

    /// Where `count` blocks at `block` lie on an O_DIRECT file: its descriptor and the byte
    /// offset, for a reader that submits the read itself ([`crate::uring`]). None where
    /// [`Member::read`] must do it (another backing, an absent member, a range past the end).
    pub fn direct_extent(&self, block: u64, count: u32) -> Option<(RawFd, u64)> {
        let fd = self.backing.as_ref()?.direct_fd()?;
        self.check_range(Op::Read { block, count: count.into() }, block, count.into()).ok()?;
        Some((fd, block * BLOCK_U64))
    }

    /// Read `buf.len() / 4096` blocks starting at `block` into `buf`.
    ///
    /// A member that has shrunk under us (a file truncated behind our back) is an error
    /// ([`MemberError::Truncated`]), never a silent run of zeroes.
    pub fn read(&self, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        let count = self.buf_blocks(buf.len(), |count| Op::Read { block, count })?;
        let op = Op::Read { block, count };
        self.check_range(op, block, count)?;
        let read = self.backing_for(op)?.read_at(block * BLOCK_U64, buf);
        self.read_result(op, read)
    }

    /// Read `buf.len() / 4096` blocks at `block` only if that needs no waiting for a device
    /// (on a file, the page cache holds them all): true if `buf` is filled. False for
    /// anything the caller should leave to a thread that may block (an O_DIRECT, absent or
    /// recorded member, an error, a short read).
    pub fn read_if_cached(&self, block: u64, buf: &mut [u8]) -> bool {
        let Some(backing) = self.backing.as_ref() else { return false };
        if buf.is_empty() {
            return false;
        }
        let Ok(count) = self.buf_blocks(buf.len(), |count| Op::Read { block, count }) else { return false };
        if self.check_range(Op::Read { block, count }, block, count).is_err() {
            return false;
        }
        backing.read_if_cached(block * BLOCK_U64, buf)
    }

    /// Read `buf.len()` bytes at byte `offset` of block `block`, all inside that block, the
    /// cheapest way the backing has (on an O_DIRECT file, through the page cache): for a few
    /// bytes of metadata read on every user read (one segment-summary entry, 12 bytes),
    /// where a whole block would copy 4 KiB to use 12.
    pub fn read_bytes_cached(&self, block: u64, offset: usize, buf: &mut [u8]) -> Result<(), MemberError> {
        let op = Op::Read { block, count: 1 };
        if offset + buf.len() > BLOCK {
            return Err(MemberError::CrossesBlock { path: self.path.clone(), op, offset, end: offset + buf.len() });
        }
        self.check_range(op, block, 1)?;
        let read = self.backing_for(op)?.read_small(block * BLOCK_U64 + offset as u64, buf);
        self.read_result(op, read)
    }

    /// A read's outcome as a member error: a short read is a truncated member.
    fn read_result(&self, op: Op, read: io::Result<()>) -> Result<(), MemberError> {
        read.map_err(|error| {
            if error.kind() == io::ErrorKind::UnexpectedEof {
                MemberError::Truncated { path: self.path.clone(), op, error }
            } else {
                self.io_err(op, error)
            }
        })
    }

    /// Write `buf` (a multiple of 4096 bytes) to the blocks starting at `block`. Not durable
    /// until [`Member::sync`].
    pub fn write(&self, block: u64, buf: &[u8]) -> Result<(), MemberError> {
        self.write_by(block, buf, |backing, offset| backing.write_at(offset, buf))
    }

    /// [`Member::write`] of blocks rewritten often and synced at sync points: on an O_DIRECT
    /// file through the page cache ([`Backing::write_cached`]), so the engine does not wait
    /// for the device each time.
    pub fn write_cached(&self, block: u64, buf: &[u8]) -> Result<(), MemberError> {
        self.write_by(block, buf, |backing, offset| backing.write_cached(offset, buf))
    }

    fn write_by(
        &self,
        block: u64,
        buf: &[u8],
        write: impl Fn(&dyn Backing, u64) -> io::Result<()>,
    ) -> Result<(), MemberError> {
        let count = self.buf_blocks(buf.len(), |count| Op::Write { block, count })?;
        let op = Op::Write { block, count };
        self.check_range(op, block, count)?;
        self.check_writable(op)?;
        let backing = self.backing_for(op)?;
        self.waiting_for_space(op, backing, || write(backing, block * BLOCK_U64))
    }

    /// Start writing back `count` blocks at `block` without waiting (on a file,
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` once a megabyte has gathered): write-behind for a log, whose pages are
    /// not written again soon, so that the next sync point finds them clean or on their
    /// way rather than writing everything back while the engine waits. Not a durability
    /// step (that stays the sync point's); advisory.
    pub fn write_behind(&self, block: u64, count: u64) {
        if let Some(b) = &self.backing {
            b.write_behind(block * BLOCK_U64, count * BLOCK_U64);
        }
    }

    /// Discard `count` blocks starting at `block`; afterwards they read as zeroes.
    ///
    /// On a file or device a hole punch (`fallocate(PUNCH_HOLE | KEEP_SIZE)`): a file gives the
    /// space back to its filesystem, a block device gets a write-zeroes request that may not
    /// fall back to writing (Linux `blkdev_fallocate`). Where the kernel refuses, the zeroes
    /// are written instead, so the read-as-zeroes guarantee holds everywhere. Not durable
    /// until [`Member::sync`].
    pub fn trim(&self, block: u64, count: u64) -> Result<(), MemberError> {
        let op = Op::Trim { block, count };
        self.check_range(op, block, count)?;
        self.check_writable(op)?;
        if count == 0 {
            return Ok(());
        }
        let backing = self.backing_for(op)?;
        self.waiting_for_space(op, backing, || backing.discard(block * BLOCK_U64, count * BLOCK_U64))
    }

    /// Carry out a write or trim; while its file system is full, try again until the
    /// backing's [`Backing::space_wait`] runs out (a fill that clears by then costs a pause,
    /// not an error), then give [`MemberError::Full`].
    fn waiting_for_space(
        &self,
        op: Op,
        backing: &dyn Backing,
        mut attempt: impl FnMut() -> io::Result<()>,
    ) -> Result<(), MemberError> {
        let wait = backing.space_wait();
        let start = std::time::Instant::now();
        let mut nap = std::time::Duration::from_millis(20);
        let mut said = false;
        loop {
            match attempt() {
                Err(e) if is_full(&e) && start.elapsed() + nap <= wait => {
                    if !std::mem::replace(&mut said, true) {
                        eprintln!(
                            "swan: member {}: {op}: its file system is full; waiting up to {:.1} s for space",
                            self.path.display(),
                            wait.as_secs_f64()
                        );
                    }
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(std::time::Duration::from_secs(1));
                }
                Err(e) if is_full(&e) => return Err(MemberError::Full { path: self.path.clone(), op, error: e }),
                r => return r.map_err(|e| self.io_err(op, e)),
            }
        }
    }

    /// Whether the file system holding `count` blocks at `block` has room for them again:
    /// the blocks are read and written back as they are, once, without waiting for space.
    /// Ok(false) while it is still full. Writing back what is there changes no byte, so the
    /// probe is safe on any block; on one that a write found full (a hole of a sparse file)
    /// it needs the room that write needed.
    pub fn probe_room(&self, block: u64, count: u64) -> Result<bool, MemberError> {
        let op = Op::Write { block, count };
        self.check_range(op, block, count)?;
        self.check_writable(op)?;
        let backing = self.backing_for(op)?;
        let mut buf = vec![0u8; count as usize * BLOCK];
        self.read_result(op, backing.read_at(block * BLOCK_U64, &mut buf))?;
        match backing.write_back(block * BLOCK_U64, &buf) {
            Ok(()) => Ok(true),
            Err(e) if is_full(&e) => Ok(false),
            Err(e) => Err(self.io_err(op, e)),
        }
    }

    /// Make every completed write and trim durable (on a file, `fdatasync`, which also
    /// flushes the device's volatile cache).
    pub fn sync(&self) -> Result<(), MemberError> {
        self.backing_for(Op::Sync)?.sync().map_err(|e| self.io_err(Op::Sync, e))
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

    fn io_err(&self, op: Op, error: io::Error) -> MemberError {
        if let Some(&hung) = error.get_ref().and_then(|e| e.downcast_ref::<Hung>()) {
            return MemberError::Hung { path: self.path.clone(), op, hung };
        }
        if let Some(zone) = error.get_ref().and_then(|e| e.downcast_ref::<ZoneError>()) {
            return MemberError::Zoned { path: self.path.clone(), op, error: zone.clone() };
        }
        MemberError::Io { path: self.path.clone(), op, error }
    }
}

#[cfg(test)]
mod tests;
