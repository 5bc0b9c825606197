//! Member I/O carried out beside the engine thread.
//!
//! The engine plans every request in order, on one thread, because the scheme is one state
//! machine. Carrying out every member operation there too would make each wait for the one
//! before it: fio's iodepth of 32 would reach the members one `pread` at a time, and a
//! sequential writer would get one core's worth of page-cache copying. So once the engine
//! has planned a request, it hands two kinds of member operations to this pool and goes on
//! planning:
//!
//! - **plain reads** (a plan of member reads straight into the reply): a pool thread reads
//!   and replies;
//! - **large user-data writes** of log-structured schemes (at least [`POOL_WRITE_MIN`] on
//!   one member): a pool thread writes while the engine plans the rest of its batch; the
//!   engine waits for them all ([`IoPool::wait_writes`]) before the batch's journal record
//!   and replies, before any read, and before any sync point.
//!
//! Why this keeps the engine's promises (engine.rs):
//! - *A read sees every write replied to before it*: a write is replied to only after its
//!   member writes are done, and the engine waits for outstanding writes before it plans a
//!   read's hand-over.
//! - *A slot is read only while it holds what the plan expects*: a log array never writes a
//!   slot again before its segment is released by GC, and the engine waits for every read
//!   handed out ([`IoPool::wait_reads`]) before it trims and frees victims. In-place RAID
//!   overwrites in place, but only for a write the client issued while its own read of the
//!   same blocks was outstanding, whose outcome NBD leaves unspecified anyway; its writes
//!   (read-modify-write of parity) stay on the engine.
//! - *A FLUSH covers what was replied to*: sync points wait for outstanding writes first.
//!
//! Emulation keeps all I/O on the engine: the SSD model decides when each completes.

use crate::backend::Completion;
use crate::member::{Member, MemberError, BLOCK};
use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use swan_nbd::Errno;

/// Threads doing member I/O. Reads block in the kernel (a page-cache miss waits for the
/// device), so more threads than cores keep the devices' queues full; nbdkit runs 16.
pub const THREADS: usize = 8;

/// Smallest user-data write on one member worth handing to a thread: below it the wakeup
/// costs about what the copy does, and 4 KiB random writes went no faster.
pub const POOL_WRITE_MIN: usize = 32 << 10;

/// `count` blocks of `member` from `block`, into the reply at block `offset`.
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    pub member: u32,
    pub block: u64,
    pub count: u32,
    pub offset: u32,
}

type Job = Box<dyn FnOnce() + Send>;

/// Operations handed out and not yet done.
#[derive(Default)]
struct Tally {
    count: Mutex<usize>,
    none: Condvar,
}

impl Tally {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&self) {
        *self.lock() += 1;
    }

    fn done(&self) {
        let mut n = self.lock();
        *n -= 1;
        if *n == 0 {
            self.none.notify_all();
        }
    }

    fn wait(&self) {
        let mut n = self.lock();
        while *n > 0 {
            n = self.none.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

pub struct IoPool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    reads: Arc<Tally>,
    writes: Arc<Tally>,
    write_errors: Arc<Mutex<Vec<MemberError>>>,
}

impl IoPool {
    pub fn start(threads: usize) -> std::io::Result<IoPool> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = (0..threads.max(1))
            .map(|i| {
                let rx = Arc::clone(&rx);
                std::thread::Builder::new().name(format!("swan-io-{i}")).spawn(move || run_jobs(&rx))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(IoPool {
            tx: Some(tx),
            threads,
            reads: Arc::default(),
            writes: Arc::default(),
            write_errors: Arc::default(),
        })
    }

    fn spawn(&self, job: Job) {
        if let Err(mpsc::SendError(job)) = self.tx.as_ref().expect("pool running").send(job) {
            // Every thread is gone (one panicked?): do it here rather than lose it.
            job();
        }
    }

    /// Read `pieces` into a reply of `len` bytes and call `done` with it, on a pool thread.
    pub fn read(&self, members: &Arc<Vec<Member>>, pieces: Vec<Piece>, len: usize, done: Completion) {
        self.reads.add();
        let (members, tally) = (Arc::clone(members), Arc::clone(&self.reads));
        self.spawn(Box::new(move || {
            read_pieces(&members, &pieces, len, done);
            tally.done();
        }));
    }

    /// Write `data[range]` to `member` at `block`, on a pool thread.
    pub fn write(&self, members: &Arc<Vec<Member>>, member: u32, block: u64, data: Arc<Vec<u8>>, range: Range<usize>) {
        self.writes.add();
        let (members, tally, errors) = (Arc::clone(members), Arc::clone(&self.writes), Arc::clone(&self.write_errors));
        self.spawn(Box::new(move || {
            if let Err(e) = members[member as usize].write(block, &data[range]) {
                errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
            }
            tally.done();
        }));
    }

    /// Wait until every read handed out has replied.
    pub fn wait_reads(&self) {
        self.reads.wait();
    }

    /// Wait until every write handed out is done; the errors they met, if any.
    pub fn wait_writes(&self) -> Vec<MemberError> {
        self.writes.wait();
        std::mem::take(&mut *self.write_errors.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Drop for IoPool {
    fn drop(&mut self) {
        self.wait_reads();
        self.writes.wait();
        self.tx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn run_jobs(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock().unwrap_or_else(|p| p.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        job();
    }
}

fn read_pieces(members: &[Member], pieces: &[Piece], len: usize, done: Completion) {
    let mut reply = vec![0u8; len];
    for p in pieces {
        let at = p.offset as usize * BLOCK;
        let n = p.count as usize * BLOCK;
        if let Err(e) = members[p.member as usize].read(p.block, &mut reply[at..at + n]) {
            eprintln!("swan: I/O error: {e}");
            done(Err(Errno::Io));
            return;
        }
    }
    done(Ok(reply));
}
