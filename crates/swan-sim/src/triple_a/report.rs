//! What a Triple-A run measured: Table 2's columns (latency, IOPS, link and storage
//! contention, queue stall) and Fig. 15's stall per level, the latency distribution
//! (Fig. 11), and what the management module did (§6.5's extra writes).

use super::classes::{ClassReport, ClassTally, CopyReport, RequestSums};
use serde::Serialize;
use swan_core::triple_a::AutonomicStats;
use swan_models::fabric::Completion;
use swan_models::Nanos;

/// Sums over the measured requests; a request's contention and stall are its pages' worst.
pub(super) struct Tally {
    all: RequestSums,
    /// Requests issued over the whole run, measured or not.
    pub(super) issued: u64,
    pub(super) user_page_writes: u64,
    pub(super) copy_reads: u64,
    pub(super) copies: u64,
    pub(super) redirects: u64,
    /// The same requests split into classes, and the migrations' copies.
    pub(super) classes: ClassTally,
}

impl Tally {
    pub(super) fn new() -> Self {
        Self {
            all: RequestSums::new(),
            issued: 0,
            user_page_writes: 0,
            copy_reads: 0,
            copies: 0,
            redirects: 0,
            classes: ClassTally::new(),
        }
    }

    /// A request that took `latency`, whose pages completed as `pages` say; returns its
    /// pages' worst waits.
    pub(super) fn request(&mut self, latency: Nanos, pages: impl Iterator<Item = Completion>) -> Completion {
        let worst = pages.fold(Completion::default(), |w, c| Completion {
            link_contention_ns: w.link_contention_ns.max(c.link_contention_ns),
            storage_contention_ns: w.storage_contention_ns.max(c.storage_contention_ns),
            queue_stall: swan_models::fabric::QueueStall {
                root_complex_ns: w.queue_stall.root_complex_ns.max(c.queue_stall.root_complex_ns),
                switch_ns: w.queue_stall.switch_ns.max(c.queue_stall.switch_ns),
                endpoint_ns: w.queue_stall.endpoint_ns.max(c.queue_stall.endpoint_ns),
            },
            ..w
        });
        self.all.add(latency, &worst);
        worst
    }

    pub(super) fn report(
        &self,
        label: String,
        measured_ns: Nanos,
        autonomic: AutonomicStats,
        moved_pages: usize,
    ) -> TripleAReport {
        let all = &self.all;
        let us = |ns: u128| all.mean_us(ns);
        let q = |p: f64| all.histogram.value_at_quantile(p);
        let stall = StallUs {
            root_complex: us(all.rc_ns),
            switch: us(all.switch_ns),
            endpoint: us(all.endpoint_ns),
            total: us(all.rc_ns + all.switch_ns + all.endpoint_ns),
        };
        let extra = autonomic.extra_page_writes;
        let (classes, migration_copies) = self.classes.report();
        TripleAReport {
            label,
            requests: all.requests,
            issued_requests: self.issued,
            measured_s: measured_ns as f64 / 1e9,
            iops: all.requests as f64 / (measured_ns.max(1) as f64 / 1e9),
            latency_us: LatencyUs {
                mean: us(all.latency_ns),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                max: all.histogram.max(),
            },
            link_contention_us: us(all.link_ns),
            storage_contention_us: us(all.storage_ns),
            queue_stall_us: stall,
            autonomic,
            moved_pages: moved_pages as u64,
            user_page_writes: self.user_page_writes,
            copy_reads: self.copy_reads,
            copies: self.copies,
            redirected_writes: self.redirects,
            extra_writes_pct: (self.user_page_writes > 0).then(|| 100.0 * extra as f64 / self.user_page_writes as f64),
            cdf_us: [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999].map(|p| (p, q(p))).to_vec(),
            gc: None,
            classes,
            migration_copies,
            switch_queue_full_pages: self.classes.switch_queue_full_pages,
            busiest_bus_share: 0.0,
            busiest_cluster_request_share: 0.0,
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct LatencyUs {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// Mean queue stall per request at each level (Fig. 15), and in all (Table 2).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StallUs {
    pub root_complex: f64,
    pub switch: f64,
    pub endpoint: f64,
    pub total: f64,
}

/// One run's results. Means are per measured request.
#[derive(Clone, Debug, Serialize)]
pub struct TripleAReport {
    pub label: String,
    pub requests: u64,
    /// Requests issued over the whole run, the unmeasured start included (a trace's passes).
    pub issued_requests: u64,
    pub measured_s: f64,
    pub iops: f64,
    pub latency_us: LatencyUs,
    pub link_contention_us: f64,
    pub storage_contention_us: f64,
    pub queue_stall_us: StallUs,
    pub autonomic: AutonomicStats,
    /// Pages living away from their static place at the end.
    pub moved_pages: u64,
    pub user_page_writes: u64,
    /// Pages read again for a migration without shadow cloning.
    pub copy_reads: u64,
    /// Pages programmed at a new place by migration or reshaping.
    pub copies: u64,
    pub redirected_writes: u64,
    /// §6.5: extra page writes against the workload's page writes (none for a read workload).
    pub extra_writes_pct: Option<f64>,
    /// (quantile, latency µs) for a CDF (Fig. 11).
    pub cdf_us: Vec<(f64, u64)>,
    /// What the FIMMs' collections did, in a run with GC-active FIMMs.
    pub gc: Option<super::GcReport>,
    /// The measured requests by class (reads, writes, those that met a migration, those
    /// on moved pages): which requests make the mean and the tail.
    pub classes: Vec<ClassReport>,
    /// What the migrations' copies took on their way (those landed in the measured time).
    pub migration_copies: CopyReport,
    /// Measured user page operations that found their switch's downstream queue full at
    /// the root complex (each waited there for an entry).
    pub switch_queue_full_pages: u64,
    /// The busiest cluster's local bus: its busy share of the measured time.
    pub busiest_bus_share: f64,
    /// The share of measured requests the busiest cluster served a page of.
    pub busiest_cluster_request_share: f64,
}
