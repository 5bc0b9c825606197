//! Crashes at any point, and faults at the worst moments, over the real engine and the real
//! on-disk format, reproducible from a seed.
//!
//! A run ([`Run::new`]):
//!
//! 1. creates an array over in-memory members ([`MemoryMembers`]), plain or emulated zoned
//!    devices ([`Config::zoned`]), and keeps copies of the member images as create left them
//!    (sparse: the blocks that are not zero);
//! 2. puts one [`Recorder`] under every member (opening them through a [`RecordingSource`];
//!    under a zoned member's emulation, so its zone table is logged and cut like its data),
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
//!   was not written to that block;
//! - over zoned members, the array must also serve writes after the restart (that is when it
//!   resets and finishes the zones the crash left): they must land at the zones' write
//!   pointers, and read back beside every other block as it was.
//!
//! The images are kept up to date incrementally (one in-memory image per member, patched from
//! cut to cut), so a replay point costs about one recovery and one read of the volume.
//!
//! The parts: `config` (the run's shape), `payload` (the tagged bytes writes carry),
//! `workload` (the recorded run), `materialise` (member images at a cut), `replay` (recovery
//! checked at each cut) and `faults` (fault runs at the worst moments).

mod config;
mod faults;
mod materialise;
mod payload;
mod replay;
mod workload;

pub use config::Config;
pub use faults::{fault_run, FaultOutcome, FaultPlan, Moment};
pub use payload::payload;
pub use replay::ReplayReport;

use crate::recorder::{Entry, Fault, Recorder, RecordingSource};
use crate::rng::SplitMix64;
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::sync::Arc;
use swan_core::victim::VictimPolicy;
use swan_server::array::{self, CreateOptions};
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::MemoryMembers;
use workload::{Kind, OpRec};

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
    /// User blocks the engine read around their member (`Config::reads`).
    pub parity_read_blocks: u64,
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
    /// Blocks of each member's image: its member blocks, and before them, on an emulated
    /// zoned device, the device block and zone table.
    image_blocks: u64,
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

fn quiet_opts(reads: swan_core::scheme::ReadRules) -> EngineOptions {
    // Punch holes: the member files stand in for SSDs, whose TRIMs crashes must survive.
    EngineOptions { name: "crashsim".into(), read_only: false, emulate: None, verbose: false, punch_holes: true, reads }
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
            zoned: cfg.zoned,
        };
        let mut uuid = [0u8; 16];
        let mut r = SplitMix64(cfg.seed ^ 0x0a1d);
        uuid[..8].copy_from_slice(&r.next_u64().to_le_bytes());
        uuid[8..].copy_from_slice(&r.next_u64().to_le_bytes());
        uuid[6] = (uuid[6] & 0x0f) | 0x40;
        uuid[8] = (uuid[8] & 0x3f) | 0x80;
        let sb = array::create_in(&*images, &paths, &o, uuid)?;
        let mut base: Vec<_> = paths.iter().map(|p| images.image(p).expect("created").nonzero_blocks()).collect();
        let image_blocks = images.image(&paths[0]).expect("created").blocks();
        if let Some(m) = cfg.replace {
            if m >= members {
                bail!("cannot replace member {m}: the array has {members}");
            }
            // The replacement starts out blank: an emulated zoned device holds its device
            // block, as a new one does.
            let device = cfg.zoned.and_then(|_| base[0].iter().find(|(b, _)| *b == 0).cloned());
            base.push(device.into_iter().collect());
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
            image_blocks,
            volume_blocks,
            recorder: recorder.clone(),
            ops: Vec::new(),
            history: vec![Vec::new(); volume_blocks as usize],
            uuid,
            stats: Stats::default(),
            live_errors: Vec::new(),
            cfg,
        };
        let mut stepper = Stepper::start(opened, recovered, quiet_opts(run.cfg.reads))?;
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
        run.stats.parity_read_blocks = st.parity_read_blocks;
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
