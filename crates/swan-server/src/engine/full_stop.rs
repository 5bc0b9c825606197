//! Durability stopped by a full file system: where writes found it full, and the probe
//! that says when there is room again ([`super::resume`] then recovers in-process). Kept
//! apart from the recovery so that [`super::durability`] can hold it without depending on
//! the store.

use crate::member::Op;
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
