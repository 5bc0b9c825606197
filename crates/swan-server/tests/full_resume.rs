//! A member's file system fills and then has room again, under the real engine on the
//! caller's thread ([`Stepper`]) over member files. The fill is a layer under every member
//! that answers writes with ENOSPC while it is switched on, in two ways: as ext4 or tmpfs
//! with no free block (a write to a hole of the sparse member fails, a rewrite of a block
//! it holds succeeds: the journal's tail record can still be rewritten), and as a
//! copy-on-write file system (every write fails: the journal and checkpoints too).
//!
//! While it is full: the write that meets it fails with ENOSPC, durability stops (FLUSH
//! fails), later writes are refused with ENOSPC, reads go on, `status` says so. Once there
//! is room, with no restart: the engine recovers in-process, every write acknowledged before
//! the fill reads back (flushed or not), the failed write's blocks read back old or new and
//! never anything else, new writes and FLUSH succeed, `swan check` is clean after the stop,
//! and a restart finds the same data.

mod common;

use common::{call_within, pattern, small_array, write_all};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;
use swan_nbd::Errno;
use swan_server::array;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::{Backing, Files, Member, MemberError, MemberSource, OpenOptions, BLOCK};
use swan_server::service::{BlockOp, Reply};

/// How a full file system answers writes.
const ROOM: u8 = 0;
/// Every write and trim fails, as on a copy-on-write file system with no free block: the
/// journal and checkpoints cannot be rewritten either.
const FULL_COW: u8 = 1;
/// A write fails if it needs a block the file does not hold yet (a hole of the sparse
/// member), as on ext4 or tmpfs: blocks written before, the journal's tail record among
/// them, can be written again.
const FULL_IN_PLACE: u8 = 2;

/// A member whose file system is full while `state` says so.
#[derive(Debug)]
struct Filling {
    inner: Arc<dyn Backing>,
    state: Arc<AtomicU8>,
    /// The member file, to ask where its holes are.
    file: std::fs::File,
}

fn enospc() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOSPC)
}

impl Filling {
    /// Whether a write of `len` bytes at `offset` finds no room.
    fn refused(&self, offset: u64, len: u64) -> bool {
        match self.state.load(Ordering::SeqCst) {
            FULL_COW => true,
            FULL_IN_PLACE => (offset..offset + len).step_by(BLOCK).any(|at| self.is_hole(at)),
            _ => false,
        }
    }

    /// Whether the block at byte `at` is a hole (the next data starts after it, or none does).
    fn is_hole(&self, at: u64) -> bool {
        rustix::fs::seek(&self.file, rustix::fs::SeekFrom::Data(at)) != Ok(at)
    }
}

impl Backing for Filling {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if self.refused(offset, buf.len() as u64) {
            return Err(enospc());
        }
        self.inner.write_at(offset, buf)
    }
    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        if self.state.load(Ordering::SeqCst) != ROOM {
            return Err(enospc());
        }
        self.inner.discard(offset, len)
    }
    fn sync(&self) -> io::Result<()> {
        self.inner.sync()
    }
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }
}

/// Member files, each under a [`Filling`] layer sharing one state.
#[derive(Debug)]
struct FillingFiles(Arc<AtomicU8>);

impl MemberSource for FillingFiles {
    fn exists(&self, path: &Path) -> bool {
        Files.exists(path)
    }
    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        Files.create(path, bytes, overwrite)
    }
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        let state = self.0.clone();
        let file = std::fs::File::open(path).expect("the member file");
        Ok(Files.open(path, opts)?.layered(|inner| Arc::new(Filling { inner, state, file })))
    }
    fn remove(&self, path: &Path) {
        Files.remove(path)
    }
}

fn start_filling(paths: &[PathBuf], full: &Arc<AtomicU8>) -> Stepper {
    let opened = array::open_from(Arc::new(FillingFiles(full.clone())), paths, false, false).unwrap();
    let recovered = array::recover(&opened).unwrap();
    let opts = EngineOptions {
        name: "full".into(),
        read_only: false,
        emulate: None,
        verbose: true,
        punch_holes: true,
        reads: Default::default(),
    };
    Stepper::start(opened, recovered, opts).unwrap()
}

fn call(st: &mut Stepper, op: BlockOp, lba: u64, blocks: u32) -> Reply {
    call_within(st, op, lba, blocks, 100_000)
}

fn blocks_of(lba: u64, n: u64, round: u64) -> Vec<u8> {
    (lba..lba + n).flat_map(|b| pattern(b, round)).collect()
}

/// Which round's pattern block `lba` holds (`rounds`), or None for anything else.
fn round_of(got: &[u8], lba: u64, rounds: &[u64]) -> Option<u64> {
    rounds.iter().copied().find(|&r| got == pattern(lba, r).as_slice())
}

/// Where the write that meets the full file system goes.
const FAILED: u64 = 1000;

fn resumes_after_a_full_file_system(scheme: &str, rgroups: u32, ssds: u32, mode: u8) {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = small_array(dir.path(), scheme, rgroups, ssds);
    let full = Arc::new(AtomicU8::new(ROOM));
    let mut st = start_filling(&paths, &full);
    // Flushed: 0..400. Acknowledged, not flushed: 400..440, one request per batch.
    write_all(&mut st, 400, 1, 8);
    for lba in 400..440 {
        call(&mut st, BlockOp::Write(pattern(lba, 1).into()), lba, 1).unwrap();
    }
    let status = st.status();
    assert_eq!(status.durability, "on", "{status:?}");

    // The write that meets it goes where nothing was written yet (in-place RAID overwrites
    // blocks where they are, and a file system with room for them would take it).
    full.store(mode, Ordering::SeqCst);
    let failed = call(&mut st, BlockOp::Write(blocks_of(FAILED, 64, 2).into()), FAILED, 64);
    assert_eq!(failed.map(|_| ()), Err(Errno::NoSpc), "a write into a full file system");
    assert_eq!(call(&mut st, BlockOp::Flush, 0, 0), Err(Errno::Io), "a FLUSH succeeded with durability stopped");
    let status = st.status();
    assert!(status.stopped_by_full, "{status:?}");
    assert!(status.durability.contains("full file system"), "{}", status.durability);
    // Refused, not acknowledged: the resume would drop it.
    assert_eq!(call(&mut st, BlockOp::Write(pattern(500, 2).into()), 500, 1), Err(Errno::NoSpc));
    // Reads go on.
    for lba in 0..440 {
        assert!(call(&mut st, BlockOp::Read, lba, 1).unwrap() == pattern(lba, 1), "block {lba} while full");
    }
    // Probes find it still full: no resume.
    for _ in 0..5 {
        st.clock().advance(Duration::from_millis(1100));
        st.round();
    }
    assert!(st.status().stopped_by_full, "resumed while still full");
    assert_eq!(st.status().resumes, 0);

    // Room again: the next probe finds it and the engine recovers in-process.
    full.store(ROOM, Ordering::SeqCst);
    st.clock().advance(Duration::from_millis(1100));
    st.round();
    let status = st.status();
    assert_eq!(status.durability, "on", "not resumed: {status:?}");
    assert!(!status.stopped_by_full);
    assert_eq!(status.resumes, 1);
    for lba in 0..440 {
        assert!(call(&mut st, BlockOp::Read, lba, 1).unwrap() == pattern(lba, 1), "block {lba} after the resume");
    }
    let mut failed_range = Vec::new();
    for lba in FAILED..FAILED + 64 {
        let got = call(&mut st, BlockOp::Read, lba, 1).unwrap();
        let old = got.iter().all(|&b| b == 0);
        assert!(old || round_of(&got, lba, &[2]).is_some(), "block {lba} of the failed write is neither old nor new");
        failed_range.push(got);
    }
    // Writes and FLUSH work again.
    write_all(&mut st, 64, 3, 8);
    for lba in 440..460 {
        call(&mut st, BlockOp::Write(pattern(lba, 3).into()), lba, 1).unwrap();
    }
    call(&mut st, BlockOp::Flush, 0, 0).unwrap();
    let want = |lba: u64| pattern(lba, if (64..440).contains(&lba) { 1 } else { 3 });
    for lba in 0..460 {
        assert!(call(&mut st, BlockOp::Read, lba, 1).unwrap() == want(lba), "block {lba} written after the resume");
    }
    st.shutdown().unwrap();
    let rep = swan_server::check::check(&paths).unwrap();
    assert_eq!(rep.problems, 0, "{}", rep.text);
    // A restart finds the same.
    let mut st = common::start(&paths, "again");
    for lba in 0..460 {
        assert!(call(&mut st, BlockOp::Read, lba, 1).unwrap() == want(lba), "block {lba} after a restart");
    }
    for (i, lba) in (FAILED..FAILED + 64).enumerate() {
        let got = call(&mut st, BlockOp::Read, lba, 1).unwrap();
        assert!(got == failed_range[i], "block {lba} of the failed write changed at the restart");
    }
    st.shutdown().unwrap();
}

#[test]
fn swan5_resumes_after_a_full_file_system() {
    resumes_after_a_full_file_system("swan5", 2, 3, FULL_IN_PLACE);
    resumes_after_a_full_file_system("swan5", 2, 3, FULL_COW);
}

#[test]
fn swan0_resumes_after_a_full_file_system() {
    resumes_after_a_full_file_system("swan0", 2, 2, FULL_IN_PLACE);
    resumes_after_a_full_file_system("swan0", 2, 2, FULL_COW);
}

#[test]
fn lograid5_resumes_after_a_full_file_system() {
    resumes_after_a_full_file_system("lograid5", 1, 4, FULL_IN_PLACE);
    resumes_after_a_full_file_system("lograid5", 1, 4, FULL_COW);
}

#[test]
fn raid5_resumes_after_a_full_file_system() {
    resumes_after_a_full_file_system("raid5", 1, 4, FULL_IN_PLACE);
    resumes_after_a_full_file_system("raid5", 1, 4, FULL_COW);
}
