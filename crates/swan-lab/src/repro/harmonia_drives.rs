//! `swan repro harmonia-drives`: Harmonia §III's measurements of real drives (Tables IV–VII,
//! Fig. 1–3) on swan's models of those drives, SSD(M) and SSD(S) (the `ultradrive-gx` and
//! `x25e` presets): bandwidth in one-second intervals, its mean and standard deviation, one
//! drive and RAID-0/5 arrays of 4 and 6, on identical drives and on drives varied as Tail at
//! Store measured them, and at shallower host queues to test what keeps the drives apart.
//! The paper names no access pattern and no warm-up, so every table is printed twice: random
//! requests on drives in GC's steady state, and fio's sequential mix after a fill.

use crate::claims::Measures;
use crate::experiments::{
    self, HARMONIA_DRIVES, HARMONIA_DRIVES_FROM_S, HARMONIA_DRIVES_QD, HARMONIA_DRIVES_SHALLOW_QD,
    HARMONIA_DRIVES_WIDTH_SHARE, HARMONIA_DRIVES_WRITE_SHARES,
};
use crate::repro::args::ReproArgs;
use crate::runner::{default_parallelism, run_all, Job};
use std::path::PathBuf;
use swan_core::geometry::RaidLevel;
use swan_sim::engine::SimConfig;
use swan_sim::workload::Pattern;

/// The drives' scale: the presets' timing and spare at 8 GiB each, so a 70 s run overwrites
/// each drive a few times over and GC stays in its steady state.
const SSD_GIB: f64 = 8.0;

/// What a run is, read back from its configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    pattern: Pattern,
    drive: &'static str,
    level: RaidLevel,
    members: u32,
    /// Per cent of requests that are writes.
    writes: u32,
    iodepth: u32,
    varied: bool,
}

impl Cell {
    fn of(cfg: &SimConfig) -> Cell {
        let drive = HARMONIA_DRIVES.into_iter().find(|d| *d == cfg.ssd.name).expect("a §III drive");
        let iodepth = match cfg.workload.arrival {
            swan_sim::workload::Arrival::Closed { iodepth } => iodepth,
            _ => 0,
        };
        Cell {
            pattern: cfg.workload.pattern,
            drive,
            level: cfg.array.kind.raid(),
            members: cfg.array.members(),
            writes: (100.0 * (1.0 - cfg.workload.read_fraction)).round() as u32,
            iodepth,
            varied: !cfg.ssd_variation.is_off(),
        }
    }

    fn name(&self, seed: u64) -> String {
        format!(
            "{}-{}-{}x{}-w{}-qd{}{}-s{seed}",
            self.pattern,
            self.drive,
            self.level,
            self.members,
            self.writes,
            self.iodepth,
            if self.varied { "-varied" } else { "" }
        )
    }
}

/// The paper's label for a drive (Table I).
fn label(drive: &str) -> &'static str {
    if drive == "x25e" {
        "SSD(S)"
    } else {
        "SSD(M)"
    }
}

/// Bandwidth (reads + writes, MB/s) in each one-second interval after the warm-up's free
/// blocks are spent: its mean and population standard deviation.
#[derive(Clone, Copy, Debug)]
struct Bandwidth {
    mean: f64,
    sd: f64,
}

impl Bandwidth {
    fn cv(&self) -> f64 {
        self.sd / self.mean
    }
}

fn bandwidth(dir: &std::path::Path) -> anyhow::Result<Bandwidth> {
    let run = swan_sim::report::load_run(dir)?;
    let ts = run.timeseries.ok_or_else(|| anyhow::anyhow!("{} has no time series", dir.display()))?;
    let (Some(r), Some(w)) = (ts.numeric("user_read_mbps"), ts.numeric("user_write_mbps")) else {
        anyhow::bail!("{}: the time series lacks user_read_mbps or user_write_mbps", dir.display());
    };
    let t = ts.time();
    let v: Vec<f64> =
        (0..ts.len()).filter(|&i| t[i] > HARMONIA_DRIVES_FROM_S + 1e-9).filter_map(|i| Some(r[i]? + w[i]?)).collect();
    let (mean, cv) = swan_sim::metrics::mean_cv(&v)
        .ok_or_else(|| anyhow::anyhow!("{}: no interval after the warm-up", dir.display()))?;
    Ok(Bandwidth { mean, sd: cv * mean })
}

fn avg(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The mean over a cell's seeds of what `f` takes from each run.
fn avg_by(runs: &[Bandwidth], f: impl Fn(&Bandwidth) -> f64) -> f64 {
    runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64
}

/// Every run's bandwidth, by cell, seed by seed.
struct Results {
    cells: Vec<(Cell, Vec<Bandwidth>)>,
}

impl Results {
    fn get(&self, cell: Cell) -> &[Bandwidth] {
        self.cells.iter().find(|(c, _)| *c == cell).map(|(_, b)| b.as_slice()).unwrap_or(&[])
    }

    /// Seed by seed, `f` of cell `a` over `f` of cell `b`.
    fn ratio(&self, a: Cell, b: Cell, f: impl Fn(&Bandwidth) -> f64) -> Vec<f64> {
        self.get(a).iter().zip(self.get(b)).map(|(x, y)| f(x) / f(y)).collect()
    }
}

/// The cells of one access pattern.
#[derive(Clone, Copy)]
struct Of {
    pattern: Pattern,
}

impl Of {
    fn cell(
        &self,
        drive: &'static str,
        level: RaidLevel,
        members: u32,
        share: f64,
        iodepth: u32,
        varied: bool,
    ) -> Cell {
        let writes = (100.0 * share).round() as u32;
        Cell { pattern: self.pattern, drive, level, members, writes, iodepth, varied }
    }

    /// Its measures' prefix and its name in the tables.
    fn key(&self) -> &'static str {
        if self.pattern == Pattern::Rw {
            "sequential"
        } else {
            "random"
        }
    }

    fn title(&self) -> &'static str {
        if self.pattern == Pattern::Rw {
            "sequential mix (fio rw) after a fill"
        } else {
            "random, GC in its steady state"
        }
    }
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let seeds = args.seeds.unwrap_or(3);
    if seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let ssd_gib = args.ssd_gib.unwrap_or(SSD_GIB);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("harmonia-drives"));
    let mut jobs = Vec::new();
    for seed in args.seed..args.seed + seeds {
        for cfg in experiments::harmonia_drives(ssd_gib, seed) {
            let name = Cell::of(&cfg).name(seed);
            jobs.push(Job { dir: out.join(&name), name, cfg });
        }
    }
    println!(
        "swan repro harmonia-drives: {} runs, Harmonia §III's SSD(M) (ultradrive-gx) and SSD(S) (x25e) at {ssd_gib} GiB \
         each; Table II's 64 requests of 320 KiB per drive, random over the volume after every drive is filled \
         and 95 % overwritten at random, and fio's sequential mix after a fill; RAID with Table III's 256 KiB stripe unit; bandwidth in 1 s intervals from {HARMONIA_DRIVES_FROM_S} s to \
         {} s; identical drives and drives varied as Tail at Store (σ 0.276, slow 0.6 % at 2×); seeds {}..={} \
         (results in {})",
        jobs.len(),
        experiments::HARMONIA_DRIVES_RUN_S,
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let mut results = Results { cells: Vec::new() };
    for job in &jobs {
        let c = Cell::of(&job.cfg);
        let b = bandwidth(&job.dir)?;
        match results.cells.iter_mut().find(|(x, _)| *x == c) {
            Some((_, v)) => v.push(b),
            None => results.cells.push((c, vec![b])),
        }
    }
    let mut m = Measures::new("harmonia-drives");
    for of in [Of { pattern: Pattern::RandRw }, Of { pattern: Pattern::Rw }] {
        println!("\n## {}", of.title());
        write_share_table(&results, of, &mut m);
        width_table(&results, of, &mut m);
        level_table(&results, of, &mut m);
    }
    depth_table(&results, Of { pattern: Pattern::RandRw }, &mut m);
    crate::claims::publish(&out, &m)?;
    Ok(())
}

/// A printed mean (std dev), MB/s.
type MeanSd = (f64, f64);

/// The paper's Tables IV and V: mean (std dev) MB/s at 80, 60, 40, 20 % writes. Table V's
/// RAID(A) and RAID(B) are six drives each (Table VII's RAID-0 column is six times Table VI's
/// six-drive per-drive figure).
const PAPER_TABLE_IV_V: [(&str, u32, [MeanSd; 4]); 4] = [
    ("ultradrive-gx", 1, [(176.4, 6.37), (184.8, 7.88), (207.4, 6.73), (249.9, 1.42)]),
    ("x25e", 1, [(223.5, 7.96), (239.3, 8.38), (257.1, 5.86), (285.1, 0.28)]),
    ("ultradrive-gx", 6, [(601.2, 72.32), (689.6, 110.5), (751.2, 113.94), (945.7, 11.14)]),
    ("x25e", 6, [(851.5, 34.98), (961.2, 46.37), (1026.1, 40.38), (1095.2, 11.39)]),
];

fn write_share_table(r: &Results, of: Of, m: &mut Measures) {
    println!("\nTables IV–V: bandwidth, mean (std dev) MB/s over 1 s intervals, by write share");
    println!("{:<32} {:>20} {:>20} {:>20} {:>20}", "", "80 %", "60 %", "40 %", "20 %");
    for varied in [false, true] {
        let variant = if varied { "varied" } else { "identical" };
        let (mut falls, mut rises) = (0, 0);
        for (drive, n, paper) in PAPER_TABLE_IV_V {
            let shape = if n == 1 { "alone".to_string() } else { format!("RAID-0 of {n}") };
            let what = format!("{} {shape}, {variant}", label(drive));
            let mut line = format!("{what:<32}");
            let mut paper_line = format!("{:<32}", "  the paper");
            for (share, (pm, psd)) in HARMONIA_DRIVES_WRITE_SHARES.into_iter().zip(paper) {
                let b = r.get(of.cell(drive, RaidLevel::Raid0, n, share, HARMONIA_DRIVES_QD, varied));
                let mean = avg_by(b, |x| x.mean);
                let sd = avg_by(b, |x| x.sd);
                line += &format!(" {:>10.1} ({:>6.2})", mean, sd);
                paper_line += &format!(" {:>10.1} ({:>6.2})", pm, psd);
            }
            println!("{line}");
            if varied {
                println!("{paper_line}");
            }
            let (hi, lo) = (
                of.cell(drive, RaidLevel::Raid0, n, 0.8, HARMONIA_DRIVES_QD, varied),
                of.cell(drive, RaidLevel::Raid0, n, 0.2, HARMONIA_DRIVES_QD, varied),
            );
            let key = format!("{}.{drive}.{variant}.raid0x{n}", of.key());
            let (bw, sd) = (r.ratio(hi, lo, |b| b.mean), r.ratio(hi, lo, |b| b.sd));
            falls += usize::from(avg(&bw) < 1.0);
            rises += usize::from(avg(&sd) > 1.0);
            m.set_seeds(&format!("{key}.bw_80_over_20"), &format!("{what}: bandwidth at 80 % ÷ 20 % writes"), "×", &bw);
            m.set_seeds(&format!("{key}.sd_80_over_20"), &format!("{what}: std dev at 80 % ÷ 20 % writes"), "×", &sd);
        }
        let cases = PAPER_TABLE_IV_V.len() as f64;
        let k = format!("{}.{variant}", of.key());
        m.set(
            &format!("{k}.write_share.bw_falls"),
            &format!("{k}: share of the 4 (drive, width) cases slower at 80 % than at 20 % writes"),
            "",
            falls as f64 / cases,
        );
        m.set(
            &format!("{k}.write_share.sd_rises"),
            &format!("{k}: share of the 4 cases whose std dev is larger at 80 % than at 20 % writes"),
            "",
            rises as f64 / cases,
        );
    }
}

/// Table VI's per-drive bandwidth (MB/s) on 1, 4, 6 drives at 60 % writes.
const PAPER_TABLE_VI: [(&str, [f64; 3]); 2] =
    [("ultradrive-gx", [184.8, 172.4, 141.2]), ("x25e", [239.3, 240.3, 191.1])];

fn width_table(r: &Results, of: Of, m: &mut Measures) {
    println!(
        "\nFig. 3, Table VI: 60 % writes, per-drive bandwidth MB/s and its coefficient of variation (std dev ÷ mean) \
         on 1, 4, 6 drives (RAID-0)"
    );
    println!("{:<30} {:>16} {:>16} {:>16} {:>14}", "", "1 drive", "4 drives", "6 drives", "6 ÷ 1 per drive");
    for (drive, paper) in PAPER_TABLE_VI {
        for varied in [false, true] {
            let what = format!("{} {}", label(drive), if varied { "varied" } else { "identical" });
            let at = |n| of.cell(drive, RaidLevel::Raid0, n, HARMONIA_DRIVES_WIDTH_SHARE, HARMONIA_DRIVES_QD, varied);
            let mut line = format!("{what:<30}");
            for n in [1, 4, 6] {
                let b = r.get(at(n));
                let per_drive = avg_by(b, |x| x.mean / f64::from(n));
                let cv = avg_by(b, Bandwidth::cv);
                line += &format!(" {:>8.1} {:>6.1} %", per_drive, 100.0 * cv);
                let key = format!("{}.{drive}.{}.cv.{n}", of.key(), if varied { "varied" } else { "identical" });
                m.set_seeds(&key, &format!("{what}: CV on {n}"), "", &b.iter().map(Bandwidth::cv).collect::<Vec<_>>());
            }
            let variant = if varied { "varied" } else { "identical" };
            // Against one identical drive of the same seed: a varied single drive is one draw.
            let alone = of.cell(drive, RaidLevel::Raid0, 1, HARMONIA_DRIVES_WIDTH_SHARE, HARMONIA_DRIVES_QD, false);
            for n in [4, 6] {
                let per: Vec<f64> = r.ratio(at(n), alone, |b| b.mean).into_iter().map(|x| x / f64::from(n)).collect();
                if n == 6 {
                    line += &format!(" {:>14.3}", avg(&per));
                }
                m.set_seeds(
                    &format!("{}.{drive}.{variant}.per_drive_{n}_over_1", of.key()),
                    &format!("{what}: per-drive bandwidth on {n} ÷ one identical drive"),
                    "×",
                    &per,
                );
            }
            println!("{line}");
        }
        println!(
            "{:<30} {:>8.1} {:>8} {:>8.1} {:>8} {:>8.1} {:>8} {:>14.3}",
            "  the paper",
            paper[0],
            "",
            paper[1],
            "",
            paper[2],
            "",
            paper[2] / paper[0]
        );
    }
}

/// Table VII: RAID-0, RAID-5, RAID-6 of six drives, mean (std dev) MB/s; RAID(A) is SSD(M).
const PAPER_TABLE_VII: [(&str, [MeanSd; 3]); 2] = [
    ("ultradrive-gx", [(847.4, 60.50), (644.1, 56.16), (479.8, 45.53)]),
    ("x25e", [(1147.1, 72.02), (793.7, 53.14), (686.7, 49.44)]),
];

fn level_table(r: &Results, of: Of, m: &mut Measures) {
    println!("\nTable VII, Fig. 4: six drives, 60 % writes, mean (std dev) MB/s and CV; swan has no RAID-6");
    println!("{:<30} {:>24} {:>24} {:>24}", "", "RAID-0", "RAID-5", "RAID-6");
    for (drive, paper) in PAPER_TABLE_VII {
        for varied in [false, true] {
            let variant = if varied { "varied" } else { "identical" };
            let what = format!("{} {variant}", label(drive));
            let at = |level| of.cell(drive, level, 6, HARMONIA_DRIVES_WIDTH_SHARE, HARMONIA_DRIVES_QD, varied);
            let mut line = format!("{what:<30}");
            for level in [RaidLevel::Raid0, RaidLevel::Raid5] {
                let b = r.get(at(level));
                let (mean, sd) = (avg_by(b, |x| x.mean), avg_by(b, |x| x.sd));
                line += &format!(" {:>8.1} ({:>6.2}) {:>4.1} %", mean, sd, 100.0 * sd / mean);
            }
            println!("{line} {:>24}", "—");
            let (r5, r0) = (at(RaidLevel::Raid5), at(RaidLevel::Raid0));
            m.set_seeds(
                &format!("{}.{drive}.{variant}.raid5_over_raid0.sd", of.key()),
                &format!("{what}: RAID-5 ÷ RAID-0 std dev"),
                "×",
                &r.ratio(r5, r0, |b| b.sd),
            );
            m.set_seeds(
                &format!("{}.{drive}.{variant}.raid5_over_raid0.cv", of.key()),
                &format!("{what}: RAID-5 ÷ RAID-0 CV"),
                "×",
                &r.ratio(r5, r0, Bandwidth::cv),
            );
        }
        let mut line = format!("{:<30}", "  the paper");
        for (mean, sd) in paper {
            line += &format!(" {:>8.1} ({:>6.2}) {:>4.1} %", mean, sd, 100.0 * sd / mean);
        }
        println!("{line}");
    }
}

fn depth_table(r: &Results, of: Of, m: &mut Measures) {
    println!(
        "\nWhat keeps the drives apart: identical drives, 60 % writes, per-drive bandwidth on 6 ÷ on 1 by host queue depth"
    );
    println!("{:<10} {:>10} {:>10} {:>10}", "", "QD 1", "QD 4", "QD 64");
    for drive in HARMONIA_DRIVES {
        let mut line = format!("{:<10}", label(drive));
        for qd in HARMONIA_DRIVES_SHALLOW_QD.into_iter().chain([HARMONIA_DRIVES_QD]) {
            let at = |n| of.cell(drive, RaidLevel::Raid0, n, HARMONIA_DRIVES_WIDTH_SHARE, qd, false);
            let per: Vec<f64> = r.ratio(at(6), at(1), |b| b.mean).into_iter().map(|x| x / 6.0).collect();
            line += &format!(" {:>10.3}", avg(&per));
            m.set_seeds(
                &format!("{}.{drive}.qd{qd}.per_drive_6_over_1", of.key()),
                &format!("{}, QD {qd}: per-drive bandwidth on 6 ÷ on 1", label(drive)),
                "×",
                &per,
            );
        }
        println!("{line}");
    }
}
