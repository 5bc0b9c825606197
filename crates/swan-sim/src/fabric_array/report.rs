//! What an array over the fabric measures: per FIMM page operation the array sent, where
//! its time went (Triple-A's Table 2 columns: link contention, storage contention, stall at
//! each queue), split by whether the operation's FIMM was collecting when it was routed —
//! where GC and link contention meet.

use crate::triple_a::GcReport;
use serde::Serialize;
use swan_core::io::IoClass;
use swan_models::fabric::Completion;
use swan_models::DevOpKind;

/// Sums over a set of page operations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Sums {
    ops: u64,
    latency_ns: u128,
    link_ns: u128,
    storage_ns: u128,
    rc_ns: u128,
    switch_ns: u128,
    endpoint_ns: u128,
}

impl Sums {
    fn add(&mut self, c: &Completion) {
        self.ops += 1;
        self.latency_ns += u128::from(c.latency_ns());
        self.link_ns += u128::from(c.link_contention_ns);
        self.storage_ns += u128::from(c.storage_contention_ns);
        self.rc_ns += u128::from(c.queue_stall.root_complex_ns);
        self.switch_ns += u128::from(c.queue_stall.switch_ns);
        self.endpoint_ns += u128::from(c.queue_stall.endpoint_ns);
    }
}

/// The running sums of a run.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    /// User reads and writes whose FIMM was collecting, and those whose FIMM was not.
    user_met: [Sums; 2],
    user_clear: [Sums; 2],
    /// The array's own GC (its segment moves), reads and writes.
    array_gc: [Sums; 2],
}

impl Tally {
    pub(super) fn op(&mut self, class: IoClass, kind: DevOpKind, met_gc: bool, c: &Completion) {
        let k = usize::from(kind == DevOpKind::Write);
        let sums = match (class, met_gc) {
            (IoClass::Gc, _) => &mut self.array_gc[k],
            (_, true) => &mut self.user_met[k],
            (_, false) => &mut self.user_clear[k],
        };
        sums.add(c);
    }
}

/// Means over a set of page operations, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct OpTally {
    pub ops: u64,
    pub latency_us: f64,
    pub link_contention_us: f64,
    pub storage_contention_us: f64,
    pub rc_stall_us: f64,
    pub switch_stall_us: f64,
    pub endpoint_stall_us: f64,
}

impl OpTally {
    fn of(parts: &[Sums]) -> Self {
        let mut s = Sums::default();
        for p in parts {
            s.ops += p.ops;
            s.latency_ns += p.latency_ns;
            s.link_ns += p.link_ns;
            s.storage_ns += p.storage_ns;
            s.rc_ns += p.rc_ns;
            s.switch_ns += p.switch_ns;
            s.endpoint_ns += p.endpoint_ns;
        }
        let us = |ns: u128| ns as f64 / s.ops.max(1) as f64 / 1_000.0;
        OpTally {
            ops: s.ops,
            latency_us: us(s.latency_ns),
            link_contention_us: us(s.link_ns),
            storage_contention_us: us(s.storage_ns),
            rc_stall_us: us(s.rc_ns),
            switch_stall_us: us(s.switch_ns),
            endpoint_stall_us: us(s.endpoint_ns),
        }
    }
}

/// What the fabric measured over a run (`summary.json`'s `fabric`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FabricReport {
    pub fabric: String,
    pub members: u32,
    /// The array's user page operations: reads, writes.
    pub user_read: OpTally,
    pub user_write: OpTally,
    /// User page operations whose FIMM was collecting when routed, and the others.
    pub user_meeting_gc: OpTally,
    pub user_clear_of_gc: OpTally,
    /// The array's own GC moves.
    pub array_gc: OpTally,
    /// Busy share of each used switch's up-link (the busier direction).
    pub uplink_busy: Vec<f64>,
    /// Mean busy share of the members' local buses.
    pub local_bus_busy: f64,
    /// The FIMMs' own collections, if they collect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fimm_gc: Option<FimmGc>,
}

/// The FIMMs' own collections over a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FimmGc {
    pub collections: u64,
    pub copied_slots: u64,
    pub erased_units: u64,
    /// Mean share of the members' FIMMs collecting, sampled every simulated millisecond.
    pub collecting_share: f64,
}

impl FabricReport {
    pub(super) fn new(
        fabric: &str,
        members: u32,
        t: &Tally,
        uplink_busy: Vec<f64>,
        local_bus_busy: f64,
        fimm_gc: Option<GcReport>,
    ) -> Self {
        FabricReport {
            fabric: fabric.to_string(),
            members,
            user_read: OpTally::of(&[t.user_met[0], t.user_clear[0]]),
            user_write: OpTally::of(&[t.user_met[1], t.user_clear[1]]),
            user_meeting_gc: OpTally::of(&t.user_met),
            user_clear_of_gc: OpTally::of(&t.user_clear),
            array_gc: OpTally::of(&t.array_gc),
            uplink_busy,
            local_bus_busy,
            fimm_gc: fimm_gc.map(|g| FimmGc {
                collections: g.collections,
                copied_slots: g.copied_slots,
                erased_units: g.erased_units,
                collecting_share: g.collecting_share,
            }),
        }
    }
}
