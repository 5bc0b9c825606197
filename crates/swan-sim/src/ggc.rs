//! Harmonia's GGC in the simulator: carries the O-RAID coordinator's decisions
//! ([`swan_core::ggc::Coordinator`]) out on the modelled O-SSDs, and records what Harmonia
//! reports — GC invocations per SSD (own and forced) and a per-SSD request-latency
//! timeline over a short window (Fig. 9).
//!
//! The engine calls four hooks and nothing else: [`GgcDriver::on_arrival`] when a user
//! request reaches the array (whatever produced it: a generator or a trace),
//! [`GgcDriver::after_member_io`] after each member operation it submits,
//! [`GgcDriver::on_wakeup`] when a wake-up it was asked for comes due, and
//! [`GgcDriver::finish`]. Each hook may answer with a time at which the driver wants a
//! wake-up; older wake-ups it has moved past are ignored when they fire.

use serde::{Deserialize, Serialize};
use swan_core::ggc::{Coordinator, ForceGc, GgcConfig, GgcConfigError, GgcCounters};
use swan_core::io::IoClass;
use swan_models::ssd::{ForceTarget, Ssd};
use swan_models::{DevOpKind, Nanos};

/// The window of Fig. 9: every user operation each SSD serves in `[start_s, start_s + len_s)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineWindow {
    pub start_s: f64,
    pub len_s: f64,
}

/// One user operation on one SSD: when it was submitted and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimelinePoint {
    pub t_ns: Nanos,
    pub member: u32,
    pub latency_ns: Nanos,
    pub write: bool,
}

/// An SSD's GC over a run: its own (hard-limit) runs and the forced ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SsdGcCounts {
    pub gc_invocations: u64,
    pub forced_gc_invocations: u64,
    /// Victims the forced runs collected, over all the SSD's GC domains: divided by the
    /// forced runs and the domains, how much of the forced-GC bound a cycle used.
    #[serde(default)]
    pub forced_gc_victims: u64,
    pub gc_pages_copied: u64,
    pub erases: u64,
}

/// What [`GgcDriver::finish`] hands back.
#[derive(Clone, Debug, Default)]
pub struct GgcReport {
    pub counters: GgcCounters,
    pub per_ssd: Vec<SsdGcCounts>,
    pub timeline: Vec<TimelinePoint>,
}

/// Why [`GgcDriver::new`] refused: the coordinator's tunables, or the timeline window.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum GgcDriverError {
    #[error(transparent)]
    Coordinator(#[from] GgcConfigError),
    #[error("timeline window must start at ≥ 0 s and last > 0 s, got {window:?}")]
    Timeline { window: TimelineWindow },
}

pub struct GgcDriver {
    coordinator: Option<Coordinator>,
    /// The wake-up the engine was last asked for; events at other times are stale.
    scheduled: Option<Nanos>,
    window: Option<(Nanos, Nanos)>,
    timeline: Vec<TimelinePoint>,
}

impl GgcDriver {
    /// `coordination: None` is the uncoordinated baseline: the SSDs collect only on their own.
    pub fn new(
        coordination: Option<GgcConfig>,
        members: u32,
        timeline: Option<TimelineWindow>,
    ) -> Result<Self, GgcDriverError> {
        let coordinator = coordination.map(|c| Coordinator::new(c, members)).transpose()?;
        let window = match timeline {
            Some(w) if !(w.start_s >= 0.0 && w.len_s > 0.0 && (w.start_s + w.len_s).is_finite()) => {
                return Err(GgcDriverError::Timeline { window: w });
            }
            Some(w) => Some(((w.start_s * 1e9) as Nanos, ((w.start_s + w.len_s) * 1e9) as Nanos)),
            None => None,
        };
        Ok(Self { coordinator, scheduled: None, window, timeline: Vec::new() })
    }

    /// The wake-up the coordinator wants, if the engine has not been asked for it yet.
    fn reschedule(&mut self) -> Option<Nanos> {
        let want = self.coordinator.as_ref()?.next_wakeup();
        if want == self.scheduled {
            return None;
        }
        self.scheduled = want;
        want
    }

    fn apply(ssds: &mut [Ssd], now: Nanos, f: &ForceGc) {
        for &m in &f.members {
            let ssd = &mut ssds[m as usize];
            let target = f.target.map_or(ForceTarget::PastSoftLimit, ForceTarget::FreeFraction);
            ssd.force_gc(now, target, f.victims);
        }
    }

    pub fn on_arrival(&mut self, now: Nanos) -> Option<Nanos> {
        self.coordinator.as_mut()?.on_arrival(now);
        self.reschedule()
    }

    /// After member `member` accepted an operation at `now` that completes at `done`:
    /// record it for the timeline, and deliver the SSD's soft-limit notice if it raised one.
    // Asked after every member operation: a run with neither a timeline nor a coordinator
    // leaves at once, inlined where the operation was submitted.
    #[inline]
    pub fn after_member_io(
        &mut self,
        ssds: &mut [Ssd],
        member: u32,
        kind: DevOpKind,
        class: IoClass,
        now: Nanos,
        done: Nanos,
    ) -> Option<Nanos> {
        if self.window.is_none() && self.coordinator.is_none() {
            return None;
        }
        self.record_member_io(ssds, member, kind, class, now, done)
    }

    fn record_member_io(
        &mut self,
        ssds: &mut [Ssd],
        member: u32,
        kind: DevOpKind,
        class: IoClass,
        now: Nanos,
        done: Nanos,
    ) -> Option<Nanos> {
        if let Some((from, to)) = self.window {
            if (from..to).contains(&now) && class != IoClass::Gc && matches!(kind, DevOpKind::Read | DevOpKind::Write) {
                self.timeline.push(TimelinePoint {
                    t_ns: now,
                    member,
                    latency_ns: done - now,
                    write: kind == DevOpKind::Write,
                });
            }
        }
        // Without a coordinator nobody reads the notice: it is left where it was raised.
        let coordinator = self.coordinator.as_mut()?;
        if kind != DevOpKind::Write {
            return None;
        }
        let notice = ssds.get_mut(member as usize).and_then(Ssd::take_soft_limit_notice);
        notice?;
        if let Some(f) = coordinator.on_soft_limit(member, now) {
            Self::apply(ssds, now, &f);
        }
        self.reschedule()
    }

    /// A wake-up fired at `now`; returns the next one wanted, if new.
    pub fn on_wakeup(&mut self, ssds: &mut [Ssd], now: Nanos) -> Option<Nanos> {
        if self.scheduled != Some(now) {
            return None; // superseded by a later arrival or an earlier poll
        }
        self.scheduled = None;
        let coordinator = self.coordinator.as_mut()?;
        if let Some(f) = coordinator.on_wakeup(now, &mut |m| ssds[m as usize].gc_state()) {
            Self::apply(ssds, now, &f);
        }
        self.reschedule()
    }

    pub fn finish(self, ssds: &[Ssd]) -> GgcReport {
        GgcReport {
            counters: self.coordinator.map(|c| *c.counters()).unwrap_or_default(),
            per_ssd: ssds
                .iter()
                .map(|s| {
                    let st = s.stats();
                    SsdGcCounts {
                        gc_invocations: st.gc_invocations,
                        forced_gc_invocations: st.forced_gc_invocations,
                        forced_gc_victims: st.forced_gc_victims,
                        gc_pages_copied: st.gc_pages_copied,
                        erases: st.erases,
                    }
                })
                .collect(),
            timeline: self.timeline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::ggc::GgcPolicy;
    use swan_models::ssd::presets;
    use swan_models::{DevOp, Device};

    /// Four Harmonia SSDs of 1 GiB (the smallest its 256 planes allow) filled and aged to their hard limit, as the paper warms
    /// the array up (plus random overwrites, so GC runs at once).
    fn array() -> Vec<Ssd> {
        (0..4)
            .map(|i| {
                let mut s = Ssd::new(presets::harmonia().with_user_pages(262_144)).unwrap();
                s.fill_sequential(1.0);
                s.age_random(0.9, i);
                s.reset_stats();
                s
            })
            .collect()
    }

    /// 64 KiB random writes striped over every SSD, one request per millisecond.
    fn drive(driver: &mut GgcDriver, ssds: &mut [Ssd], requests: u64) {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for r in 0..requests {
            let now = r * 1_000_000;
            driver.on_arrival(now);
            let block = swan_testkit::rng::xorshift64(&mut x) % (262_144 - 16);
            for m in 0..ssds.len() as u32 {
                let op = DevOp { kind: DevOpKind::Write, block, count: 16, class: IoClass::User };
                let done = ssds[m as usize].submit(now, op);
                driver.after_member_io(ssds, m, op.kind, op.class, now, done);
            }
        }
    }

    #[test]
    fn reactive_forces_every_ssd_and_the_ssds_stop_collecting_on_their_own() {
        let mut ssds = array();
        let mut d = GgcDriver::new(Some(GgcConfig::new(GgcPolicy::Reactive)), 4, None).unwrap();
        drive(&mut d, &mut ssds, 3_000);
        let r = d.finish(&ssds);
        assert!(r.counters.cycles > 10, "{:?}", r.counters);
        assert_eq!(r.counters.force_commands, 4 * r.counters.cycles);
        for (i, s) in r.per_ssd.iter().enumerate() {
            assert!(s.forced_gc_invocations > 0, "SSD {i}: {s:?}");
            // The forced GC keeps every SSD above its hard limit after the first cycle.
            assert!(s.gc_invocations <= 1, "SSD {i} still collected on its own: {s:?}");
        }
    }

    #[test]
    fn uncoordinated_ssds_collect_only_on_their_own_and_the_timeline_keeps_its_window() {
        let mut ssds = array();
        let window = TimelineWindow { start_s: 1.0, len_s: 0.3 };
        let mut d = GgcDriver::new(None, 4, Some(window)).unwrap();
        drive(&mut d, &mut ssds, 3_000);
        let r = d.finish(&ssds);
        assert_eq!(r.counters, GgcCounters::default());
        assert!(r.per_ssd.iter().all(|s| s.gc_invocations > 0 && s.forced_gc_invocations == 0), "{:?}", r.per_ssd);
        // 300 requests × 4 SSDs in [1.0 s, 1.3 s).
        assert_eq!(r.timeline.len(), 1200);
        assert!(r.timeline.iter().all(|p| (1_000_000_000..1_300_000_000).contains(&p.t_ns) && p.write));
        assert!(GgcDriver::new(None, 4, Some(TimelineWindow { start_s: 0.0, len_s: 0.0 })).is_err());
    }

    #[test]
    fn stale_wakeups_are_ignored() {
        let mut ssds = array();
        let mut d = GgcDriver::new(Some(GgcConfig::new(GgcPolicy::ProactiveIdle)), 4, None).unwrap();
        let first = d.on_arrival(0).expect("idle check after the first arrival");
        let later = d.on_arrival(2_000_000).expect("moved by the next arrival");
        assert!(later > first);
        assert_eq!(d.on_wakeup(&mut ssds, first), None, "superseded");
        assert_eq!(ssds.iter().map(|s| s.stats().forced_gc_invocations).sum::<u64>(), 0);
        d.on_wakeup(&mut ssds, later);
        assert_eq!(d.finish(&ssds).counters.by_idle, 1, "aged SSDs sit below the soft limit: idle GC runs");
    }
}
