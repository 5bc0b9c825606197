//! The array resumes by itself once a member's file system has room again.
//!
//! A write that finds a member's file system full past the member timeout ends durability
//! like any failed write ([`super::durability`]): the map may name slots the write never
//! filled. Unlike an I/O error, nothing was written back and dropped, so what a restart
//! would recover is all on the members (and in the page cache, as after `kill -9`). While
//! durability is stopped so, writes are refused (ENOSPC) and nothing is journaled, reads go
//! on, and every [`PROBE_EVERY`] the engine writes back, unchanged, the blocks the failed
//! writes were for ([`Member::probe_room`]). When they fit, it runs the recovery a restart
//! runs (newest checkpoint, synced records, tail while its blocks' CRCs match) on the same
//! members, opens the result for writes as a start does (parity of adopted rows, a fresh
//! checkpoint) and serves from it: the state is the one a `kill -9` at the stop would have
//! left, which the crash tests check recovery against.
//!
//! Only a full file system resumes so. After any other error (EIO, a failed sync, a member
//! failed or being rebuilt) the page cache may hold what the members lost, and only a
//! restart recovers.

use super::store::Store;
use super::EngineError;
use crate::array::Opened;
use crate::member::{Member, Op};
use crate::members::Members;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a stopped engine checks whether space has come back.
pub(super) const PROBE_EVERY: Duration = Duration::from_secs(1);
/// Blocks written back per place probed (1 MiB): enough to say the room a write needed is
/// there without writing much.
const PROBE_BLOCKS: u64 = 256;

/// Durability stopped by writes that found a member's file system full.
#[derive(Debug)]
pub(crate) struct FullStop {
    /// Where they found it full: member path, operation (the blocks to probe).
    places: Vec<(PathBuf, Op)>,
    /// When the engine first saw the stop, and when it probes next (its clock's time).
    pub since: Option<Instant>,
    next_probe: Option<Instant>,
    /// Probes that found the file system still full.
    pub probes: u64,
}

/// What a probe found.
pub(super) enum Probe {
    StillFull,
    /// Every place has room again: the member (index) the first was on.
    Room(u32),
    /// The array cannot resume by itself (said why in the log): a restart recovers it.
    Cannot(String),
}

impl FullStop {
    pub fn new(places: Vec<(PathBuf, Op)>) -> FullStop {
        let mut stop = FullStop { places: Vec::new(), since: None, next_probe: None, probes: 0 };
        stop.add(places);
        stop
    }

    /// More places a write found full (a few are enough to probe).
    pub fn add(&mut self, places: Vec<(PathBuf, Op)>) {
        for p in places {
            if self.places.len() < 8 && !self.places.contains(&p) {
                self.places.push(p);
            }
        }
    }

    /// The first member path named, for the log and `swan status`.
    pub fn first_path(&self) -> Option<&Path> {
        self.places.first().map(|(p, _)| p.as_path())
    }

    /// Whether a probe is due at `now` (the first call notes when the stop began).
    pub fn due(&mut self, now: Instant) -> bool {
        self.since.get_or_insert(now);
        self.next_probe.is_none_or(|t| now >= t)
    }

    /// Probe the places now; the next probe is due [`PROBE_EVERY`] later.
    pub fn probe(&mut self, members: &Members, now: Instant) -> Probe {
        self.next_probe = Some(now + PROBE_EVERY);
        if !members.all_healthy() {
            return Probe::Cannot("a member failed while durability was stopped".into());
        }
        let mut first = None;
        for (path, op) in &self.places {
            let Some(m) = members.iter().position(|m| m.path() == path) else {
                return Probe::Cannot(format!("member {} is no longer in the array", path.display()));
            };
            let (block, count) = match *op {
                Op::Write { block, count } | Op::Trim { block, count } => (block, count.clamp(1, PROBE_BLOCKS)),
                // Only writes and trims find a file system full; probe the member's first block.
                _ => (0, 1),
            };
            match members[m].probe_room(block, count) {
                Ok(true) => {}
                Ok(false) => {
                    self.probes += 1;
                    return Probe::StillFull;
                }
                Err(e) => return Probe::Cannot(format!("probing for space: {e}")),
            }
            first.get_or_insert(m as u32);
        }
        first.map_or(Probe::Cannot("no place to probe".into()), Probe::Room)
    }
}

/// Recover the array in-process as a restart would, from what `old`'s members hold, and
/// open it for writes (parity of adopted rows, a fresh checkpoint). `old` must have no
/// member I/O in flight. On success `old` is to be dropped; its counters carry over. On
/// failure `old` is as it was (still stopped), bar any parity the new one wrote, which is
/// the XOR of what the rows hold and so harmless.
pub(super) fn recover_in_place(old: &mut Store) -> Result<Store, EngineError> {
    let sb = old.io.sb.clone();
    let list: Vec<Member> = old.io.members.to_vec();
    let members = Members::new(list, crate::array::parity_width(&sb));
    let opened = Opened { sb, members, source: old.io.source() };
    let mut recovered = crate::array::recover(&opened)?;
    // Settings a start applies to the recovered scheme (`swan serve --gc-target`).
    if let (Some(was), Some(la)) = (old.scheme.log(), recovered.scheme.log_mut()) {
        let target = was.config().swan_gc_target;
        if la.config().swan_gc_target != target {
            // It was accepted for this array once, so it is again.
            let _ = la.set_swan_gc_target(target);
        }
    }
    let opts = old.reopen_options();
    let mut new = Store::new(opened, recovered, opts, old.clock.clone(), old.exec.pool.is_some())?;
    if let Err(e) = new.open_for_writes() {
        old.exec.emu = new.exec.emu.take();
        return Err(e);
    }
    new.carry_counters(old);
    Ok(new)
}
