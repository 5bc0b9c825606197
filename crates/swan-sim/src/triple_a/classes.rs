//! The measured requests split into classes — reads, writes, those that met a migration at
//! its hot (source) or cold (target) cluster, those that touched a moved page or one whose
//! copy was not yet programmed — each with
//! its own latency distribution and contention, and what each migration copy took on its
//! way. A mean over every request hides a few thousand slow ones among millions (Fig. 16
//! plots the requests that meet a migration; Fig. 11's tail is a fraction of a percent), so
//! these say which requests make a difference. Nothing here changes what a run does.

use crate::metrics::new_histogram;
use hdrhistogram::Histogram;
use serde::Serialize;
use swan_models::fabric::Completion;
use swan_models::Nanos;

/// What a request met on its way, decided when it was routed.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Met {
    pub(super) write: bool,
    /// A page went to a cluster a migration's copy was leaving (decided, not yet landed):
    /// its extra read, if any, and its crossing of the endpoint's link share that cluster.
    pub(super) migration_source: bool,
    /// A page went to a cluster a migration's copy was landing on.
    pub(super) migration_target: bool,
    /// A page lived away from its static place (migrated or reshaped there).
    pub(super) moved: bool,
    /// A page's copy to where it now lives had not been programmed yet: the map moved it
    /// when the move was decided, so the request waits for that program on its new die.
    pub(super) copy_pending: bool,
}

/// Whether a request that met this belongs to a class.
type Member = fn(&Met) -> bool;

/// The classes, in report order, and whether a request belongs to each.
const CLASSES: [(&str, Member); 8] = [
    ("read", |m| !m.write),
    ("write", |m| m.write),
    ("met migration (source)", |m| m.migration_source),
    ("met migration (target)", |m| m.migration_target),
    ("clear of migration", |m| !m.migration_source && !m.migration_target),
    ("moved page", |m| m.moved),
    ("home page", |m| !m.moved),
    ("page still being copied", |m| m.copy_pending),
];

/// Sums over a set of measured requests: their latencies (summed and as a distribution) and
/// each request's worst page waits. The whole run and each class keep one.
pub(super) struct RequestSums {
    pub(super) requests: u64,
    pub(super) latency_ns: u128,
    pub(super) link_ns: u128,
    pub(super) storage_ns: u128,
    pub(super) rc_ns: u128,
    pub(super) switch_ns: u128,
    pub(super) endpoint_ns: u128,
    pub(super) histogram: Histogram<u64>,
}

impl RequestSums {
    pub(super) fn new() -> Self {
        Self {
            requests: 0,
            latency_ns: 0,
            link_ns: 0,
            storage_ns: 0,
            rc_ns: 0,
            switch_ns: 0,
            endpoint_ns: 0,
            histogram: new_histogram(),
        }
    }

    /// A request of `latency` whose pages' worst waits are `worst`.
    pub(super) fn add(&mut self, latency: Nanos, worst: &Completion) {
        self.requests += 1;
        self.latency_ns += u128::from(latency);
        self.link_ns += u128::from(worst.link_contention_ns);
        self.storage_ns += u128::from(worst.storage_contention_ns);
        self.rc_ns += u128::from(worst.queue_stall.root_complex_ns);
        self.switch_ns += u128::from(worst.queue_stall.switch_ns);
        self.endpoint_ns += u128::from(worst.queue_stall.endpoint_ns);
        self.histogram.saturating_record((latency / 1_000).max(1));
    }

    /// A sum of nanoseconds as microseconds per request.
    pub(super) fn mean_us(&self, ns: u128) -> f64 {
        ns as f64 / self.requests.max(1) as f64 / 1_000.0
    }
}

/// One class of requests: how many, their latency distribution and mean waits (µs).
#[derive(Clone, Debug, Serialize)]
pub struct ClassReport {
    pub class: String,
    pub requests: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub link_us: f64,
    pub storage_us: f64,
    pub rc_stall_us: f64,
    pub switch_stall_us: f64,
    pub endpoint_stall_us: f64,
}

/// What the migrations' copies took, from decision to landing at the cold endpoint (µs,
/// means over the copies that landed in the measured time).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CopyReport {
    pub copies: u64,
    /// From the move's decision until the target endpoint acknowledged the page.
    pub decided_to_landed_us: f64,
    /// The extra read of the hot FIMM (migrations without shadow cloning): its latency.
    pub extra_read_us: f64,
    /// The page's trip from the hot endpoint over the switch into the cold one.
    pub trip_us: f64,
    /// Of the trip: waiting at the hot endpoint (its up-buffer, its link to the switch).
    pub trip_endpoint_stall_us: f64,
    /// Of the trip: held in the switch's downstream queue (the entries user requests
    /// from the root complex need) waiting for the cold endpoint's buffer or link.
    pub trip_switch_stall_us: f64,
}

/// Sums per class over the measured requests, and over the migrations' copies.
pub(super) struct ClassTally {
    classes: Vec<RequestSums>,
    copies: u64,
    decided_ns: u128,
    extra_reads: u64,
    extra_read_ns: u128,
    trip_ns: u128,
    trip_endpoint_ns: u128,
    trip_switch_ns: u128,
    /// User page operations that found their switch's downstream queue full at the root complex.
    pub(super) switch_queue_full_pages: u64,
}

impl ClassTally {
    pub(super) fn new() -> Self {
        Self {
            classes: CLASSES.iter().map(|_| RequestSums::new()).collect(),
            copies: 0,
            decided_ns: 0,
            extra_reads: 0,
            extra_read_ns: 0,
            trip_ns: 0,
            trip_endpoint_ns: 0,
            trip_switch_ns: 0,
            switch_queue_full_pages: 0,
        }
    }

    /// A measured request of `latency` that met `met`; `worst` is its pages' worst waits.
    pub(super) fn request(&mut self, latency: Nanos, met: &Met, worst: &Completion) {
        for (class, (_, member)) in self.classes.iter_mut().zip(CLASSES) {
            if member(met) {
                class.add(latency, worst);
            }
        }
    }

    /// A migration's extra read of the hot FIMM (no shadow cloning).
    pub(super) fn extra_read(&mut self, read: &Completion) {
        self.extra_reads += 1;
        self.extra_read_ns += u128::from(read.latency_ns());
    }

    /// A migration's page landed: decided at `decided`, its trip as `trip` says.
    pub(super) fn copy_landed(&mut self, decided: Nanos, trip: &Completion) {
        self.copies += 1;
        self.decided_ns += u128::from(trip.done - decided);
        self.trip_ns += u128::from(trip.latency_ns());
        self.trip_endpoint_ns += u128::from(trip.queue_stall.endpoint_ns);
        self.trip_switch_ns += u128::from(trip.queue_stall.switch_ns);
    }

    pub(super) fn report(&self) -> (Vec<ClassReport>, CopyReport) {
        let classes = CLASSES
            .iter()
            .zip(&self.classes)
            .map(|((name, _), c)| {
                let us = |ns: u128| c.mean_us(ns);
                let q = |p: f64| c.histogram.value_at_quantile(p);
                ClassReport {
                    class: name.to_string(),
                    requests: c.requests,
                    mean_us: us(c.latency_ns),
                    p50_us: q(0.5),
                    p90_us: q(0.9),
                    p99_us: q(0.99),
                    p999_us: q(0.999),
                    max_us: c.histogram.max(),
                    link_us: us(c.link_ns),
                    storage_us: us(c.storage_ns),
                    rc_stall_us: us(c.rc_ns),
                    switch_stall_us: us(c.switch_ns),
                    endpoint_stall_us: us(c.endpoint_ns),
                }
            })
            .collect();
        let per = |ns: u128, n: u64| ns as f64 / n.max(1) as f64 / 1_000.0;
        let copies = CopyReport {
            copies: self.copies,
            decided_to_landed_us: per(self.decided_ns, self.copies),
            extra_read_us: per(self.extra_read_ns, self.extra_reads),
            trip_us: per(self.trip_ns, self.copies),
            trip_endpoint_stall_us: per(self.trip_endpoint_ns, self.copies),
            trip_switch_stall_us: per(self.trip_switch_ns, self.copies),
        };
        (classes, copies)
    }
}
