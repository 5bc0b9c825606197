//! Crashes at any point, and faults at the worst moments, over the real engine and the real
//! on-disk format, reproducible from a seed.
//!
//! A run ([`Run::new`]):
//!
//! 1. creates an array over in-memory members ([`MemoryMembers`]) and keeps copies of the
//!    member images as create left them (sparse: the blocks that are not zero);
//! 2. puts one [`Recorder`] under every member (opening them through a [`RecordingSource`]),
//!    recovers the array and drives the real engine
//!    through a [`Stepper`] (the engine's own loop, round by round, over a manual clock:
//!    deterministic) with a seeded workload of writes, FUA writes, trims, reads and flushes
//!    in groups of up to eight requests in flight. Every 4 KiB a write carries is tagged
//!    with its logical block and a version number and filled from both, so any block read
//!    back names the write it came from, and a torn or misplaced block is recognised. Reads
//!    during the run are checked at once: each must return the latest version written, or
//!    one of the versions a failed write may have left, or fail;
//! 3. optionally arms [`Fault`]s (I/O errors) at marks the engine leaves at the worst moments;
//! 4. optionally ([`Config::replace`]) fails a member partway through, as `swan fail` does,
//!    and later rebuilds it onto a fresh member, as `swan replace` does. The replacement gets
//!    its own image; a restart after a crash is given it once its superblock is written,
//!    and before that either `missing` or the old, stale member.
//!
//! Then [`Run::replay`] materialises the member images at chosen points of the log (a
//! *cut*), the way a power cut would leave them, and checks recovery there:
//!
//! - on each member, everything logged before that member's last completed sync is there;
//!   each write or trim after it is independently there or not (the cut picks all, none, or
//!   a random subset), and a write that is there may be **torn** (only some of its 512-byte
//!   sectors written). Writes whose sync failed stay in doubt after later syncs (Linux drops
//!   the dirty pages of a failed writeback);
//! - the array must open and recover ([`array::open`], [`array::recover`]), `swan check` must
//!   find it clean, and every block of the volume, read through the real engine, must hold
//!   (a) the data of the last write or trim acknowledged before the last FLUSH that completed
//!   before the cut (not counting requests sent with or after that FLUSH), or the data of a
//!   later write to that block that had started before the cut, and (b) never anything that
//!   was not written to that block.
//!
//! The images are kept up to date incrementally (one in-memory image per member, patched from
//! cut to cut), so a replay point costs about one recovery and one read of the volume.

use crate::recorder::{Entry, Fault, FaultOp, Recorder, RecordingSource};
use crate::rng::SplitMix64;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use swan_core::scheme::SchemeKind;
use swan_core::victim::VictimPolicy;
use swan_server::array::{self, CreateOptions};
use swan_server::check;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::{MemberSource, MemoryBacking, MemoryMembers, OpenOptions, BLOCK};
use swan_server::service::{BlockOp, BlockRequest, Reply};

const MAGIC: &[u8; 8] = b"SWANCRS1";

/// Marks the workload leaves in the log around a member's failure and replacement.
const MEMBER_FAILED: &str = "member-failed";
const REPLACE: &str = "replace";
const REBUILD_OVER: &str = "rebuild-over";

/// Where the workload is in `Config::replace`'s schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Replacement {
    Before,
    Failed,
    Rebuilding,
    Over,
}
const SECTOR: usize = 512;

/// The 4 KiB a write puts at `lba` as its version `version` (version 0 is zeroes).
pub fn payload(seed: u64, lba: u64, version: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&lba.to_le_bytes());
    b[16..24].copy_from_slice(&version.to_le_bytes());
    let mut r = SplitMix64(seed ^ lba.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ version.rotate_left(29));
    for c in b[24..].chunks_mut(8) {
        let v = r.next_u64().to_le_bytes();
        c.copy_from_slice(&v[..c.len()]);
    }
    b
}

/// What a block read back is: a version of this block, or something else.
fn identify(seed: u64, lba: u64, data: &[u8]) -> std::result::Result<u64, String> {
    if data.iter().all(|&b| b == 0) {
        return Ok(0);
    }
    if &data[..8] != MAGIC {
        return Err("bytes that no write of this workload carries".into());
    }
    let at = u64::from_le_bytes(data[8..16].try_into().expect("8"));
    let version = u64::from_le_bytes(data[16..24].try_into().expect("8"));
    if at != lba {
        return Err(format!("block {at}'s data (version {version})"));
    }
    if data != payload(seed, lba, version) {
        return Err(format!("a torn or corrupt copy of version {version}"));
    }
    Ok(version)
}

/// The shape of the array and the workload.
#[derive(Clone, Debug)]
pub struct Config {
    pub scheme: SchemeKind,
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    pub member_bytes: u64,
    pub segment_bytes: u64,
    /// Requests of the workload (writes, trims, reads, flushes).
    pub ops: u64,
    pub seed: u64,
    /// Checkpoint after this many journal records (0: when the ring is half full).
    pub checkpoint_every: u64,
    /// Fail this member (as `swan fail` does) three tenths of the way through the workload,
    /// and rebuild it (as `swan replace` does) onto a fresh member halfway through. The
    /// replacement is another device: it gets its own image, after the members'.
    pub replace: Option<u32>,
}

impl Config {
    /// A small SWAN0 array (3 R-groups × 2 members of 24 MiB, 128 KiB segments) under
    /// enough writes that GC, front-end rotations and checkpoints all happen.
    pub fn small(scheme: SchemeKind, ops: u64, seed: u64) -> Config {
        Config {
            scheme,
            rgroups: 3,
            ssds_per_rgroup: if scheme.raid() == swan_core::geometry::RaidLevel::Raid0 { 2 } else { 3 },
            member_bytes: 24 << 20,
            segment_bytes: 128 << 10,
            ops,
            seed,
            checkpoint_every: 300,
            replace: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Write { fua: bool },
    Trim,
    Read,
    Flush,
}

/// One request of the workload and what became of it.
#[derive(Clone, Debug)]
struct OpRec {
    kind: Kind,
    lba: u64,
    blocks: u32,
    group: u32,
    /// Log length when it was sent, and when it was answered.
    start: usize,
    ack: Option<usize>,
    ok: bool,
}

/// Where a request's completion leaves its reply, and the log length when it came.
type ReplySlot = Arc<Mutex<Option<(Reply, usize)>>>;

/// Counters for the report.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub ops: u64,
    pub writes: u64,
    pub trims: u64,
    pub reads: u64,
    pub flushes: u64,
    pub failed_requests: u64,
    pub user_bytes: u64,
    pub log_entries: usize,
    pub log_bytes: u64,
    pub victims: u64,
    pub rotations: u64,
    pub checkpoints: u64,
    pub sync_points: u64,
    pub faults_injected: usize,
    /// A digest of the whole member log: two runs of one seed give the same.
    pub digest: u64,
}

/// A workload run over a recorded array, ready to be replayed.
pub struct Run {
    pub cfg: Config,
    /// The members the workload ran on (through `source`, which records their I/O).
    members: Arc<MemoryMembers>,
    source: Arc<RecordingSource>,
    base: Vec<Vec<(u64, Vec<u8>)>>,
    member_blocks: u64,
    volume_blocks: u64,
    recorder: Arc<Recorder>,
    ops: Vec<OpRec>,
    /// Per logical block: (op index, version) of every write and trim, in order.
    history: Vec<Vec<(u32, u64)>>,
    /// The array's UUID (to recognise the replacement's superblock once it is written).
    uuid: [u8; 16],
    pub stats: Stats,
    /// Violations seen while the workload ran (reads returning wrong data).
    pub live_errors: Vec<String>,
}

fn quiet_opts() -> EngineOptions {
    // Punch holes: the member files stand in for SSDs, whose TRIMs crashes must survive.
    EngineOptions { name: "crashsim".into(), read_only: false, emulate: None, verbose: false, punch_holes: true }
}

impl Run {
    /// Create the array, record the workload over it with `faults` armed.
    pub fn new(cfg: Config, faults: &[Fault]) -> Result<Run> {
        let images = MemoryMembers::new();
        let members = cfg.rgroups * cfg.ssds_per_rgroup;
        let paths: Vec<PathBuf> = (0..members).map(|i| PathBuf::from(format!("m{i}"))).collect();
        let o = CreateOptions {
            kind: cfg.scheme,
            rgroups: cfg.rgroups,
            ssds_per_rgroup: cfg.ssds_per_rgroup,
            member_bytes: Some(cfg.member_bytes),
            segment_bytes: Some(cfg.segment_bytes),
            chunk_bytes: 64 << 10,
            victim: VictimPolicy::Greedy,
            spare: None,
            force: false,
            created: 0,
        };
        let mut uuid = [0u8; 16];
        let mut r = SplitMix64(cfg.seed ^ 0x0a1d);
        uuid[..8].copy_from_slice(&r.next_u64().to_le_bytes());
        uuid[8..].copy_from_slice(&r.next_u64().to_le_bytes());
        uuid[6] = (uuid[6] & 0x0f) | 0x40;
        uuid[8] = (uuid[8] & 0x3f) | 0x80;
        let sb = array::create_in(&*images, &paths, &o, uuid)?;
        let mut base: Vec<_> = paths.iter().map(|p| images.image(p).expect("created").nonzero_blocks()).collect();
        if let Some(m) = cfg.replace {
            if m >= members {
                bail!("cannot replace member {m}: the array has {members}");
            }
            base.push(Vec::new()); // the replacement starts out blank
        }
        let recorder = Recorder::new();
        let source = RecordingSource::new(images.clone(), recorder.clone());
        for (i, p) in paths.iter().enumerate() {
            source.record_as(p, i as u32);
        }
        let opened = array::open_from(source.clone(), &paths, false, false)?;
        let recovered = array::recover(&opened)?;
        let volume_blocks = sb.volume_blocks;
        let mut run = Run {
            members: images,
            source,
            base,
            member_blocks: sb.member_blocks,
            volume_blocks,
            recorder: recorder.clone(),
            ops: Vec::new(),
            history: vec![Vec::new(); volume_blocks as usize],
            uuid,
            stats: Stats::default(),
            live_errors: Vec::new(),
            cfg,
        };
        let mut stepper = Stepper::start(opened, recovered, quiet_opts())?;
        stepper.set_checkpoint_every(run.cfg.checkpoint_every);
        // Faults are armed once the engine is up (its startup checkpoint is not a moment
        // under test: a failure there stops `swan serve` before it serves anything).
        for f in faults {
            recorder.add_fault(f.clone());
        }
        run.drive(&mut stepper)?;
        let st = stepper.status();
        run.stats.victims = st.victims;
        run.stats.rotations = st.front_rotations;
        run.stats.checkpoints = st.checkpoints;
        run.stats.sync_points = st.sync_points;
        // The engine is dropped, not shut down: the power goes at the end of the log.
        drop(stepper);
        recorder.set_recording(false);
        let log = recorder.log();
        run.stats.log_entries = log.len();
        run.stats.log_bytes = recorder.bytes();
        run.stats.faults_injected = recorder.injected().len();
        run.stats.digest = digest(&log);
        Ok(run)
    }

    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    pub fn volume_blocks(&self) -> u64 {
        self.volume_blocks
    }

    /// Versions a read of `lba` may return now (during the run): the last successful
    /// write or trim, and any failed write after it.
    fn live_allowed(&self, lba: u64) -> Vec<u64> {
        let h = &self.history[lba as usize];
        let mut out = Vec::new();
        for &(i, v) in h.iter().rev() {
            out.push(v);
            if self.ops[i as usize].ok {
                return out;
            }
        }
        out.push(0);
        out
    }

    fn drive(&mut self, stepper: &mut Stepper) -> Result<()> {
        let seed = self.cfg.seed;
        let mut rng = SplitMix64(seed ^ 0x005e_ed0f_c4a5);
        let mut version = 1u64;
        let mut group = 0u32;
        let mut sent = 0u64;
        let mut replacement = Replacement::Before;
        while sent < self.cfg.ops {
            if let Some(m) = self.cfg.replace {
                replacement = self.advance_replacement(stepper, m, replacement, sent)?;
            }
            group += 1;
            let n = 1 + rng.below(8);
            let mut inflight: Vec<(usize, ReplySlot)> = Vec::new();
            for _ in 0..n {
                if sent >= self.cfg.ops {
                    break;
                }
                sent += 1;
                let (idx, req) = self.next_request(&mut rng, &mut version, group);
                let slot: ReplySlot = Arc::new(Mutex::new(None));
                let (s, rec) = (slot.clone(), self.recorder.clone());
                stepper.submit(
                    req,
                    Box::new(move |r| {
                        *s.lock().expect("slot") = Some((r, rec.len()));
                    }),
                );
                inflight.push((idx, slot));
            }
            let mut rounds = 0;
            while inflight.iter().any(|(_, s)| s.lock().expect("slot").is_none()) {
                stepper.round();
                stepper.clock().advance(Duration::from_millis(1));
                rounds += 1;
                if rounds > 1_000_000 {
                    bail!("seed {seed:#x}: requests of group {group} never completed");
                }
            }
            for (idx, slot) in inflight {
                let (reply, at) = slot.lock().expect("slot").take().expect("completed");
                self.note_reply(idx, reply, at);
            }
            // Now and then the clients pause: time passes, GC and victim release run alone.
            if rng.chance(1, 40) {
                for _ in 0..4 {
                    stepper.clock().advance(Duration::from_millis(300));
                    stepper.round();
                }
            }
        }
        Ok(())
    }

    /// The workload's next request, drawn from `rng` and recorded (a write gives its blocks
    /// the versions from `version` on) as request `idx` of `group`.
    fn next_request(&mut self, rng: &mut SplitMix64, version: &mut u64, group: u32) -> (usize, BlockRequest) {
        let seed = self.cfg.seed;
        let footprint = self.volume_blocks * 9 / 10;
        let kind = match rng.below(100) {
            0..=5 => Kind::Flush,
            6..=8 => Kind::Trim,
            9..=15 => Kind::Read,
            16..=18 => Kind::Write { fua: true },
            _ => Kind::Write { fua: false },
        };
        let blocks = match kind {
            Kind::Flush => 0,
            Kind::Read => 1 + rng.below(16) as u32,
            _ => 1 + rng.below(8) as u32,
        };
        let lba = if blocks == 0 { 0 } else { rng.below(footprint - u64::from(blocks)) };
        let first_version = if matches!(kind, Kind::Write { .. }) {
            let v = *version;
            *version += u64::from(blocks);
            v
        } else {
            0
        };
        let idx = self.ops.len();
        let start = self.recorder.len();
        self.ops.push(OpRec { kind, lba, blocks, group, start, ack: None, ok: false });
        if matches!(kind, Kind::Write { .. } | Kind::Trim) {
            for i in 0..u64::from(blocks) {
                let v = if first_version == 0 { 0 } else { first_version + i };
                self.history[(lba + i) as usize].push((idx as u32, v));
            }
        }
        let op = match kind {
            Kind::Write { .. } => {
                let mut data = Vec::with_capacity(blocks as usize * BLOCK);
                for i in 0..u64::from(blocks) {
                    data.extend_from_slice(&payload(seed, lba + i, first_version + i));
                }
                self.stats.writes += 1;
                self.stats.user_bytes += data.len() as u64;
                BlockOp::Write(data.into())
            }
            Kind::Trim => {
                self.stats.trims += 1;
                BlockOp::Trim
            }
            Kind::Read => {
                self.stats.reads += 1;
                BlockOp::Read
            }
            Kind::Flush => {
                self.stats.flushes += 1;
                BlockOp::Flush
            }
        };
        let req = BlockRequest {
            op,
            offset: lba * BLOCK as u64,
            len: blocks * BLOCK as u32,
            fua: kind == Kind::Write { fua: true },
        };
        (idx, req)
    }

    /// Request `idx` was answered with `reply` when the log held `at` entries: record it,
    /// and check what a read returned against the versions its blocks may hold.
    fn note_reply(&mut self, idx: usize, reply: Reply, at: usize) {
        let seed = self.cfg.seed;
        self.ops[idx].ack = Some(at);
        self.ops[idx].ok = reply.is_ok();
        self.stats.ops += 1;
        if reply.is_err() {
            self.stats.failed_requests += 1;
        }
        let (Kind::Read, Ok(data)) = (self.ops[idx].kind, reply) else { return };
        let (lba, blocks) = (self.ops[idx].lba, self.ops[idx].blocks);
        for i in 0..u64::from(blocks) {
            let b = &data[i as usize * BLOCK..(i as usize + 1) * BLOCK];
            let allowed = self.live_allowed(lba + i);
            match identify(seed, lba + i, b) {
                Ok(v) if allowed.contains(&v) => {}
                Ok(v) => self.live_errors.push(format!(
                    "seed {seed:#x}: a read of block {} during the run returned version {v}, expected one of {allowed:?}",
                    lba + i
                )),
                Err(what) => self.live_errors.push(format!(
                    "seed {seed:#x}: a read of block {} during the run returned {what}",
                    lba + i
                )),
            }
        }
    }

    /// The failure and replacement of `cfg.replace`, as the workload reaches `sent` requests.
    fn advance_replacement(&self, st: &mut Stepper, m: u32, now: Replacement, sent: u64) -> Result<Replacement> {
        let ops = self.cfg.ops;
        Ok(match now {
            Replacement::Before if sent >= ops * 3 / 10 => {
                self.recorder.mark(MEMBER_FAILED);
                st.fail(m).map_err(|e| anyhow!("seed {:#x}: swan fail {m}: {e}", self.cfg.seed))?;
                Replacement::Failed
            }
            Replacement::Failed if sent >= ops / 2 => {
                let path = PathBuf::from(format!("r{m}"));
                self.members.create(&path, self.member_blocks * BLOCK as u64, false)?;
                self.source.record_as(&path, self.base.len() as u32 - 1);
                self.recorder.mark(REPLACE);
                st.replace(m, &path).map_err(|e| anyhow!("seed {:#x}: swan replace {m}: {e}", self.cfg.seed))?;
                Replacement::Rebuilding
            }
            Replacement::Rebuilding if !st.rebuilding() => {
                self.recorder.mark(REBUILD_OVER);
                Replacement::Over
            }
            other => other,
        })
    }

    /// The member list a restart after a crash at `cut` is given: the replacement in the
    /// failed member's place once its superblock is there, else (after the failure) either
    /// `missing` or the old member, as `pick` says.
    fn restart_paths(&self, source: &MemoryMembers, images: &[PathBuf], pick: bool) -> Vec<PathBuf> {
        let members = (self.cfg.rgroups * self.cfg.ssds_per_rgroup) as usize;
        let mut paths = images[..members].to_vec();
        let Some(m) = self.cfg.replace else { return paths };
        let replacement = &images[members];
        let adopted = source
            .open(replacement, OpenOptions::default())
            .ok()
            .and_then(|r| array::read_superblock(&r).ok())
            .is_some_and(|sb| sb.uuid == self.uuid && sb.member_index == m);
        if adopted {
            paths[m as usize] = replacement.clone();
        } else if pick {
            paths[m as usize] = PathBuf::from(array::MISSING);
        }
        paths
    }

    /// Log positions where a FLUSH or FUA write was answered successfully.
    pub fn flush_points(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .ops
            .iter()
            .filter(|o| o.ok && matches!(o.kind, Kind::Flush | Kind::Write { fua: true }))
            .filter_map(|o| o.ack)
            .collect();
        v.dedup();
        v
    }

    /// Positions of marks named `what` in the log.
    pub fn marks(&self, what: &str) -> Vec<usize> {
        self.recorder
            .log()
            .iter()
            .enumerate()
            .filter_map(|(i, e)| matches!(e, Entry::Mark(m) if *m == what).then_some(i))
            .collect()
    }

    /// What every block must or may hold after a crash at log position `cut`, as a list of
    /// allowed versions per block; and per block whether a flushed write is among what it must hold (else the first
    /// allowed version, 0, is only "never written").
    fn allowed_and_required(&self, cut: usize) -> (Vec<Vec<u64>>, Vec<bool>) {
        // The last FLUSH (or FUA write) answered before the cut covers every request
        // answered in groups sent before its own.
        let covered_group = self
            .ops
            .iter()
            .filter(|o| o.ok && o.ack.is_some_and(|a| a <= cut))
            .filter(|o| matches!(o.kind, Kind::Flush | Kind::Write { fua: true }))
            .map(|o| o.group)
            .max()
            .unwrap_or(0);
        let mut out = Vec::with_capacity(self.volume_blocks as usize);
        let mut required = Vec::with_capacity(self.volume_blocks as usize);
        for h in &self.history {
            // The required write: the last successful one in a covered group.
            let req = h.iter().rposition(|&(i, _)| {
                let o = &self.ops[i as usize];
                o.ok && o.group < covered_group
            });
            required.push(req.is_some());
            let mut allowed = match req {
                Some(r) => vec![h[r].1],
                None => vec![0],
            };
            let from = req.map_or(0, |r| r + 1);
            for &(i, v) in &h[from..] {
                let o = &self.ops[i as usize];
                if o.start < cut {
                    allowed.push(v);
                }
            }
            out.push(allowed);
        }
        (out, required)
    }

    /// Whether a crash at `cut` struck while a member's failure was the array's second
    /// fault: after the injected error that failed it and before any FLUSH answered since
    /// (whose sync point protects what only that member held). There, md's write hole
    /// (FORMAT.md): a block written since the last FLUSH whose row's parity had not reached
    /// the members is gone. It may then answer EIO (its CRC catches the garbage its
    /// reconstruction gives), but never wrong data, and a flushed block is never lost.
    fn in_double_fault(&self, cut: usize) -> bool {
        let Some(f) = self.recorder.injected().first().map(|i| i.at) else { return false };
        cut >= f
            && !self.ops.iter().any(|o| {
                o.ok && o.ack.is_some_and(|a| a > f && a <= cut)
                    && matches!(o.kind, Kind::Flush | Kind::Write { fua: true })
            })
    }

    /// Replay the log to each of `cuts` (ascending log positions) and check recovery there.
    pub fn replay(&self, cuts: &[usize], seed: u64) -> Result<ReplayReport> {
        let log = self.recorder.log();
        let mut mat = Materialiser::new(self, &log)?;
        let mut rng = SplitMix64(seed);
        let mut report = ReplayReport::default();
        let mut cuts = cuts.to_vec();
        cuts.sort_unstable();
        cuts.dedup();
        for &cut in &cuts {
            let cut = cut.min(log.len());
            let mode = rng.below(4);
            let torn = mat.cut(cut, mode, &mut rng)?;
            report.torn_writes += torn;
            report.points += 1;
            // Every fourth point of an array with parity: a member fails after the restart.
            let degraded = (self.cfg.scheme.raid() != swan_core::geometry::RaidLevel::Raid0 && report.points % 4 == 1)
                .then(|| rng.below(u64::from(self.cfg.rgroups * self.cfg.ssds_per_rgroup)) as u32);
            let paths = self.restart_paths(&mat.images, &mat.paths, rng.chance(1, 2));
            let verified = self.verify_images(&mat.images, &paths, cut).map(|(whole, eio)| {
                report.double_fault_eio += eio;
                whole
            });
            let verified = verified.and_then(|whole| match degraded {
                Some(m) if whole => {
                    report.degraded_points += 1;
                    self.verify_degraded(&mat.images, &paths, cut, m)
                }
                _ => Ok(()),
            });
            if let Err(e) = verified {
                report.failures.push(format!(
                    "replay seed {seed:#x}, run seed {:#x}, cut at log entry {cut} of {} (mode {mode}): {e:#}",
                    self.cfg.seed,
                    log.len()
                ));
                if report.failures.len() >= 5 {
                    break;
                }
            } else {
                report.blocks_verified += self.volume_blocks;
            }
        }
        Ok(report)
    }

    /// Open, recover, check and read back the array in `paths` as a crash at `cut` left it.
    /// True if the array came back whole (no member failed).
    /// Also the blocks that answered EIO in a double fault ([`Run::in_double_fault`]).
    fn verify_images(&self, images: &Arc<MemoryMembers>, paths: &[PathBuf], cut: usize) -> Result<(bool, u64)> {
        let opened = array::open_from(images.clone(), paths, false, true)?;
        let whole = opened.sb.failed.is_empty();
        // (swan check refuses a degraded array: it checks parity against data.)
        if whole {
            let again = array::open_from(images.clone(), paths, false, true)?;
            let rep = check::check_opened(again).context("recovery (swan check)")?;
            if rep.problems != 0 {
                bail!("swan check: {}", rep.text);
            }
        }
        let recovered = array::recover(&opened)?;
        let mut st = Stepper::start(opened, recovered, EngineOptions { read_only: true, ..quiet_opts() })?;
        let eio_may = !whole && self.in_double_fault(cut);
        self.read_back(&mut st, cut, eio_may).map(|eio| (whole, eio))
    }

    /// As [`Run::verify_images`], on copies of the images, then with member `failed` failed:
    /// a crash at `cut`, a restart (which gives the rows left open their parity), then the
    /// loss of one member. Every block must still read back as it may.
    fn verify_degraded(&self, images: &MemoryMembers, paths: &[PathBuf], cut: usize, failed: u32) -> Result<()> {
        let copies = MemoryMembers::new();
        for p in paths.iter().filter(|p| p.as_os_str() != array::MISSING) {
            copies.insert(p, images.image(p).expect("an image for every member").fork());
        }
        let opened = array::open_from(copies, paths, false, false)?;
        let recovered = array::recover(&opened)?;
        let mut st = Stepper::start(opened, recovered, quiet_opts())?;
        st.fail(failed).map_err(|e| anyhow!("swan fail {failed}: {e}"))?;
        self.read_back(&mut st, cut, false)
            .map(|_| ())
            .with_context(|| format!("member {failed} failed after the restart"))
    }

    /// Read the whole volume through `st`; every block must hold what it may at `cut`.
    /// With `eio_may`, a block no flushed write is required in may answer EIO instead;
    /// returns how many did.
    fn read_back(&self, st: &mut Stepper, cut: usize, eio_may: bool) -> Result<u64> {
        let seed = self.cfg.seed;
        let (allowed, required) = self.allowed_and_required(cut);
        let mut eio = 0;
        const CHUNK: u64 = 256;
        let mut errors = Vec::new();
        let mut lba = 0;
        while lba < self.volume_blocks {
            let n = CHUNK.min(self.volume_blocks - lba);
            let data = match read_blocks(st, lba, n) {
                Ok(data) => data,
                Err(e) if !eio_may => bail!("read of blocks {lba}..{} failed: {e:?}", lba + n),
                // Which blocks: one at a time. Each may answer EIO only if no flushed
                // write is required of it.
                Err(_) => {
                    let mut data = vec![0u8; n as usize * BLOCK];
                    for i in 0..n {
                        let b = lba + i;
                        match read_blocks(st, b, 1) {
                            Ok(one) => data[i as usize * BLOCK..(i as usize + 1) * BLOCK].copy_from_slice(&one),
                            Err(swan_nbd::Errno::Io) if !required[b as usize] => {
                                eio += 1;
                                // Zeroes: version 0, which is allowed for such a block.
                            }
                            Err(e) => bail!("read of block {b} failed: {e:?} (a flushed write is required of it)"),
                        }
                    }
                    data
                }
            };
            for i in 0..n {
                let b = lba + i;
                let bytes = &data[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                let ok = &allowed[b as usize];
                match identify(seed, b, bytes) {
                    Ok(v) if ok.contains(&v) => {}
                    Ok(v) => errors.push(format!("block {b}: version {v}, allowed {ok:?}")),
                    Err(what) => errors.push(format!("block {b}: {what}, allowed {ok:?}")),
                }
            }
            lba += n;
        }
        if !errors.is_empty() {
            let n = errors.len();
            errors.truncate(8);
            bail!("{n} block(s) wrong after recovery: {}", errors.join("; "));
        }
        Ok(eio)
    }
}

/// Read `n` blocks from `lba` through the stepper.
fn read_blocks(st: &mut Stepper, lba: u64, n: u64) -> std::result::Result<Vec<u8>, swan_nbd::Errno> {
    let slot: Arc<Mutex<Option<Reply>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    st.submit(
        BlockRequest { op: BlockOp::Read, offset: lba * BLOCK as u64, len: (n as usize * BLOCK) as u32, fua: false },
        Box::new(move |r| *s.lock().expect("slot") = Some(r)),
    );
    while slot.lock().expect("slot").is_none() {
        st.round();
    }
    let reply = slot.lock().expect("slot").take().expect("done");
    reply
}

/// What a replay found.
#[derive(Clone, Debug, Default)]
pub struct ReplayReport {
    pub points: u64,
    pub torn_writes: u64,
    pub blocks_verified: u64,
    /// Points also checked with a member failed after the restart (arrays with parity).
    pub degraded_points: u64,
    /// Blocks that answered EIO after a crash in the window where a member's failure was
    /// a second fault ([`Run::in_double_fault`]); none of them had a flushed write.
    pub double_fault_eio: u64,
    pub failures: Vec<String>,
}

fn digest(log: &[Entry]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut mix = |v: u64| {
        h ^= v;
        h = h.wrapping_mul(0x100_0000_01b3);
    };
    for e in log {
        match e {
            Entry::Write { member, block, data } => {
                mix(1);
                mix(u64::from(*member));
                mix(*block);
                mix(u64::from(crc32c::crc32c(data)));
            }
            Entry::Trim { member, block, count } => {
                mix(2);
                mix(u64::from(*member));
                mix(*block);
                mix(*count);
            }
            Entry::Sync { member } => {
                mix(3);
                mix(u64::from(*member));
            }
            Entry::SyncFailed { member } => {
                mix(4);
                mix(u64::from(*member));
            }
            Entry::Mark(m) => {
                mix(5);
                mix(u64::from(crc32c::crc32c(m.as_bytes())));
            }
        }
    }
    h
}

/// A block of a member as some write left it: the write's payload and where in it.
#[derive(Clone)]
struct Blk(Arc<[u8]>, usize);

impl Blk {
    fn bytes(&self) -> &[u8] {
        &self.0[self.1 * BLOCK..(self.1 + 1) * BLOCK]
    }
}

/// The member images, patched from cut to cut.
struct Materialiser<'a> {
    log: &'a [Entry],
    /// The images, by the names the member list gives them.
    images: Arc<MemoryMembers>,
    paths: Vec<PathBuf>,
    files: Vec<Arc<MemoryBacking>>,
    /// Durable contents (absent: zeroes).
    durable: Vec<HashMap<u64, Blk>>,
    /// Per member: log indices of its writes, trims and syncs.
    per_member: Vec<Vec<usize>>,
    /// Per member: how far into `per_member` the durable state goes.
    applied: Vec<usize>,
    /// Log indices of writes and trims a failed sync left in doubt for good.
    doubtful: Vec<bool>,
    doubt: Vec<Vec<usize>>,
    /// Blocks the previous cut's overlay changed.
    touched: Vec<(u32, u64)>,
}

impl<'a> Materialiser<'a> {
    fn new(run: &Run, log: &'a [Entry]) -> Result<Self> {
        let n = run.base.len();
        let images = MemoryMembers::new();
        let mut paths = Vec::new();
        let mut files = Vec::new();
        let mut durable = Vec::new();
        for (m, blocks) in run.base.iter().enumerate() {
            let p = PathBuf::from(format!("replay/m{m}"));
            let f = MemoryBacking::new(run.member_blocks);
            images.insert(&p, f.clone());
            let mut map = HashMap::new();
            for (b, data) in blocks {
                f.put_block(*b, Some(data));
                map.insert(*b, Blk(Arc::from(data.as_slice()), 0));
            }
            paths.push(p);
            files.push(f);
            durable.push(map);
        }
        let mut per_member = vec![Vec::new(); n];
        let mut doubtful = vec![false; log.len()];
        let mut since_sync: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, e) in log.iter().enumerate() {
            match e {
                Entry::Write { member, .. } | Entry::Trim { member, .. } => {
                    per_member[*member as usize].push(i);
                    since_sync[*member as usize].push(i);
                }
                Entry::Sync { member } => {
                    per_member[*member as usize].push(i);
                    since_sync[*member as usize].clear();
                }
                Entry::SyncFailed { member } => {
                    for j in since_sync[*member as usize].drain(..) {
                        doubtful[j] = true;
                    }
                }
                Entry::Mark(_) => {}
            }
        }
        Ok(Materialiser {
            log,
            images,
            paths,
            files,
            durable,
            per_member,
            applied: vec![0; n],
            doubtful,
            doubt: vec![Vec::new(); n],
            touched: Vec::new(),
        })
    }

    fn write_block(&self, m: usize, b: u64, data: Option<&[u8]>) {
        self.files[m].put_block(b, data);
    }

    /// Make the images what a power cut at `cut` could leave; returns the writes torn.
    /// `mode`: 0 every volatile write lands, 1 none does, 2–3 a random subset.
    fn cut(&mut self, cut: usize, mode: u64, rng: &mut SplitMix64) -> Result<u64> {
        // Undo the previous overlay.
        for (m, b) in std::mem::take(&mut self.touched) {
            let d = self.durable[m as usize].get(&b).cloned();
            self.write_block(m as usize, b, d.as_ref().map(Blk::bytes));
        }
        let mut torn = 0;
        for m in 0..self.files.len() {
            let upto = self.apply_synced(m, cut)?;
            let (overlay, tears) = self.volatile_overlay(m, upto, cut, mode, rng);
            torn += tears;
            for (b, data) in overlay {
                self.write_block(m, b, Some(&data));
                self.touched.push((m as u32, b));
            }
        }
        Ok(torn)
    }

    /// Make member `m`'s image hold everything up to its last sync before `cut` (log
    /// entries a failed sync left in doubt aside). Returns how far into its entries that is.
    fn apply_synced(&mut self, m: usize, cut: usize) -> Result<usize> {
        let list = &self.per_member[m];
        let upto = list[..list.partition_point(|&i| i < cut)]
            .iter()
            .rposition(|&i| matches!(self.log[i], Entry::Sync { .. }))
            .map_or(0, |p| p + 1)
            .max(self.applied[m]);
        for k in self.applied[m]..upto {
            let i = self.per_member[m][k];
            if self.doubtful[i] {
                self.doubt[m].push(i);
                continue;
            }
            match &self.log[i] {
                Entry::Write { block, data, .. } => {
                    for j in 0..data.len() / BLOCK {
                        let b = block + j as u64;
                        self.files[m].put_block(b, Some(&data[j * BLOCK..(j + 1) * BLOCK]));
                        self.durable[m].insert(b, Blk(data.clone(), j));
                    }
                }
                Entry::Trim { block, count, .. } => {
                    for b in *block..block + count {
                        if self.durable[m].remove(&b).is_some() {
                            self.write_block(m, b, None);
                        }
                    }
                }
                _ => {}
            }
        }
        self.applied[m] = upto;
        Ok(upto)
    }

    /// What of member `m`'s volatile writes before `cut` (after its last sync at `upto`,
    /// and whatever a failed sync left in doubt) the crash lets land: all (`mode` 0), none
    /// (1), or a random choice, some torn sector by sector (2 and up). Returns the blocks
    /// as they read after the crash, and how many writes were torn.
    fn volatile_overlay(
        &self,
        m: usize,
        upto: usize,
        cut: usize,
        mode: u64,
        rng: &mut SplitMix64,
    ) -> (HashMap<u64, Vec<u8>>, u64) {
        let list = &self.per_member[m];
        let end = list.partition_point(|&i| i < cut);
        let mut volatile: Vec<usize> = self.doubt[m].iter().copied().filter(|&i| i < cut).collect();
        volatile.extend_from_slice(&list[upto.min(end)..end]);
        volatile.sort_unstable();
        let mut overlay: HashMap<u64, Vec<u8>> = HashMap::new();
        let mut torn = 0;
        for i in volatile {
            let lands = match mode {
                0 => true,
                1 => false,
                _ => rng.chance(1, 2),
            };
            if !lands {
                continue;
            }
            match &self.log[i] {
                Entry::Write { block, data, .. } => {
                    let tear = mode >= 2 && rng.chance(1, 4);
                    for j in 0..data.len() / BLOCK {
                        let b = block + j as u64;
                        let new = &data[j * BLOCK..(j + 1) * BLOCK];
                        let mut out = match overlay.get(&b) {
                            Some(v) => v.clone(),
                            None => self.durable[m].get(&b).map_or(vec![0u8; BLOCK], |d| d.bytes().to_vec()),
                        };
                        if tear {
                            for s in 0..BLOCK / SECTOR {
                                if rng.chance(1, 2) {
                                    out[s * SECTOR..(s + 1) * SECTOR]
                                        .copy_from_slice(&new[s * SECTOR..(s + 1) * SECTOR]);
                                }
                            }
                        } else {
                            out.copy_from_slice(new);
                        }
                        overlay.insert(b, out);
                    }
                    torn += u64::from(tear);
                }
                Entry::Trim { block, count, .. } => {
                    for b in *block..block + count {
                        overlay.insert(b, vec![0u8; BLOCK]);
                    }
                }
                _ => {}
            }
        }
        (overlay, torn)
    }
}

/// Where a fault run strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Between a GC job's start and its victim's release.
    Gc,
    /// Around SWAN moving the front-end to another R-group.
    Rotation,
    /// While a checkpoint is written (body, then header).
    Checkpoint,
    /// From a member's failure on: serving degraded, then rebuilding onto a replacement
    /// (arrays with parity only).
    Rebuild,
}

impl Moment {
    pub const ALL: [Moment; 4] = [Moment::Gc, Moment::Rotation, Moment::Checkpoint, Moment::Rebuild];

    pub fn name(self) -> &'static str {
        match self {
            Moment::Gc => "gc",
            Moment::Rotation => "rotation",
            Moment::Checkpoint => "checkpoint",
            Moment::Rebuild => "rebuild",
        }
    }
}

/// A fault run's plan, drawn from its seed.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub moment: Moment,
    /// An I/O error armed at the moment (or none: a crash alone).
    pub fault: Option<Fault>,
}

impl FaultPlan {
    /// The plan of `seed` for an array with or without parity (a rebuild needs parity).
    pub fn from_seed(seed: u64, parity: bool) -> FaultPlan {
        let mut r = SplitMix64(seed ^ 0xfa17_5eed);
        let moment = Moment::ALL[r.below(if parity { 4 } else { 3 }) as usize];
        let fault = if r.chance(1, 3) {
            None
        } else {
            let (mark, ops): (&'static str, &[FaultOp]) = match moment {
                Moment::Gc => {
                    if r.chance(1, 2) {
                        ("gc-start", &[FaultOp::Read, FaultOp::Write])
                    } else {
                        ("gc-copied", &[FaultOp::Write, FaultOp::Sync, FaultOp::Trim])
                    }
                }
                Moment::Rotation => ("rotation", &[FaultOp::Write, FaultOp::Read, FaultOp::Sync]),
                Moment::Rebuild => (REPLACE, &[FaultOp::Read, FaultOp::Write, FaultOp::Sync]),
                Moment::Checkpoint => {
                    if r.chance(1, 2) {
                        ("checkpoint-start", &[FaultOp::Write, FaultOp::Sync])
                    } else {
                        ("checkpoint-body-durable", &[FaultOp::Write, FaultOp::Sync])
                    }
                }
            };
            let op = ops[r.below(ops.len() as u64) as usize];
            Some(Fault { after_mark: Some(mark), op, member: None, skip: r.below(3) as u32, performed: r.chance(1, 2) })
        };
        FaultPlan { moment, fault }
    }
}

/// What one fault run did and found.
#[derive(Clone, Debug)]
pub struct FaultOutcome {
    pub seed: u64,
    pub plan: FaultPlan,
    pub stats: Stats,
    pub replay: ReplayReport,
    pub injected: Vec<String>,
    pub problems: Vec<String>,
}

/// Log windows of the moment `m` in a run's log.
fn windows(run: &Run, m: Moment) -> Vec<(usize, usize)> {
    let log = run.recorder.log();
    let pos = |what: &str| -> Vec<usize> {
        log.iter().enumerate().filter_map(|(i, e)| matches!(e, Entry::Mark(x) if *x == what).then_some(i)).collect()
    };
    let after = |from: usize, what: &str| -> usize {
        log[from..].iter().position(|e| matches!(e, Entry::Mark(x) if *x == what)).map_or(log.len(), |p| from + p)
    };
    match m {
        Moment::Gc => pos("gc-start").into_iter().map(|s| (s, after(after(s, "gc-copied"), "release"))).collect(),
        Moment::Rotation => pos("rotation").into_iter().map(|s| (s, (s + 200).min(log.len()))).collect(),
        Moment::Checkpoint => pos("checkpoint-start").into_iter().map(|s| (s, after(s, "checkpoint-end"))).collect(),
        Moment::Rebuild => pos(MEMBER_FAILED).into_iter().map(|s| (s, log.len())).collect(),
    }
}

/// One deterministic fault run: the workload with the seed's fault armed, then crashes cut
/// inside the windows of its moment (and at the end of the log), each recovered and checked.
pub fn fault_run(base: &Config, seed: u64, cuts: usize) -> Result<FaultOutcome> {
    let parity = base.scheme.raid() != swan_core::geometry::RaidLevel::Raid0;
    let plan = FaultPlan::from_seed(seed, parity);
    let members = u64::from(base.rgroups * base.ssds_per_rgroup);
    let replace = (plan.moment == Moment::Rebuild).then(|| SplitMix64(seed ^ 0x4e9).below(members) as u32);
    let cfg = Config { seed, replace, ..base.clone() };
    let faults: Vec<Fault> = plan.fault.iter().cloned().collect();
    let run = Run::new(cfg, &faults)?;
    let mut rng = SplitMix64(seed ^ 0xc075);
    let mut problems = run.live_errors.clone();
    let injected: Vec<String> = run
        .recorder
        .injected()
        .iter()
        .map(|i| {
            format!(
                "EIO on member {} {} at log entry {} after mark {:?}{}",
                i.member,
                i.op,
                i.at,
                i.after_mark,
                if i.performed { " (performed, reported failed)" } else { "" }
            )
        })
        .collect();
    let mut wins = windows(&run, plan.moment);
    if let Some(first) = run.recorder.injected().first() {
        // With an error injected, crash after it.
        wins.retain(|w| w.1 >= first.at);
        wins.push((first.at, (first.at + 400).min(run.stats.log_entries)));
    }
    let mut points = vec![run.stats.log_entries];
    if !wins.is_empty() {
        for _ in 0..cuts {
            let (a, b) = wins[rng.below(wins.len() as u64) as usize];
            points.push(a + rng.below((b - a) as u64 + 1) as usize);
        }
    }
    let replay = run.replay(&points, seed ^ 0x7e97)?;
    problems.extend(replay.failures.iter().cloned());
    if wins.is_empty() {
        problems.push(format!(
            "seed {seed:#x}: the workload never reached the moment {} (no window to crash in)",
            plan.moment.name()
        ));
    }
    Ok(FaultOutcome { seed, plan, stats: run.stats.clone(), replay, injected, problems })
}
