//! Harmonia's globally coordinated garbage collection (GGC): the O-RAID's coordinator.
//!
//! Harmonia (§IV) pairs an SSD-optimised RAID controller (**O-RAID**) with GGC-capable
//! SSDs (**O-SSDs**). Each O-SSD keeps collecting on its own when its free blocks reach the
//! **hard limit** (it must, to keep accepting writes); above that it reports, or lets the
//! O-RAID read, how close it is, and accepts a **FORCE GC** command that makes it collect
//! *now*, until its free blocks exceed an internal threshold. The coordinator decides when
//! to force every SSD of the array at once, so their GC periods overlap instead of each
//! SSD stalling the striped requests at a different moment:
//!
//! - [`GgcPolicy::Reactive`] — *reactive soft-limit*, the method the paper evaluates: the
//!   first O-SSD to reach its **soft limit** notifies the O-RAID, which forces GC on all
//!   O-SSDs at once.
//! - [`GgcPolicy::ProactiveSoftLimit`] — the O-RAID *polls* every O-SSD's GC state; once one
//!   is at its soft limit it waits for a good moment in the I/O stream (a detected idle
//!   period) and forces all of them then, or at once if one is about to reach its hard limit.
//! - [`GgcPolicy::ProactiveIdle`] — the O-RAID forces GC on every O-SSD below its target in
//!   each detected idle period, whatever their soft limits say.
//!
//! Idle periods are found by the simplest on-line detector ([`IdleDetector`]): the array is
//! idle once no request has arrived for a fixed time.
//!
//! The coordinator is pure: no clock, no devices. Times are values passed in; member state
//! comes in as [`MemberGcState`]; decisions go out as [`ForceGc`], which the driver (the
//! simulator) carries out on its SSD models. Without a coordinator every SSD collects on its
//! own at its hard limit: that is the uncoordinated baseline.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Time in nanoseconds, as the driver counts it (the coordinator reads no clock).
pub type Nanos = u64;

/// How the O-RAID coordinates the O-SSDs' garbage collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GgcPolicy {
    /// Reactive soft-limit: the first SSD at its soft limit makes the O-RAID force all.
    Reactive,
    /// Proactive soft-limit: poll GC state; force all at the next idle moment (or at once
    /// if an SSD nears its hard limit).
    ProactiveSoftLimit,
    /// Proactive idle: force GC in every detected idle period.
    ProactiveIdle,
}

impl GgcPolicy {
    pub const ALL: [GgcPolicy; 3] = [GgcPolicy::Reactive, GgcPolicy::ProactiveSoftLimit, GgcPolicy::ProactiveIdle];

    /// The array scheme name this policy goes by on the command line and in reports.
    pub fn scheme_name(self) -> &'static str {
        match self {
            GgcPolicy::Reactive => "harmonia-reactive",
            GgcPolicy::ProactiveSoftLimit => "harmonia-proactive",
            GgcPolicy::ProactiveIdle => "harmonia-idle",
        }
    }

    fn uses_idle_detector(self) -> bool {
        matches!(self, GgcPolicy::ProactiveSoftLimit | GgcPolicy::ProactiveIdle)
    }
}

impl fmt::Display for GgcPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.scheme_name())
    }
}

/// A GGC policy name that is none of [`GgcPolicy::scheme_name`]'s.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown GGC policy '{0}': expected harmonia-reactive, harmonia-proactive or harmonia-idle")]
pub struct UnknownGgcPolicy(pub String);

impl FromStr for GgcPolicy {
    type Err = UnknownGgcPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GgcPolicy::ALL.into_iter().find(|p| p.scheme_name() == s).ok_or_else(|| UnknownGgcPolicy(s.to_string()))
    }
}

/// Why a GGC coordinator cannot be made: a tunable out of range, or no SSD to coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum GgcConfigError {
    #[error("GGC force target must be a free-block fraction in (0, 1), got {target}")]
    ForceTarget { target: f64 },
    #[error("GGC forced-GC bound must be at least one victim per domain")]
    ForceVictims,
    #[error("GGC poll period must be positive")]
    PollPeriod,
    #[error("GGC idle timeout must be positive")]
    IdleTimeout,
    #[error("a GGC coordinator needs at least one SSD")]
    NoSsds,
}

/// The coordinator's tunables. The paper gives none of these numbers; the defaults are
/// swan's and are documented where they are defined ([`GgcConfig::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GgcConfig {
    pub policy: GgcPolicy,
    /// Forced GC collects until this fraction of each SSD's blocks is free. `None`: until
    /// free blocks exceed the SSD's soft limit ("until the number of free blocks exceeds an
    /// internal threshold", §V-A), which re-arms its soft-limit notice.
    pub force_target: Option<f64>,
    /// At most this many victims per GC domain per FORCE GC (`None`: no bound). The paper
    /// gives no bound; it is what decides how long a forced cycle stalls an element.
    #[serde(default)]
    pub force_victims: Option<u32>,
    /// Proactive soft-limit: how often the O-RAID polls every O-SSD's GC state.
    pub poll_ns: Nanos,
    /// The idle detector's timeout: no request for this long means an idle period.
    pub idle_ns: Nanos,
}

impl GgcConfig {
    /// `policy` with swan's defaults: forced GC up to just above the soft limit; poll every
    /// 10 ms (a few requests apart at Harmonia's 476.5 IOPS, cheap for a controller); idle
    /// after 5 ms without a request (ten mean inter-arrival gaps of HPC(W): within a burst
    /// gaps are far shorter, between bursts far longer).
    pub fn new(policy: GgcPolicy) -> Self {
        Self { policy, force_target: None, force_victims: None, poll_ns: 10_000_000, idle_ns: 5_000_000 }
    }

    /// Checks the tunables, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), GgcConfigError> {
        if let Some(t) = self.force_target {
            if !(t > 0.0 && t < 1.0) {
                return Err(GgcConfigError::ForceTarget { target: t });
            }
        }
        if self.force_victims == Some(0) {
            return Err(GgcConfigError::ForceVictims);
        }
        if self.poll_ns == 0 {
            return Err(GgcConfigError::PollPeriod);
        }
        if self.idle_ns == 0 {
            return Err(GgcConfigError::IdleTimeout);
        }
        Ok(())
    }
}

/// An O-SSD's GC state as the O-RAID reads it (§IV-C.2: "number of free erase blocks").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberGcState {
    pub free_blocks: u64,
    /// At or below this many free blocks the SSD reports its soft limit.
    pub soft_limit_blocks: u64,
    /// At or below this many free blocks the SSD collects on its own.
    pub hard_limit_blocks: u64,
    pub total_blocks: u64,
    pub pages_per_block: u32,
}

impl MemberGcState {
    pub fn at_soft_limit(&self) -> bool {
        self.free_blocks <= self.soft_limit_blocks
    }

    pub fn at_hard_limit(&self) -> bool {
        self.free_blocks <= self.hard_limit_blocks
    }

    /// How much can be written before the SSD must collect on its own (a lower bound: the
    /// pages left in its open blocks come on top). The paper's notice carries this estimate.
    pub fn pages_to_hard_limit(&self) -> u64 {
        self.free_blocks.saturating_sub(self.hard_limit_blocks) * u64::from(self.pages_per_block)
    }

    /// Near the hard limit: less than half the gap between the limits left.
    fn urgent(&self) -> bool {
        let gap = self.soft_limit_blocks.saturating_sub(self.hard_limit_blocks) * u64::from(self.pages_per_block);
        self.pages_to_hard_limit() * 2 <= gap
    }

    fn below(&self, target: Option<f64>) -> bool {
        match target {
            Some(t) => (self.free_blocks as f64) < t * self.total_blocks as f64,
            None => self.at_soft_limit(),
        }
    }
}

/// Why a GGC cycle started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Trigger {
    /// An O-SSD's soft-limit notice (reactive).
    SoftLimitNotice { member: u32 },
    /// A detected idle period.
    Idle,
    /// A polled SSD was close to its hard limit and no idle period came in time.
    NearHardLimit,
}

/// A decision: send FORCE GC to `members` now.
#[derive(Clone, Debug, PartialEq)]
pub struct ForceGc {
    /// Members to force, ascending.
    pub members: Vec<u32>,
    /// Collect until this free fraction; `None`: until above the soft limit.
    pub target: Option<f64>,
    /// At most this many victims per GC domain (`None`: no bound).
    pub victims: Option<u32>,
    pub trigger: Trigger,
}

/// The fixed-timeout idle detector: idle once no request has arrived for `timeout`; each
/// idle period is reported once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleDetector {
    timeout: Nanos,
    last_arrival: Nanos,
    reported: bool,
}

impl IdleDetector {
    pub fn new(timeout: Nanos) -> Self {
        // Nothing has arrived yet: the array is idle from time 0 on, detected at `timeout`.
        Self { timeout, last_arrival: 0, reported: false }
    }

    pub fn arrival(&mut self, now: Nanos) {
        self.last_arrival = now;
        self.reported = false;
    }

    /// When the current quiet period becomes an idle period, unless it has been reported.
    pub fn due(&self) -> Option<Nanos> {
        (!self.reported).then_some(self.last_arrival + self.timeout)
    }

    /// True once per idle period: at or after `due`, the first time it is asked.
    pub fn take_idle(&mut self, now: Nanos) -> bool {
        if self.due().is_some_and(|d| now >= d) {
            self.reported = true;
            true
        } else {
            false
        }
    }
}

/// What the coordinator did over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GgcCounters {
    /// GGC cycles started (each forces one or more SSDs).
    pub cycles: u64,
    pub by_notice: u64,
    pub by_idle: u64,
    pub by_near_hard_limit: u64,
    /// FORCE GC commands sent (one per SSD per cycle).
    pub force_commands: u64,
    /// Soft-limit notices received.
    pub notices: u64,
    /// GC-state polls made.
    pub polls: u64,
}

/// The O-RAID's GC coordinator for an array of `members` O-SSDs.
#[derive(Clone, Debug)]
pub struct Coordinator {
    cfg: GgcConfig,
    members: u32,
    idle: IdleDetector,
    next_poll: Nanos,
    /// Proactive soft-limit: an SSD was at its soft limit at the last poll; GC is owed.
    owed: bool,
    counters: GgcCounters,
}

impl Coordinator {
    pub fn new(cfg: GgcConfig, members: u32) -> Result<Self, GgcConfigError> {
        cfg.validate()?;
        if members == 0 {
            return Err(GgcConfigError::NoSsds);
        }
        Ok(Self {
            cfg,
            members,
            idle: IdleDetector::new(cfg.idle_ns),
            next_poll: cfg.poll_ns,
            owed: false,
            counters: GgcCounters::default(),
        })
    }

    pub fn config(&self) -> &GgcConfig {
        &self.cfg
    }

    pub fn counters(&self) -> &GgcCounters {
        &self.counters
    }

    fn cycle(&mut self, members: Vec<u32>, trigger: Trigger) -> Option<ForceGc> {
        if members.is_empty() {
            return None;
        }
        self.counters.cycles += 1;
        self.counters.force_commands += members.len() as u64;
        match trigger {
            Trigger::SoftLimitNotice { .. } => self.counters.by_notice += 1,
            Trigger::Idle => self.counters.by_idle += 1,
            Trigger::NearHardLimit => self.counters.by_near_hard_limit += 1,
        }
        Some(ForceGc { members, target: self.cfg.force_target, victims: self.cfg.force_victims, trigger })
    }

    fn all(&self) -> Vec<u32> {
        (0..self.members).collect()
    }

    /// O-SSD `member` reports that it has reached its soft limit. Under the reactive policy
    /// the reporting SSD becomes the GGC coordinator and every SSD is forced at once; the
    /// other policies pull state instead and ignore the push.
    pub fn on_soft_limit(&mut self, member: u32, _now: Nanos) -> Option<ForceGc> {
        self.counters.notices += 1;
        match self.cfg.policy {
            GgcPolicy::Reactive => self.cycle(self.all(), Trigger::SoftLimitNotice { member }),
            GgcPolicy::ProactiveSoftLimit | GgcPolicy::ProactiveIdle => None,
        }
    }

    /// A user request arrived at the array (feeds the idle detector).
    pub fn on_arrival(&mut self, now: Nanos) {
        self.idle.arrival(now);
    }

    /// When the coordinator next wants [`Coordinator::on_wakeup`] called, if ever: the next
    /// poll, or the moment the current quiet period would count as idle.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        let poll = (self.cfg.policy == GgcPolicy::ProactiveSoftLimit).then_some(self.next_poll);
        let idle = if self.cfg.policy.uses_idle_detector() { self.idle.due() } else { None };
        match (poll, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A wake-up asked for by [`Coordinator::next_wakeup`]: polls and idle checks that are
    /// due at `now` run; `state(m)` reads member `m`'s GC state (the O-RAID's pull).
    pub fn on_wakeup(&mut self, now: Nanos, state: &mut dyn FnMut(u32) -> MemberGcState) -> Option<ForceGc> {
        let idle = self.cfg.policy.uses_idle_detector() && self.idle.take_idle(now);
        match self.cfg.policy {
            GgcPolicy::Reactive => None,
            GgcPolicy::ProactiveIdle => {
                if !idle {
                    return None;
                }
                let target = self.cfg.force_target;
                let below: Vec<u32> = (0..self.members).filter(|&m| state(m).below(target)).collect();
                self.cycle(below, Trigger::Idle)
            }
            GgcPolicy::ProactiveSoftLimit => {
                let mut urgent = false;
                if now >= self.next_poll {
                    while self.next_poll <= now {
                        self.next_poll += self.cfg.poll_ns;
                    }
                    self.counters.polls += 1;
                    for m in 0..self.members {
                        let s = state(m);
                        self.owed |= s.at_soft_limit();
                        urgent |= s.urgent();
                    }
                }
                if self.owed && (idle || urgent) {
                    self.owed = false;
                    let trigger = if idle { Trigger::Idle } else { Trigger::NearHardLimit };
                    return self.cycle(self.all(), trigger);
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// 1000 blocks of 64 pages, soft limit 60, hard limit 50.
    fn state(free: u64) -> MemberGcState {
        MemberGcState {
            free_blocks: free,
            soft_limit_blocks: 60,
            hard_limit_blocks: 50,
            total_blocks: 1000,
            pages_per_block: 64,
        }
    }

    #[test]
    fn reactive_forces_every_ssd_on_the_first_notice() {
        let mut c = Coordinator::new(GgcConfig::new(GgcPolicy::Reactive), 8).unwrap();
        let f = c.on_soft_limit(3, 7 * MS).expect("a notice starts a GGC cycle");
        assert_eq!(f.members, (0..8).collect::<Vec<_>>(), "every SSD is forced, not only the initiator");
        assert_eq!(f.trigger, Trigger::SoftLimitNotice { member: 3 });
        assert_eq!(f.target, None, "default: collect until above the soft limit");
        let c2 = c.on_soft_limit(5, 9 * MS).unwrap();
        assert_eq!(c2.members.len(), 8);
        let k = c.counters();
        assert_eq!((k.cycles, k.by_notice, k.force_commands, k.notices), (2, 2, 16, 2));
        // Reactive needs no timer: it never polls and ignores idleness.
        assert_eq!(c.next_wakeup(), None);
        assert_eq!(c.on_wakeup(100 * MS, &mut |_| state(0)), None);
    }

    #[test]
    fn proactive_policies_ignore_pushed_notices() {
        for p in [GgcPolicy::ProactiveSoftLimit, GgcPolicy::ProactiveIdle] {
            let mut c = Coordinator::new(GgcConfig::new(p), 4).unwrap();
            assert_eq!(c.on_soft_limit(0, MS), None, "{p}");
            assert_eq!(c.counters().notices, 1);
            assert_eq!(c.counters().cycles, 0);
        }
    }

    #[test]
    fn idle_detector_reports_each_quiet_period_once() {
        let mut d = IdleDetector::new(5 * MS);
        d.arrival(10 * MS);
        assert_eq!(d.due(), Some(15 * MS));
        assert!(!d.take_idle(14 * MS), "4 ms of quiet is not idle yet");
        assert!(d.take_idle(15 * MS));
        assert!(!d.take_idle(20 * MS), "the same idle period is reported once");
        assert_eq!(d.due(), None);
        d.arrival(21 * MS);
        d.arrival(23 * MS);
        assert!(!d.take_idle(27 * MS), "a request at 23 ms restarted the clock");
        assert!(d.take_idle(28 * MS));
    }

    #[test]
    fn proactive_idle_forces_ssds_below_target_in_idle_periods_only() {
        let mut cfg = GgcConfig::new(GgcPolicy::ProactiveIdle);
        cfg.force_target = Some(0.07);
        let mut c = Coordinator::new(cfg, 3).unwrap();
        c.on_arrival(0);
        // Busy: a request every millisecond; the wake-up keeps moving and nothing happens.
        for t in 1..20 {
            c.on_arrival(t * MS);
            assert_eq!(c.next_wakeup(), Some(t * MS + cfg.idle_ns));
            assert_eq!(c.on_wakeup(t * MS, &mut |_| state(55)), None, "not idle at {t} ms");
        }
        // Quiet from 19 ms: idle at 24 ms. SSD 1 already has 80 free blocks (8 % ≥ 7 %).
        let free = [55, 80, 69];
        let f = c.on_wakeup(24 * MS, &mut |m| state(free[m as usize])).expect("idle period");
        assert_eq!(f.members, vec![0, 2]);
        assert_eq!((f.trigger, f.target), (Trigger::Idle, Some(0.07)));
        assert_eq!(c.next_wakeup(), None, "one cycle per idle period");
        assert_eq!(c.on_wakeup(40 * MS, &mut |_| state(0)), None);
        // Nobody below target: an idle period passes without a cycle.
        c.on_arrival(50 * MS);
        assert_eq!(c.on_wakeup(55 * MS, &mut |_| state(90)), None);
        assert_eq!(c.counters().cycles, 1);
    }

    #[test]
    fn proactive_soft_limit_polls_then_waits_for_idle_or_urgency() {
        let cfg = GgcConfig::new(GgcPolicy::ProactiveSoftLimit);
        let mut c = Coordinator::new(cfg, 2).unwrap();
        assert_eq!(c.next_wakeup(), Some(cfg.idle_ns.min(cfg.poll_ns)));
        // Busy stream; at the first poll SSD 1 is at its soft limit (58 ≤ 60) but far from
        // its hard limit: the cycle is owed, not started.
        let busy = |c: &mut Coordinator, from: u64, to: u64| (from..to).for_each(|t| c.on_arrival(t * MS));
        busy(&mut c, 0, 11);
        let free = std::cell::Cell::new([70u64, 58]);
        let mut read = |m: u32| state(free.get()[m as usize]);
        assert_eq!(c.on_wakeup(10 * MS, &mut read), None);
        assert_eq!(c.counters().polls, 1);
        // Still busy at the next poll, now close to the hard limit (54 - 50 = 4 blocks left,
        // under half of the 10-block gap): force at once.
        busy(&mut c, 11, 21);
        free.set([70, 54]);
        let f = c.on_wakeup(20 * MS, &mut read).expect("near the hard limit");
        assert_eq!((f.members, f.trigger), (vec![0, 1], Trigger::NearHardLimit));
        // Next time the owed cycle waits for an idle period: quiet after 25 ms, idle at 30 ms.
        busy(&mut c, 21, 26);
        free.set([59, 70]);
        assert_eq!(c.on_wakeup(30 * MS, &mut read).map(|f| f.trigger), Some(Trigger::Idle));
        assert_eq!(c.counters().polls, 3, "the poll at 30 ms ran with the idle check");
        // Idle but nothing owed: no cycle.
        free.set([90, 90]);
        c.on_arrival(31 * MS);
        assert_eq!(c.on_wakeup(40 * MS, &mut read), None);
        let k = c.counters();
        assert_eq!((k.cycles, k.by_idle, k.by_near_hard_limit), (2, 1, 1));
    }

    #[test]
    fn member_state_arithmetic() {
        let s = state(58);
        assert!(s.at_soft_limit() && !s.at_hard_limit());
        assert_eq!(s.pages_to_hard_limit(), 8 * 64);
        assert!(!s.urgent());
        assert!(state(55).urgent() && state(40).pages_to_hard_limit() == 0);
        assert!(state(69).below(Some(0.07)) && !state(70).below(Some(0.07)));
        assert!(state(60).below(None) && !state(61).below(None));
    }

    #[test]
    fn bad_tunables_are_named() {
        let mut cfg = GgcConfig::new(GgcPolicy::Reactive);
        cfg.force_target = Some(1.5);
        assert_eq!(Coordinator::new(cfg, 8).unwrap_err(), GgcConfigError::ForceTarget { target: 1.5 });
        assert!(Coordinator::new(cfg, 8).unwrap_err().to_string().contains("force target"));
        cfg.force_target = None;
        cfg.idle_ns = 0;
        assert_eq!(cfg.validate(), Err(GgcConfigError::IdleTimeout));
        assert!(cfg.validate().unwrap_err().to_string().contains("idle"));
        assert_eq!(Coordinator::new(GgcConfig::new(GgcPolicy::Reactive), 0).unwrap_err(), GgcConfigError::NoSsds);
        assert_eq!("harmonia-idle".parse::<GgcPolicy>(), Ok(GgcPolicy::ProactiveIdle));
        assert!("harmonia".parse::<GgcPolicy>().unwrap_err().to_string().contains("harmonia-reactive"));
    }
}
