//! Plain reads of O_DIRECT members, submitted to an io_uring by one thread.
//!
//! On O_DIRECT members every read waits for the device. Done with blocking `pread`s, each
//! read in flight holds a thread, and each costs a wakeup and a sleep of that thread: a
//! third of the server's CPU at 4 KiB random reads (`perf`: `finish_task_switch` and the
//! wakeups' spin locks). One thread that submits the reads to a ring and reaps their
//! completions keeps as many in flight with no switch per read.
//!
//! This room only moves bytes. Whoever hands a read in ([`crate::pool`]) verifies it and
//! replies; a read that meets anything unusual (an error, a short read) is handed back
//! unread, to the blocking path that owns error handling and retries.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

use io_uring::{opcode, types, IoUring};
use rustix::event::{eventfd, EventfdFlags};

use crate::member::{gap_to_boundary, BLOCK};
use crate::members::Members;

/// Submission queue entries: more than the reads a few connections keep in flight.
const ENTRIES: u32 = 256;
/// `user_data` of the read that waits on the wakeup eventfd.
const WAKE: u64 = u64::MAX;
/// A piece's `user_data` is its read's slot above these bits and its index below.
const PIECE_BITS: u32 = 20;

/// One piece of a read: `len` bytes at byte `offset` of the O_DIRECT file `fd`, into the
/// read's buffer at byte `at`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub fd: RawFd,
    pub offset: u64,
    pub at: usize,
    pub len: usize,
}

/// What to do with a read: its bytes (`Some`, exactly the read's length), or `None` if it
/// must be done again the blocking way.
pub(crate) type Then = Box<dyn FnOnce(Option<Vec<u8>>) + Send>;

pub(crate) struct ReadJob {
    /// Keeps the members' descriptors open until the read is done.
    pub _keep_open: Arc<Members>,
    pub targets: Vec<Target>,
    pub len: usize,
    pub then: Then,
}

/// The ring's thread, and how to hand it reads.
pub(crate) struct UringReads {
    tx: Option<Sender<ReadJob>>,
    wake: Arc<OwnedFd>,
    thread: Option<JoinHandle<()>>,
}

impl UringReads {
    /// Set up a ring and its thread; an error if the kernel offers no io_uring.
    pub fn start() -> io::Result<UringReads> {
        let ring = IoUring::new(ENTRIES)?;
        let wake = Arc::new(eventfd(0, EventfdFlags::CLOEXEC)?);
        let (tx, rx) = mpsc::channel();
        let fd = Arc::clone(&wake);
        let thread =
            std::thread::Builder::new().name("swan-uring".into()).spawn(move || Ring::new(ring, rx).run(&fd))?;
        Ok(UringReads { tx: Some(tx), wake, thread: Some(thread) })
    }

    /// Read `job`; its `then` is called on the ring's thread.
    pub fn read(&self, job: ReadJob) {
        let Some(tx) = &self.tx else { return (job.then)(None) };
        match tx.send(job) {
            Ok(()) => self.poke(),
            // The thread is gone (it panicked?): hand the read back rather than lose it.
            Err(mpsc::SendError(job)) => (job.then)(None),
        }
    }

    fn poke(&self) {
        let _ = rustix::io::write(&*self.wake, &1u64.to_ne_bytes());
    }
}

impl Drop for UringReads {
    fn drop(&mut self) {
        self.tx = None;
        self.poke();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A read in flight: its buffer (the bytes start at `start`, a 4096 boundary) and the
/// pieces not yet completed.
struct InFlight {
    job: ReadJob,
    buf: Vec<u8>,
    start: usize,
    pending: usize,
    failed: bool,
}

struct Ring {
    ring: IoUring,
    rx: Receiver<ReadJob>,
    slots: Vec<Option<InFlight>>,
    free: Vec<usize>,
    /// Where the eventfd's counter is read to (the kernel writes it while the read waits).
    wake_buf: Box<[u8; 8]>,
    open: bool,
}

impl Ring {
    fn new(ring: IoUring, rx: Receiver<ReadJob>) -> Ring {
        Ring { ring, rx, slots: Vec::new(), free: Vec::new(), wake_buf: Box::new([0; 8]), open: true }
    }

    fn run(mut self, wake: &OwnedFd) {
        if !self.arm_wake(wake.as_raw_fd()) {
            eprintln!("swan: io_uring takes no entry; reads go to the I/O threads");
            return self.give_up();
        }
        while self.open || self.free.len() < self.slots.len() {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) || e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => {
                    eprintln!("swan: io_uring failed ({e}); reads go to the I/O threads from now on");
                    return self.give_up();
                }
            }
            let done: Vec<(u64, i32)> = self.ring.completion().map(|c| (c.user_data(), c.result())).collect();
            for (user_data, result) in done {
                if user_data == WAKE {
                    self.take_jobs();
                    if self.open && !self.arm_wake(wake.as_raw_fd()) {
                        eprintln!("swan: io_uring takes no entry; reads go to the I/O threads from now on");
                        return self.give_up();
                    }
                } else {
                    self.completed(user_data, result);
                }
            }
        }
    }

    /// Wait for the next poke; false if the ring takes no entry.
    fn arm_wake(&mut self, fd: RawFd) -> bool {
        let entry = opcode::Read::new(types::Fd(fd), self.wake_buf.as_mut_ptr(), 8).build().user_data(WAKE);
        self.push(&entry)
    }

    /// Start every read waiting in the channel.
    fn take_jobs(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(job) => self.start(job),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.open = false;
                    return;
                }
            }
        }
    }

    fn start(&mut self, job: ReadJob) {
        if job.targets.is_empty() {
            // Nothing to wait for (the pool never sends such a read, but a slot with no
            // piece would never complete).
            let len = job.len;
            return (job.then)(Some(vec![0; len]));
        }
        let mut buf = vec![0u8; job.len + BLOCK];
        let start = gap_to_boundary(buf.as_ptr());
        let base = buf[start..].as_mut_ptr();
        let entries: Vec<_> = job
            .targets
            .iter()
            .map(|t| {
                // SAFETY: `at + len` lies inside the read's `len` bytes, which lie inside `buf`.
                #[allow(unsafe_code)]
                let to = unsafe { base.add(t.at) };
                opcode::Read::new(types::Fd(t.fd), to, t.len as u32).offset(t.offset).build()
            })
            .collect();
        let pending = entries.len();
        if pending >= 1 << PIECE_BITS {
            return (job.then)(None);
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        self.slots[slot] = Some(InFlight { job, buf, start, pending, failed: false });
        for (k, e) in entries.into_iter().enumerate() {
            if !self.push(&e.user_data((slot as u64) << PIECE_BITS | k as u64)) {
                // The pieces not queued never complete: count them done, and have the read
                // done again the blocking way once the queued ones have.
                let r = self.slots[slot].as_mut().expect("slot just filled");
                r.failed = true;
                r.pending -= pending - k;
                if r.pending == 0 {
                    self.finish(slot);
                }
                return;
            }
        }
    }

    /// Queue `entry`, making room by submitting what is queued if the ring is full; false if
    /// it still takes none.
    fn push(&mut self, entry: &io_uring::squeue::Entry) -> bool {
        for _ in 0..2 {
            // SAFETY: every entry points into memory that outlives its completion: a read's
            // buffer stays in its slot (a `Vec`'s heap block does not move when the slot is
            // moved) until its last piece completes, the descriptors stay open while the
            // slot holds the job's `Arc<Members>`, and `wake_buf` is boxed and lives as long
            // as the ring, whose drop (at the end of `run`) waits for nothing in flight only
            // once `run` has seen every slot free.
            #[allow(unsafe_code)]
            let pushed = unsafe { self.ring.submission().push(entry) };
            if pushed.is_ok() {
                return true;
            }
            let _ = self.ring.submit();
        }
        false
    }

    fn completed(&mut self, user_data: u64, result: i32) {
        let (slot, piece) = ((user_data >> PIECE_BITS) as usize, (user_data & ((1 << PIECE_BITS) - 1)) as usize);
        let Some(r) = self.slots.get_mut(slot).and_then(Option::as_mut) else { return };
        r.pending -= 1;
        // A piece moves all of its bytes, or the read is done again the blocking way.
        r.failed |= usize::try_from(result).ok() != Some(r.job.targets[piece].len);
        if r.pending == 0 {
            self.finish(slot);
        }
    }

    /// Hand a read whose pieces are all done to its continuation.
    fn finish(&mut self, slot: usize) {
        let InFlight { job, mut buf, start, failed, .. } = self.slots[slot].take().expect("slot in flight");
        self.free.push(slot);
        if failed {
            (job.then)(None);
        } else {
            buf.copy_within(start..start + job.len, 0);
            buf.truncate(job.len);
            (job.then)(Some(buf));
        }
    }

    /// The ring failed: hand back every read it holds, and from now on every read sent.
    fn give_up(mut self) {
        for r in self.slots.drain(..).flatten() {
            // The kernel may still fill the buffer: leak it rather than let it be reused.
            std::mem::forget(r.buf);
            (r.job.then)(None);
        }
        // Ends when `UringReads` is dropped.
        for job in self.rx.iter() {
            (job.then)(None);
        }
        // A read of the eventfd may still be in flight.
        std::mem::forget(self.wake_buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::mpsc::channel;

    #[test]
    fn reads_come_back_whole_and_errors_are_handed_back() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..64 * BLOCK).map(|i| (i / BLOCK * 7 + i % 13) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&path);
        // tmpfs and some file systems refuse O_DIRECT; the test needs a file that takes it.
        let file = file.expect("/var/tmp must accept O_DIRECT");
        let reads = UringReads::start().expect("io_uring");
        let members = Arc::new(Members::new(Vec::new(), 0));
        let (tx, rx) = channel();
        for k in 0..40u64 {
            let (a, b) = (k % 60, (k * 7 + 3) % 60);
            let targets = vec![
                Target { fd: file.as_raw_fd(), offset: a * BLOCK as u64, at: 0, len: 2 * BLOCK },
                Target { fd: file.as_raw_fd(), offset: b * BLOCK as u64, at: 2 * BLOCK, len: BLOCK },
            ];
            let tx = tx.clone();
            let then: Then = Box::new(move |got| tx.send((a, b, got)).unwrap());
            reads.read(ReadJob { _keep_open: Arc::clone(&members), targets, len: 3 * BLOCK, then });
        }
        for _ in 0..40 {
            let (a, b, got) = rx.recv().unwrap();
            let got = got.expect("read whole");
            let (a, b) = (a as usize * BLOCK, b as usize * BLOCK);
            assert_eq!(&got[..2 * BLOCK], &data[a..a + 2 * BLOCK]);
            assert_eq!(&got[2 * BLOCK..], &data[b..b + BLOCK]);
        }
        // Past the end of the file: a short read (0 bytes), handed back unread.
        let (tx2, rx2) = channel();
        let targets = vec![Target { fd: file.as_raw_fd(), offset: 100 * BLOCK as u64, at: 0, len: BLOCK }];
        reads.read(ReadJob {
            _keep_open: Arc::clone(&members),
            targets,
            len: BLOCK,
            then: Box::new(move |got| tx2.send(got.is_none()).unwrap()),
        });
        assert!(rx2.recv().unwrap(), "a short read is handed back");
        // No piece at all: answered at once, all zeroes.
        let (tx3, rx3) = channel();
        reads.read(ReadJob {
            _keep_open: Arc::clone(&members),
            targets: Vec::new(),
            len: BLOCK,
            then: Box::new(move |got| tx3.send(got).unwrap()),
        });
        assert_eq!(rx3.recv().unwrap(), Some(vec![0u8; BLOCK]));
        drop(reads);
    }
}
