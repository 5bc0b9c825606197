//! What a run measures: user and member traffic per reporting interval (the rows of
//! `timeseries.csv`), latencies, totals, and the [`RunOutput`] they end in.
//!
//! The engine reports each completion and each member operation here as it happens; the
//! meter never schedules anything, so measuring cannot change what is simulated.

use super::{Engine, Members, NS_PER_S};
use crate::ggc::GgcReport;
use crate::metrics::{Latencies, MemberTraffic, MemberTrafficMbps, Row};
use crate::prefill::PrefillReport;
use hdrhistogram::Histogram;
use swan_core::io::{IoClass, MemberIo};
use swan_core::scheme::{ArrayScheme, Counters, ReqOp, Request};
use swan_core::BLOCK_BYTES;
use swan_models::{DevOpKind, Nanos};

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub rows: Vec<Row>,
    pub latencies: Latencies,
    pub ssd_read_latency: Histogram<u64>,
    pub ssd_write_latency: Histogram<u64>,
    pub counters: Counters,
    pub requests: u64,
    pub sim_ns: Nanos,
    pub volume_blocks: u64,
    pub user_write_blocks: u64,
    pub user_read_blocks: u64,
    /// Blocks the array wrote to its members (data, parity, summaries, GC moves).
    pub member_write_blocks: u64,
    /// NAND pages programmed by all SSDs (host writes and internal GC copies).
    pub nand_program_pages: u64,
    pub ssd_host_write_pages: u64,
    pub ssd_gc_copied_pages: u64,
    pub ssd_erases: u64,
    pub ssd_map_dram_bytes: u64,
    pub scheme_heap_bytes: u64,
    pub ssd_heap_bytes: u64,
    pub modelled_blocks: u64,
    /// Simulated time during which user writes waited for GC to free a segment
    /// (the front-end stalled).
    pub stall_ns: Nanos,
    /// GC coordination and per-SSD GC counts (Harmonia).
    pub ggc: GgcReport,
    /// What the untimed pre-fill did, if the run had one (not part of any figure above).
    pub prefill: Option<PrefillReport>,
    /// SWAN: measured user reads by the role of the R-group they landed on (Table 4).
    pub read_roles: Option<super::ReadRoles>,
    /// Per window of the trace's recorded time (`ReplaySpec::windows`), in their order.
    pub windows: Vec<super::WindowOutput>,
    /// Per SSD: its speed and how busy it was, to find the one that limits a stripe.
    pub ssd_load: Vec<SsdLoad>,
    /// Members behind a fabric: where their operations waited (`None` for SSDs).
    pub fabric: Option<crate::fabric_array::report::FabricReport>,
    /// The host model's CPU time by part (`None` without one).
    pub host_busy: Option<swan_models::host::HostBusy>,
    /// The array driver's decisions in order, if the run kept them
    /// ([`super::Engine::record_decisions`]).
    pub decisions: Vec<swan_core::driver::Decision>,
}

/// One SSD's speed and load over the run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SsdLoad {
    /// Its NAND and transfer times over the preset's (1: the preset; > 1: slower).
    pub speed_factor: f64,
    /// Simulated seconds it spent in slow periods.
    pub slow_s: f64,
    /// Mean fraction of its flash units' time spent working (the SSD's own GC included).
    pub die_busy: f64,
    /// Host pages written to it.
    pub host_pages_written: u64,
    /// Its mean write latency (submission to completion at the device), µs.
    pub write_latency_mean_us: f64,
}

/// Traffic of the reporting interval under way.
#[derive(Debug, Default)]
struct Interval {
    user_read_bytes: u64,
    user_write_bytes: u64,
    traffic: Vec<MemberTraffic>,
    gc_groups: u64,
    array_gc_write_blocks: u64,
}

impl Interval {
    fn new(members: usize) -> Self {
        Interval { traffic: vec![MemberTraffic::default(); members], ..Default::default() }
    }
}

/// The run's measurements so far.
pub(super) struct Meter {
    /// Latencies count only requests issued from here on.
    measure_from: Nanos,
    /// The pre-fill's report; the scheme's counters as it left them, which the run's
    /// counters are taken from.
    prefill: Option<PrefillReport>,
    counters_at_start: Counters,
    latencies: Latencies,
    read_roles: super::ReadRoles,
    windows: Vec<super::WindowOutput>,
    requests: u64,
    pub(super) user_write_blocks: u64,
    user_read_blocks: u64,
    member_write_blocks: u64,
    /// When the current interval began.
    pub(super) interval_start: Nanos,
    interval: Interval,
    rows: Vec<Row>,
    prev_counters: Counters,
    prev_ssd_gc_pages: u64,
}

impl Meter {
    pub(super) fn new(
        measure_from: Nanos,
        prefill: Option<PrefillReport>,
        counters_at_start: Counters,
        members: usize,
        windows: usize,
    ) -> Self {
        Self {
            measure_from,
            prefill,
            prev_counters: counters_at_start.clone(),
            counters_at_start,
            latencies: Latencies::default(),
            read_roles: super::ReadRoles::default(),
            windows: vec![super::WindowOutput::default(); windows],
            requests: 0,
            user_write_blocks: 0,
            user_read_blocks: 0,
            member_write_blocks: 0,
            interval_start: 0,
            interval: Interval::new(members),
            rows: Vec::new(),
            prev_ssd_gc_pages: 0,
        }
    }

    pub(super) fn prefill(&self) -> Option<&PrefillReport> {
        self.prefill.as_ref()
    }

    /// A user request issued at `issued_at` completed at `now`.
    #[inline]
    pub(super) fn complete(&mut self, req: &Request, issued_at: Nanos, now: Nanos) {
        let latency = now - issued_at;
        let measured = issued_at >= self.measure_from;
        self.requests += 1;
        let bytes = u64::from(req.blocks) * BLOCK_BYTES;
        match req.op {
            ReqOp::Read => {
                self.user_read_blocks += u64::from(req.blocks);
                self.interval.user_read_bytes += bytes;
                if measured {
                    self.latencies.record(true, latency);
                }
            }
            ReqOp::Write => {
                self.user_write_blocks += u64::from(req.blocks);
                self.interval.user_write_bytes += bytes;
                if measured {
                    self.latencies.record(false, latency);
                }
            }
            ReqOp::Trim | ReqOp::Flush => {}
        }
    }

    /// A read planned on an R-group in `role`, issued at `issued_at`, completed at `now`,
    /// having met `queue` on its SSDs.
    pub(super) fn read_role(
        &mut self,
        role: swan_core::driver::GroupRole,
        issued_at: Nanos,
        now: Nanos,
        queue: super::reads::ReadQueue,
    ) {
        if issued_at >= self.measure_from {
            self.read_roles.record(role, now - issued_at, queue);
        }
    }

    /// Window `w`'s measurements (an index the source gave, below the windows' count).
    pub(super) fn window(&mut self, w: u16) -> &mut super::WindowOutput {
        &mut self.windows[usize::from(w)]
    }

    /// The engine submitted `io` to its member as a `kind` operation.
    #[inline]
    pub(super) fn member_io(&mut self, io: &MemberIo, kind: DevOpKind) {
        let bytes = io.bytes();
        let t = &mut self.interval.traffic[io.member as usize];
        let gc = io.class == IoClass::Gc;
        match (kind, gc) {
            (DevOpKind::Read, false) => t.user_read += bytes,
            (DevOpKind::Read, true) => t.gc_read += bytes,
            (DevOpKind::Write, false) => t.user_write += bytes,
            (DevOpKind::Write, true) => t.gc_write += bytes,
            _ => {}
        }
        if kind == DevOpKind::Write {
            self.member_write_blocks += u64::from(io.count);
            if gc {
                self.interval.array_gc_write_blocks += u64::from(io.count);
            }
        }
    }

    /// R-groups (a bit each) that started GC jobs in this interval.
    pub(super) fn gc_groups(&mut self, groups: u64) {
        self.interval.gc_groups |= groups;
    }

    /// Close the interval under way at `now` into a row, and start the next.
    /// `front_group`: whether the scheme has a front-end R-group to report.
    pub(super) fn close_interval(
        &mut self,
        now: Nanos,
        scheme: &ArrayScheme,
        members: &impl Members,
        front_group: bool,
    ) {
        let secs = (now - self.interval_start) as f64 / NS_PER_S;
        let mbps = |bytes: u64| bytes as f64 / secs / 1e6;
        let status = scheme.status();
        let c = scheme.counters().clone();
        let victims = c.victims - self.prev_counters.victims;
        let victim_util = (victims > 0).then(|| {
            (c.victim_valid_blocks - self.prev_counters.victim_valid_blocks) as f64
                / (c.victim_payload_blocks - self.prev_counters.victim_payload_blocks) as f64
        });
        let ssd_gc_pages: u64 = (0..members.count() as u32).map(|m| members.stats(m).gc_pages_copied).sum();
        let members = self
            .interval
            .traffic
            .iter()
            .map(|t| MemberTrafficMbps {
                read: mbps(t.user_read),
                write: mbps(t.user_write),
                gc_read: mbps(t.gc_read),
                gc_write: mbps(t.gc_write),
            })
            .collect();
        self.rows.push(Row {
            t_s: now as f64 / NS_PER_S,
            user_read_mbps: mbps(self.interval.user_read_bytes),
            user_write_mbps: mbps(self.interval.user_write_bytes),
            free_segments: status.free_segments,
            victim_util,
            front_group: if front_group { status.front_group } else { None },
            gc_groups: self.interval.gc_groups | status.gc_groups,
            ssd_gc_pages: ssd_gc_pages - self.prev_ssd_gc_pages,
            array_gc_write_blocks: self.interval.array_gc_write_blocks,
            members,
        });
        self.prev_counters = c;
        self.prev_ssd_gc_pages = ssd_gc_pages;
        self.interval_start = now;
        self.interval = Interval::new(self.interval.traffic.len());
    }
}

impl<M: Members> Engine<M> {
    pub(super) fn finish(mut self) -> RunOutput {
        let now = self.clock.now;
        let mut m = self.meter;
        m.latencies.close();
        for w in &mut m.windows {
            w.latencies.close();
        }
        self.reqs.stalled.close(now);
        let mut ssd_read_latency = crate::metrics::new_histogram();
        let mut ssd_write_latency = crate::metrics::new_histogram();
        let (mut host_w, mut gc_c, mut erases, mut dram, mut ssd_heap, mut pages) = (0, 0, 0, 0, 0, 0);
        let count = self.members.count() as u32;
        for m in 0..count {
            let s = self.members.stats(m);
            ssd_read_latency.add(&s.read_latency_us).expect("same histogram bounds");
            ssd_write_latency.add(&s.write_latency_us).expect("same histogram bounds");
            host_w += s.host_pages_written;
            gc_c += s.gc_pages_copied;
            erases += s.erases;
            dram = self.members.map_dram_bytes(m);
            ssd_heap += self.members.model_bytes(m);
            pages += self.members.user_blocks(m);
        }
        let (seed, variation) = (self.cfg.seed, self.cfg.ssd_variation);
        let members = &mut self.members;
        let ssd_load = (0..count)
            .map(|i| SsdLoad {
                speed_factor: variation.speed_factor(seed, i),
                slow_s: members.slow_ns(i, now) as f64 / NS_PER_S,
                die_busy: members.busy_fraction(i, now),
                host_pages_written: members.stats(i).host_pages_written,
                write_latency_mean_us: members.stats(i).write_latency_us.mean(),
            })
            .collect();
        let ggc = self.ggc.finish(self.members.ssds());
        let fabric = self.members.fabric_report(now);
        RunOutput {
            ssd_load,
            ggc,
            rows: m.rows,
            latencies: m.latencies,
            ssd_read_latency,
            ssd_write_latency,
            counters: self.scheme.counters().since(&m.counters_at_start),
            prefill: m.prefill,
            read_roles: matches!(self.cfg.array.kind, swan_core::scheme::SchemeKind::Swan(_)).then_some(m.read_roles),
            windows: m.windows,
            requests: m.requests,
            sim_ns: now,
            volume_blocks: self.scheme.volume_blocks(),
            user_write_blocks: m.user_write_blocks,
            user_read_blocks: m.user_read_blocks,
            member_write_blocks: m.member_write_blocks,
            nand_program_pages: host_w + gc_c,
            ssd_host_write_pages: host_w,
            ssd_gc_copied_pages: gc_c,
            ssd_erases: erases,
            ssd_map_dram_bytes: dram,
            scheme_heap_bytes: self.scheme.heap_bytes(),
            ssd_heap_bytes: ssd_heap,
            modelled_blocks: pages,
            stall_ns: self.reqs.stalled.total_ns,
            fabric,
            host_busy: self.host.as_ref().map(|h| h.busy()),
            decisions: self.thread.driver.take_trace(),
        }
    }
}
