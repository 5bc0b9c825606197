//! One brain: the server's engine and the simulator's make the same decisions.
//!
//! Both faces carry out what core's array driver says, turn by turn. Fed the same requests at
//! the same instants over the same model SSDs — the server's engine driven by its stepper
//! over a manual clock with its members emulated (`--emulate`'s model), the simulator with a
//! host whose every stage costs nothing and whose GC runs on the engine thread, as the
//! server's does — they must record the same decisions in the same order: every request
//! planned (or short of space), every GC job started in its R-group, every member operation
//! of every job, every job finished, every release. A change to how one face schedules
//! (its batch, its GC steps, when it releases, what it does for a write short of space)
//! parts the two traces; the first difference is printed.
//!
//! The requests arrive open-loop in bursts (more than a round takes, so the batch and GC's
//! pace among requests waiting matter), faster than the array writes, so writes wait for
//! space as well: 64 KiB writes over half the volume until GC has run for a while, with
//! reads and a few TRIMs among them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use swan_core::driver::{Decision, Turn};
use swan_core::scheme::{ReqOp, Request};
use swan_core::victim::VictimPolicy;
use swan_models::host::{HostModel, RunqWait, StageCost};
use swan_models::Nanos;
use swan_server::array::{self, CreateOptions};
use swan_server::emulate::Emulator;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::MemoryMembers;
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, BlockRequest};
use swan_sim::engine::{Engine, SimConfig};
use swan_sim::source::{ArrivalSource, Next, Pacing, SourceError};
use swan_sim::workload::WorkloadSpec;

const PRESET: &str = "sata850pro";
/// Each request's size: 16 blocks, 64 KiB.
const BLOCKS: u32 = 16;

/// A request and the instant it arrives, nanoseconds from the start.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    at: Nanos,
    req: Request,
}

/// `n` requests over the first half of a `volume`-block volume, in bursts of `burst` that
/// arrive together, one burst every `gap_ns` plus a random part of up to half that: 80 %
/// writes, 18 % reads, 2 % TRIMs.
fn arrivals(n: usize, volume: u64, burst: usize, gap_ns: u64, seed: u64) -> Vec<Arrival> {
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    let slots = volume / 2 / u64::from(BLOCKS);
    let mut at = 0;
    (0..n)
        .map(|i| {
            if i % burst == 0 {
                at += gap_ns + next() % (gap_ns / 2);
            }
            let lba = next() % slots * u64::from(BLOCKS);
            let op = match next() % 100 {
                0..=79 => ReqOp::Write,
                80..=97 => ReqOp::Read,
                _ => ReqOp::Trim,
            };
            Arrival { at, req: Request::new(op, lba, BLOCKS) }
        })
        .collect()
}

/// An array's shape: its scheme, R-groups and members per R-group.
#[derive(Clone, Copy)]
struct Shape {
    scheme: &'static str,
    rgroups: u32,
    ssds_per_rgroup: u32,
}

/// The array, created in memory, its members of 256 MiB (the smallest the SSD model takes).
fn create(shape: Shape) -> (Arc<MemoryMembers>, Vec<PathBuf>, swan_server::layout::Superblock) {
    let images = MemoryMembers::new();
    let members = shape.rgroups * shape.ssds_per_rgroup;
    let paths: Vec<PathBuf> = (0..members).map(|i| PathBuf::from(format!("m{i}"))).collect();
    let o = CreateOptions {
        kind: shape.scheme.parse().expect("scheme"),
        rgroups: shape.rgroups,
        ssds_per_rgroup: shape.ssds_per_rgroup,
        member_bytes: Some(256 << 20),
        segment_bytes: None,
        chunk_bytes: 64 << 10,
        victim: VictimPolicy::Greedy,
        spare: None,
        force: false,
        created: 0,
        zoned: None,
    };
    let sb = array::create_in(&*images, &paths, &o, [7; 16]).expect("create");
    (images, paths, sb)
}

/// The server's decisions: its engine stepped over a manual clock, each request submitted
/// at its instant, rounds run until the driver waits, the clock moved on to the next
/// arrival or to when the driver said it waits for.
fn server(shape: Shape, arrivals: &[Arrival]) -> Vec<Decision> {
    let (images, paths, sb) = create(shape);
    let opened = array::open_from(images, &paths, false, false).expect("open");
    let recovered = array::recover(&opened).expect("recover");
    let emulate = Emulator::configured(PRESET, None, sb.members, sb.member_blocks, std::time::Instant::now())
        .expect("the model takes 256 MiB members");
    let opts = EngineOptions {
        name: "one-brain".into(),
        read_only: false,
        emulate: Some(emulate),
        verbose: false,
        punch_holes: false,
        reads: Default::default(),
    };
    let mut st = Stepper::start(opened, recovered, opts).expect("start");
    st.record_decisions();
    let payload = vec![0x5au8; BLOCKS as usize * BLOCK];
    let (mut next, mut now) = (0, 0u64);
    loop {
        while next < arrivals.len() && arrivals[next].at == now {
            let r = arrivals[next].req;
            let op = match r.op {
                ReqOp::Write => BlockOp::Write(payload.clone().into()),
                ReqOp::Read => BlockOp::Read,
                ReqOp::Trim => BlockOp::Trim,
                ReqOp::Flush => unreachable!("the workload has no FLUSH"),
            };
            let req = BlockRequest { op, offset: r.lba * BLOCK as u64, len: r.blocks * BLOCK as u32, fua: false };
            st.submit(req, Box::new(|reply| assert!(reply.is_ok(), "a request failed: {reply:?}")));
            next += 1;
        }
        let until = loop {
            if let Turn::Wait { until } = st.round() {
                break until;
            }
        };
        let due = [arrivals.get(next).map(|a| a.at), until].into_iter().flatten().min();
        let Some(t) = due else { break };
        assert!(t > now, "time goes on");
        st.clock().advance(Duration::from_nanos(t - now));
        now = t;
    }
    st.decisions().to_vec()
}

/// The requests as the simulator's source: each at its instant.
struct Scripted {
    arrivals: std::vec::IntoIter<Arrival>,
}

impl ArrivalSource for Scripted {
    fn pacing(&self) -> Pacing {
        Pacing::Timed
    }

    fn next(&mut self, _now: Nanos) -> Result<Option<Next>, SourceError> {
        Ok(self.arrivals.next().map(|a| Next { at: a.at, req: a.req, window: None }))
    }

    fn finite(&self) -> bool {
        true
    }
}

/// A host whose every stage costs nothing, GC on its engine thread as the server's is.
fn free_host() -> HostModel {
    let none = StageCost::default();
    HostModel {
        name: "free".into(),
        cores: 2,
        client: none,
        reader: none,
        engine_in: none,
        engine_out: none,
        gc: none,
        gc_on_engine: true,
        runq_per_cpu: RunqWait::default(),
    }
}

/// The simulator's decisions over the same array (as `swan sim --array` builds it) and the
/// same fresh model SSDs.
fn simulator(shape: Shape, arrivals: Vec<Arrival>) -> Vec<Decision> {
    let (_, _, sb) = create(shape);
    let ssd = swan_models::ssd::preset(PRESET).expect("preset").with_user_pages(sb.member_blocks);
    let cfg = SimConfig {
        host: Some(free_host()),
        setup_threads: 1,
        ..SimConfig::new(sb.array_spec(), ssd, WorkloadSpec::default())
    };
    let source = Scripted { arrivals: arrivals.into_iter() };
    let mut engine = Engine::with_source(cfg, move |_| Ok(Box::new(source))).expect("engine");
    engine.record_decisions();
    engine.run(&mut |_| {}).expect("run").decisions
}

/// The first place two traces part, with a little of what came before.
fn first_difference(a: &[Decision], b: &[Decision]) -> Option<String> {
    let i = a.iter().zip(b).position(|(x, y)| x != y)?;
    let from = i.saturating_sub(3);
    Some(format!(
        "decision {i} differs:\n  server:    {:?}\n  simulator: {:?}",
        &a[from..(i + 2).min(a.len())],
        &b[from..(i + 2).min(b.len())]
    ))
}

/// The two faces' decisions over `shape` under bursts of `burst` requests every 12-18 ms.
fn decide_alike(shape: Shape, burst: usize) {
    let (_, _, sb) = create(shape);
    let arrivals = arrivals(24_000, sb.volume_blocks, burst, 12_000_000, 0x0b4a);
    let sim = simulator(shape, arrivals.clone());
    let served = server(shape, &arrivals);
    let count = |t: &[Decision], f: fn(&Decision) -> bool| t.iter().filter(|d| f(d)).count();
    let jobs = count(&sim, |d| matches!(d, Decision::Finished { .. }));
    let releases = count(&sim, |d| matches!(d, Decision::Released { .. }));
    let short = count(&sim, |d| matches!(d, Decision::Planned { planned: false, .. }));
    assert!(jobs > 20 && releases > 2, "GC ran: {jobs} jobs finished, {releases} releases");
    assert!(short > 0, "writes waited for space");
    if let Some(d) = first_difference(&served, &sim) {
        panic!("{d}");
    }
    // The simulator stops with its last request; the server runs its GC jobs to a wait.
    assert!(served.len() >= sim.len(), "the server decided less: {} against {}", served.len(), sim.len());
}

/// SWAN0: GC in the back-end R-groups, user reads preempting it there.
#[test]
fn swan0_decides_alike_in_both_faces() {
    // Bursts of 100 requests of 64 KiB: about as fast as the front-end's one SSD writes.
    decide_alike(Shape { scheme: "swan0", rgroups: 3, ssds_per_rgroup: 1 }, 100);
}

/// Log-RAID5: one log over every member, parity written in a phase after its row's data.
#[test]
fn lograid5_decides_alike_in_both_faces() {
    decide_alike(Shape { scheme: "lograid5", rgroups: 1, ssds_per_rgroup: 3 }, 100);
}
