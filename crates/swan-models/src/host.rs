//! The host: the CPU a request's path crosses outside the SSDs, as a model in virtual time.
//!
//! A served request crosses the client (fio's submit and reap), the server's connection
//! reader (the request and its payload off the socket), the engine (planning and carrying
//! the member operations out), the member SSDs, and the engine again (its reply, the
//! journal). Each of these is one thread, so one request at a time, in arrival order; and
//! every thread runs on one of a few cores shared with all the others. GC's member
//! operations are carried out by the engine thread too, one at a time among the user
//! requests, as the server paces them (core's array driver, which both faces follow); or, for
//! a host whose GC has a thread of its own (the paper's), on that thread a phase at a time.
//!
//! The model is that, computed when a job becomes ready (in event order): each stage is a
//! FIFO of one thread, a job on it starts once its thread is free and a core has room, and
//! holds both for its cost, `per_request_ns + per_kib_ns × KiB`, after waiting on a run
//! queue, holding its thread and no core, its share of that cost ([`RunqWait`]). Each core
//! keeps the intervals booked on it, so a job takes the earliest gap long enough on any
//! core, before work already booked there if it fits: a thread queued behind itself (the
//! engine behind its own backlog) does not keep the others off the cores meanwhile. The
//! costs are measured on the machine the model describes (`swan host fit`,
//! docs/host-model.md); the paper's own host is a preset chosen on its Fig. 1.

use crate::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use thiserror::Error;

/// What one job on a stage costs: a fixed part, a part per KiB the request writes and a
/// part per KiB it reads (a read's payload crosses other stages than a write's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageCost {
    pub per_request_ns: f64,
    /// Per KiB written (for GC: per KiB GC reads or writes).
    pub per_kib_ns: f64,
    /// Per KiB read.
    #[serde(default)]
    pub per_read_kib_ns: f64,
}

/// The payload a request carries: the bytes it writes and the bytes it reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    pub written: u64,
    pub read: u64,
}

impl StageCost {
    pub fn of(&self, c: Carried) -> Nanos {
        let kib = |b: u64| b as f64 / 1024.0;
        (self.per_request_ns + self.per_kib_ns * kib(c.written) + self.per_read_kib_ns * kib(c.read)).max(0.0).round()
            as Nanos
    }
}

/// The stages of a request's path that use the host's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The client's own work per request (fio's submit and reap), on the same cores.
    Client = 0,
    /// The server's connection reader: the request and its payload off the socket.
    Reader = 1,
    /// The engine: taking the request, planning it, carrying its member operations out;
    /// and, as [`Stage::Engine`] too, its reply and journal record once the members are done
    /// ([`HostModel::engine_out`]) and GC's member operations ([`HostModel::gc`]).
    Engine = 2,
    /// GC's own thread, for a host whose GC does not run on the engine
    /// ([`HostModel::gc_on_engine`] false).
    Gc = 3,
}

/// A host: its cores and the cost of each stage (see the module comment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostModel {
    /// What this model describes: "this machine" with how it was fitted, or a preset's name.
    pub name: String,
    /// Cores the client's and the server's threads share.
    pub cores: u32,
    pub client: StageCost,
    pub reader: StageCost,
    /// The engine's part before the member I/O (receiving, planning, carrying out).
    pub engine_in: StageCost,
    /// The engine's part after it (the reply, the journal, sync points).
    pub engine_out: StageCost,
    /// The engine's cost per GC member operation and per KiB GC reads or writes.
    pub gc: StageCost,
    /// GC's member operations are carried out by the engine thread one at a time, paced
    /// among the user requests as `swan serve` paces them (`swan_core::driver::GcPacing`);
    /// false: GC runs elsewhere (the paper's kernel thread) and its phases go to the SSDs
    /// whole. A fitted model is swan's server's, so it defaults to true.
    #[serde(default = "gc_on_engine_default")]
    pub gc_on_engine: bool,
    /// How long the server's threads wait on a run queue per unit of their CPU time.
    #[serde(default)]
    pub runq_per_cpu: RunqWait,
}

/// Per thread, the time it waits runnable for a CPU per unit of its CPU time: each job holds
/// its thread that much longer than its cost, without a core. Linux places a woken thread
/// beside the one that woke it and moves it only later, so a path that hands each request
/// across threads waits on run queues while a core stands idle; the core booking alone
/// (which waits only while every core is taken) does not see that. 0: a host that runs a
/// runnable thread on any idle core at once (the paper's, and a file without the field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunqWait {
    /// The connection reader's.
    pub reader: f64,
    /// The engine's (its requests' parts and GC's operations alike).
    pub engine: f64,
}

fn gc_on_engine_default() -> bool {
    true
}

#[derive(Debug, Error, PartialEq)]
pub enum HostModelError {
    #[error("host model '{name}': cores is 0; a host has at least one core")]
    NoCores { name: String },
    #[error("host model '{name}': {stage} has a negative or non-finite cost ({value}); every cost is ≥ 0 ns")]
    BadCost { name: String, stage: &'static str, value: f64 },
}

impl HostModel {
    /// Refuse a model no host could be.
    pub fn validate(&self) -> Result<(), HostModelError> {
        if self.cores == 0 {
            return Err(HostModelError::NoCores { name: self.name.clone() });
        }
        let costs = [
            ("client", self.client),
            ("reader", self.reader),
            ("engine_in", self.engine_in),
            ("engine_out", self.engine_out),
            ("gc", self.gc),
        ]
        .into_iter()
        .flat_map(|(stage, c)| [c.per_request_ns, c.per_kib_ns, c.per_read_kib_ns].map(|v| (stage, v)));
        let waits =
            [("runq_per_cpu.reader", self.runq_per_cpu.reader), ("runq_per_cpu.engine", self.runq_per_cpu.engine)];
        for (stage, value) in costs.chain(waits) {
            if !value.is_finite() || value < 0.0 {
                return Err(HostModelError::BadCost { name: self.name.clone(), stage, value });
            }
        }
        Ok(())
    }
}

/// Per-SSD write throughput the SWAN paper's host achieved with eight SSDs before GC (§1,
/// Fig. 1: "each SSD exhibits an effective write throughput of 140 MB/s", eight of them
/// about 1.1 GB/s, where each alone writes 400 MB/s).
pub const PAPER_FIG1_MBPS_PER_SSD: f64 = 140.0;
/// The request size of that run (fio, 8 KB random writes).
pub const PAPER_FIG1_REQUEST_BYTES: f64 = 8192.0;

/// The host models swan names: `paper` (see [`HostModel::paper`]).
pub fn preset(name: &str) -> Option<HostModel> {
    match name {
        "paper" => Some(HostModel::paper()),
        _ => None,
    }
}

impl HostModel {
    /// The SWAN paper's host, chosen once on its Fig. 1. The paper's array is a Device
    /// Mapper target in the host's kernel (§4), under fio on a Dell R730 with two Xeon
    /// E5-2609 (§5): a request's whole way through the block layer and the target's map
    /// runs in the submitting fio thread, and GC runs in a kernel thread of its own, so
    /// here one thread, the client's, costs a request `8 KB ÷ (8 × 140 MB/s)` = 7.3 µs:
    /// Log-RAID0 on eight SSDs then writes at most 1.12 GB/s, Fig. 1's rate before GC. There
    /// is no connection reader, the engine's own parts and GC cost nothing on the host, and
    /// twelve cores (two six-core E5-2609 v3, the R730's) never bind. What Fig. 1 shows
    /// after GC (300–750 MB/s) is not fitted: it is what the model must then predict.
    pub fn paper() -> HostModel {
        let per_request = PAPER_FIG1_REQUEST_BYTES / (8.0 * PAPER_FIG1_MBPS_PER_SSD * 1e6) * 1e9;
        let none = StageCost::default();
        HostModel {
            name: "paper".into(),
            cores: 12,
            client: StageCost { per_request_ns: per_request, ..StageCost::default() },
            reader: none,
            engine_in: none,
            engine_out: none,
            gc: none,
            gc_on_engine: false,
            runq_per_cpu: RunqWait::default(),
        }
    }
}

/// CPU time booked so far, by part of the path: the parts `swan status` shows for the
/// server (its threads, and the engine's round by part), so the two can be set side by side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostBusy {
    pub client_ns: Nanos,
    pub reader_ns: Nanos,
    pub engine_in_ns: Nanos,
    pub engine_out_ns: Nanos,
    pub gc_ns: Nanos,
}

impl HostBusy {
    /// The engine thread's whole time.
    pub fn engine_ns(&self) -> Nanos {
        self.engine_in_ns + self.engine_out_ns + self.gc_ns
    }
}

/// The host's threads and cores in virtual time.
#[derive(Clone, Debug)]
pub struct Host {
    model: HostModel,
    threads_free: [Nanos; 4],
    /// Per core, the intervals booked on it from the present on, in time order.
    cores: Vec<VecDeque<(Nanos, Nanos)>>,
    busy: HostBusy,
}

impl Host {
    pub fn new(model: HostModel) -> Result<Self, HostModelError> {
        model.validate()?;
        let cores = vec![VecDeque::new(); model.cores as usize];
        Ok(Host { model, threads_free: [0; 4], cores, busy: HostBusy::default() })
    }

    pub fn model(&self) -> &HostModel {
        &self.model
    }

    /// A job of `cost_ns` on `stage`, asked for at `now` and ready at `ready` (≥ `now`):
    /// when it is done. Calls come in non-decreasing `now`. Private: the stages' methods
    /// charge their part of [`Host::busy`] as they call it.
    fn run(&mut self, stage: Stage, now: Nanos, ready: Nanos, cost_ns: Nanos) -> Nanos {
        let runnable = ready.max(self.threads_free[stage as usize]);
        if cost_ns == 0 {
            // No work needs no core (the paper's host has three such stages).
            self.threads_free[stage as usize] = runnable;
            return runnable;
        }
        // The thread's wait on a run queue (RunqWait) comes first and holds no core.
        let ratio = match stage {
            Stage::Reader => self.model.runq_per_cpu.reader,
            Stage::Engine => self.model.runq_per_cpu.engine,
            Stage::Client | Stage::Gc => 0.0,
        };
        let runnable = runnable + (cost_ns as f64 * ratio).round() as Nanos;
        // The first core where the job starts earliest; one free when it is runnable is
        // that core already (no start comes sooner), so the rest need no look.
        let mut best: Option<(usize, Nanos)> = None;
        for (i, c) in self.cores.iter_mut().enumerate() {
            while c.front().is_some_and(|&(_, end)| end <= now) {
                c.pop_front();
            }
            let start = earliest_gap(c, runnable, cost_ns);
            if best.is_none_or(|(_, b)| start < b) {
                best = Some((i, start));
            }
            if start == runnable {
                break;
            }
        }
        let (core, start) = best.expect("validated: ≥ 1 core");
        let done = start + cost_ns;
        book(&mut self.cores[core], start, done);
        self.threads_free[stage as usize] = done;
        done
    }

    /// The client's work on a request carrying `bytes`, ready at `now`.
    pub fn client(&mut self, now: Nanos, bytes: Carried) -> Nanos {
        let c = self.model.client.of(bytes);
        self.busy.client_ns += c;
        self.run(Stage::Client, now, now, c)
    }

    /// The connection reader's, asked at `now` for a request on the socket at `ready`.
    pub fn reader(&mut self, now: Nanos, ready: Nanos, bytes: Carried) -> Nanos {
        let c = self.model.reader.of(bytes);
        self.busy.reader_ns += c;
        self.run(Stage::Reader, now, ready, c)
    }

    /// The engine's, before the member I/O.
    pub fn engine_in(&mut self, now: Nanos, bytes: Carried) -> Nanos {
        let c = self.model.engine_in.of(bytes);
        self.busy.engine_in_ns += c;
        self.run(Stage::Engine, now, now, c)
    }

    /// The engine's, after it.
    pub fn engine_out(&mut self, now: Nanos, bytes: Carried) -> Nanos {
        let c = self.model.engine_out.of(bytes);
        self.busy.engine_out_ns += c;
        self.run(Stage::Engine, now, now, c)
    }

    /// When the engine thread is free of the work booked on it so far.
    pub fn engine_free(&self) -> Nanos {
        self.threads_free[Stage::Engine as usize]
    }

    /// One GC member operation carrying `bytes`, carried out by the engine thread after the
    /// work booked on it, asked at `now` ([`HostModel::gc_on_engine`]): when its CPU work is
    /// done, and the operation goes to its member.
    pub fn gc_op(&mut self, now: Nanos, bytes: u64) -> Nanos {
        let c = self.model.gc.of(Carried { written: bytes, read: 0 });
        self.busy.gc_ns += c;
        self.run(Stage::Engine, now, now, c)
    }

    /// A whole GC phase of `ops` member operations carrying `bytes`, for a host whose GC
    /// runs on a thread of its own ([`HostModel::gc_on_engine`] false; on the engine, each
    /// operation is [`Host::gc_op`]): when its CPU work is done.
    pub fn gc(&mut self, now: Nanos, ops: u64, bytes: u64) -> Nanos {
        let g = self.model.gc;
        let c = (g.per_request_ns * ops as f64 + g.per_kib_ns * bytes as f64 / 1024.0).max(0.0).round() as Nanos;
        self.busy.gc_ns += c;
        self.run(Stage::Gc, now, now, c)
    }

    /// CPU time booked so far, by part.
    pub fn busy(&self) -> HostBusy {
        self.busy
    }
}

/// Book `[start, end)` on a core, joined to the intervals it touches, so that a thread busy
/// back to back stays one interval however long its backlog.
fn book(booked: &mut VecDeque<(Nanos, Nanos)>, start: Nanos, end: Nanos) {
    let at = booked.partition_point(|&(s, _)| s < start);
    let joins_before = at > 0 && booked[at - 1].1 == start;
    let joins_after = booked.get(at).is_some_and(|&(s, _)| s == end);
    match (joins_before, joins_after) {
        (true, true) => {
            booked[at - 1].1 = booked[at].1;
            booked.remove(at);
        }
        (true, false) => booked[at - 1].1 = end,
        (false, true) => booked[at].0 = start,
        (false, false) => booked.insert(at, (start, end)),
    }
}

/// The earliest start at or after `from` where `cost` fits between the intervals of `booked`.
fn earliest_gap(booked: &VecDeque<(Nanos, Nanos)>, from: Nanos, cost: Nanos) -> Nanos {
    let mut start = from;
    for &(s, e) in booked {
        if e <= start {
            continue;
        }
        if s >= start + cost {
            break;
        }
        start = e;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Carried = Carried { written: 0, read: 0 };

    fn model(cores: u32, client: f64, reader: f64, engine: f64) -> HostModel {
        let c = |ns| StageCost { per_request_ns: ns, ..StageCost::default() };
        HostModel {
            name: "test".into(),
            cores,
            client: c(client),
            reader: c(reader),
            engine_in: c(engine),
            engine_out: c(0.0),
            gc: c(0.0),
            gc_on_engine: true,
            runq_per_cpu: RunqWait::default(),
        }
    }

    #[test]
    fn a_thread_waits_on_its_run_queue_without_a_core() {
        let waits = RunqWait { reader: 0.0, engine: 0.5 };
        let mut h = Host::new(HostModel { runq_per_cpu: waits, ..model(1, 5_000.0, 10_000.0, 10_000.0) }).unwrap();
        assert_eq!(h.engine_in(0, NONE), 15_000, "5 µs runnable, then 10 µs on the core");
        assert_eq!(h.client(0, NONE), 5_000, "the one core was the client's meanwhile");
        assert_eq!(h.engine_in(0, NONE), 30_000, "the engine's next job waits its turn and its run queue");
        let bad = HostModel { runq_per_cpu: RunqWait { reader: -1.0, engine: 0.0 }, ..model(1, 0.0, 0.0, 0.0) };
        assert!(Host::new(bad).unwrap_err().to_string().contains("runq_per_cpu.reader"));
    }

    #[test]
    fn one_thread_serves_one_job_at_a_time_in_order() {
        let mut h = Host::new(model(4, 0.0, 0.0, 10_000.0)).unwrap();
        assert_eq!(h.engine_in(0, NONE), 10_000);
        assert_eq!(h.engine_in(0, NONE), 20_000, "the second waits for the engine's thread");
        assert_eq!(h.reader(0, 0, NONE), 0, "another thread is free at once");
    }

    #[test]
    fn threads_wait_for_a_core_when_all_are_busy() {
        let mut h = Host::new(model(1, 5_000.0, 5_000.0, 5_000.0)).unwrap();
        assert_eq!(h.client(0, NONE), 5_000);
        assert_eq!(h.reader(0, 0, NONE), 10_000, "one core: the reader waits for the client's job");
        let mut two = Host::new(model(2, 5_000.0, 5_000.0, 5_000.0)).unwrap();
        assert_eq!(two.client(0, NONE), 5_000);
        assert_eq!(two.reader(0, 0, NONE), 5_000, "two cores: both at once");
    }

    #[test]
    fn a_thread_waiting_for_itself_leaves_the_other_cores_free() {
        // The engine is booked for 2 ms; its next job waits for it, on the core it holds, and
        // the client still finds the other core free now.
        let mut h = Host::new(model(2, 1_000.0, 0.0, 2_000_000.0)).unwrap();
        assert_eq!(h.engine_in(0, NONE), 2_000_000);
        assert_eq!(h.engine_in(100_000, NONE), 4_000_000);
        assert_eq!(h.client(100_000, NONE), 101_000);
    }

    #[test]
    fn a_job_fills_a_gap_before_booked_work() {
        // One core: the engine's second job is booked for 2–4 ms behind its first; a client
        // job ready at 0.1 ms fits in the gap after the first job if it is short enough.
        let mut h = Host::new(model(1, 500_000.0, 0.0, 1_000_000.0)).unwrap();
        assert_eq!(h.engine_in(0, NONE), 1_000_000);
        assert_eq!(h.run(Stage::Engine, 0, 2_000_000, 1_000_000), 3_000_000);
        assert_eq!(h.client(100_000, NONE), 1_500_000, "in the gap 1–2 ms");
        assert_eq!(h.client(100_000, NONE), 2_000_000, "the rest of the gap, exactly");
        assert_eq!(h.client(100_000, NONE), 3_500_000, "the gap is full: after the booked job");
    }

    #[test]
    fn work_that_costs_nothing_waits_for_no_core() {
        let mut h = Host::new(model(1, 0.0, 0.0, 1_000_000.0)).unwrap();
        assert_eq!(h.engine_in(0, NONE), 1_000_000, "the one core is the engine's until 1 ms");
        assert_eq!(h.client(0, NONE), 0, "a client that costs nothing is not held up by it");
        assert_eq!(h.engine_in(0, NONE), 2_000_000, "its own thread still orders a stage's jobs");
    }

    #[test]
    fn a_stage_saturates_at_its_cost() {
        // 100 000 requests through a 10 µs engine take 1 s however early they are ready.
        let mut h = Host::new(model(2, 0.0, 0.0, 10_000.0)).unwrap();
        let mut done = 0;
        for _ in 0..100_000 {
            done = h.engine_in(0, Carried { written: 8192, read: 0 });
        }
        assert_eq!(done, 1_000_000_000);
        assert_eq!(h.busy().engine_ns(), 1_000_000_000);
        assert_eq!(h.busy().engine_in_ns, 1_000_000_000);
    }

    #[test]
    fn costs_grow_with_the_bytes_carried() {
        let c = StageCost { per_request_ns: 1_000.0, per_kib_ns: 100.0, per_read_kib_ns: 10.0 };
        assert_eq!(c.of(Carried::default()), 1_000);
        assert_eq!(c.of(Carried { written: 8192, read: 0 }), 1_800);
        assert_eq!(c.of(Carried { written: 0, read: 8192 }), 1_080);
    }

    #[test]
    fn the_papers_host_writes_eight_ssds_at_figure_1s_rate() {
        let mut h = Host::new(HostModel::paper()).unwrap();
        let mut done = 0;
        let n = 1_000_000u64;
        for _ in 0..n {
            done = h.client(0, Carried { written: 8192, read: 0 });
        }
        let mbps = n as f64 * 8192.0 / (done as f64 / 1e9) / 1e6;
        assert!((mbps - 1120.0).abs() < 2.0, "{mbps}");
        assert_eq!(preset("paper"), Some(HostModel::paper()));
        assert_eq!(preset("nope"), None);
    }

    #[test]
    fn impossible_models_are_refused() {
        assert!(matches!(Host::new(model(0, 1.0, 1.0, 1.0)), Err(HostModelError::NoCores { .. })));
        let e = Host::new(model(2, -1.0, 1.0, 1.0)).unwrap_err();
        assert!(e.to_string().contains("client"), "{e}");
    }
}
