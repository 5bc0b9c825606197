//! The engine: one thread that owns the scheme and carries its plans out on real members.
//!
//! Connections hand requests to an [`Engine`] over a channel; its thread runs the round
//! loop ([`worker`]) over owned parts, each with one job:
//!
//! | part | job |
//! |---|---|
//! | [`executor`] | a plan's member operations, the bytes they carry, the parity of open rows, emulated timing |
//! | [`member_io`] | every member operation, member failure, degraded reads, rebuild onto a replacement |
//! | [`durability`] | the journal's records, sync points, checkpoints |
//! | [`gc`] | GC jobs carried out a member operation at a time, and the verification of what they move |
//! | [`crcs`] | what every block read must match |
//! | [`replies`] | replies of the batch, of FLUSHes waiting for a sync point, and held by emulation |
//!
//! Scheduling: user requests are taken first; GC advances one member operation between
//! batches of user requests, and runs flat out only while writes wait for space. With
//! `--emulate`, the SSD model in [`crate::emulate`] says when each member operation would
//! complete, and replies are held until then.
//!
//! Time: the engine reads no clock of its own but a [`Clock`]: the wall clock when serving,
//! or a [`ManualClock`] that only moves when told, under [`Stepper`]. The stepper drives the
//! same worker round by round on the caller's thread, with no channel and no timing: the
//! deterministic crash and fault tests (`swan_testkit::crashsim`) run the real engine that way, so
//! a seed gives the same member I/O, byte for byte, every time.

mod clock;
mod cpu;
mod crcs;
mod durability;
mod error;
mod executor;
mod full_stop;
mod gc;
mod gc_verify;
mod later_phases;
mod member_io;
mod open_rows;
mod replies;
mod report;
mod resume;
mod run_buf;
mod status;
mod store;
mod worker;
mod zone_holds;

pub use clock::{Clock, ManualClock};
pub use cpu::EngineCpu;
pub use error::{CommandError, EngineError, FailError, ReplaceError};
pub use status::{GroupStatus, MemberStatus, RebuildStatus, StatusReport};

use crate::array::{Opened, Recovered};
use crate::emulate::Emulator;
use crate::member::BLOCK;
use crate::service::{BlockOp, BlockRequest, BlockService, Completion, ExportInfo};
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use store::Store;
use swan_nbd::Errno;
use worker::Worker;

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
    /// Carry out a log array's TRIMs of free segments on file members too (punching holes),
    /// not only on block devices ([`crate::member::Member::trims_free_space`]).
    pub punch_holes: bool,
    /// How user reads are served: SWAN's read priority, and reads around a busy SSD (its
    /// predicted wait comes from `emulate`; without it every wait is predicted 0, so only a
    /// gain of 0, "always", reads around).
    pub reads: swan_core::scheme::ReadRules,
}

enum Msg {
    /// A user request, and when its connection handed it over.
    Req(BlockRequest, Completion, std::time::Instant),
    Status(Sender<StatusReport>),
    /// A read the pool could not do (a member failed under it): done here, degraded.
    Retry(BlockRequest, Completion),
    /// `swan fail`: take a member out of service.
    Fail(u32, Sender<Result<String, FailError>>),
    /// `swan replace`: rebuild a failed member onto a new device or file.
    Replace(u32, PathBuf, Sender<Result<String, ReplaceError>>),
    Stop,
}

/// A running engine; the NBD front submits to it as a [`BlockService`].
pub struct Engine {
    /// Shared (weakly) with the read pool, which hands back reads a member failed under.
    tx: Arc<Mutex<Sender<Msg>>>,
    info: ExportInfo,
    thread: Mutex<Option<JoinHandle<Result<(), EngineError>>>>,
}

impl Engine {
    /// Start the engine over a recovered array. It first writes a fresh checkpoint, so the
    /// journal it rolled forward is never needed again.
    pub fn start(opened: Opened, recovered: Recovered, opts: EngineOptions) -> Result<Engine, EngineError> {
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
        let mut worker = Worker::new(Store::new(opened, recovered, opts, Clock::Wall, true)?);
        let tx = Arc::new(Mutex::new(tx));
        {
            // Weakly: the engine's thread must not keep its own channel open.
            let engine = Arc::downgrade(&tx);
            worker.set_retry(Arc::new(move |offset, len, done| {
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
        let thread = std::thread::Builder::new()
            .name("swan-engine".into())
            .spawn(move || worker.run(rx))
            .map_err(EngineError::Thread)?;
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
    pub fn fail(&self, m: u32) -> Result<String, CommandError> {
        let (tx, rx) = mpsc::channel();
        self.send(Msg::Fail(m, tx)).map_err(|_| CommandError::Stopping)?;
        let answer = rx.recv_timeout(Duration::from_secs(60)).map_err(|_| CommandError::NoAnswer)?;
        Ok(answer?)
    }

    /// Start rebuilding failed member `m` onto `path` (what `swan replace` asks).
    pub fn replace(&self, m: u32, path: PathBuf) -> Result<String, CommandError> {
        let (tx, rx) = mpsc::channel();
        self.send(Msg::Replace(m, path, tx)).map_err(|_| CommandError::Stopping)?;
        let answer = rx.recv_timeout(Duration::from_secs(60)).map_err(|_| CommandError::NoAnswer)?;
        Ok(answer?)
    }

    /// Finish queued requests, make everything durable, write a checkpoint and stop.
    pub fn shutdown(&self) -> Result<(), EngineError> {
        let _ = self.send(Msg::Stop);
        match self.thread.lock().expect("engine thread").take() {
            Some(t) => t.join().map_err(|_| EngineError::Panicked)?,
            None => Ok(()),
        }
    }
}

impl BlockService for Engine {
    fn info(&self) -> ExportInfo {
        self.info.clone()
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        if let Err(Msg::Req(_, done, _)) = self.send(Msg::Req(req, done, std::time::Instant::now())) {
            done(Err(Errno::Shutdown));
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
    /// Emulated members' model time 0 is the stepper's time 0.
    pub fn start(opened: Opened, recovered: Recovered, mut opts: EngineOptions) -> Result<Stepper, EngineError> {
        let clock = ManualClock::new();
        if let Some(emu) = opts.emulate.as_mut() {
            emu.start_at(clock.now());
        }
        // Every member operation on this thread, in plan order: pool threads would make the
        // order of concurrent writes, and so the recorded log, vary from run to run.
        let mut worker = Worker::new(Store::new(opened, recovered, opts, Clock::Manual(clock.clone()), false)?);
        worker.open_for_writes()?;
        Ok(Stepper { worker, clock })
    }

    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Checkpoint after every `records` journal records as well as when the ring is half
    /// full (0: only then), so a short test sees many checkpoints.
    pub fn set_checkpoint_every(&mut self, records: u64) {
        self.worker.set_checkpoint_every(records);
    }

    /// Queue a request; it completes (`done` is called) in a later [`Stepper::round`].
    pub fn submit(&mut self, req: BlockRequest, done: Completion) {
        self.worker.queue.push_back((req, done, self.clock.now()));
    }

    /// One round of the engine's loop; how core's driver ended it: `EndRound` (more to do
    /// at once) or `Wait` (nothing before its time, or before a request comes).
    pub fn round(&mut self) -> swan_core::driver::Turn {
        self.worker.round()
    }

    /// Keep every decision core's array driver makes ([`Stepper::decisions`]).
    pub fn record_decisions(&mut self) {
        self.worker.record_decisions();
    }

    /// The decisions kept since [`Stepper::record_decisions`], in order.
    pub fn decisions(&self) -> &[swan_core::driver::Decision] {
        self.worker.decisions()
    }

    /// Requests queued and not yet taken.
    pub fn queued(&self) -> usize {
        self.worker.queue.len()
    }

    pub fn status(&self) -> StatusReport {
        self.worker.status()
    }

    /// [`Engine::fail`], on this thread.
    pub fn fail(&mut self, m: u32) -> Result<String, FailError> {
        self.worker.fail_by_request(m)
    }

    /// [`Engine::replace`], on this thread; the rebuild advances with [`Stepper::round`].
    pub fn replace(&mut self, m: u32, path: &std::path::Path) -> Result<String, ReplaceError> {
        self.worker.start_replace(m, path)
    }

    /// Whether a rebuild is under way.
    pub fn rebuilding(&self) -> bool {
        self.worker.rebuilding()
    }

    /// Stop as [`Engine::shutdown`] does: make everything durable, write a checkpoint.
    pub fn shutdown(mut self) -> Result<(), EngineError> {
        self.worker.finish()
    }
}
