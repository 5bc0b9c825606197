//! The member timeout against a backing that hangs on command, and the wait for space
//! against one that is full for a while.

use super::super::{Member, MemberError, MemoryBacking, BLOCK};
use super::*;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// A memory backing whose reads, writes and syncs block while the gate is shut.
#[derive(Debug)]
struct Gate {
    inner: Arc<dyn Backing>,
    shut: Mutex<bool>,
    opened: Condvar,
    /// Writes that reached the image.
    writes: AtomicU32,
}

impl Gate {
    fn wait(&self) {
        let mut shut = self.shut.lock().unwrap();
        while *shut {
            shut = self.opened.wait(shut).unwrap();
        }
    }

    fn set(&self, shut: bool) {
        *self.shut.lock().unwrap() = shut;
        self.opened.notify_all();
    }
}

impl Backing for Gate {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.wait();
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.wait();
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.write_at(offset, buf)
    }
    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        self.wait();
        self.inner.discard(offset, len)
    }
    fn sync(&self) -> io::Result<()> {
        self.wait();
        self.inner.sync()
    }
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }
}

const TIMEOUT: Duration = Duration::from_millis(200);

fn gated() -> (Member, Arc<Gate>) {
    let image = MemoryBacking::new(64);
    let mut gate = None;
    let m = Member::in_memory(Path::new("m0"), image, false)
        .layered(|b| {
            let g =
                Arc::new(Gate { inner: b, shut: Mutex::new(false), opened: Condvar::new(), writes: AtomicU32::new(0) });
            gate = Some(Arc::clone(&g));
            g
        })
        .layered(|b| Arc::new(Deadline::new(b, TIMEOUT)));
    (m, gate.expect("layered"))
}

#[test]
fn answers_pass_through() {
    let (m, _) = gated();
    m.write(3, &[7u8; 2 * BLOCK]).unwrap();
    m.sync().unwrap();
    let mut buf = vec![0u8; 2 * BLOCK];
    m.read(3, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 7));
    let mut small = [0u8; 12];
    m.read_bytes_cached(4, 100, &mut small).unwrap();
    assert_eq!(small, [7u8; 12]);
    m.trim(3, 1).unwrap();
    m.read(3, &mut buf[..BLOCK]).unwrap();
    assert!(buf[..BLOCK].iter().all(|&b| b == 0), "a trimmed block reads as zeroes");
    assert!(m.stuck_for().is_none());
}

#[test]
fn a_hung_member_is_given_up_on_and_answers_again_once_it_returns() {
    let (m, gate) = gated();
    m.write(1, &[1u8; BLOCK]).unwrap();
    gate.set(true);
    let start = Instant::now();
    let e = m.write(1, &[2u8; BLOCK]).expect_err("the write hangs");
    let waited = start.elapsed();
    assert!(matches!(e, MemberError::Hung { .. }) && e.is_io_error(), "{e}");
    assert!(waited >= TIMEOUT && waited < TIMEOUT * 10, "gave up after {waited:?}");
    assert!(e.to_string().contains("hangs"), "{e}");
    // While that write is stuck, nothing else is tried: no thread piles up behind it.
    let start = Instant::now();
    let mut buf = vec![9u8; BLOCK];
    let e = m.read(1, &mut buf).expect_err("refused at once");
    assert!(start.elapsed() < TIMEOUT, "waited {:?} for a member known to hang", start.elapsed());
    assert!(matches!(e, MemberError::Hung { hung: Hung { earlier: true, .. }, .. }), "{e}");
    assert!(buf.iter().all(|&b| b == 9), "a refused read touched the caller's buffer");
    assert!(m.stuck_for().is_some());
    // The stuck write completes late: it lands on the member (which the array no longer
    // reads), and the member answers again once nothing is out.
    gate.set(false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while m.stuck_for().is_some() {
        assert!(Instant::now() < deadline, "the late write never came back");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(gate.writes.load(Ordering::SeqCst), 2);
    m.read(1, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 2), "the late write landed");
}

#[test]
fn a_read_given_up_on_never_fills_the_callers_buffer_late() {
    let (m, gate) = gated();
    m.write(0, &[5u8; BLOCK]).unwrap();
    gate.set(true);
    let mut buf = vec![0u8; BLOCK];
    assert!(m.read(0, &mut buf).is_err());
    gate.set(false);
    while m.stuck_for().is_some() {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(buf.iter().all(|&b| b == 0), "the late read's bytes reached the caller");
}

#[test]
fn a_sync_that_hangs_is_given_up_on() {
    let (m, gate) = gated();
    gate.set(true);
    let e = m.sync().expect_err("the sync hangs");
    assert!(matches!(e, MemberError::Hung { .. }), "{e}");
    gate.set(false);
}

/// A backing whose file system is full for the first `full` writes.
#[derive(Debug)]
struct FullFor {
    inner: Arc<dyn Backing>,
    full: AtomicU32,
    wait: Duration,
}

impl Backing for FullFor {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if self.full.load(Ordering::SeqCst) > 0 {
            self.full.fetch_sub(1, Ordering::SeqCst);
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        self.inner.write_at(offset, buf)
    }
    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        self.inner.discard(offset, len)
    }
    fn sync(&self) -> io::Result<()> {
        self.inner.sync()
    }
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }
    fn space_wait(&self) -> Duration {
        self.wait
    }
}

fn full_for(writes: u32, wait: Duration) -> Member {
    Member::in_memory(Path::new("m1"), MemoryBacking::new(8), false)
        .layered(|b| Arc::new(FullFor { inner: b, full: AtomicU32::new(writes), wait }))
}

#[test]
fn a_full_file_system_is_its_own_error_and_not_a_member_failure() {
    let m = full_for(1, Duration::ZERO);
    let e = m.write(0, &[1u8; BLOCK]).expect_err("no room");
    assert!(e.is_full() && !e.is_io_error(), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("m1") && text.contains("file system holding the member is full"), "{text}");
    m.write(0, &[1u8; BLOCK]).expect("room again");
}

#[test]
fn a_fill_that_clears_within_the_wait_costs_a_pause_not_an_error() {
    let m = full_for(3, Duration::from_secs(5));
    m.write(2, &[4u8; BLOCK]).expect("written once room came back");
    let mut buf = vec![0u8; BLOCK];
    m.read(2, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 4));
    let m = full_for(1000, Duration::from_millis(100));
    let start = Instant::now();
    let e = m.write(2, &[4u8; BLOCK]).expect_err("still full when the wait runs out");
    assert!(e.is_full(), "{e}");
    assert!(start.elapsed() < Duration::from_secs(2), "waited {:?}", start.elapsed());
}
