//! The engine: one thread that owns the scheme and carries its plans out on real members.
//!
//! The core is a single-threaded state machine, so one thread drives it, as the simulator's
//! event loop does. Connections hand requests over a channel; the engine plans each with
//! the scheme (the same SWAN / Log-RAID / RAID code the simulator runs), performs the
//! member I/O in plan order, and completes the request. Because every plan's I/O is done
//! before the next request is planned, reads always see the writes replied to before them,
//! a write on a connection that dies still lands before any later write, and parity
//! read-modify-writes never interleave.
//!
//! Durability (FORMAT.md): after every batch of requests, one *tail* journal record with
//! their map changes (and a CRC of every block they name) is written, not synced, before
//! their replies go out: a server killed at any moment loses no acknowledged write, since
//! the page cache outlives the process. A FLUSH, or a FUA write, waits for the next *sync
//! point*: fdatasync on every member, then a *synced* record, made durable on the
//! metadata members. FLUSHes that arrive together share a sync point. GC victims are
//! released (and trimmed) only after a sync point, so a victim is never overwritten while
//! the durable map could still point into it.
//!
//! Scheduling: user requests are taken first; GC advances one member operation between
//! batches of user requests, and runs flat out only while writes wait for space. With
//! `--emulate`, the SSD model in [`crate::emulate`] says when each member operation would
//! complete, and replies are held until then.
//!
//! Time: the engine reads no clock of its own but a [`Clock`]: the wall clock when serving,
//! or a [`ManualClock`] that only moves when told, under [`Stepper`]. The stepper drives the
//! same worker round by round on the caller's thread, with no channel and no timing: the
//! deterministic crash and fault tests (`crate::crashsim`) run the real engine that way, so
//! a seed gives the same member I/O, byte for byte, every time.

mod degraded;
mod gc_verify;

pub use degraded::RebuildStatus;

use crate::array::{Opened, Recovered};
use crate::backend::{gather, Backend, BlockOp, BlockRequest, Completion, ExportInfo, Reply};
use crate::checkpoint;
use crate::emulate::{EmuOp, Emulator};
use crate::journal::{self, Ring};
use crate::layout::Superblock;
use crate::member::{Member, MemberError, BLOCK};
use crate::members::{Health, Members};
use crate::parity::xor;
use crate::pool::{Check, IoPool, Piece, DIRECT_THREADS, POOL_WRITE_MIN, THREADS};
use crate::summaries::MemberSummaries;
use degraded::{OpenRow, Rebuild};
use serde::Serialize;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use swan_core::io::{Dst, IoClass, IoKind, IoPlan, MemberIo, Src};
use swan_core::scheme::{GcJobId, MapChange, ReqOp, Request, Scheme, SchemeKind, Submitted};
use swan_nbd::Errno;

/// User requests taken per round before GC gets a step.
const BATCH: usize = 64;
/// GC victims released together by one sync point...
const RELEASE_BATCH: usize = 8;
/// ...or after the oldest has waited this long.
const RELEASE_AFTER: Duration = Duration::from_millis(500);
/// Gathered user data is written out once this much has gathered (or at the batch's end).
const RUNS_FLUSH_AT: usize = 1 << 20;
/// Run buffers kept for reuse while requests keep coming (freed when the engine goes idle).
/// Buffers this large are mapped afresh by malloc each time (`swan-cli`'s alloc.rs), so a
/// new one costs a page fault and a cleared page per 4 KiB filled, and an unmap with TLB
/// shootdowns when freed: a quarter of the server's CPU at 128 KiB sequential writes.
const SPARE_RUNS: usize = 4;
/// Largest payload a request may carry (what the NBD front advertises).
pub const MAX_PAYLOAD: u32 = 32 << 20;

/// The payload limit to advertise for a scheme that can always place writes of up to
/// `largest_write_blocks`: [`MAX_PAYLOAD`], or less on an array whose spare is smaller.
pub fn max_payload(largest_write_blocks: u64) -> u32 {
    let bytes = largest_write_blocks.saturating_mul(BLOCK as u64);
    u32::try_from(bytes).unwrap_or(u32::MAX).min(MAX_PAYLOAD).max(BLOCK as u32)
}

pub struct EngineOptions {
    pub name: String,
    pub read_only: bool,
    pub emulate: Option<Emulator>,
    /// Log to stderr what the engine does at startup and on errors.
    pub verbose: bool,
}

/// Where the engine's time comes from.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    Wall,
    Manual(Arc<ManualClock>),
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::Wall => Instant::now(),
            Clock::Manual(m) => m.now(),
        }
    }
}

/// A clock that moves only when [`ManualClock::advance`] is called.
#[derive(Debug)]
pub struct ManualClock {
    base: Instant,
    nanos: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock { base: Instant::now(), nanos: AtomicU64::new(0) })
    }

    pub fn now(&self) -> Instant {
        self.base + Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    pub fn advance(&self, by: Duration) {
        self.nanos.fetch_add(by.as_nanos() as u64, Ordering::Relaxed);
    }
}

/// The journal's newest record while it is an unsynced tail record of one block.
struct OpenTail {
    /// Its block in the ring.
    at: u64,
    seq: u64,
    entries: Vec<journal::Entry>,
}

enum Msg {
    Req(BlockRequest, Completion),
    Status(Sender<StatusReport>),
    /// A read the pool could not do (a member failed under it): done here, degraded.
    Retry(BlockRequest, Completion),
    /// `swan fail`: take a member out of service.
    Fail(u32, Sender<Result<String, String>>),
    /// `swan replace`: rebuild a failed member onto a new device or file.
    Replace(u32, PathBuf, Sender<Result<String, String>>),
    Stop,
}

/// A running engine; the NBD front submits to it as a [`Backend`].
pub struct Engine {
    /// Shared (weakly) with the read pool, which hands back reads a member failed under.
    tx: Arc<Mutex<Sender<Msg>>>,
    info: ExportInfo,
    thread: Mutex<Option<JoinHandle<anyhow::Result<()>>>>,
}

/// What `swan status` shows.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    pub uuid: String,
    pub scheme: String,
    pub volume_bytes: u64,
    pub uptime_s: f64,
    pub groups: Vec<GroupStatus>,
    pub members: Vec<MemberStatus>,
    pub free_segments: u64,
    pub segments: u64,
    /// SWAN: free segments GC keeps in the back-end R-groups (`swan serve --gc-target`).
    pub gc_target: Option<u64>,
    pub user_bytes_written: u64,
    pub user_bytes_read: u64,
    pub gc_blocks_moved: u64,
    pub victims: u64,
    pub front_rotations: u64,
    pub sync_points: u64,
    pub journal_records: u64,
    pub checkpoints: u64,
    pub queued_requests: usize,
    /// Blocks of pooled reads checked against their CRC, found not to match, rebuilt from
    /// parity, or answered with EIO; and blocks with no CRC to check (adopted segments).
    pub reads_verified: u64,
    pub read_mismatches: u64,
    pub read_repairs: u64,
    pub read_failures: u64,
    pub reads_unverified: u64,
    /// Blocks GC moved: checked against their CRC, rebuilt from parity first, lost (moved
    /// marked bad), or without a CRC to check.
    pub gc_verified: u64,
    pub gc_repaired: u64,
    pub gc_lost: u64,
    pub gc_unverified: u64,
    /// A replacement member being rebuilt (`swan replace`).
    pub rebuild: Option<RebuildStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupStatus {
    pub group: u32,
    /// GC jobs (victims) started in this R-group since the server started.
    pub gc_jobs: u64,
    /// "front-end", "back-end GC", "back-end idle" (SWAN); "log" or "in-place" otherwise.
    pub role: String,
    pub free_segments: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct MemberStatus {
    pub path: String,
    /// "healthy", "failed" or "rebuilding".
    pub health: String,
    pub user_bytes_written: u64,
    pub gc_bytes_written: u64,
    pub bytes_read: u64,
    pub gc_bytes_read: u64,
    pub trims: u64,
    pub errors: u64,
}

impl Engine {
    /// Start the engine over a recovered array. It first writes a fresh checkpoint, so the
    /// journal it rolled forward is never needed again.
    pub fn start(opened: Opened, recovered: Recovered, opts: EngineOptions) -> anyhow::Result<Engine> {
        let sb = opened.sb.clone();
        let info = ExportInfo {
            name: opts.name.clone(),
            description: format!("swan {} array {}", sb.kind, sb.uuid_string()),
            size_bytes: recovered.scheme.volume_blocks() * BLOCK as u64,
            min_block: BLOCK as u32,
            preferred_block: BLOCK as u32,
            // A write GC could not always make room for would wait for ever on a full
            // volume: advertise no more than the scheme can always place.
            max_payload: max_payload(recovered.scheme.largest_write_blocks()),
            read_only: opts.read_only,
            // Every FLUSH syncs every member and journals every change, whichever
            // connection made it: multi-conn is honest.
            multi_conn: true,
        };
        let (tx, rx) = mpsc::channel();
        let mut worker = Worker::new(opened, recovered, opts)?;
        let tx = Arc::new(Mutex::new(tx));
        if let Some(pool) = worker.pool.as_mut() {
            // Weakly: the engine's thread must not keep its own channel open.
            let engine = Arc::downgrade(&tx);
            pool.set_retry(Arc::new(move |offset, len, done| {
                let req = BlockRequest { op: BlockOp::Read, offset, len, fua: false };
                let sent = match engine.upgrade() {
                    Some(tx) => tx.lock().expect("engine sender").send(Msg::Retry(req, done)).map_err(|e| e.0),
                    None => Err(Msg::Retry(req, done)),
                };
                if let Err(Msg::Retry(_, done)) = sent {
                    done(Err(Errno::Io));
                }
            }));
        }
        worker.open_for_writes()?;
        let thread = std::thread::Builder::new().name("swan-engine".into()).spawn(move || worker.run(rx))?;
        Ok(Engine { tx, info, thread: Mutex::new(Some(thread)) })
    }

    fn send(&self, msg: Msg) -> Result<(), Msg> {
        self.tx.lock().expect("engine sender").send(msg).map_err(|e| e.0)
    }

    pub fn status(&self) -> Option<StatusReport> {
        let (tx, rx) = mpsc::channel();
        self.send(Msg::Status(tx)).ok()?;
        rx.recv_timeout(Duration::from_secs(10)).ok()
    }

    /// Mark member `m` failed (what `swan fail` asks).
    pub fn fail(&self, m: u32) -> Result<String, String> {
        let (tx, rx) = mpsc::channel();
        self.send(Msg::Fail(m, tx)).map_err(|_| "the server is stopping".to_string())?;
        rx.recv_timeout(Duration::from_secs(60)).map_err(|_| "the engine did not answer".to_string())?
    }

    /// Start rebuilding failed member `m` onto `path` (what `swan replace` asks).
    pub fn replace(&self, m: u32, path: PathBuf) -> Result<String, String> {
        let (tx, rx) = mpsc::channel();
        self.send(Msg::Replace(m, path, tx)).map_err(|_| "the server is stopping".to_string())?;
        rx.recv_timeout(Duration::from_secs(60)).map_err(|_| "the engine did not answer".to_string())?
    }

    /// Finish queued requests, make everything durable, write a checkpoint and stop.
    pub fn shutdown(&self) -> anyhow::Result<()> {
        let _ = self.send(Msg::Stop);
        match self.thread.lock().expect("engine thread").take() {
            Some(t) => t.join().map_err(|_| anyhow::anyhow!("the engine thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Backend for Engine {
    fn info(&self) -> ExportInfo {
        self.info.clone()
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        if let Err(Msg::Req(_, done)) = self.send(Msg::Req(req, done)) {
            done(Err(Errno::Shutdown));
        }
    }
}

/// A GC job being carried out a member operation at a time.
struct GcRun {
    id: GcJobId,
    plan: IoPlan,
    staged: Vec<u8>,
    phase: usize,
    next: usize,
    /// Emulation: the phase may not start before the previous one completes on the model.
    not_before: Instant,
    phase_end: Instant,
    /// Destination slots of blocks that failed their CRC and could not be rebuilt: their
    /// recorded CRC is made wrong, so reads of them fail ([`gc_verify`]).
    poisoned: Vec<u64>,
}

/// A reply held until the emulated SSDs would have completed the request.
/// Ordered by (`at`, `seq`): `seq` keeps replies due at the same instant in issue order.
struct Held {
    at: Instant,
    seq: u64,
    done: Completion,
    reply: Reply,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Where a plan's bytes come from and go to.
struct Buffers<'a> {
    user: &'a [u8],
    /// The same payload, shareable with the pool's threads (log-structured user writes).
    shared: Option<Arc<Vec<u8>>>,
    reply: &'a mut [u8],
    staged: &'a mut Vec<u8>,
    /// (member, block) → staged slot of this plan's reads, for parity read-modify-write.
    old: HashMap<(u32, u64), u32>,
    summaries: HashMap<u64, Vec<u8>>,
}

/// User data bound for consecutive blocks of one member, gathered from the payloads of the
/// requests of a batch.
struct Gathered {
    member: u32,
    block: u64,
    data: Vec<u8>,
}

struct Worker {
    sb: Superblock,
    /// Shared with the read pool, which reads from them beside this thread; replaced
    /// whole when `swan replace` puts a new member in.
    members: Arc<Members>,
    /// A replacement member being rebuilt.
    rebuild: Option<Rebuild>,
    /// The request being served must not go to the pool.
    no_pool: bool,
    /// Where plain user reads and large user-data writes are carried out (none while
    /// emulating: the model times every operation).
    pool: Option<IoPool>,
    /// Requests with writes still in the pool: their reply (index into `replies`; none for
    /// a FUA write, which waits for a sync point) and logical blocks.
    pooled: Vec<(Option<usize>, std::ops::Range<u64>)>,
    /// The request being carried out handed a write to the pool.
    pooled_now: bool,
    /// User data of this batch's log-structured writes, gathered into runs of consecutive
    /// blocks per member and not yet written ([`Worker::flush_runs`]); `run_bytes` in all.
    runs: Vec<Gathered>,
    run_bytes: usize,
    /// Emptied run buffers, for the next runs ([`SPARE_RUNS`]).
    spare_runs: Vec<Vec<u8>>,
    /// Runs handed to the pool, taken back once it has written them.
    pooled_runs: Vec<Arc<Vec<u8>>>,
    /// Errors of run writes done on this thread, for the next [`Worker::wait_writes`].
    run_errors: Vec<MemberError>,
    /// CRC32C of every block written into each open segment, by slot, until the segment's
    /// summary carries them (FORMAT.md, summary).
    open_crcs: HashMap<u64, Vec<u32>>,
    /// CRCs of blocks in segments adopted at recovery, by slot ([`Recovered::adopted_crcs`]);
    /// looked up only while the slot's segment is still adopted (no seal, not open).
    adopted_crcs: HashMap<u64, u32>,
    scheme: Box<dyn Scheme>,
    kind: SchemeKind,
    read_only: bool,
    verbose: bool,
    ring: Ring,
    checkpoint_seq: u64,
    next_slot: u32,
    /// Changes not journaled yet, with the CRC of the block each maps.
    pending: Vec<journal::Entry>,
    changes: Vec<MapChange>,
    /// Tail records written since the last synced one.
    tail_records: bool,
    /// The last tail record, while it is one block and the newest record: the next batch's
    /// entries are added to it and its block rewritten, rather than a block per batch.
    open_tail: Option<OpenTail>,
    /// Replies of the current batch, sent once its tail record is written.
    replies: Vec<(Completion, Reply)>,
    gc_jobs: Vec<u64>,
    plan: IoPlan,
    follow: IoPlan,
    /// Running XOR of each open stripe row's data, keyed (parity group, row): the parity a
    /// row gets when its last data block is written. Log-structured rows fill across many
    /// requests, so the accumulator outlives a plan.
    parity: HashMap<(u32, u64), OpenRow>,
    parity_width: u32,
    has_parity: bool,
    queue: VecDeque<(BlockRequest, Completion)>,
    sync_waiters: Vec<Completion>,
    dirty: bool,
    release_due: bool,
    release_pending_since: Option<Instant>,
    gc_runs: VecDeque<GcRun>,
    gc_broken: Option<String>,
    /// Where a GC victim's summary is read.
    summary_buf: Vec<u8>,
    emu: Option<Emulator>,
    held: BinaryHeap<Reverse<Held>>,
    held_seq: u64,
    stats: Vec<MemberStatus>,
    started: Instant,
    sync_points: u64,
    journal_records: u64,
    checkpoints: u64,
    stopping: bool,
    clock: Clock,
    /// Front-end rotations seen so far (noted to a member tap when it changes).
    rotations_seen: u64,
    /// Set by the first error that may have cost durability (a failed sync, data write or
    /// journal write): from then on every FLUSH and FUA write fails, until a restart
    /// recovers what is durable. A sync that failed cannot be retried: Linux marks the pages
    /// of a failed writeback clean, so a later fdatasync succeeds without their data.
    durability_lost: Option<String>,
    /// Logical blocks whose last write failed: reads of them fail rather than return
    /// whatever the slot the map now names holds. A later write or trim clears them.
    failed_lbas: HashSet<u64>,
    /// Checkpoint after this many journal records (0: only when the ring is half full).
    checkpoint_every: u64,
    records_since_checkpoint: u64,
    /// Members failed while serving (a sync point that saw one fail relocates again).
    failures: u64,
    /// `failures` as of the last sync point.
    failures_synced: u64,
    gc_checks: gc_verify::GcChecks,
    /// Read verification counters, shared with the pool's readers.
    read_checks: Arc<crate::pool::ReadChecks>,
    /// Segments recovery found sealed by an unsynced record: their parity is rewritten
    /// before serving writes ([`Recovered::unsynced_seals`]).
    unsynced_seals: Vec<u64>,
    /// In-place RAID: the CRC of every member block ([`crate::blockcrc`]); None for log
    /// schemes (their summaries hold CRCs) and arrays made before the table existed.
    crcs: Option<crate::blockcrc::BlockCrcs>,
    /// The last stop was clean and nothing came after it ([`Recovered::parity_whole`]):
    /// adopted segments need no new parity.
    parity_whole: bool,
}

impl Worker {
    fn new(opened: Opened, rec: Recovered, opts: EngineOptions) -> anyhow::Result<Self> {
        let sb = opened.sb;
        let kind = sb.kind;
        let parity_width = match kind {
            SchemeKind::Swan(_) => sb.ssds_per_rgroup,
            _ => sb.members,
        };
        if opts.verbose {
            eprintln!(
                "swan: array {} ({kind}, {} members): checkpoint {} + {} journal records ({} changes) replayed",
                sb.uuid_string(),
                sb.members,
                rec.checkpoint_seq,
                rec.records_replayed,
                rec.changes_replayed
            );
        }
        let stats = opened
            .members
            .iter()
            .map(|m| MemberStatus { path: m.path().display().to_string(), ..MemberStatus::default() })
            .collect();
        let threads = if opened.members.iter().any(Member::is_direct) { DIRECT_THREADS } else { THREADS };
        let pool = if opts.emulate.is_none() { Some(IoPool::start(threads)?) } else { None };
        let read_checks = pool.as_ref().map_or_else(Arc::default, |p| Arc::clone(&p.checks));
        Ok(Worker {
            members: Arc::new(opened.members),
            rebuild: None,
            no_pool: false,
            pool,
            pooled: Vec::new(),
            pooled_now: false,
            runs: Vec::new(),
            run_bytes: 0,
            spare_runs: Vec::new(),
            pooled_runs: Vec::new(),
            run_errors: Vec::new(),
            open_crcs: HashMap::new(),
            adopted_crcs: rec.adopted_crcs,
            scheme: rec.scheme,
            kind,
            read_only: opts.read_only,
            verbose: opts.verbose,
            ring: rec.ring,
            checkpoint_seq: rec.checkpoint_seq,
            next_slot: rec.next_slot,
            unsynced_seals: rec.unsynced_seals,
            parity_whole: rec.parity_whole,
            crcs: None,
            pending: Vec::new(),
            changes: Vec::new(),
            tail_records: false,
            open_tail: None,
            replies: Vec::new(),
            gc_jobs: vec![0; sb.rgroups as usize],
            plan: IoPlan::new(),
            follow: IoPlan::new(),
            parity: HashMap::new(),
            parity_width,
            has_parity: kind.raid() != swan_core::geometry::RaidLevel::Raid0,
            queue: VecDeque::new(),
            sync_waiters: Vec::new(),
            dirty: false,
            release_due: false,
            release_pending_since: None,
            gc_runs: VecDeque::new(),
            gc_broken: None,
            summary_buf: Vec::new(),
            emu: opts.emulate,
            held: BinaryHeap::new(),
            held_seq: 0,
            stats,
            started: Instant::now(),
            sync_points: 0,
            journal_records: 0,
            checkpoints: 0,
            stopping: false,
            clock: Clock::Wall,
            rotations_seen: 0,
            durability_lost: None,
            failed_lbas: HashSet::new(),
            failures: 0,
            failures_synced: 0,
            gc_checks: Default::default(),
            read_checks,
            checkpoint_every: 0,
            records_since_checkpoint: 0,
            sb,
        })
    }

    /// Before serving: note degraded R-groups, give adopted segments their parity, make
    /// everything durable and write a fresh checkpoint (the journal just rolled forward is
    /// then never needed again).
    fn open_for_writes(&mut self) -> anyhow::Result<()> {
        for m in 0..self.members.len() as u32 {
            if !self.members.is_healthy(m) {
                eprintln!(
                    "swan: member {m} ({}) is failed: serving degraded (swan replace --member {m} NEW ...)",
                    self.members[m as usize].path().display()
                );
                self.scheme.set_failed_member(m, true);
            }
        }
        self.open_block_crcs()?;
        if self.read_only {
            return Ok(());
        }
        let rows = self.reparity_adopted()?;
        if self.verbose && rows > 0 {
            eprintln!("swan: parity written for {rows} rows of segments open at the last stop");
        }
        self.sync_all()?;
        self.checkpoint()?;
        Ok(())
    }

    /// In-place RAID: load the CRC table; after an unclean stop, resync first (parity and
    /// CRCs from the data); then mark the tables dirty until the next clean stop.
    fn open_block_crcs(&mut self) -> anyhow::Result<()> {
        use crate::blockcrc::{BlockCrcs, Opened};
        if self.kind.is_log_structured() || self.sb.crc_table_blocks == 0 {
            return Ok(());
        }
        let (crcs, state) = BlockCrcs::load(&self.members, &self.sb)?;
        let crcs = match (state, self.read_only) {
            (Opened::Clean, _) => crcs,
            (Opened::Dirty, true) => {
                eprintln!(
                    "swan: the array was not stopped cleanly and is opened read-only: no resync, and reads are not \
                     verified against block CRCs (serve it read-write once to resync)"
                );
                return Ok(());
            }
            (Opened::Dirty, false) => {
                eprintln!(
                    "swan: the array was not stopped cleanly: resyncing (every stripe row's parity and every block's \
                     CRC from the data) before serving"
                );
                let (crcs, fixed) = BlockCrcs::resync(&self.members, &self.sb, |done, all| {
                    if self.verbose && all > 0 {
                        eprintln!("swan: resync {:.0} %", done as f64 * 100.0 / all as f64);
                    }
                })?;
                eprintln!("swan: resync done: {fixed} stripe row(s) had parity that did not match their data");
                crcs
            }
        };
        if !self.read_only {
            crcs.mark_dirty(&self.members, &self.sb)?;
        }
        self.crcs = Some(crcs);
        Ok(())
    }

    fn run(mut self, rx: Receiver<Msg>) -> anyhow::Result<()> {
        loop {
            if !self.receive(&rx) && self.queue.is_empty() {
                // Every sender is gone: nobody can ask for anything more.
                self.stopping = true;
            }
            self.round();
            if self.stopping && self.queue.is_empty() {
                break;
            }
        }
        self.finish()
    }

    fn now(&self) -> Instant {
        self.clock.now()
    }

    /// One round: serve a batch, advance GC, journal the batch, reply, sync if asked.
    fn round(&mut self) {
        self.deliver_held();
        self.fail_members_reads_met();
        self.serve_requests();
        self.protect_after_failure();
        self.advance_gc();
        self.protect_after_failure();
        // A rebuild takes a slice per round, more while no user request waits.
        for _ in 0..if self.queue.is_empty() { 8 } else { 1 } {
            if self.rebuild.is_none() {
                break;
            }
            self.rebuild_step();
        }
        self.protect_after_failure();
        self.release_check();
        self.journal_tail();
        // Each connection's replies of the batch go out in one send.
        let replies = std::mem::take(&mut self.replies);
        gather::replies(|| {
            for (done, reply) in replies {
                done(reply);
            }
        });
        if !self.sync_waiters.is_empty() || self.release_due {
            self.sync_point();
        }
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        // Shutdown: reads handed out and replies still held by emulation go out now; then
        // make it all durable.
        self.wait_writes();
        drop(self.pool.take());
        while let Some(Reverse(h)) = self.held.pop() {
            (h.done)(h.reply);
        }
        if !self.read_only {
            self.sync_all()?;
            // The rows still filling get their parity, so that a member missing at the next
            // start (a stale or lost one) loses nothing; the checkpoint says so.
            let rows = self.parity_of_open_segments()?;
            if self.verbose && rows > 0 {
                eprintln!("swan: parity written for {rows} rows of open segments");
            }
            self.sync_all()?;
            self.checkpoint_as(true)?;
            if let Some(crcs) = &self.crcs {
                crcs.write_clean(&self.members, &self.sb)?;
            }
        }
        Ok(())
    }

    /// Wait for work (or take what is there without waiting when busy). False once every
    /// sender has hung up.
    fn receive(&mut self, rx: &Receiver<Msg>) -> bool {
        let busy = !self.queue.is_empty() || !self.gc_runs.is_empty() || self.release_due || self.rebuild.is_some();
        let idle_wait =
            if self.release_pending_since.is_some() { Duration::from_millis(20) } else { Duration::from_millis(100) };
        let first = if busy {
            match rx.try_recv() {
                Ok(m) => Some(m),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => return false,
            }
        } else {
            let wait = self
                .held
                .peek()
                .map_or(idle_wait, |Reverse(h)| h.at.saturating_duration_since(self.now()).min(idle_wait));
            match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => {
                    // Idle: the spare run buffers go back (memory at rest is the map's).
                    self.spare_runs = Vec::new();
                    None
                }
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        };
        let mut next = first;
        while let Some(m) = next {
            match m {
                Msg::Req(r, d) => self.queue.push_back((r, d)),
                Msg::Retry(r, d) => {
                    // Fail the member first, then read around it on this thread.
                    self.fail_members_reads_met();
                    self.no_pool = true;
                    let _ = self.serve(r, d);
                    self.no_pool = false;
                }
                Msg::Status(tx) => {
                    let _ = tx.send(self.status());
                }
                Msg::Fail(m, tx) => {
                    let _ = tx.send(self.fail_by_request(m));
                }
                Msg::Replace(m, path, tx) => {
                    let _ = tx.send(self.start_replace(m, &path));
                }
                Msg::Stop => self.stopping = true,
            }
            next = rx.try_recv().ok();
        }
        true
    }

    /// Reply once this batch's tail record is written (and, emulating, once the model says).
    fn complete(&mut self, done: Completion, reply: Reply, at: Option<Instant>) {
        match at {
            Some(t) if t > self.now() => {
                self.held_seq += 1;
                self.held.push(Reverse(Held { at: t, seq: self.held_seq, done, reply }));
            }
            _ => self.replies.push((done, reply)),
        }
    }

    fn deliver_held(&mut self) {
        let now = self.now();
        while self.held.peek().is_some_and(|Reverse(h)| h.at <= now) {
            let Reverse(h) = self.held.pop().expect("peeked");
            (h.done)(h.reply);
        }
    }

    fn serve_requests(&mut self) {
        for _ in 0..BATCH {
            let Some((req, done)) = self.queue.pop_front() else { break };
            if let Some((req, done)) = self.serve(req, done) {
                // No space until GC frees some: keep it first in line and let GC run.
                self.queue.push_front((req, done));
                self.collect_for_space();
                break;
            }
        }
        // The batch's journal record and replies follow: its data must be written first.
        self.wait_writes();
    }

    /// Wait for the writes handed to the pool; a request whose write failed is answered
    /// with an I/O error instead, and so is the next sync point.
    pub(super) fn wait_writes(&mut self) {
        self.flush_runs();
        // Run writes done here were spared already where they could be (`member_write`).
        let mut errors = std::mem::take(&mut self.run_errors);
        if let Some(pool) = &self.pool {
            let mut pooled = pool.wait_writes();
            // The pool has dropped its references to the runs it wrote.
            for run in std::mem::take(&mut self.pooled_runs) {
                if let Ok(run) = Arc::try_unwrap(run) {
                    self.spare_run(run);
                }
            }
            // A member that failed under a pooled write is spared if its parity group can
            // spare it: the parity this thread computed from the same data keeps the write.
            pooled.retain(|e| {
                let m = self.members.iter().position(|x| x.path() == e.path());
                !(e.is_io_error() && m.is_some_and(|m| self.fail_member(m as u32, &e.to_string())))
            });
            errors.extend(pooled);
        }
        if !errors.is_empty() {
            for e in &errors {
                self.log_error(e);
            }
            // Which write failed is not known here: every request of the batch whose data
            // went to the pool or into a run fails, and its blocks read as errors until
            // rewritten.
            for (reply, blocks) in std::mem::take(&mut self.pooled) {
                if let Some(i) = reply {
                    self.replies[i].1 = Err(Errno::Io);
                }
                self.failed_lbas.extend(blocks);
            }
            // The map names slots the data may never have reached: no journal record or
            // checkpoint may claim them durable from now on (what a run carried that a
            // relocation off a failed member moved, say, has no reply to fail).
            self.durability_lost.get_or_insert_with(|| format!("a user-data write failed: {}", errors[0]));
        }
        self.pooled.clear();
    }

    /// Carry out one request. Gives it back if the array has no space for it yet.
    fn serve(&mut self, mut req: BlockRequest, done: Completion) -> Option<(BlockRequest, Completion)> {
        let block = BLOCK as u64;
        if req.offset % block != 0 || u64::from(req.len) % block != 0 {
            done(Err(Errno::Inval));
            return None;
        }
        let lba = req.offset / block;
        let blocks = req.len / BLOCK as u32;
        let writes = !matches!(req.op, BlockOp::Read | BlockOp::Flush);
        if writes && self.read_only {
            done(Err(Errno::Perm));
            return None;
        }
        if req.op == BlockOp::Read {
            // A read may name slots a pooled write of this batch is still filling (and
            // that write may fail).
            self.wait_writes();
        }
        if !self.failed_lbas.is_empty() {
            let range = lba..lba + u64::from(blocks);
            if req.op == BlockOp::Read && range.clone().any(|b| self.failed_lbas.contains(&b)) {
                done(Err(Errno::Io));
                return None;
            }
        }
        let (op, payload): (ReqOp, Option<Vec<u8>>) = match &req.op {
            BlockOp::Read => (ReqOp::Read, None),
            BlockOp::Flush => {
                self.sync_waiters.push(done);
                return None;
            }
            BlockOp::Trim => (ReqOp::Trim, None),
            // An unmapped block of a log array reads as zeroes, and the unmap is journaled
            // like a write; in-place RAID must write the zeroes.
            BlockOp::WriteZeroes { may_trim: true } if self.kind.is_log_structured() => (ReqOp::Trim, None),
            BlockOp::WriteZeroes { .. } => (ReqOp::Write, Some(vec![0u8; req.len as usize])),
            BlockOp::Write(_) => (ReqOp::Write, None),
        };
        let r = Request { op, lba, blocks, fua: false };
        let mut plan = std::mem::take(&mut self.plan);
        let submitted = self.scheme.submit(&r, &mut plan);
        self.note_rotation();
        let outcome = match submitted {
            Err(_) => {
                self.plan = plan;
                done(Err(Errno::Inval));
                return None;
            }
            Ok(Submitted::NoSpace) => {
                self.plan = plan;
                return Some((req, done));
            }
            Ok(Submitted::Planned) if op == ReqOp::Read && self.pool_can_read(&plan) => {
                match self.read_from_cache(&plan, lba, req.len as usize) {
                    Some(Ok(reply)) => self.complete(done, Ok(reply), None),
                    Some(Err(())) => done(Err(Errno::Io)),
                    None => self.hand_out_read(&plan, lba, req.len as usize, done),
                }
                self.plan = plan;
                return None;
            }
            Ok(Submitted::Planned) => {
                let mut reply = if op == ReqOp::Read { vec![0u8; req.len as usize] } else { Vec::new() };
                // Log-structured user data may be written by the pool: share it rather than
                // copy it (the request is not given back once planned).
                let mut payload = payload;
                let shared = match &mut req.op {
                    BlockOp::Write(data) if self.pool.is_some() && self.kind.is_log_structured() => {
                        Some(Arc::new(std::mem::take(data)))
                    }
                    _ if self.pool.is_some() && self.kind.is_log_structured() => payload.take().map(Arc::new),
                    _ => None,
                };
                let user: &[u8] = match (&shared, &req.op, &payload) {
                    (Some(data), _, _) => data,
                    (None, BlockOp::Write(data), _) => data,
                    (None, _, Some(zeroes)) => zeroes,
                    _ => &[],
                };
                let mut staged = Vec::new();
                // Before the plan runs: a write that seals its segment writes the summary,
                // which carries the CRC of every block, these included.
                self.journal_changes(|_, lba, _| {
                    let at = (lba - r.lba) as usize * BLOCK;
                    crc32c::crc32c(&user[at..at + BLOCK])
                });
                self.pooled_now = false;
                let res = self.execute(&plan, user, shared.clone(), &mut reply, &mut staged, self.now());
                if op == ReqOp::Read && res.is_ok() && !self.verify_engine_read(&plan, lba, &mut reply) {
                    self.plan = plan;
                    done(Err(Errno::Io));
                    return None;
                }
                self.plan = plan;
                res.map(|at| (reply, at))
            }
        };
        if writes {
            self.dirty = true;
        }
        match outcome {
            Ok((reply, at)) => {
                let blocks_written = lba..lba + u64::from(blocks);
                if req.fua && writes {
                    // A pooled or gathered write that fails ends durability (`wait_writes`),
                    // so this sync point fails.
                    self.sync_waiters.push(done);
                    if self.pooled_now {
                        self.pooled.push((None, blocks_written));
                    }
                } else {
                    self.complete(done, Ok(reply), at);
                    if self.pooled_now {
                        // Without emulation `complete` queues the reply last in `replies`.
                        self.pooled.push((Some(self.replies.len() - 1), blocks_written));
                    }
                }
            }
            Err(e) => {
                self.log_error(&e);
                if writes {
                    // The map may now name a slot the data never reached.
                    self.failed_lbas.extend(lba..lba + u64::from(blocks));
                    self.durability_lost.get_or_insert_with(|| e.to_string());
                }
                done(Err(Errno::Io));
                return None;
            }
        }
        if writes && !self.failed_lbas.is_empty() {
            for b in lba..lba + u64::from(blocks) {
                self.failed_lbas.remove(&b);
            }
        }
        None
    }

    /// Whether the read pool can carry `plan` out: one phase of plain member reads into the
    /// reply (and at least one: a read of unmapped blocks is answered here at once).
    fn pool_can_read(&self, plan: &IoPlan) -> bool {
        self.pool.is_some()
            && !self.no_pool
            // In-place blocks are overwritten where they are: a pooled read could meet a
            // write to the same block between its check and its read. The engine reads them.
            && self.crcs.is_none()
            && plan.phase_count() == 1
            && !plan.ios().is_empty()
            && plan.ios().iter().all(|io| matches!(io.kind, IoKind::Read(Dst::User { .. })))
            // A failed member's blocks are rebuilt here, where the open rows' parity is.
            && plan.ios().iter().all(|io| self.members.is_healthy(io.member))
    }

    /// A planned read the page cache holds whole, carried out here: cheaper than handing
    /// it to an I/O thread, whose wake-up and reply cost more than the copy (buffered 4 KiB
    /// random reads spent two fifths of the server's samples switching threads), and its
    /// reply goes out with the round's others. None: some block is not cached (or the
    /// member cannot say); the pool reads it. Err: a block failed its check and could not
    /// be rebuilt.
    fn read_from_cache(&mut self, plan: &IoPlan, first: u64, len: usize) -> Option<Result<Vec<u8>, ()>> {
        let mut reply = vec![0u8; len];
        for io in plan.ios() {
            let IoKind::Read(Dst::User { offset }) = io.kind else { return None };
            let at = offset as usize * BLOCK;
            let buf = &mut reply[at..at + io.count as usize * BLOCK];
            if !self.members[io.member as usize].read_if_cached(io.block, buf) {
                return None;
            }
        }
        for io in plan.ios() {
            self.stats[io.member as usize].bytes_read += u64::from(io.count) * BLOCK as u64;
        }
        Some(if self.verify_engine_read(plan, first, &mut reply) { Ok(reply) } else { Err(()) })
    }

    /// Hand a planned read to the pool; it replies from there.
    fn hand_out_read(&mut self, plan: &IoPlan, first: u64, len: usize, done: Completion) {
        let pool = self.pool.as_ref().expect("checked by pool_can_read");
        let mut pieces = Vec::with_capacity(plan.ios().len());
        for io in plan.ios() {
            let IoKind::Read(Dst::User { offset }) = io.kind else { unreachable!("checked by pool_can_read") };
            pieces.push(Piece { member: io.member, block: io.block, count: io.count, offset });
            self.stats[io.member as usize].bytes_read += u64::from(io.count) * BLOCK as u64;
        }
        let checks = self.read_checks_for(first, len);
        pool.read(&self.members, pieces, len, checks, first * BLOCK as u64, done);
    }

    /// What each block of a read of `len` bytes from `first` must match: the CRC held for
    /// an open segment, or the one its sealed segment's summary recorded.
    fn read_checks_for(&self, first: u64, len: usize) -> Option<(swan_core::geometry::Geometry, Vec<Check>)> {
        self.scheme.log_array().map(|la| {
            let geo = *la.geometry();
            let checks = (first..first + (len / BLOCK) as u64)
                .map(|lba| {
                    let pba = la.l2p().get(lba);
                    if pba == swan_core::l2p::UNMAPPED {
                        return Check::Nothing;
                    }
                    let (segment, slot) = geo.split_pba(pba);
                    if let Some(table) = self.open_crcs.get(&segment) {
                        return Check::Crc(table[slot as usize]);
                    }
                    match la.segments().seq(segment) {
                        // Adopted at recovery: no summary; the journal may have named it.
                        0 => self.adopted_crcs.get(&pba).map_or(Check::Nothing, |&crc| Check::Crc(crc)),
                        seq => Check::Summary { segment, seq, slot, lba },
                    }
                })
                .collect();
            (geo, checks)
        })
    }

    /// Verify a read the engine carried out itself (the pool's reads verify themselves),
    /// repairing from parity what it can. False: the read must fail.
    fn verify_engine_read(&self, plan: &IoPlan, first: u64, reply: &mut [u8]) -> bool {
        if self.crcs.is_some() {
            let mut ok = true;
            for io in plan.ios() {
                let IoKind::Read(Dst::User { offset }) = io.kind else { continue };
                let at = offset as usize * BLOCK;
                ok &= self.verify_member_blocks(io.member, io.block, &mut reply[at..at + io.count as usize * BLOCK]);
            }
            return ok;
        }
        let Some((geo, checks)) = self.read_checks_for(first, reply.len()) else { return true };
        let v = crate::pool::Verify { geo: Some(geo), checks, counts: Arc::clone(&self.read_checks) };
        for io in plan.ios() {
            let IoKind::Read(Dst::User { offset }) = io.kind else { continue };
            for k in 0..io.count {
                let i = (offset + k) as usize;
                let block = &mut reply[i * BLOCK..(i + 1) * BLOCK];
                if !crate::pool::verify_block(&self.members, &v, i, io.member, io.block + u64::from(k), block) {
                    return false;
                }
            }
        }
        true
    }

    /// In-place RAID: check blocks read from member `m` at `block` against the block CRC
    /// table, as [`crate::pool::verify_block`] checks any read: a mismatch is rebuilt from
    /// its stripe row, checked again and written back. False if a block is bad and cannot
    /// be rebuilt: the read must fail. Every block is checked (and counted) either way.
    fn verify_member_blocks(&self, m: u32, block: u64, buf: &mut [u8]) -> bool {
        let Some(crcs) = self.crcs.as_ref() else { return true };
        let checks = (0..(buf.len() / BLOCK) as u64).map(|k| Check::Row(crcs.expected(m, block + k).unwrap_or(0)));
        let v = crate::pool::Verify { geo: None, checks: checks.collect(), counts: Arc::clone(&self.read_checks) };
        buf.chunks_exact_mut(BLOCK).enumerate().fold(true, |ok, (k, data)| {
            crate::pool::verify_block(&self.members, &v, k, m, block + k as u64, data) && ok
        })
    }

    /// Move the scheme's new changes into the journal queue; `crc_of(worker, lba, pba)` gives
    /// the CRC of the block a map change puts `lba` at (user writes: from the payload; GC
    /// moves: from the staged copy; anything else: read back from the member).
    fn journal_changes(&mut self, crc_of: impl Fn(&Self, u64, u64) -> u32) {
        let mut changes = std::mem::take(&mut self.changes);
        self.scheme.take_changes(&mut changes);
        for c in changes.drain(..) {
            let crc = match c {
                MapChange::Map { lba, pba } if pba != swan_core::l2p::UNMAPPED => {
                    let crc = crc_of(self, lba, pba);
                    if let Some(la) = self.scheme.log_array() {
                        // Kept until the segment's summary is written with it (open segments
                        // only: a few per R-group).
                        let geo = la.geometry();
                        let (seg, slot) = geo.split_pba(pba);
                        let table = self.open_crcs.entry(seg).or_insert_with(|| vec![0; geo.payload_slots() as usize]);
                        table[slot as usize] = crc;
                    }
                    crc
                }
                _ => 0,
            };
            self.pending.push((c, crc));
        }
        self.changes = changes;
    }

    /// [`Worker::journal_changes`] for changes whose blocks are read back.
    fn journal_changes_read_back(&mut self) {
        self.journal_changes(|w, _, pba| w.block_crc(pba));
    }

    /// Write the batch's tail record (not synced): the replies that follow it survive a
    /// crash of this process.
    fn journal_tail(&mut self) {
        self.journal_changes_read_back();
        if self.pending.is_empty() || !self.kind.is_log_structured() {
            self.pending.clear();
            return;
        }
        if let Err(e) = self.append_records(false) {
            // The batch's changes are not in the journal: no later record may claim to
            // follow on from it.
            eprintln!("swan: journal write failed: {e}");
            self.durability_lost.get_or_insert_with(|| e.to_string());
        }
    }

    /// CRC32C of the block in physical slot `pba`, read back from its member (or rebuilt
    /// from its row when the member has failed). It takes `&self`, unlike `member_read`,
    /// because it runs inside journal record building: a read error here does not fail the
    /// member, it yields CRC 0, which recovery finds wrong (bar a 2^-32 chance) and so
    /// drops the tail from that record on.
    fn block_crc(&self, pba: u64) -> u32 {
        let Some(la) = self.scheme.log_array() else { return 0 };
        let geo = la.geometry();
        let (seg, slot) = geo.split_pba(pba);
        let (m, at) = geo.slot_location(seg, slot);
        let mut b = vec![0u8; BLOCK];
        let read = match self.members.is_healthy(m) {
            true => self.members[m as usize].read(at, &mut b),
            false => self.reconstruct(m, at, &mut b),
        };
        match read {
            Ok(()) => crc32c::crc32c(&b),
            Err(_) => 0,
        }
    }

    /// Append `pending` as records; a synced one is made durable. Checkpoints instead
    /// when the ring is half full.
    ///
    /// A batch's tail entries join the open tail record while it still fits one block: the
    /// block is written again whole, with the same sequence number and more entries. A
    /// batch of a few requests so costs its entries (16 bytes each), not a block of the
    /// ring, and checkpoints (which sync every member) come hundreds of times less often.
    /// Rewriting is safe because only an unsynced record at the head of the journal is
    /// rewritten: a torn rewrite (power loss) ends the replay at a record that no synced
    /// record follows, and after a kill -9 the page cache holds the last whole version.
    fn append_records(&mut self, synced: bool) -> anyhow::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        if !synced && !pending.is_empty() {
            if let Some(tail) =
                self.open_tail.as_mut().filter(|t| t.entries.len() + pending.len() <= journal::BLOCK_ENTRIES)
            {
                tail.entries.extend_from_slice(&pending);
                let record = journal::encode(&self.sb.uuid, tail.seq, false, &tail.entries);
                let at = tail.at;
                self.write_record(at, &record)?;
                // Counted as a record for `checkpoint_every`, which spaces checkpoints by
                // journal writes in the crash tests.
                self.records_since_checkpoint += 1;
                self.tail_records = true;
                return Ok(());
            }
        }
        self.open_tail = None;
        let mut chunks: Vec<&[journal::Entry]> = pending.chunks(journal::MAX_ENTRIES).collect();
        if chunks.is_empty() {
            chunks.push(&[]); // a synced marker with no changes of its own
        }
        for chunk in chunks {
            let seq = self.ring.next_seq;
            let record = journal::encode(&self.sb.uuid, seq, synced, chunk);
            let blocks = (record.len() / BLOCK) as u64;
            let due = self.checkpoint_every > 0 && self.records_since_checkpoint >= self.checkpoint_every;
            if !self.ring.has_room(blocks) || due {
                // The checkpoint holds the whole map as it is now: it covers everything.
                self.sync_all()?;
                self.checkpoint()?;
                self.tail_records = false;
                return Ok(());
            }
            let at = self.ring.place(blocks);
            self.write_record(at, &record)?;
            self.journal_records += 1;
            self.records_since_checkpoint += 1;
            self.open_tail = (!synced && blocks == 1).then(|| OpenTail { at, seq, entries: chunk.to_vec() });
        }
        if synced {
            for m in 0..self.meta_members() as u32 {
                self.member_sync(m)?;
            }
            self.tail_records = false;
        } else {
            self.tail_records = true;
        }
        Ok(())
    }

    /// Write a journal record at block `at` of the ring, on every metadata member.
    fn write_record(&mut self, at: u64, record: &[u8]) -> Result<(), MemberError> {
        let start = self.sb.journal_start();
        for m in 0..self.meta_members() as u32 {
            self.member_write(m, start + at, record)?;
        }
        Ok(())
    }

    /// A note to a member tap (crash replay, fault injection), if there is one.
    fn mark(&self, what: &'static str) {
        if let Some(m) = self.members.first() {
            m.mark(what);
        }
    }

    /// Note a front-end rotation to the tap (only looked for when there is a tap).
    fn note_rotation(&mut self) {
        if self.members.first().is_some_and(Member::has_tap) {
            let r = self.scheme.counters().front_rotations;
            if r != self.rotations_seen {
                self.rotations_seen = r;
                self.mark("rotation");
            }
        }
    }

    fn log_error(&self, e: &MemberError) {
        eprintln!("swan: I/O error: {e}");
    }

    /// Carry out every phase of `plan`; with emulation, return when the model completes it.
    fn execute(
        &mut self,
        plan: &IoPlan,
        user: &[u8],
        shared: Option<Arc<Vec<u8>>>,
        reply: &mut [u8],
        staged: &mut Vec<u8>,
        start: Instant,
    ) -> Result<Option<Instant>, MemberError> {
        let mut bufs = Buffers { user, shared, reply, staged, old: HashMap::new(), summaries: HashMap::new() };
        let mut t = start;
        // Without emulation (which times each operation), log-structured user data is
        // gathered into one write per run of consecutive blocks of a member, across the
        // requests of a batch: a stripe deals a request's blocks out to its members in
        // turn, and a log puts the next request's blocks right after, so written as they
        // come each 4 KiB would cost a system call (and, O_DIRECT, a device write). The
        // runs are written before anything reads the members or waits for writes
        // ([`Worker::wait_writes`]: before a read, a sync point, GC, the batch's journal
        // record and its replies), so nothing can see the difference but the member.
        let gather = self.emu.is_none() && self.kind.is_log_structured();
        for k in 0..plan.phase_count() {
            let mut end = t;
            if !self.runs.is_empty() && plan.phase(k).iter().any(|io| matches!(io.kind, IoKind::Read(_))) {
                // A read must find what was written before it: written, not only handed to
                // the pool.
                self.wait_writes();
            }
            for io in plan.phase(k) {
                if let (true, IoKind::Write(src @ Src::User { .. })) = (gather, io.kind) {
                    self.gather(io, src, &mut bufs);
                    continue;
                }
                if let Some(done) = self.do_io(io, &mut bufs, t)? {
                    end = end.max(done);
                }
            }
            t = end;
        }
        if self.run_bytes >= RUNS_FLUSH_AT {
            self.flush_runs();
        }
        // Every summary the plan sealed is on the members now: the scheme may forget it.
        self.scheme.summaries_written();
        Ok(self.emu.is_some().then_some(t))
    }

    /// Add user write `io` to the run it continues, or start a run. The request's reply
    /// now waits for the run's write, as for a pooled write.
    fn gather(&mut self, io: &MemberIo, src: Src, b: &mut Buffers<'_>) {
        let data = self.source(io, src, b);
        let next = |g: &Gathered| g.member == io.member && g.block + (g.data.len() / BLOCK) as u64 == io.block;
        self.run_bytes += data.len();
        // The newest run is the likeliest to continue: look from the back.
        match self.runs.iter_mut().rev().find(|g| next(g)) {
            Some(g) => g.data.extend_from_slice(&data),
            None => {
                let mut run = self.spare_runs.pop().unwrap_or_else(|| Vec::with_capacity(RUNS_FLUSH_AT));
                run.extend_from_slice(&data);
                self.runs.push(Gathered { member: io.member, block: io.block, data: run });
            }
        }
        self.pooled_now = true;
        self.stats[io.member as usize].user_bytes_written += (io.count as usize * BLOCK) as u64;
    }

    /// Write every gathered run; errors of those written here wait for `wait_writes`.
    fn flush_runs(&mut self) {
        self.run_bytes = 0;
        for g in std::mem::take(&mut self.runs) {
            if let Err(e) = self.write_gathered(g) {
                self.run_errors.push(e);
            }
        }
    }

    /// Write a gathered run: by the pool when it is large (or the member is O_DIRECT), else here.
    fn write_gathered(&mut self, g: Gathered) -> Result<(), MemberError> {
        let n = g.data.len();
        match &self.pool {
            // With O_DIRECT every write waits for the device: hand even small ones to the
            // pool, so the engine does not wait out each device write in turn.
            Some(pool)
                if (n >= POOL_WRITE_MIN || self.members[g.member as usize].is_direct())
                    && self.members.health(g.member) != Health::Failed =>
            {
                let data = Arc::new(g.data);
                self.pooled_runs.push(Arc::clone(&data));
                pool.write(&self.members, g.member, g.block, data, 0..n);
                self.pooled_now = true;
                Ok(())
            }
            _ => {
                let written = self.member_write(g.member, g.block, &g.data);
                self.spare_run(g.data);
                written
            }
        }
    }

    /// Keep an emptied run buffer for the next run, unless enough are kept or it grew
    /// past a run's usual size (one large request).
    fn spare_run(&mut self, mut run: Vec<u8>) {
        if self.spare_runs.len() < SPARE_RUNS && run.capacity() <= 2 * RUNS_FLUSH_AT {
            run.clear();
            self.spare_runs.push(run);
        }
    }

    /// One member operation. Returns its emulated completion, if emulating.
    fn do_io(&mut self, io: &MemberIo, b: &mut Buffers<'_>, issue: Instant) -> Result<Option<Instant>, MemberError> {
        let m = io.member as usize;
        let n = io.count as usize * BLOCK;
        let gc = io.class == IoClass::Gc;
        let emu_op = match io.kind {
            IoKind::Read(dst) => {
                match dst {
                    Dst::User { offset } => {
                        let at = offset as usize * BLOCK;
                        self.member_read(io.member, io.block, &mut b.reply[at..at + n])?;
                    }
                    Dst::Staged { slot } => {
                        let at = slot as usize * BLOCK;
                        if b.staged.len() < at + n {
                            b.staged.resize(at + n, 0);
                        }
                        self.member_read(io.member, io.block, &mut b.staged[at..at + n])?;
                        // In-place read-modify-write: old data or parity that rotted would
                        // carry its damage into the new parity.
                        if self.crcs.is_some() {
                            self.verify_member_blocks(io.member, io.block, &mut b.staged[at..at + n]);
                        }
                        if self.has_parity && !gc {
                            for i in 0..io.count {
                                b.old.insert((io.member, io.block + u64::from(i)), slot + i);
                            }
                        }
                    }
                }
                let s = &mut self.stats[m];
                *if gc { &mut s.gc_bytes_read } else { &mut s.bytes_read } += n as u64;
                EmuOp::Read
            }
            IoKind::Write(src) => {
                let shared = b.shared.clone();
                let data = self.source(io, src, b);
                if let Some(crcs) = self.crcs.as_mut() {
                    crcs.record(io.member, io.block, &data);
                }
                match (src, &self.pool, shared) {
                    (Src::User { offset }, Some(pool), Some(shared))
                        if n >= POOL_WRITE_MIN && self.members.health(io.member) != Health::Failed =>
                    {
                        let at = offset as usize * BLOCK;
                        pool.write(&self.members, io.member, io.block, shared, at..at + n);
                        self.pooled_now = true;
                    }
                    _ => self.member_write(io.member, io.block, &data)?,
                }
                let s = &mut self.stats[m];
                *if gc { &mut s.gc_bytes_written } else { &mut s.user_bytes_written } += n as u64;
                EmuOp::Write
            }
            IoKind::Trim => {
                if let Some(crcs) = self.crcs.as_mut() {
                    crcs.forget(io.member, io.block, u64::from(io.count));
                }
                self.member_trim(io.member, io.block, u64::from(io.count))?;
                self.stats[m].trims += 1;
                EmuOp::Trim
            }
            // Durability is the sync point's job (FLUSH and FUA both wait for one).
            IoKind::Flush => return Ok(None),
        };
        Ok(self.emu.as_mut().map(|e| e.complete_at(issue, io.member, emu_op, io.block, io.count, io.class)))
    }

    /// The bytes a member write carries (borrowed from the plan's buffers where they are
    /// there already: no copy of user data); data blocks also go into their row's parity.
    fn source<'b>(&mut self, io: &MemberIo, src: Src, b: &'b mut Buffers<'_>) -> Cow<'b, [u8]> {
        let n = io.count as usize * BLOCK;
        if let Src::Summary { segment, .. } = src {
            let blocks = self.summary_blocks();
            if let std::collections::hash_map::Entry::Vacant(slot) = b.summaries.entry(segment) {
                let crcs = self.open_crcs.remove(&segment);
                let encoded = match self.scheme.summary(segment) {
                    Some(mut s) => {
                        // Every live slot of a segment sealed in this run was written in it,
                        // so its CRC is in the table.
                        if let Some(crcs) = crcs {
                            for (e, crc) in s.entries.iter_mut().zip(crcs) {
                                e.crc = if e.lba == swan_core::summary::DEAD { 0 } else { crc };
                            }
                            s.block_crcs = true;
                        }
                        s.encode(blocks)
                    }
                    None => vec![0u8; blocks as usize * BLOCK],
                };
                slot.insert(encoded);
            }
        }
        let b: &'b Buffers<'_> = b;
        let data: Cow<'b, [u8]> = match src {
            Src::User { offset } => Cow::Borrowed(&b.user[offset as usize * BLOCK..offset as usize * BLOCK + n]),
            Src::Staged { slot } => {
                let at = slot as usize * BLOCK;
                Cow::Borrowed(&b.staged[at..at + n])
            }
            Src::Zero => Cow::Owned(vec![0u8; n]),
            Src::Summary { segment, index } => {
                let at = index as usize * BLOCK;
                Cow::Borrowed(&b.summaries[&segment][at..at + n])
            }
            Src::Parity { group, row } => {
                let mut p = self.parity.remove(&(group, row)).map_or_else(|| vec![0u8; BLOCK], |r| r.xor);
                if let Some(&slot) = b.old.get(&(io.member, row)) {
                    xor(&mut p, &b.staged[slot as usize * BLOCK..(slot as usize + 1) * BLOCK]);
                }
                return Cow::Owned(p);
            }
        };
        if self.has_parity {
            let group = io.member / self.parity_width;
            for i in 0..io.count as usize {
                let block = io.block + i as u64;
                let acc = self.parity.entry((group, block)).or_insert_with(OpenRow::new);
                xor(&mut acc.xor, &data[i * BLOCK..(i + 1) * BLOCK]);
                if !acc.written.contains(&io.member) {
                    acc.written.push(io.member);
                }
                // In-place read-modify-write: take the old data out of the parity.
                if let Some(&slot) = b.old.get(&(io.member, block)) {
                    xor(&mut acc.xor, &b.staged[slot as usize * BLOCK..(slot as usize + 1) * BLOCK]);
                }
            }
        }
        data
    }

    fn summary_blocks(&self) -> u32 {
        self.scheme.log_array().map_or(1, |la| la.geometry().summary_blocks)
    }

    /// Start the GC jobs the scheme wants and advance them: one member operation per round
    /// while user requests wait, every operation while none do.
    fn advance_gc(&mut self) {
        if self.gc_broken.is_some() || self.read_only {
            return;
        }
        self.start_gc_jobs();
        let steps = if self.queue.is_empty() { 16 } else { 1 };
        for _ in 0..steps {
            if !self.gc_step() {
                break;
            }
        }
    }

    fn start_gc_jobs(&mut self) {
        loop {
            let mut plan = IoPlan::new();
            let before = self.scheme.status().gc_groups;
            let geo = self.scheme.log_array().map(|la| *la.geometry());
            let started_job = match geo {
                // The array keeps no P2L of sealed segments: GC reads the victim's summary.
                Some(geo) => {
                    let mut source = MemberSummaries { members: &self.members, geo, buf: &mut self.summary_buf };
                    self.scheme.start_gc_with(&mut plan, &mut source)
                }
                None => self.scheme.start_gc(&mut plan),
            };
            let Some(id) = started_job else { break };
            self.mark("gc-start");
            let started = self.scheme.status().gc_groups & !before;
            if started != 0 {
                if let Some(n) = self.gc_jobs.get_mut(started.trailing_zeros() as usize) {
                    *n += 1;
                }
            }
            let now = self.now();
            self.gc_runs.push_back(GcRun {
                id,
                plan,
                staged: Vec::new(),
                phase: 0,
                next: 0,
                not_before: now,
                phase_end: now,
                poisoned: Vec::new(),
            });
        }
    }

    /// One member operation of the first GC job that may proceed. False if none could.
    fn gc_step(&mut self) -> bool {
        let now = self.now();
        let Some(i) = self.gc_runs.iter().position(|r| r.not_before <= now) else { return false };
        let mut run = self.gc_runs.remove(i).expect("position");
        if run.phase < run.plan.phase_count() {
            let done = match self.gc_read_span(&mut run) {
                Some(r) => r,
                None => self.gc_io(&mut run, now),
            };
            match done {
                Ok(n) => run.next += n,
                Err(e) => {
                    self.log_error(&e);
                    self.gc_broken = Some(e.to_string());
                    return false;
                }
            }
            if run.next == run.plan.phase(run.phase).len() {
                run.phase += 1;
                run.next = 0;
                run.not_before = run.phase_end;
                if run.phase == 1 {
                    // Read, not yet written: check what is about to be moved.
                    self.verify_gc_copies(&mut run);
                }
            }
            self.gc_runs.insert(i, run);
        } else {
            self.finish_gc(run);
        }
        true
    }

    /// The next operation of `run`'s current phase. Returns how many it carried out (1).
    fn gc_io(&mut self, run: &mut GcRun, now: Instant) -> Result<usize, MemberError> {
        let io = run.plan.phase(run.phase)[run.next];
        let mut staged = std::mem::take(&mut run.staged);
        let mut bufs = Buffers {
            user: &[],
            shared: None,
            reply: &mut [],
            staged: &mut staged,
            old: HashMap::new(),
            summaries: HashMap::new(),
        };
        let issue = run.not_before.max(now);
        let done = self.do_io(&io, &mut bufs, issue);
        run.staged = staged;
        if let Some(t) = done? {
            run.phase_end = run.phase_end.max(t);
        }
        Ok(1)
    }

    /// Without emulation: the next reads of `run`'s phase that fall on one member within a
    /// few blocks of each other, as one read. The victim's live blocks are read member by
    /// member in runs of consecutive live rows; in a victim half full of live blocks those
    /// runs are a few blocks long, and each would be its own system call (with O_DIRECT, its
    /// own device read, waited out here). Reading the dead blocks between them costs less.
    /// None: the next operation is not such a read.
    fn gc_read_span(&mut self, run: &mut GcRun) -> Option<Result<usize, MemberError>> {
        /// Dead blocks read through to join two reads, at most...
        const GAP: u64 = 16;
        /// ...and blocks per joined read.
        const SPAN: u64 = 256;
        if self.emu.is_some() {
            return None;
        }
        let phase = run.plan.phase(run.phase);
        let first = phase[run.next];
        let IoKind::Read(Dst::Staged { .. }) = first.kind else { return None };
        let mut end = first.block + u64::from(first.count);
        let mut n = 1;
        while let Some(io) = phase.get(run.next + n) {
            let next_end = io.block + u64::from(io.count);
            let joins = matches!(io.kind, IoKind::Read(Dst::Staged { .. }))
                && io.member == first.member
                && io.block >= end
                && io.block - end <= GAP
                && next_end - first.block <= SPAN;
            if !joins {
                break;
            }
            end = next_end;
            n += 1;
        }
        if n == 1 {
            return None;
        }
        let mut span = vec![0u8; (end - first.block) as usize * BLOCK];
        if let Err(e) = self.member_read(first.member, first.block, &mut span) {
            return Some(Err(e));
        }
        for io in &phase[run.next..run.next + n] {
            let IoKind::Read(Dst::Staged { slot }) = io.kind else { unreachable!("checked above") };
            let (at, len) = (slot as usize * BLOCK, io.count as usize * BLOCK);
            if run.staged.len() < at + len {
                run.staged.resize(at + len, 0);
            }
            let from = (io.block - first.block) as usize * BLOCK;
            run.staged[at..at + len].copy_from_slice(&span[from..from + len]);
        }
        self.stats[first.member as usize].gc_bytes_read += span.len() as u64;
        Some(Ok(n))
    }

    fn finish_gc(&mut self, run: GcRun) {
        // The victim's live blocks are copied; the remap, seal and release are to come.
        self.mark("gc-copied");
        let mut follow = std::mem::take(&mut self.follow);
        self.scheme.finish_gc(run.id, &mut follow);
        // The moved blocks are on the members: their CRCs go to the journal and to the
        // summaries the follow-up plan writes when it seals their segments (a poisoned
        // slot's CRC inverted). They are the CRCs of the staged copies the job wrote, checked
        // by `verify_gc_copies`: reading every moved block back instead cost a device read
        // per block with O_DIRECT members (8 KiB random writes on a full volume: 37 k preads
        // in 3 s, nine tenths of the engine's system-call time, and 0.6–2.8 k IOPS).
        let staged_at: HashMap<u64, u32> =
            self.scheme.log_array().map(|la| run.destinations(la.geometry())).unwrap_or_default();
        let (poisoned, staged) = (run.poisoned, run.staged);
        self.journal_changes(|w, _, pba| {
            let copy =
                staged_at.get(&pba).and_then(|&slot| staged.get(slot as usize * BLOCK..(slot as usize + 1) * BLOCK));
            let crc = copy.map_or_else(|| w.block_crc(pba), crc32c::crc32c);
            if poisoned.contains(&pba) {
                !crc
            } else {
                crc
            }
        });
        let mut staged = Vec::new();
        if let Err(e) = self.execute(&follow, &[], None, &mut [], &mut staged, self.now()) {
            self.log_error(&e);
            self.gc_broken = Some(e.to_string());
        }
        self.follow = follow;
        self.dirty = true;
        let now = self.now();
        self.release_pending_since.get_or_insert(now);
    }

    /// Victims wait for a sync point to be released; one sync point releases many. Release
    /// when enough have gathered or the oldest has waited long enough (writes that run out
    /// of space release at once, in [`Worker::collect_for_space`]).
    fn release_check(&mut self) {
        let pending = self.scheme.pending_release();
        if pending == 0 {
            self.release_pending_since = None;
            return;
        }
        let waited =
            self.release_pending_since.is_some_and(|t| self.now().saturating_duration_since(t) >= RELEASE_AFTER);
        if pending >= RELEASE_BATCH.max(2 * self.sb.rgroups as usize) || waited {
            self.release_due = true;
        }
    }

    /// Writes wait for space: run GC until a victim is released, or say there is none.
    fn collect_for_space(&mut self) {
        self.wait_writes();
        loop {
            // Each sync point syncs every member: release as many victims with it as GC can
            // free by then, rather than one sync point per victim. Once the log has wrapped,
            // sequential writes found a sync point per segment written (288 in 288 victims),
            // each waiting out an fdatasync of every member: start the jobs the scheme will
            // give before deciding that no more victims are coming.
            let mut pending = self.scheme.pending_release();
            if !self.release_due && pending < RELEASE_BATCH && self.gc_broken.is_none() {
                self.start_gc_jobs();
                pending = self.scheme.pending_release();
            }
            let more_coming = !self.gc_runs.is_empty() && pending < RELEASE_BATCH && self.gc_broken.is_none();
            if self.release_due || (pending > 0 && !more_coming) {
                self.sync_point();
                if self.durability_lost.is_some() && self.scheme.pending_release() > 0 {
                    // Victims wait for a sync point that can no longer come: fail the write
                    // rather than spin.
                    if let Some((_, done)) = self.queue.pop_front() {
                        done(Err(Errno::Io));
                    }
                }
                return;
            }
            self.start_gc_jobs();
            if self.gc_runs.is_empty() || self.gc_broken.is_some() {
                // Nothing can free space: fail the waiting write rather than hang.
                let st = self.scheme.status();
                eprintln!(
                    "swan: no space for a write and GC cannot free any: {} free segments of {}, front-end R-group {:?}, {} victims awaiting release{}",
                    st.free_segments,
                    st.segments,
                    st.front_group,
                    self.scheme.pending_release(),
                    self.gc_broken.as_deref().map(|e| format!(", GC stopped after an error: {e}")).unwrap_or_default()
                );
                if let Some(la) = self.scheme.log_array() {
                    for g in 0..self.sb.rgroups {
                        let segs = la.segments();
                        eprintln!(
                            "swan:   R-group {g}: {} free, best victim holds {:?} of {} blocks",
                            segs.free_count(g),
                            segs.min_valid(g).map(|s| segs.valid(s)),
                            la.geometry().payload_slots()
                        );
                    }
                }
                if let Some((_, done)) = self.queue.pop_front() {
                    done(Err(Errno::NoSpc));
                }
                return;
            }
            if !self.gc_step() {
                // Emulated phases wait for the model's clock.
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Make every completed write durable and journal every change since the last sync
    /// point; then answer the FLUSHes and FUA writes waiting, and release GC victims.
    fn sync_point(&mut self) {
        self.wait_writes();
        if self.durability_lost.is_none() {
            // GC may have left a block's only copy on a failed member's open row with nothing
            // else written since: the victim released below must not be its last copy.
            self.relocate_at_risk();
        }
        let result = match &self.durability_lost {
            Some(why) => Err(anyhow::anyhow!("durability was lost earlier ({why}); restart to recover")),
            None if self.dirty => self.sync_and_journal(),
            None => Ok(()),
        };
        let reply = match &result {
            Ok(()) => Ok(Vec::new()),
            Err(e) => {
                eprintln!("swan: sync failed: {e}");
                self.durability_lost.get_or_insert_with(|| e.to_string());
                Err(Errno::Io)
            }
        };
        for done in std::mem::take(&mut self.sync_waiters) {
            done(reply.clone());
        }
        if result.is_ok() && self.scheme.pending_release() > 0 {
            self.mark("release");
            // A read handed out before may still be on its way into a victim: trimming or
            // reusing it now could hand the client someone else's data.
            if let Some(pool) = &self.pool {
                pool.wait_reads();
            }
            let mut plan = std::mem::take(&mut self.follow);
            self.scheme.release_deferred(&mut plan);
            let mut staged = Vec::new();
            if let Err(e) = self.execute(&plan, &[], None, &mut [], &mut staged, self.now()) {
                self.log_error(&e);
            }
            self.follow = plan;
            self.release_pending_since = None;
            self.protect_after_failure();
        }
        self.release_due = false;
    }

    /// A member failed since the last sync point: rewrite what only it held in open rows
    /// to healthy members and make that durable now, not at the next FLUSH. Until then a
    /// crash would lose those blocks (the array would have lost a member and its power:
    /// two faults); this keeps that window to the operation during which the member failed.
    fn protect_after_failure(&mut self) {
        if self.failures == self.failures_synced || self.durability_lost.is_some() || self.read_only {
            return;
        }
        self.wait_writes();
        if let Err(e) = self.sync_and_journal() {
            eprintln!("swan: making the array safe after a member failure: {e:#}");
            self.durability_lost.get_or_insert_with(|| e.to_string());
        }
    }

    fn sync_all(&mut self) -> Result<(), MemberError> {
        // Gathered user data must be written (and its errors seen) before the sync that
        // makes it durable: `wait_writes` comes first on every path here.
        assert!(self.runs.is_empty(), "a sync with gathered user data not yet written");
        if self.pool.is_none() {
            // The stepper: one member after another, so a seed gives the same member I/O
            // in the same order every time.
            for m in 0..self.members.len() as u32 {
                self.member_sync(m)?;
            }
            return Ok(());
        }
        // Serving: every member's fdatasync at once. Each writes back its own file's dirty
        // pages; one after another, a sync point took the sum of their times, with the
        // engine (and every write) waiting.
        let members = &self.members;
        let live: Vec<u32> = (0..members.len() as u32).filter(|&m| members.health(m) != Health::Failed).collect();
        let results: Vec<(u32, Result<(), MemberError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = live.iter().map(|&m| (m, s.spawn(move || members[m as usize].sync()))).collect();
            handles.into_iter().map(|(m, h)| (m, h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))).collect()
        });
        // Failures are handled in member order, as the sequential path would.
        for (m, r) in results {
            self.member_result(m, r)?;
        }
        Ok(())
    }

    fn meta_members(&self) -> usize {
        self.sb.meta_members() as usize
    }

    fn sync_and_journal(&mut self) -> anyhow::Result<()> {
        // Data whose only copy is a failed member's slot in an open row is rewritten to
        // healthy members first; a member failing during the sync means another round.
        loop {
            let failures = self.failures;
            self.relocate_at_risk();
            if let Some(why) = &self.durability_lost {
                anyhow::bail!("durability was lost ({why}); restart to recover");
            }
            self.sync_all()?;
            if self.failures == failures {
                break;
            }
        }
        self.failures_synced = self.failures;
        self.sync_points += 1;
        self.dirty = false;
        self.journal_changes_read_back();
        if !self.kind.is_log_structured() {
            self.pending.clear();
            return Ok(());
        }
        if self.pending.is_empty() && !self.tail_records {
            return Ok(());
        }
        self.append_records(true)
    }

    /// Write the whole map to the next checkpoint slot. Data must be durable already.
    fn checkpoint(&mut self) -> anyhow::Result<()> {
        self.checkpoint_as(false)
    }

    /// A checkpoint; `parity_whole` when every row of every open segment has its parity
    /// on the members (at a clean stop, [`Worker::parity_of_open_segments`]).
    fn checkpoint_as(&mut self, parity_whole: bool) -> anyhow::Result<()> {
        // A checkpoint claims the whole map is durable; after a failed sync or write it may
        // not be (the map can name data a failed writeback dropped). Recovery rolls forward
        // from the last good checkpoint instead.
        if let Some(why) = &self.durability_lost {
            anyhow::bail!("no checkpoint: durability was lost ({why}); restart to recover");
        }
        // The map must not name a block whose only copy is in memory (a failed member's
        // slot in an open row): move such blocks first, and make the move durable.
        if !self.read_only && !self.members.all_healthy() {
            self.relocate_at_risk();
            if let Some(why) = &self.durability_lost {
                anyhow::bail!("no checkpoint: durability was lost ({why}); restart to recover");
            }
            self.sync_all()?;
        }
        self.pending.clear();
        let Some(la) = self.scheme.log_array() else { return Ok(()) };
        if let Some(m) = self.members.first() {
            m.mark("checkpoint-start");
        }
        let segs = la.segments();
        let seqs: Vec<u64> = (0..segs.len()).map(|s| segs.seq(s)).collect();
        let header = checkpoint::Header {
            uuid: self.sb.uuid,
            seq: self.checkpoint_seq + 1,
            journal_pos: self.ring.pos,
            journal_seq: self.ring.next_seq,
            volume_blocks: 0,
            segments: 0,
            body_crc: 0,
            parity_whole,
        };
        // A failed copy is stale and never read; a copy being rebuilt is written as usual.
        let copies: Vec<&Member> = (0..self.meta_members())
            .filter(|&m| self.members.health(m as u32) != Health::Failed)
            .map(|m| &self.members[m])
            .collect();
        checkpoint::write(
            &copies,
            self.sb.checkpoint_slot(self.next_slot),
            self.sb.checkpoint_blocks,
            header,
            la.l2p(),
            &seqs,
        )?;
        self.mark("checkpoint-end");
        self.checkpoint_seq += 1;
        self.next_slot ^= 1;
        self.ring.checkpointed();
        self.open_tail = None;
        self.records_since_checkpoint = 0;
        self.checkpoints += 1;
        if self.verbose {
            eprintln!("swan: checkpoint {} written", self.checkpoint_seq);
        }
        if !parity_whole {
            self.restate_open_rows()?;
        }
        Ok(())
    }

    /// After a checkpoint, journal again (synced) the CRC of every live block in a stripe
    /// row still filling. Such a row's parity reaches the members only when the row
    /// completes; if a crash comes first and a member is missing at the restart, its blocks
    /// in that row rebuild as garbage. Blocks journaled after the checkpoint carry a CRC that
    /// recovery keeps and reads are checked against ([`Recovered::adopted_crcs`]); this gives
    /// the blocks written before it one too, so they answer EIO rather than garbage.
    fn restate_open_rows(&mut self) -> anyhow::Result<()> {
        // Changes made since the last record (blocks moved off a failed member just now)
        // go first, so that their CRCs are known.
        self.journal_changes_read_back();
        let Some(la) = self.scheme.log_array() else { return Ok(()) };
        let geo = *la.geometry();
        let mut restated: Vec<journal::Entry> = Vec::new();
        for (&(_, block), row) in &self.parity {
            for &m in &row.written {
                let Some((seg, slot)) = geo.slot_at(m, block) else { continue };
                let pba = geo.pba(seg, slot);
                let Some(lba) = la.live_lba(pba) else { continue };
                if let Some(&crc) = self.open_crcs.get(&seg).and_then(|t| t.get(slot as usize)) {
                    restated.push((MapChange::Map { lba, pba }, crc));
                }
            }
        }
        if restated.is_empty() && self.pending.is_empty() {
            return Ok(());
        }
        // The same record whatever order the rows are held in (deterministic replays).
        restated.sort_unstable_by_key(|&(c, _)| match c {
            MapChange::Map { pba, .. } => pba,
            _ => u64::MAX,
        });
        self.pending.extend(restated);
        self.append_records(true)
    }

    fn status(&self) -> StatusReport {
        let read_count = |f: fn(&crate::pool::ReadChecks) -> &std::sync::atomic::AtomicU64| {
            f(&self.read_checks).load(std::sync::atomic::Ordering::Relaxed)
        };
        let st = self.scheme.status();
        let c = self.scheme.counters();
        let groups = match (self.kind, self.scheme.log_array()) {
            (SchemeKind::Swan(_), Some(la)) => (0..self.sb.rgroups)
                .map(|g| GroupStatus {
                    group: g,
                    gc_jobs: self.gc_jobs[g as usize],
                    role: if st.front_group == Some(g) {
                        "front-end".into()
                    } else if st.gc_groups & (1 << (g % 64)) != 0 {
                        "back-end GC".into()
                    } else {
                        "back-end idle".into()
                    },
                    free_segments: la.segments().free_count(g),
                })
                .collect(),
            (_, Some(la)) => vec![GroupStatus {
                group: 0,
                gc_jobs: self.gc_jobs[0],
                role: if st.gc_groups != 0 { "log, GC".into() } else { "log".into() },
                free_segments: la.segments().free_count(0),
            }],
            _ => vec![GroupStatus { group: 0, gc_jobs: 0, role: "in-place".into(), free_segments: 0 }],
        };
        StatusReport {
            uuid: self.sb.uuid_string(),
            scheme: self.kind.to_string(),
            volume_bytes: self.scheme.volume_blocks() * BLOCK as u64,
            uptime_s: self.now().saturating_duration_since(self.started).as_secs_f64(),
            groups,
            members: self
                .stats
                .iter()
                .enumerate()
                .map(|(i, st)| MemberStatus { health: self.members.health(i as u32).name().into(), ..st.clone() })
                .collect(),
            free_segments: st.free_segments,
            segments: st.segments,
            gc_target: self
                .scheme
                .log_array()
                .filter(|la| la.config().layout == swan_core::scheme::Layout::Swan)
                .map(|la| la.config().swan_gc_target),
            user_bytes_written: c.user_blocks_written * BLOCK as u64,
            user_bytes_read: c.user_blocks_read * BLOCK as u64,
            gc_blocks_moved: c.gc_blocks_moved,
            victims: c.victims,
            front_rotations: c.front_rotations,
            sync_points: self.sync_points,
            journal_records: self.journal_records,
            checkpoints: self.checkpoints,
            queued_requests: self.queue.len(),
            reads_verified: read_count(|c| &c.verified),
            read_mismatches: read_count(|c| &c.mismatches),
            read_repairs: read_count(|c| &c.repaired),
            read_failures: read_count(|c| &c.failed),
            reads_unverified: read_count(|c| &c.unverified),
            gc_verified: self.gc_checks.verified,
            gc_repaired: self.gc_checks.repaired,
            gc_lost: self.gc_checks.lost,
            gc_unverified: self.gc_checks.unverified,
            rebuild: self.rebuild_status(),
        }
    }
}

/// The engine driven round by round on the caller's thread, over a [`ManualClock`]: no
/// channel, no thread, no wall clock, so the same requests give the same member I/O every
/// time. What the deterministic crash and fault tests run; `swan serve` uses [`Engine`].
pub struct Stepper {
    worker: Worker,
    clock: Arc<ManualClock>,
}

impl Stepper {
    /// Start over a recovered array as [`Engine::start`] does (sync, fresh checkpoint).
    pub fn start(opened: Opened, recovered: Recovered, opts: EngineOptions) -> anyhow::Result<Stepper> {
        let clock = ManualClock::new();
        let mut worker = Worker::new(opened, recovered, opts)?;
        // Every member operation on this thread, in plan order: pool threads would make the
        // order of concurrent writes, and so the recorded log, vary from run to run.
        worker.pool = None;
        worker.clock = Clock::Manual(clock.clone());
        worker.started = clock.now();
        worker.open_for_writes()?;
        Ok(Stepper { worker, clock })
    }

    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Checkpoint after every `records` journal records as well as when the ring is half
    /// full (0: only then), so a short test sees many checkpoints.
    pub fn set_checkpoint_every(&mut self, records: u64) {
        self.worker.checkpoint_every = records;
    }

    /// Queue a request; it completes (`done` is called) in a later [`Stepper::round`].
    pub fn submit(&mut self, req: BlockRequest, done: Completion) {
        self.worker.queue.push_back((req, done));
    }

    /// One round of the engine's loop.
    pub fn round(&mut self) {
        self.worker.round();
    }

    /// Requests queued and not yet taken.
    pub fn queued(&self) -> usize {
        self.worker.queue.len()
    }

    pub fn status(&self) -> StatusReport {
        self.worker.status()
    }

    /// [`Engine::fail`], on this thread.
    pub fn fail(&mut self, m: u32) -> Result<String, String> {
        self.worker.fail_by_request(m)
    }

    /// [`Engine::replace`], on this thread; the rebuild advances with [`Stepper::round`].
    pub fn replace(&mut self, m: u32, path: &std::path::Path) -> Result<String, String> {
        self.worker.start_replace(m, path)
    }

    /// Whether a rebuild is under way.
    pub fn rebuilding(&self) -> bool {
        self.worker.rebuild.is_some()
    }

    /// Stop as [`Engine::shutdown`] does: make everything durable, write a checkpoint.
    pub fn shutdown(mut self) -> anyhow::Result<()> {
        self.worker.finish()
    }
}
