//! A record of every band cleaning the cleaners chose (idle and lazy; the drive's forced
//! cleanings are counted in [`super::disks::DiskCounters`] only): what each took and gained,
//! and which host operations it held up. It is what shows *why* one cleaner needs more
//! cleanings than the other, or costs the requests more (docs/findings/apas.md, "Why: the sweep's
//! open results").

use serde::{Deserialize, Serialize};
use swan_core::apas::{BandClass, BandState, GcConfig, GcPolicy};
use swan_models::smr::Cleaning;
use swan_models::Nanos;

/// Who asked for a cleaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CleaningKind {
    /// Algorithm 2's aggressive cleaning in idle time.
    Idle,
    /// Below the free-space threshold, after a host write.
    Lazy,
}

/// One band cleaned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleaningRecord {
    pub disk: u32,
    pub kind: CleaningKind,
    pub band: u32,
    /// When the cleaning was queued on the disk and when it ended, from the run's start.
    pub queued_ns: Nanos,
    pub done_ns: Nanos,
    /// The victim's valid blocks (moved), invalid blocks (the free space gained) and
    /// unwritten blocks (more than 0: a partly written band) when it was cleaned.
    pub valid: u32,
    pub invalid: u32,
    pub unwritten: u32,
    /// Fig. 2's type of the victim under the default thresholds, whichever cleaner chose it.
    pub class: Option<BandClass>,
    /// The band its valid blocks went to (none if it held none); a destination left partly
    /// written is where the host appends next, and may itself become a victim.
    pub destination: Option<u32>,
    /// Host operations submitted to this disk while the cleaning was queued or running, and
    /// the time they waited for its end (at least; they may also queue behind each other).
    pub host_ops_behind: u32,
    pub host_wait_ns: Nanos,
}

impl CleaningRecord {
    pub fn new(
        disk: u32,
        kind: CleaningKind,
        state: &BandState,
        destination: Option<u32>,
        queued_ns: Nanos,
        done_ns: Nanos,
    ) -> Self {
        let classes = GcPolicy::new(GcConfig::default()).expect("the default thresholds are valid");
        CleaningRecord {
            disk,
            kind,
            band: state.band,
            queued_ns,
            done_ns,
            valid: state.valid,
            invalid: state.invalid,
            unwritten: state.free,
            class: classes.classify(state),
            destination,
            host_ops_behind: 0,
            host_wait_ns: 0,
        }
    }
}

/// The log of one run: records in the order the cleanings were queued, and per disk the
/// one that ends last (host operations arriving before its end wait for it).
#[derive(Debug, Default)]
pub struct CleaningLog {
    pub records: Vec<CleaningRecord>,
    last: Vec<Option<usize>>,
    t0: Nanos,
}

impl CleaningLog {
    pub fn new(disks: usize) -> Self {
        CleaningLog { records: Vec::new(), last: vec![None; disks], t0: 0 }
    }

    /// Times are reported from `t0`, the run's start.
    pub fn start(&mut self, t0: Nanos) {
        self.t0 = t0;
    }

    pub fn cleaned(&mut self, disk: usize, kind: CleaningKind, state: &BandState, c: &Cleaning, queued: Nanos) {
        let rel = |t: Nanos| t.saturating_sub(self.t0);
        self.records.push(CleaningRecord::new(disk as u32, kind, state, c.destination, rel(queued), rel(c.done)));
        self.last[disk] = Some(self.records.len() - 1);
    }

    /// A host operation reached `disk` at `now`: if a cleaning there has not ended, it waits.
    pub fn host_op(&mut self, disk: usize, now: Nanos) {
        let Some(i) = self.last[disk] else { return };
        let r = &mut self.records[i];
        let now = now.saturating_sub(self.t0);
        if now < r.done_ns {
            r.host_ops_behind += 1;
            r.host_wait_ns += r.done_ns - now;
        }
    }
}
