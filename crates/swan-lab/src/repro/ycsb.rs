//! `swan repro ycsb`: SWAN's §5.3 (Fig. 8–11, Table 4) in the simulator, from the block trace
//! of live runs: RocksDB's db_bench in YCSB-like phases (Load, A–D) on ext4 over `swan serve`
//! with RAID4, RAID5, Log-RAID4 and SWAN4 as the paper's 3R-3SSD, recorded at the server by
//! `scripts/ycsb-live.sh` (`data/traces/ycsb/`, described in the README there). Each scheme's
//! trace is replayed over the array it was recorded on, each phase measured apart (`--windows`):
//!
//! - closed loop (32 outstanding): how fast each array serves the phase's requests, Fig. 8;
//! - at the recorded arrival times: the read latencies, Fig. 9 (mean) and Fig. 10/11 (tail),
//!   and, for SWAN4, the reads by R-group role in phase A, Table 4.
//!
//! The array is made again by `swan create` over sparse files and simulated from its
//! superblock (`swan sim --array`): the volume, segments and spare the server had. Quick scale
//! uses the recorded 512 MiB members, which each trace's first phase fills; `--full` uses 4 GiB
//! members, an eighth to a fifth of which the trace fills, so the log-structured arrays are pre-filled
//! (`--prefill`). Three seeds (the SSDs' aging) per cell.

use crate::claims::Measures;
use crate::repro::args::ReproArgs;
use crate::repro::triple_a_traces::traces_dir;
use crate::runner::{default_parallelism, run_all, Job};
use crate::sim_cmd::SimArgs;
use anyhow::Context;
use clap::Parser;
use std::path::{Path, PathBuf};
use swan_sim::output::{RunSummary, WindowSummary, WINDOW_READ_CDF_FILE};
use swan_sim::report::windows::{self, PhaseCdf, PhaseTails};
use swan_sim::report::Format;

const SCHEMES: [&str; 4] = ["raid4", "raid5", "lograid4", "swan4"];
const PHASES: [&str; 5] = ["load", "a", "b", "c", "d"];
const DEPTH: u32 = 32;

/// A scheme's recorded trace and its phases, under `data/traces`.
fn trace_files(scheme: &str) -> (PathBuf, PathBuf) {
    let dir = traces_dir().join("ycsb");
    (dir.join(format!("{scheme}.blkparse.gz")), dir.join(format!("{scheme}.windows")))
}

/// `swan sim`'s own arguments, so each run is exactly the command it prints.
#[derive(Parser)]
struct Sim {
    #[command(flatten)]
    args: SimArgs,
}

/// `swan create` of the recorded geometry (3R-3SSD, the command's defaults otherwise) over
/// sparse member files in `dir`: the simulator then runs the array exactly as the server laid
/// it out (`swan sim --array`).
fn create_array(scheme: &str, member_size: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let members: Vec<PathBuf> = (0..9).map(|i| dir.join(format!("m{i}"))).collect();
    let options = swan_server::array::CreateOptions {
        kind: scheme.parse().map_err(|e| anyhow::anyhow!("{e}"))?,
        rgroups: 3,
        ssds_per_rgroup: 3,
        member_bytes: Some(swan_args::units::parse_size(member_size).map_err(anyhow::Error::msg)?),
        segment_bytes: None,
        chunk_bytes: 512 << 10,
        victim: swan_core::victim::VictimPolicy::Greedy,
        spare: None,
        force: true,
        created: 0,
        zoned: None,
    };
    let sb = swan_server::array::create(&members, &options)
        .with_context(|| format!("creating a {scheme} array over {}", dir.display()))?;
    println!("  {scheme}: swan create makes a volume of {} MiB", (sb.volume_blocks * swan_core::BLOCK_BYTES) >> 20);
    Ok(dir.join("m0"))
}

/// The `swan sim` arguments of one run over the array whose member is `member`.
fn sim_args(scheme: &str, mode: &str, seed: u64, args: &ReproArgs, member: &Path, host: Option<&str>) -> Vec<String> {
    let full = args.full;
    let (trace, windows) = trace_files(scheme);
    let mut a: Vec<String> =
        ["sim", "--ssd", "sata850pro", "--age", "0.6", "--trace-format", "blkparse", "--replay", mode]
            .into_iter()
            .map(String::from)
            .collect();
    for (flag, path) in [("--array", member), ("--trace", &trace), ("--windows", &windows)] {
        a.extend([flag.to_string(), path.display().to_string()]);
    }
    a.extend(["--seed".into(), seed.to_string()]);
    if let Some(h) = host {
        a.extend(["--host".into(), h.into()]);
    }
    for (flag, value) in [
        ("--ssd-suspension", &args.ssd_suspension),
        ("--ssd-write-buffer", &args.ssd_write_buffer),
        ("--ssd-reads-first", &args.ssd_reads_first),
    ] {
        if let Some(v) = value {
            a.extend([flag.into(), v.clone()]);
        }
    }
    if full && !scheme.starts_with("raid") {
        // The trace fills only its recorded volume, an eighth to a fifth of this one: fill the log first
        // so that it cleans, as the recorded array did.
        a.push("--prefill".into());
    }
    a
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    for scheme in SCHEMES {
        for p in <[PathBuf; 2]>::from(trace_files(scheme)) {
            anyhow::ensure!(p.is_file(), "{} is missing (set SWAN_TRACES to the traces directory)", p.display());
        }
    }
    let seeds = args.seeds.unwrap_or(3);
    anyhow::ensure!(seeds > 0, "--seeds 0: give at least one seed");
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("ycsb"));
    let member_size = if args.full { "4G" } else { "512M" };
    println!(
        "swan repro ycsb: each scheme's trace (data/traces/ycsb) replayed over the array it was recorded on, made \
         again by swan create: 3R-3SSD, members of {member_size}{}, SSDs aged to 0.6; closed loop of {DEPTH} and at \
         the recorded times; seeds {}..={} (results in {})",
        if args.full { ", log-structured arrays pre-filled" } else { " as recorded" },
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    let modes = [("closed", format!("closed={DEPTH}")), ("recorded", "recorded".to_string())];
    args.host_model()?; // a bad --host is refused before any array is made
    let host = match args.host.as_deref() {
        None => Some("paper"),
        Some("none") => None,
        Some(file) => Some(file),
    };
    println!("  with {}", args.host_label());
    let mut jobs = Vec::new();
    for scheme in SCHEMES {
        let member = create_array(scheme, member_size, &out.join("arrays").join(scheme))?;
        for seed in args.seed..args.seed + seeds {
            for (label, mode) in &modes {
                let argv = sim_args(scheme, mode, seed, args, &member, host);
                let sim = Sim::try_parse_from(&argv).with_context(|| argv.join(" "))?;
                let cfg = sim.args.to_config().with_context(|| argv.join(" "))?;
                let name = format!("{scheme}-{label}-seed{seed}");
                jobs.push(Job { dir: out.join(&name), name, cfg });
            }
        }
    }
    let example = sim_args("swan4", "recorded", args.seed, args, &out.join("arrays/swan4/m0"), host);
    println!("one run: swan {}", example[..].join(" "));
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let runs = Runs { jobs: &jobs, summaries: &summaries };
    for scheme in SCHEMES {
        println!("\n{scheme}'s trace, its phases as recorded: requests, MiB");
        for w in &runs.of(scheme, "closed")[0].windows {
            println!(
                "  {:<5} {:>8.1} s – {:>8.1} s: {:>7} reads {:>8.1} MiB, {:>7} writes {:>8.1} MiB",
                w.name,
                w.recorded_start_s,
                w.recorded_end_s,
                w.reads,
                w.read_bytes as f64 / 1048576.0,
                w.writes,
                w.write_bytes as f64 / 1048576.0
            );
        }
    }
    runs.table("Fig. 8: MB/s each array serves the phase's requests at (closed loop)", "closed", MBPS);
    runs.table("Fig. 9: mean read latency at the recorded arrivals, µs", "recorded", READ_MEAN);
    runs.table("Fig. 10/11: read p99 at the recorded arrivals, µs", "recorded", READ_P99);
    runs.table("Fig. 10/11: read p99.9 at the recorded arrivals, µs", "recorded", READ_P999);
    print_table4(&runs.of("swan4", "recorded"));
    let figure = read_tails(&jobs, args.seed, &out.join("figures"), args.format)?;
    println!("\nFig. 10/11 drawn: {}", figure.display());
    crate::claims::publish(&out, &measures(&runs))?;
    Ok(())
}

/// Fig. 10/11: each phase's read-latency tail, one line per scheme, from the first seed's runs
/// at the recorded times (their `window_read_cdf.csv`).
fn read_tails(jobs: &[Job], seed: u64, dir: &Path, format: Format) -> anyhow::Result<PathBuf> {
    let mut curves: Vec<(String, Vec<PhaseCdf>)> = PHASES.iter().map(|p| (p.to_string(), Vec::new())).collect();
    for scheme in SCHEMES {
        let name = format!("{scheme}-recorded-seed{seed}");
        let job = jobs.iter().find(|j| j.name == name).expect("a run per scheme and seed");
        let file = job.dir.join(WINDOW_READ_CDF_FILE);
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        for (phase, cdfs) in &mut curves {
            let points: Vec<(f64, f64)> = text
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let mut f = l.split(',');
                    (f.next()? == phase.as_str()).then_some(())?;
                    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
                })
                .collect();
            cdfs.push(PhaseCdf { label: scheme.to_string(), points });
        }
    }
    let fig = PhaseTails {
        subtitle: format!(
            "cf. SWAN Fig. 10/11 \u{2014} each scheme's recorded YCSB trace replayed at its recorded times, seed {seed}"
        ),
        from: 0.99,
        phases: curves,
    };
    Ok(windows::write(&fig, dir, "ycsb_read_tail", format)?)
}

type Measure = fn(&WindowSummary) -> f64;
const MBPS: Measure = |w| w.mbps;
const READ_MEAN: Measure = |w| w.read_latency_us.as_ref().map_or(f64::NAN, |l| l.mean);
const READ_P99: Measure = |w| w.read_latency_us.as_ref().map_or(f64::NAN, |l| l.p99 as f64);
const READ_P999: Measure = |w| w.read_latency_us.as_ref().map_or(f64::NAN, |l| l.p999 as f64);

/// The runs of the reproduction, found by scheme and mode.
struct Runs<'a> {
    jobs: &'a [Job],
    summaries: &'a [RunSummary],
}

impl Runs<'_> {
    /// Every seed's run of `scheme` in mode `label`.
    fn of(&self, scheme: &str, label: &str) -> Vec<&RunSummary> {
        let prefix = format!("{scheme}-{label}-");
        self.jobs.iter().zip(self.summaries).filter(|(j, _)| j.name.starts_with(&prefix)).map(|(_, s)| s).collect()
    }

    /// `f` of `phase`'s window in every seed's run.
    fn values(&self, scheme: &str, label: &str, phase: &str, f: Measure) -> Vec<f64> {
        self.of(scheme, label).iter().filter_map(|s| s.windows.iter().find(|w| w.name == phase)).map(f).collect()
    }

    fn mean(&self, scheme: &str, label: &str, phase: &str, f: Measure) -> f64 {
        mean(&self.values(scheme, label, phase, f))
    }

    /// One figure per phase and scheme: the mean over seeds, ± half the range.
    fn table(&self, title: &str, label: &str, f: Measure) {
        println!("\n{title} (mean over seeds ± half their range)");
        print!("{:<6}", "phase");
        for s in SCHEMES {
            print!("{s:>18}");
        }
        println!();
        for phase in PHASES {
            print!("{phase:<6}");
            for s in SCHEMES {
                let v = self.values(s, label, phase, f);
                let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                print!("{:>18}", format!("{:.1} ± {:.1}", mean(&v), (hi - lo) / 2.0));
            }
            println!();
        }
    }
}

/// The mean of `v` (0 for none).
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// SWAN's Table 4 from phase A's window of each SWAN4 run at the recorded arrivals.
fn print_table4(runs: &[&RunSummary]) {
    println!(
        "\nTable 4: SWAN4's reads in phase A by R-group role, per seed: reads (share, mean latency); the paper: \
         40 / 52 / 8 %, 98 / 88 / 103 µs"
    );
    for s in runs {
        let Some(roles) = s.windows.iter().find(|w| w.name == "a").and_then(|w| w.read_roles.clone()) else {
            continue;
        };
        let cells: Vec<String> = roles
            .iter()
            .map(|r| format!("{} {} ({:.1} %, {:.0} µs)", r.role, r.reads, 100.0 * r.share, r.mean_latency_us))
            .collect();
        println!("  seed {}: {}", s.seed, cells.join("; "));
    }
}

/// What `swan repro ycsb` measured for SWAN's §5.3 claims ([`crate::claims::swan`]): the
/// Load's and each phase's rate against the other schemes (closed loop), the read latency
/// against the best other's (at the recorded times), and Table 4's roles per seed.
fn measures(runs: &Runs) -> Measures {
    let mut m = Measures::new("ycsb");
    let others = ["raid4", "raid5", "lograid4"];
    let load = |s: &str| runs.mean(s, "closed", "load", MBPS);
    let s4 = load("swan4");
    m.set("load.over_raid4", "Load, SWAN4 ÷ RAID4", "", s4 / load("raid4"));
    m.set("load.over_raid5", "÷ RAID5", "", s4 / load("raid5"));
    m.set("load.over_lograid4", "÷ Log-RAID4", "", s4 / load("lograid4"));
    for phase in ["a", "b", "c", "d"] {
        let best = others.iter().map(|s| runs.mean(s, "closed", phase, MBPS)).fold(0.0, f64::max);
        let label = format!("{} ÷ fastest other", phase.to_uppercase());
        m.set(&format!("{phase}.over_best"), &label, "", runs.mean("swan4", "closed", phase, MBPS) / best);
    }
    for phase in PHASES {
        let name = if phase == "load" { "Load".to_string() } else { phase.to_uppercase() };
        for (key, f) in [("read_mean", READ_MEAN), ("read_p999", READ_P999)] {
            let best = others.iter().map(|s| runs.mean(s, "recorded", phase, f)).fold(f64::INFINITY, f64::min);
            let label = format!("{name} ÷ best");
            m.set(&format!("{phase}.{key}_over_best"), &label, "", runs.mean("swan4", "recorded", phase, f) / best);
        }
    }
    // Table 4: phase A's reads by R-group role, per seed.
    let roles: Vec<Vec<swan_sim::output::RoleSummary>> = runs
        .of("swan4", "recorded")
        .iter()
        .filter_map(|s| s.windows.iter().find(|w| w.name == "a").and_then(|w| w.read_roles.clone()))
        .collect();
    for (i, (key, label)) in
        [("front", "front-end"), ("idle", "idle"), ("collecting", "collecting")].into_iter().enumerate()
    {
        let share: Vec<f64> = roles.iter().filter_map(|r| r.get(i)).map(|r| r.share).collect();
        let us: Vec<f64> = roles.iter().filter_map(|r| r.get(i)).map(|r| r.mean_latency_us).collect();
        m.set_seeds(&format!("table4.{key}_share"), label, "%", &share);
        m.set_seeds(&format!("table4.{key}_us"), label, "µs", &us);
    }
    m
}
