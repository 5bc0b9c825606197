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
//! - **user-data writes to O_DIRECT members** of log-structured schemes (each waits for
//!   the device): a pool thread writes while the engine plans the rest of its batch, and
//!   the next batch; the engine waits for a batch's writes ([`Tally::wait`]) before its
//!   journal record and replies, and for them all ([`IoPool::wait_writes`]) before any
//!   read, and before any sync point.
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
//!
//! **Every block a pooled read returns is verified** against the CRC32C recorded for it
//! ([`Check`]): the engine's table for open segments, or the summary of a sealed segment
//! (the blocks of it that hold the entry, read from the members for each read). A mismatch
//! is rebuilt from its stripe row and parity where the R-group has parity, checked against
//! the CRC, returned and written back in place; otherwise the read fails with EIO. Bad data
//! is never returned. Blocks with nothing to check against (segments adopted at recovery,
//! summaries from before block CRCs) are returned as read, and counted.

use crate::member::{MemberError, BLOCK};
use crate::members::Members;
use crate::service::Completion;
use crate::uring::{ReadJob, Target, Then, UringReads};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use swan_core::geometry::Geometry;
use swan_core::summary::{Entry, ENTRY_BYTES, MAGIC_CRC};
use swan_nbd::Errno;

/// What one block of a read is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing: the block is unmapped (its zeroes are the engine's, not a member's).
    Nothing,
    /// A mapped block no CRC was ever recorded for (a segment adopted at recovery, served
    /// read-only, whose block no replayed journal record named): returned as read, and
    /// counted as unverified.
    Unknown,
    /// The CRC the engine holds (a block of an open segment).
    Crc(u32),
    /// The CRC in the summary of sealed `segment` (seal sequence `seq`), at `slot`, which
    /// must name `lba`.
    Summary { segment: u64, seq: u64, slot: u32, lba: u64 },
    /// In-place RAID: the CRC in the block CRC table ([`crate::blockcrc`]; 0: none known).
    /// The block's stripe row is whole on the members, so a mismatch can be rebuilt.
    Row(u32),
}

/// Counters of read verification, for `swan status`.
#[derive(Debug, Default)]
pub struct ReadChecks {
    pub verified: AtomicU64,
    pub unverified: AtomicU64,
    pub mismatches: AtomicU64,
    pub repaired: AtomicU64,
    pub failed: AtomicU64,
}

/// What a read needs to verify and repair its blocks (pooled, or done by the engine).
pub(crate) struct Verify {
    /// The log array's geometry, for summary checks; None for in-place RAID.
    pub geo: Option<Geometry>,
    pub checks: Vec<Check>,
    pub counts: Arc<ReadChecks>,
}

/// Threads doing member I/O. Reads block in the kernel (a page-cache miss waits for the
/// device), so more threads than cores keep the devices' queues full; nbdkit runs 16.
pub const THREADS: usize = 8;
/// Threads over O_DIRECT members: each waits out a device read or write, so the pool's
/// size is the queue depth the devices see (a client's 32 reads in flight, 8 at a time,
/// left the device idle between them).
pub const DIRECT_THREADS: usize = 32;

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
pub(crate) struct Tally {
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

    /// Whether none is outstanding.
    pub fn is_clear(&self) -> bool {
        *self.lock() == 0
    }

    pub fn wait(&self) {
        let mut n = self.lock();
        while *n > 0 {
            n = self.none.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

pub struct IoPool {
    pub checks: Arc<ReadChecks>,
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    reads: Arc<Tally>,
    writes: Arc<Tally>,
    write_errors: Arc<Mutex<Vec<MemberError>>>,
    /// Member errors met by reads, for the engine to fail the member.
    read_errors: Arc<Mutex<Vec<MemberError>>>,
    /// Where a read whose member failed under it goes instead of answering EIO.
    retry: Option<Retry>,
    /// Plain reads of O_DIRECT members, submitted without a thread each.
    ring: Option<UringReads>,
}

impl IoPool {
    /// `threads` threads; with `ring`, plain reads of O_DIRECT members go to an io_uring
    /// instead ([`crate::uring`]; the threads if the kernel offers none).
    pub fn start(threads: usize, ring: bool) -> std::io::Result<IoPool> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = (0..threads.max(1))
            .map(|i| {
                let rx = Arc::clone(&rx);
                std::thread::Builder::new().name(format!("swan-io-{i}")).spawn(move || run_jobs(&rx))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(IoPool {
            checks: Arc::default(),
            tx: Some(tx),
            threads,
            reads: Arc::default(),
            writes: Arc::default(),
            write_errors: Arc::default(),
            read_errors: Arc::default(),
            retry: None,
            ring: if ring { UringReads::start().ok() } else { None },
        })
    }

    /// Send reads whose member fails under them to `retry` (the engine) instead of
    /// answering them with EIO.
    pub fn set_retry(&mut self, retry: Retry) {
        self.retry = Some(retry);
    }

    fn spawn(&self, job: Job) {
        if let Err(mpsc::SendError(job)) = self.tx.as_ref().expect("pool running").send(job) {
            // Every thread is gone (one panicked?): do it here rather than lose it.
            job();
        }
    }

    /// Read `pieces` into a reply of `len` bytes (the volume's bytes from `offset`), verify
    /// block `i` of it against `checks[i]` (log-structured arrays, with their geometry),
    /// and call `done` with it, on a pool thread.
    pub fn read(
        &self,
        members: &Arc<Members>,
        pieces: Vec<Piece>,
        len: usize,
        checks: Option<(Geometry, Vec<Check>)>,
        offset: u64,
        done: Completion,
    ) {
        self.reads.add();
        let read = PooledRead {
            members: Arc::clone(members),
            pieces,
            len,
            verify: checks.map(|(geo, checks)| Verify { geo: Some(geo), checks, counts: Arc::clone(&self.checks) }),
            errors: Arc::clone(&self.read_errors),
            retry: self.retry.clone(),
            offset,
            done,
            tally: Arc::clone(&self.reads),
        };
        match (&self.ring, ring_targets(members, &read.pieces)) {
            (Some(ring), Some(targets)) => {
                let tx = self.tx.clone();
                let then: Then = Box::new(move |got| match got {
                    // Verified on the ring's thread, as a pool thread would.
                    Some(reply) => read.verify_and_reply(reply),
                    // Done again by a pool thread, which owns errors and retries.
                    None => {
                        let job: Job = Box::new(move || read.blocking());
                        match tx {
                            Some(tx) => {
                                if let Err(mpsc::SendError(job)) = tx.send(job) {
                                    job();
                                }
                            }
                            None => job(),
                        }
                    }
                });
                ring.read(ReadJob { _keep_open: Arc::clone(members), targets, len, then });
            }
            _ => self.spawn(Box::new(move || read.blocking())),
        }
    }

    /// Write `data[range]` to `member` at `block`, on a pool thread; `batch` counts it too,
    /// so the engine can wait for one batch's writes alone.
    pub(crate) fn write(
        &self,
        members: &Arc<Members>,
        member: u32,
        block: u64,
        data: Arc<Vec<u8>>,
        range: Range<usize>,
        batch: &Arc<Tally>,
    ) {
        self.writes.add();
        batch.add();
        let (members, tally, errors) = (Arc::clone(members), Arc::clone(&self.writes), Arc::clone(&self.write_errors));
        let batch = Arc::clone(batch);
        self.spawn(Box::new(move || {
            let count = (range.len() / BLOCK) as u64;
            match members[member as usize].write(block, &data[range]) {
                // The run is user data appended to a log: start its writeback now.
                Ok(()) => members[member as usize].write_behind(block, count),
                Err(e) => errors.lock().unwrap_or_else(|p| p.into_inner()).push(e),
            }
            // Before `done`: once the engine sees the writes done, it takes the buffer back.
            drop(data);
            batch.done();
            tally.done();
        }));
    }

    /// The member errors reads met since the last call.
    pub fn take_read_errors(&self) -> Vec<MemberError> {
        std::mem::take(&mut *self.read_errors.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Wait until every read handed out has replied.
    pub fn wait_reads(&self) {
        self.reads.wait();
    }

    /// Whether some write handed out met an error not yet taken by [`IoPool::wait_writes`].
    pub fn write_failed(&self) -> bool {
        !self.write_errors.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
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

/// Hands a read (volume offset and length in bytes) whose member failed back to the
/// engine, which fails the member and carries the read out degraded (it alone knows the
/// open rows' parity).
pub type Retry = Arc<dyn Fn(u64, u32, Completion) + Send + Sync>;

/// A plain read handed to the pool, with what it needs to be verified and answered.
struct PooledRead {
    members: Arc<Members>,
    pieces: Vec<Piece>,
    len: usize,
    verify: Option<Verify>,
    errors: Arc<Mutex<Vec<MemberError>>>,
    retry: Option<Retry>,
    /// The volume's bytes from here, for a retry by the engine.
    offset: u64,
    done: Completion,
    tally: Arc<Tally>,
}

impl PooledRead {
    /// Read every piece with blocking reads, then verify and reply.
    fn blocking(self) {
        let mut reply = vec![0u8; self.len];
        for p in &self.pieces {
            let at = p.offset as usize * BLOCK;
            let n = p.count as usize * BLOCK;
            if let Err(e) = self.members[p.member as usize].read(p.block, &mut reply[at..at + n]) {
                eprintln!("swan: I/O error: {e}");
                match (e.is_io_error(), self.retry) {
                    (true, Some(retry)) => {
                        // Recorded before the retry is queued: the engine sees the error first.
                        self.errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                        retry(self.offset, self.len as u32, self.done);
                    }
                    _ => (self.done)(Err(Errno::Io)),
                }
                self.tally.done();
                return;
            }
        }
        self.verify_and_reply(reply);
    }

    /// Verify every block of `reply` (rebuilding a mismatch where parity allows) and reply.
    fn verify_and_reply(self, mut reply: Vec<u8>) {
        if let Some(v) = &self.verify {
            for p in &self.pieces {
                for k in 0..p.count {
                    let i = (p.offset + k) as usize;
                    let block = &mut reply[i * BLOCK..(i + 1) * BLOCK];
                    if !verify_block(&self.members, v, i, p.member, p.block + u64::from(k), block) {
                        (self.done)(Err(Errno::Io));
                        self.tally.done();
                        return;
                    }
                }
            }
        }
        (self.done)(Ok(reply));
        self.tally.done();
    }
}

/// Where each piece lies on an O_DIRECT file of a healthy member, if all of them do.
fn ring_targets(members: &Members, pieces: &[Piece]) -> Option<Vec<Target>> {
    pieces
        .iter()
        .map(|p| {
            if !members.is_healthy(p.member) {
                return None;
            }
            let (fd, offset) = members[p.member as usize].direct_extent(p.block, p.count)?;
            Some(Target { fd, offset, at: p.offset as usize * BLOCK, len: p.count as usize * BLOCK })
        })
        .collect()
}

/// The CRC block `i` of a read must have, if any is known.
///
/// A sealed segment's CRC is read from its summary on the members for every read: the
/// summaries of a large array do not fit the memory budget (12 bytes per block), and the
/// page cache keeps the hot ones anyway (on O_DIRECT members too:
/// [`Members::read_bytes_cached`]). Only the block's own entry is read, its 12 bytes
/// (reading the header's magic and the entry as whole blocks cost as much as the user
/// read itself: a fifth of the IOPS of 4 KiB reads from the page cache). The entry must
/// name the block, which a torn or stale summary would not; a mismatch is then confirmed
/// against the whole summary, its magic, sequence and checksum, before anything is
/// rebuilt ([`summary_is_sound`]). A CRC of 0 is what a summary sealed before block CRCs
/// (`SWANSUM1`) holds in every entry, so only then is the magic read, to tell that from a
/// block whose CRC32C is 0.
pub(crate) fn expected_crc(members: &Members, v: &Verify, i: usize) -> Option<u32> {
    match v.checks.get(i).copied().unwrap_or(Check::Nothing) {
        Check::Nothing | Check::Unknown => None,
        Check::Crc(crc) => Some(crc),
        Check::Row(crc) => (crc != 0).then_some(crc),
        Check::Summary { segment, slot, lba, .. } => {
            let geo = v.geo.as_ref()?;
            let span = Entry::span(slot);
            let mut entry = [0u8; ENTRY_BYTES];
            read_summary_bytes(members, geo, segment, span, &mut entry)?;
            let entry = Entry::decode(&entry);
            if entry.lba != lba {
                return None;
            }
            if entry.crc == 0 {
                let mut magic = [0u8; 8];
                read_summary_bytes(members, geo, segment, 0..magic.len(), &mut magic)?;
                return (magic == MAGIC_CRC).then_some(0);
            }
            Some(entry.crc)
        }
    }
}

/// Bytes `span` of `segment`'s summary (which may cross from one summary block to the
/// next, on another member), through the page cache.
fn read_summary_bytes(
    members: &Members,
    geo: &Geometry,
    segment: u64,
    span: Range<usize>,
    out: &mut [u8],
) -> Option<()> {
    let mut at = span.start;
    while at < span.end {
        let (b, offset) = (at / BLOCK, at % BLOCK);
        let len = (BLOCK - offset).min(span.end - at);
        let (m, block) = geo.slot_location(segment, geo.payload_slots() + b as u32);
        members.read_bytes_cached(m, block, offset, &mut out[at - span.start..][..len]).ok()?;
        at += len;
    }
    Some(())
}

/// Whether the whole summary a mismatch was judged by checks out (its own checksum, its
/// segment and sequence): a damaged summary must not make good data look bad.
fn summary_is_sound(members: &Members, v: &Verify, i: usize) -> bool {
    let Some(Check::Summary { segment, seq, .. }) = v.checks.get(i).copied() else { return true };
    v.geo.as_ref().is_some_and(|geo| {
        crate::summaries::read_sealed(members, geo, segment, seq, &mut Vec::new()).is_some_and(|s| s.block_crcs)
    })
}

/// Verify block `i` of a read (now in `block`, read from `member` at `at`); rebuild it from
/// parity if it does not match. False if the read must fail.
pub(crate) fn verify_block(members: &Members, v: &Verify, i: usize, member: u32, at: u64, block: &mut [u8]) -> bool {
    let Some(crc) = expected_crc(members, v, i) else {
        if v.checks.get(i).is_some_and(|c| *c != Check::Nothing) {
            v.counts.unverified.fetch_add(1, Ordering::Relaxed);
        }
        return true;
    };
    v.counts.verified.fetch_add(1, Ordering::Relaxed);
    if crc32c::crc32c(block) == crc {
        return true;
    }
    if !summary_is_sound(members, v, i) {
        // The record is what is damaged: nothing to hold the block against.
        v.counts.unverified.fetch_add(1, Ordering::Relaxed);
        return true;
    }
    v.counts.mismatches.fetch_add(1, Ordering::Relaxed);
    // Only a sealed segment's rows, and in-place stripe rows, are whole on the members (an
    // open row's parity is written when the row completes).
    let whole_row = matches!(v.checks[i], Check::Summary { .. } | Check::Row(_));
    let mut rebuilt = vec![0u8; BLOCK];
    let rebuilt_ok = whole_row
        && matches!(members.rebuild(member, at, &mut rebuilt), Ok(Some(())))
        && crc32c::crc32c(&rebuilt) == crc;
    if rebuilt_ok {
        block.copy_from_slice(&rebuilt);
        // The slot keeps its content until its segment is released, which waits for every
        // read handed out: writing the right bytes back cannot race with a reuse. (In-place
        // blocks are verified on the engine's thread, their only writer.)
        // A zone takes no rewrite: there the block is rebuilt on each read until GC moves it.
        let zoned = members[member as usize].zoned().is_some();
        let written = if zoned { Ok(()) } else { members[member as usize].write(at, &rebuilt) };
        v.counts.repaired.fetch_add(1, Ordering::Relaxed);
        eprintln!(
            "swan: member {member} block {at}: checksum mismatch on read; rebuilt from parity{}",
            match written {
                Ok(()) if zoned => " (a zone takes no rewrite: GC moves it)".to_string(),
                Ok(()) => " and rewritten".to_string(),
                Err(e) => format!(", but writing it back failed: {e}"),
            }
        );
        true
    } else {
        v.counts.failed.fetch_add(1, Ordering::Relaxed);
        eprintln!(
            "swan: member {member} block {at}: checksum mismatch on read and no good copy (no parity, or the \
             rebuild does not match either): answered with EIO"
        );
        false
    }
}
