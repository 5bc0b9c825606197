//! User reads carried out beside the engine thread.
//!
//! The engine plans every request in order, on one thread, because the scheme is one state
//! machine. Carrying out a plain read there too would make every read wait for the one
//! before it: fio's iodepth of 32 would reach the members one `pread` at a time. So once the
//! engine has planned a read whose member operations are all plain reads into the reply, it
//! hands them to this pool and goes on planning; the pool's threads read and reply.
//!
//! Why this keeps the engine's promises (engine.rs):
//! - *A read sees every write replied to before it*: the engine performs a write's member
//!   I/O before replying to it, and plans a read only after, so the data is on the member
//!   (or in its page cache) before the read is even handed over.
//! - *A slot is read only while it holds what the plan expects*: a log array never writes
//!   a slot again before its segment is released by GC, and the engine waits for every read
//!   handed out ([`ReadPool::wait_idle`]) before it trims and frees victims. In-place RAID
//!   overwrites in place, but only for a write the client issued while its own read of the
//!   same blocks was outstanding, whose outcome NBD leaves unspecified anyway.
//!
//! Emulation keeps reads on the engine: the SSD model decides when each completes.

use crate::backend::Completion;
use crate::member::{Member, BLOCK};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use swan_nbd::Errno;

/// Threads reading. Reads block in the kernel (a page-cache miss waits for the device), so
/// more readers than cores keep the devices' queues full; nbdkit runs 16 by default.
pub const READERS: usize = 8;

/// `count` blocks of `member` from `block`, into the reply at block `offset`.
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    pub member: u32,
    pub block: u64,
    pub count: u32,
    pub offset: u32,
}

struct Job {
    members: Arc<Vec<Member>>,
    pieces: Vec<Piece>,
    len: usize,
    done: Completion,
}

/// Reads handed out and not yet replied to.
#[derive(Default)]
struct Outstanding {
    count: Mutex<usize>,
    none: Condvar,
}

impl Outstanding {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct ReadPool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    outstanding: Arc<Outstanding>,
}

impl ReadPool {
    pub fn start(readers: usize) -> std::io::Result<ReadPool> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let outstanding = Arc::new(Outstanding::default());
        let threads = (0..readers.max(1))
            .map(|i| {
                let (rx, outstanding) = (Arc::clone(&rx), Arc::clone(&outstanding));
                std::thread::Builder::new().name(format!("swan-read-{i}")).spawn(move || serve_reads(&rx, &outstanding))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(ReadPool { tx: Some(tx), threads, outstanding })
    }

    /// Read `pieces` into a reply of `len` bytes and call `done` with it, on a pool thread.
    pub fn submit(&self, members: &Arc<Vec<Member>>, pieces: Vec<Piece>, len: usize, done: Completion) {
        *self.outstanding.lock() += 1;
        let job = Job { members: Arc::clone(members), pieces, len, done };
        if let Err(mpsc::SendError(job)) = self.tx.as_ref().expect("pool running").send(job) {
            // Every reader is gone (one panicked?): read here rather than lose the request.
            run(job);
            finished(&self.outstanding);
        }
    }

    /// Wait until every read handed out has replied.
    pub fn wait_idle(&self) {
        let mut n = self.outstanding.lock();
        while *n > 0 {
            n = self.outstanding.none.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        self.wait_idle();
        self.tx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn serve_reads(rx: &Mutex<Receiver<Job>>, outstanding: &Outstanding) {
    loop {
        let job = match rx.lock().unwrap_or_else(|p| p.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        run(job);
        finished(outstanding);
    }
}

fn finished(outstanding: &Outstanding) {
    let mut n = outstanding.lock();
    *n -= 1;
    if *n == 0 {
        outstanding.none.notify_all();
    }
}

fn run(job: Job) {
    let mut reply = vec![0u8; job.len];
    for p in &job.pieces {
        let at = p.offset as usize * BLOCK;
        let n = p.count as usize * BLOCK;
        if let Err(e) = job.members[p.member as usize].read(p.block, &mut reply[at..at + n]) {
            eprintln!("swan: I/O error: {e}");
            (job.done)(Err(Errno::Io));
            return;
        }
    }
    (job.done)(Ok(reply));
}
