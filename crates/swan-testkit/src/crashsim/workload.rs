//! The recorded workload: seeded groups of writes, FUA writes, trims, reads and flushes
//! driven through the real engine's [`Stepper`] round by round over a manual clock, each
//! reply noted (and each read checked at once), and a member failed and replaced on
//! schedule when the run asks for it.

use super::payload::{identify, payload};
use super::Run;
use crate::rng::SplitMix64;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use swan_server::engine::Stepper;
use swan_server::member::{MemberSource, BLOCK};
use swan_server::service::{BlockOp, BlockRequest, Reply};

/// Marks the workload leaves in the log around a member's failure and replacement.
pub(super) const MEMBER_FAILED: &str = "member-failed";
pub(super) const REPLACE: &str = "replace";
const REBUILD_OVER: &str = "rebuild-over";

/// Where the workload is in `Config::replace`'s schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Replacement {
    Before,
    Failed,
    Rebuilding,
    Over,
}

/// What a request of the workload does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Write { fua: bool },
    Trim,
    Read,
    Flush,
}

/// One request of the workload and what became of it.
#[derive(Clone, Debug)]
pub(super) struct OpRec {
    pub(super) kind: Kind,
    lba: u64,
    blocks: u32,
    pub(super) group: u32,
    /// Log length when it was sent, and when it was answered.
    pub(super) start: usize,
    pub(super) ack: Option<usize>,
    pub(super) ok: bool,
}

/// Where a request's completion leaves its reply, and the log length when it came.
type ReplySlot = Arc<Mutex<Option<(Reply, usize)>>>;

impl Run {
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

    pub(super) fn drive(&mut self, stepper: &mut Stepper) -> Result<()> {
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
                let replacement = self.base.last().expect("a replacement's image");
                if let Some((_, device)) = replacement.iter().find(|(b, _)| *b == 0) {
                    // A new emulated zoned device: its device block, every zone empty.
                    self.members.create(&path, self.image_blocks * BLOCK as u64, false)?;
                    self.members.image(&path).expect("just made").put_block(0, Some(device));
                } else {
                    self.members.create(&path, self.member_blocks * BLOCK as u64, false)?;
                }
                self.source.record_as(&path, self.base.len() as u32 - 1);
                self.recorder.mark(REPLACE);
                match st.replace(m, &path) {
                    Ok(_) => Replacement::Rebuilding,
                    // An error injected into the replacement as it is opened (an emulated
                    // zoned device reads its zone table then) refuses it, as `swan replace`
                    // would: the member stays failed.
                    Err(_) if !self.recorder.injected().is_empty() => {
                        self.recorder.mark(REBUILD_OVER);
                        Replacement::Over
                    }
                    Err(e) => bail!("seed {:#x}: swan replace {m}: {e}", self.cfg.seed),
                }
            }
            Replacement::Rebuilding if !st.rebuilding() => {
                self.recorder.mark(REBUILD_OVER);
                Replacement::Over
            }
            other => other,
        })
    }
}
