//! Building an engine: the scheme and its modelled SSDs (filled, aged, pre-filled as the
//! run asks), and the parts that run it, before the clock starts.

use super::clock::Clock;
use super::config::check_run_settings;
use super::meter::Meter;
use super::requests::Requests;
use super::turns::EngineThread;
use super::{Engine, Members, RunOutput, SimConfig, SimError, NS_PER_S};
use crate::fabric_array::FabricArray;
use crate::ggc::GgcDriver;
use crate::hba_array::HbaArray;
use crate::prefill;
use crate::rng::SimRng;
use crate::source::{ArrivalSource, SyntheticSource};
use crate::workload::Generator;
use crate::zoned_array::ZonedArray;
use swan_core::driver::GcPacing;
use swan_core::io::IoPlan;
use swan_core::scheme::ArrayScheme;
use swan_models::link::Link;
use swan_models::ssd::Ssd;

/// The random stream of the pre-fill's overwrites (the workload draws from stream 1).
const PREFILL_STREAM: u64 = 0x9F11;

impl Engine {
    /// An engine drawing its requests from `cfg.workload`.
    pub fn new(cfg: SimConfig) -> Result<Self, SimError> {
        if cfg.trace.is_some() {
            return Err(SimError::Config("a trace run needs its trace opened: build it with replay::engine".into()));
        }
        let (workload, seed) = (cfg.workload.clone(), cfg.seed);
        Self::with_source(cfg, synthetic(workload, seed))
    }

    /// An engine drawing its requests from the source `make_source` builds for a volume of
    /// the given number of blocks.
    pub fn with_source(
        cfg: SimConfig,
        make_source: impl FnOnce(u64) -> Result<Box<dyn ArrivalSource>, SimError>,
    ) -> Result<Self, SimError> {
        if cfg.fabric.is_some() || cfg.hba_bus.is_some() || cfg.zoned.is_some() {
            return Err(SimError::Config(
                "a run over a fabric, a shared HBA bus or zoned SSDs has its own members: build it with engine::build"
                    .into(),
            ));
        }
        Self::with_members(cfg, build_ssds, make_source)
    }
}

/// An engine over the members the run names: SSDs, SSDs sharing a bus, clusters behind a
/// fabric, or zoned SSDs.
pub enum Built {
    Ssds(Box<Engine>),
    Hba(Box<Engine<HbaArray>>),
    Fabric(Box<Engine<FabricArray>>),
    Zoned(Box<Engine<ZonedArray>>),
}

impl Built {
    /// See [`Engine::record_member_io`].
    pub fn record_member_io(&mut self, sink: Box<dyn crate::member_trace::MemberIoSink>) {
        match self {
            Built::Ssds(e) => e.record_member_io(sink),
            Built::Hba(e) => e.record_member_io(sink),
            Built::Fabric(e) => e.record_member_io(sink),
            Built::Zoned(e) => e.record_member_io(sink),
        }
    }

    /// Run to the stop rule (see [`Engine::run`]).
    pub fn run(self, progress: &mut dyn FnMut(f64)) -> Result<RunOutput, SimError> {
        match self {
            Built::Ssds(e) => e.run(progress),
            Built::Hba(e) => e.run(progress),
            Built::Fabric(e) => e.run(progress),
            Built::Zoned(e) => e.run(progress),
        }
    }
}

/// The members of the run `cfg`, each a cluster behind the fabric it names.
fn fabric_members(cfg: &SimConfig, members: u32) -> Result<FabricArray, SimError> {
    let spec = cfg.fabric.as_ref().ok_or_else(|| SimError::Config("the run names no fabric".into()))?;
    Ok(FabricArray::new(spec, members, cfg.array.member_blocks, cfg.seed)?)
}

/// The engine for `cfg` over the members it names, drawing requests from `make_source`.
pub fn build(
    cfg: SimConfig,
    make_source: impl FnOnce(u64) -> Result<Box<dyn ArrivalSource>, SimError>,
) -> Result<Built, SimError> {
    if let Some(zoned) = cfg.zoned.clone() {
        let members = move |cfg: &SimConfig, n: u32| ZonedArray::new(cfg, &zoned, n);
        return Ok(Built::Zoned(Box::new(Engine::with_members(cfg, members, make_source)?)));
    }
    Ok(match (&cfg.fabric, cfg.hba_bus) {
        (Some(_), _) => Built::Fabric(Box::new(Engine::with_members(cfg, fabric_members, make_source)?)),
        (None, Some(bus)) => {
            let members = |cfg: &SimConfig, n: u32| HbaArray::new(cfg, bus, n);
            Built::Hba(Box::new(Engine::with_members(cfg, members, make_source)?))
        }
        (None, None) => Built::Ssds(Box::new(Engine::with_source(cfg, make_source)?)),
    })
}

/// The engine for `cfg`'s synthetic workload over the members it names.
pub fn build_synthetic(cfg: SimConfig) -> Result<Built, SimError> {
    if cfg.trace.is_some() {
        return Err(SimError::Config("a trace run needs its trace opened: build it with replay::engine".into()));
    }
    let (workload, seed) = (cfg.workload.clone(), cfg.seed);
    build(cfg, synthetic(workload, seed))
}

/// The source of `cfg.workload`'s synthetic requests.
pub(crate) fn synthetic(
    workload: crate::workload::WorkloadSpec,
    seed: u64,
) -> impl FnOnce(u64) -> Result<Box<dyn ArrivalSource>, SimError> {
    move |volume_blocks| {
        let gen = Generator::new(&workload, volume_blocks, SimRng::fork(seed, 1)).map_err(SimError::Workload)?;
        Ok(Box::new(SyntheticSource::new(gen, workload.arrival).map_err(SimError::Arrival)?))
    }
}

impl<M: Members> Engine<M> {
    /// An engine over the members `make_members` builds for the scheme's member count,
    /// drawing its requests from the source `make_source` builds for the volume.
    pub fn with_members(
        cfg: SimConfig,
        make_members: impl FnOnce(&SimConfig, u32) -> Result<M, SimError>,
        make_source: impl FnOnce(u64) -> Result<Box<dyn ArrivalSource>, SimError>,
    ) -> Result<Self, SimError> {
        check_run_settings(&cfg)?;
        let mut scheme = cfg.array.build()?;
        scheme.set_read_priority(cfg.reads.priority);
        scheme.set_gc_in_front_end(cfg.gc_in_front_end).map_err(SimError::GcSetting)?;
        let mut members = make_members(&cfg, scheme.members())?;
        let prefilled = match cfg.prefill {
            Some(spec) => Some(prefill_array(&cfg, spec, &mut scheme, &mut members)?),
            None => None,
        };
        let counters_at_start = scheme.counters().clone();
        let source = make_source(scheme.volume_blocks())?;
        if !source.finite() && cfg.stop.sim_seconds.is_none() && cfg.stop.write_bytes.is_none() {
            return Err(SimError::Config("say when to stop: a simulated duration or bytes to write".into()));
        }
        // GC on the engine thread is paced as `swan serve` paces it; on a thread of its own
        // (the paper's host), or with no host, its phases go out whole.
        let on_engine = cfg.host.as_ref().is_some_and(|h| h.gc_on_engine);
        let pacing = if on_engine { GcPacing::SERVED } else { GcPacing::WHOLE };
        let ggc = GgcDriver::new(cfg.ggc, scheme.members(), cfg.timeline).map_err(SimError::Ggc)?;
        let count = scheme.members() as usize;
        let measure_from = (cfg.measure_from_s * NS_PER_S) as swan_models::Nanos;
        let windows = cfg.trace.as_ref().map_or(0, |t| t.windows.len());
        Ok(Self {
            link: Link::new(cfg.network_mbps, 0),
            scheme,
            members,
            plan: IoPlan::new(),
            gc_ios: Vec::new(),
            clock: Clock::default(),
            reqs: Requests::new(source),
            thread: EngineThread::new(cfg.array.rgroups, pacing),
            ggc,
            meter: Meter::new(measure_from, prefilled, counters_at_start, count, windows),
            user_writes_until: vec![0; count],
            held: Default::default(),
            host: match &cfg.host {
                Some(m) => Some(swan_models::host::Host::new(m.clone()).map_err(SimError::Host)?),
                None => None,
            },
            error: None,
            member_io: None,
            cfg,
        })
    }
}

/// One modelled SSD per member, filled or aged as the run asks (SSD `i` aged by a share
/// that falls with `i` when the ages are spread), each with its own speed factor and slow
/// periods when the SSDs vary. The SSDs are built `cfg.setup_threads` at a time: each
/// draws only from its own seed, so the threads change when the work is done, not what it
/// yields, and the SSDs come back in member order.
pub(crate) fn build_ssds(cfg: &SimConfig, members: u32) -> Result<Vec<Ssd>, SimError> {
    cfg.ssd.validate().map_err(SimError::Ssd)?;
    let member_pages = cfg.ssd.user_pages;
    if member_pages < cfg.array.member_blocks {
        return Err(SimError::Config(format!(
            "members of {} blocks do not fit SSDs of {member_pages} pages",
            cfg.array.member_blocks
        )));
    }
    let threads = match cfg.setup_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(members as usize)
    .max(1);
    if threads == 1 {
        return (0..members).map(|i| build_ssd(cfg, i, members)).collect();
    }
    // Thread `t` builds members t, t + threads, …: the aging's cost grows with the member's
    // share, so dealing them out keeps the threads' loads even when the ages are spread.
    let mut built: Vec<Vec<Result<Ssd, SimError>>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads as u32)
            .map(|t| s.spawn(move || (t..members).step_by(threads).map(|i| build_ssd(cfg, i, members)).collect()))
            .collect();
        workers.into_iter().map(|w| w.join().expect("an SSD-building thread panicked")).collect()
    });
    let mut dealt: Vec<_> = built.iter_mut().map(|v| std::mem::take(v).into_iter()).collect();
    (0..members as usize).map(|i| dealt[i % threads].next().expect("every member was built")).collect()
}

/// Member `i` of `members`: its SSD built, filled and aged as `cfg` asks.
pub(crate) fn build_ssd(cfg: &SimConfig, i: u32, members: u32) -> Result<Ssd, SimError> {
    let v = &cfg.ssd_variation;
    let factor = v.speed_factor(cfg.seed, i);
    let model = if factor == 1.0 { cfg.ssd.clone() } else { cfg.ssd.with_speed_factor(factor) };
    let mut ssd = Ssd::new(model).map_err(SimError::Ssd)?;
    if let Some(periods) = v.slow_periods(cfg.seed, i) {
        ssd = ssd.with_slow_periods(periods);
    }
    if cfg.fill_first {
        ssd.fill_sequential(1.0);
        ssd.reset_stats();
    }
    if cfg.age_fraction > 0.0 {
        let fraction = cfg.age_fraction * (1.0 - cfg.age_spread * f64::from(i) / f64::from(members));
        ssd.age_random(fraction, cfg.seed ^ (u64::from(i) + 1).wrapping_mul(0xA076_1D64_78BD_642F));
        ssd.reset_stats();
    }
    Ok(ssd)
}

/// The untimed pre-fill: the array brought to steady state by overwrites drawn like the
/// workload's, before the clock starts.
fn prefill_array(
    cfg: &SimConfig,
    spec: prefill::Prefill,
    scheme: &mut ArrayScheme,
    members: &mut impl Members,
) -> Result<prefill::PrefillReport, SimError> {
    let mut overwrites = Generator::new(
        &prefill::overwrite_spec(&cfg.workload),
        scheme.volume_blocks(),
        SimRng::fork(cfg.seed, PREFILL_STREAM),
    )
    .map_err(SimError::Workload)?;
    let report = prefill::run(scheme, members, spec, &mut overwrites).map_err(SimError::Prefill)?;
    members.reset_stats();
    Ok(report)
}
