//! `swan repro read-rules`: reads that do not wait for GC (issue 23, part 2), in the simulator.
//!
//! SWAN's read priority on and off (reads by the role of the R-group they land on, and their
//! mean latency, as SWAN's Table 4), and reads around a busy SSD (`--parity-reads`) off and
//! on (read p99, p99.9, the extra member reads they cost). SWAN4, 3 R-groups × 3 SSDs of
//! 256 MiB (sata850pro, aged 60 %), 25 % spare, 4 KiB random reads and writes at queue depth
//! 32 for 20 simulated s: 70/30 read/write, and a write-heavy 30/70; and the write-heavy mix
//! over SSDs that collect on their own (1 MiB segments against the model's 8 MiB erase
//! stripes, aged 90 %, 10 % spare). Three seeds per cell.
//!
//! Each run is a `swan sim` command line, parsed and built by `swan sim`'s own options
//! ([`SimArgs`]), and printed, so it can be run again by hand. This was
//! `scripts/read-rules.sh`; the priority table is read from the 70/30 runs without reads
//! around, which the script ran twice.

use crate::claims::Measures;
use crate::repro::args::ReproArgs;
use crate::runner::{default_parallelism, run_all, Job};
use crate::sim_cmd::SimArgs;
use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use swan_sim::output::RunSummary;

/// What every run shares: `swan sim` options.
const BASE: &str = "--scheme swan4 --rgroups 3 --ssds-per-rgroup 3 --ssd-capacity 256MiB --rw randrw --bs 4k \
                    --iodepth 32 --time 20";

/// The write-heavy mix over SSDs that collect on their own.
const SELF_COLLECTING: &str = "--rwmixread 0.3 --segment 1MiB --age 0.9 --spare 10";

/// The roles of SWAN's Table 4, as `summary.json`'s `read_roles` names them, and as the
/// measures do.
const ROLES: [(&str, &str); 3] =
    [("front-end", "front"), ("idle back-end", "idle"), ("collecting back-end", "collecting")];

/// `swan sim`'s own arguments, so each run is exactly the command it prints.
#[derive(Parser)]
struct Sim {
    #[command(flatten)]
    args: SimArgs,
}

/// One cell: its name and its `swan sim` options beyond [`BASE`] (and `--seed`).
struct Cell {
    name: String,
    options: String,
}

/// The 70/30 and 30/70 mixes with read priority on and off, reads around off and on; and
/// the self-collecting SSDs with reads around off and on.
fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for mix in [70u32, 30] {
        for prio in ["on", "off"] {
            for parity in ["off", "on"] {
                cells.push(Cell {
                    name: mix_cell(mix, prio, parity),
                    options: format!(
                        "--spare 25 --rwmixread {} --read-priority {prio} --parity-reads {parity}",
                        f64::from(mix) / 100.0
                    ),
                });
            }
        }
    }
    for parity in ["off", "on"] {
        cells.push(Cell { name: ssdgc_cell(parity), options: format!("{SELF_COLLECTING} --parity-reads {parity}") });
    }
    cells
}

fn mix_cell(mix: u32, prio: &str, parity: &str) -> String {
    format!("mix{mix}-prio-{prio}-parity-{parity}")
}

fn ssdgc_cell(parity: &str) -> String {
    format!("ssdgc-parity-{parity}")
}

/// The `swan sim` words of `cell` at `seed`.
fn sim_words(cell: &Cell, seed: u64) -> Vec<String> {
    std::iter::once("sim".to_string())
        .chain(format!("{BASE} {} --seed {seed}", cell.options).split_whitespace().map(String::from))
        .collect()
}

/// What the tables need of one run.
#[derive(Clone, Debug, PartialEq)]
struct Run {
    read_p99_us: u64,
    read_p999_us: u64,
    read_mean_us: f64,
    /// Per role of [`ROLES`]: share of the reads and their mean latency in µs.
    roles: [(f64, f64); 3],
    /// User reads completed.
    reads: u64,
    parity_read_blocks: u64,
    parity_extra_reads: u64,
    waf_ssd: f64,
    write_mbps: f64,
}

impl Run {
    fn of(s: &RunSummary) -> anyhow::Result<Run> {
        let lat = s.read_latency_us.as_ref().context("a run of reads has read latencies")?;
        let roles = s.read_roles.as_ref().context("a SWAN run has its reads by R-group role")?;
        let role = |name: &str| {
            roles.iter().find(|r| r.role == name).map(|r| (r.share, r.mean_latency_us)).unwrap_or((f64::NAN, f64::NAN))
        };
        Ok(Run {
            read_p99_us: lat.p99,
            read_p999_us: lat.p999,
            read_mean_us: lat.mean,
            roles: ROLES.map(|(name, _)| role(name)),
            reads: roles.iter().map(|r| r.reads).sum(),
            parity_read_blocks: s.parity_read_blocks,
            parity_extra_reads: s.parity_extra_reads,
            waf_ssd: s.waf_ssd.unwrap_or(f64::NAN),
            write_mbps: s.user_write_mbps_mean,
        })
    }

    fn extra_per_1000(&self) -> f64 {
        1000.0 * self.parity_extra_reads as f64 / self.reads.max(1) as f64
    }
}

fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.into_iter().collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// "mean [min–max]" of a latency percentile over seeds.
fn spread(v: impl IntoIterator<Item = u64>) -> String {
    let v: Vec<u64> = v.into_iter().collect();
    let (lo, hi) = (v.iter().min().copied().unwrap_or(0), v.iter().max().copied().unwrap_or(0));
    format!("{:.0} [{lo}–{hi}]", mean(v.iter().map(|&x| x as f64)))
}

/// Extra member reads per 1000 user reads over all seeds' runs together.
fn extra_per_1000(runs: &[Run]) -> f64 {
    let extra: u64 = runs.iter().map(|r| r.parity_extra_reads).sum();
    let reads: u64 = runs.iter().map(|r| r.reads).sum();
    1000.0 * extra as f64 / reads.max(1) as f64
}

/// A figure of one run.
type Figure = fn(&Run) -> f64;

/// The read tails the measures keep: the name's part, as shown, and the figure.
const TAILS: [(&str, &str, Figure); 2] =
    [("p99", "p99", |r| r.read_p99_us as f64), ("p999", "p99.9", |r| r.read_p999_us as f64)];

/// The runs of the reproduction, by cell, each cell's in seed order.
struct Runs(Vec<(String, Vec<Run>)>);

impl Runs {
    fn of(&self, cell: &str) -> &[Run] {
        self.0.iter().find(|(n, _)| n == cell).map_or(&[], |(_, r)| r.as_slice())
    }

    /// Read priority on and off, 70/30: each role's share of the reads and mean latency,
    /// and the read tail on the front-end's line.
    fn priority_table(&self, seeds: &str) -> Vec<String> {
        let mut out = vec![
            format!("Read priority, 70/30: reads by the role of the R-group they land on (SWAN's Table 4), mean of seeds {seeds}"),
            format!(
                "{:<14} {:<20} {:>15} {:>16} {:>12} {:>14}",
                "read priority", "role", "share of reads", "mean latency µs", "read p99 µs", "read p99.9 µs"
            ),
        ];
        for prio in ["on", "off"] {
            let runs = self.of(&mix_cell(70, prio, "off"));
            for (i, (role, _)) in ROLES.iter().enumerate() {
                let share = mean(runs.iter().map(|r| r.roles[i].0)) * 100.0;
                let lat = mean(runs.iter().map(|r| r.roles[i].1));
                let tail = if i == 0 {
                    format!(
                        " {:>12.0} {:>14.0}",
                        mean(runs.iter().map(|r| r.read_p99_us as f64)),
                        mean(runs.iter().map(|r| r.read_p999_us as f64))
                    )
                } else {
                    String::new()
                };
                let p = if i == 0 { prio } else { "" };
                out.push(format!("{p:<14} {role:<20} {:>15} {lat:>16.0}{tail}", format!("{share:.1} %")));
            }
        }
        out
    }

    /// Reads around a busy SSD off and on, both mixes, read priority on and off.
    fn parity_table(&self, seeds: &str) -> Vec<String> {
        let mut out = vec![
            format!(
                "Reads around a busy SSD (--parity-reads), mean of seeds {seeds} (range in brackets); extra reads are \
                 member reads beyond the direct ones"
            ),
            format!(
                "{:<8} {:<14} {:<13} {:>16} {:>20} {:>13} {:>19} {:>40}",
                "mix r/w",
                "read priority",
                "parity reads",
                "read p99 µs",
                "read p99.9 µs",
                "read mean µs",
                "blocks read around",
                "extra member reads per 1000 user reads"
            ),
        ];
        for mix in [70u32, 30] {
            for prio in ["on", "off"] {
                for parity in ["off", "on"] {
                    let runs = self.of(&mix_cell(mix, prio, parity));
                    out.push(format!(
                        "{:<8} {prio:<14} {parity:<13} {:>16} {:>20} {:>13.1} {:>19} {:>40.2}",
                        format!("{mix}/{}", 100 - mix),
                        spread(runs.iter().map(|r| r.read_p99_us)),
                        spread(runs.iter().map(|r| r.read_p999_us)),
                        mean(runs.iter().map(|r| r.read_mean_us)),
                        runs.iter().map(|r| r.parity_read_blocks).sum::<u64>(),
                        extra_per_1000(runs),
                    ));
                }
            }
        }
        out
    }

    /// Reads around off and on over SSDs that collect on their own.
    fn ssdgc_table(&self, seeds: &str) -> Vec<String> {
        let mut out = vec![
            format!(
                "SSDs collecting on their own (30/70, {SELF_COLLECTING}), mean of seeds {seeds} (range in brackets)"
            ),
            format!(
                "{:<13} {:>8} {:>11} {:>16} {:>20} {:>13} {:>19} {:>40}",
                "parity reads",
                "SSD WAF",
                "write MB/s",
                "read p99 µs",
                "read p99.9 µs",
                "read mean µs",
                "blocks read around",
                "extra member reads per 1000 user reads"
            ),
        ];
        for parity in ["off", "on"] {
            let runs = self.of(&ssdgc_cell(parity));
            out.push(format!(
                "{parity:<13} {:>8.2} {:>11.0} {:>16} {:>20} {:>13.1} {:>19} {:>40.2}",
                mean(runs.iter().map(|r| r.waf_ssd)),
                mean(runs.iter().map(|r| r.write_mbps)),
                spread(runs.iter().map(|r| r.read_p99_us)),
                spread(runs.iter().map(|r| r.read_p999_us)),
                mean(runs.iter().map(|r| r.read_mean_us)),
                runs.iter().map(|r| r.parity_read_blocks).sum::<u64>(),
                extra_per_1000(runs),
            ));
        }
        out
    }

    /// What the reproduction measured, per seed (its mean is the value claims are judged on).
    fn measures(&self) -> Measures {
        let mut m = Measures::new("read-rules");
        let per_seed = |cell: &str, f: &dyn Fn(&Run) -> f64| -> Vec<f64> { self.of(cell).iter().map(f).collect() };
        for prio in ["on", "off"] {
            let cell = mix_cell(70, prio, "off");
            for (i, (role, key)) in ROLES.iter().enumerate() {
                m.set_seeds(
                    &format!("prio_{prio}.{key}_share"),
                    &format!("share of reads on the {role}, priority {prio}"),
                    "%",
                    &per_seed(&cell, &|r| r.roles[i].0),
                );
                m.set_seeds(
                    &format!("prio_{prio}.{key}_us"),
                    &format!("{role}, priority {prio}"),
                    "µs",
                    &per_seed(&cell, &|r| r.roles[i].1),
                );
            }
        }
        for mix in [70u32, 30] {
            let what = format!("{mix}/{}, read priority on", 100 - mix);
            for parity in ["off", "on"] {
                let cell = mix_cell(mix, "on", parity);
                for (key, shown, f) in TAILS {
                    m.set_seeds(
                        &format!("mix{mix}.{key}_{parity}_us"),
                        &format!("read {shown}, {what}, reads around a busy SSD {parity}"),
                        "µs",
                        &per_seed(&cell, &f),
                    );
                }
            }
            m.set_seeds(
                &format!("mix{mix}.extra_per_1000"),
                &format!("extra member reads per 1000 user reads, {what}, reads around a busy SSD on"),
                "",
                &per_seed(&mix_cell(mix, "on", "on"), &Run::extra_per_1000),
            );
        }
        for parity in ["off", "on"] {
            for (key, shown, f) in TAILS {
                m.set_seeds(
                    &format!("ssdgc.{key}_{parity}_us"),
                    &format!("read {shown}, 30/70 over SSDs collecting on their own, reads around a busy SSD {parity}"),
                    "µs",
                    &per_seed(&ssdgc_cell(parity), &f),
                );
            }
        }
        m
    }
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    if args.full || args.ssd_gib.is_some() || args.footprint.is_some() || args.host.is_some() {
        anyhow::bail!(
            "read-rules runs at one scale (SSDs of 256 MiB, 20 simulated s, no host): --full, --ssd-gib, \
             --footprint and --host do not apply"
        );
    }
    let seeds = args.seeds.unwrap_or(3);
    anyhow::ensure!(seeds > 0, "--seeds 0: give at least one seed");
    let seed_list: Vec<u64> = (args.seed..args.seed + seeds).collect();
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("read-rules"));
    let cells = cells();
    let mut jobs = Vec::new();
    for cell in &cells {
        for &seed in &seed_list {
            let words = sim_words(cell, seed);
            let sim = Sim::try_parse_from(&words).with_context(|| words.join(" "))?;
            let cfg = sim.args.to_config().with_context(|| words.join(" "))?;
            let name = format!("{}-seed{seed}", cell.name);
            jobs.push(Job { dir: out.join(&name), name, cfg });
        }
    }
    println!(
        "swan repro read-rules: reads that do not wait for GC: SWAN's read priority and reads around a busy SSD \
         (--parity-reads), {} runs: {} cells × seeds {}..={} (results in {})",
        jobs.len(),
        cells.len(),
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    println!("each run: swan sim {BASE} --seed N, and its cell's options:");
    for cell in &cells {
        println!("  {:<26} {}", cell.name, cell.options);
    }
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let mut runs = Runs(Vec::new());
    for (cell, by_seed) in cells.iter().zip(summaries.chunks(seed_list.len())) {
        let r = by_seed.iter().map(Run::of).collect::<anyhow::Result<Vec<_>>>().with_context(|| cell.name.clone())?;
        runs.0.push((cell.name.clone(), r));
    }
    let seeds_shown = seed_list.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    for table in [runs.priority_table(&seeds_shown), runs.parity_table(&seeds_shown), runs.ssdgc_table(&seeds_shown)] {
        println!();
        for line in table {
            println!("{line}");
        }
    }
    crate::claims::publish(&out, &runs.measures())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p99: u64, p999: u64, extra: u64) -> Run {
        Run {
            read_p99_us: p99,
            read_p999_us: p999,
            read_mean_us: 80.0,
            roles: [(0.35, 126.0), (0.32, 82.0), (0.33, 81.0)],
            reads: 100_000,
            parity_read_blocks: 900,
            parity_extra_reads: extra,
            waf_ssd: 2.5,
            write_mbps: 170.0,
        }
    }

    fn runs() -> Runs {
        Runs(
            cells()
                .into_iter()
                .map(|c| {
                    let on = c.name.ends_with("parity-on");
                    let (a, b) =
                        if on { (run(230, 330, 20), run(240, 340, 30)) } else { (run(237, 394, 0), run(237, 420, 0)) };
                    (c.name, vec![a, b])
                })
                .collect(),
        )
    }

    #[test]
    fn every_cell_is_the_swan_sim_run_the_script_made() {
        let cells = cells();
        assert_eq!(cells.len(), 10);
        for cell in &cells {
            let words = sim_words(cell, 2);
            let cfg = Sim::try_parse_from(&words).unwrap().args.to_config().unwrap();
            assert_eq!(cfg.seed, 2);
            assert_eq!(cfg.array.kind.to_string(), "swan4");
            assert_eq!((cfg.array.rgroups, cfg.array.ssds_per_rgroup), (3, 3));
            assert_eq!(cfg.ssd.user_pages * 4096, 256 << 20);
            assert_eq!(cfg.stop.sim_seconds, Some(20.0));
            assert_eq!(cfg.workload.block_blocks, 1);
            let parity = cell.name.ends_with("parity-on");
            assert_eq!(cfg.reads.parity_min_gain_us.is_some(), parity, "{}", cell.name);
            assert_eq!(cfg.reads.priority, !cell.name.contains("prio-off"), "{}", cell.name);
            let mix = if cell.name.starts_with("mix70") { 0.7 } else { 0.3 };
            assert_eq!(cfg.workload.read_fraction, mix, "{}", cell.name);
            if cell.name.starts_with("ssdgc") {
                assert_eq!(cfg.age_fraction, 0.9);
                assert_eq!(cfg.array.segment_rows, 256, "1 MiB segments");
            } else {
                assert_eq!(cfg.age_fraction, 0.6);
                assert_eq!(u64::from(cfg.array.segment_rows), cfg.ssd.erase_stripe_pages());
            }
        }
    }

    #[test]
    fn the_tables_show_means_ranges_and_pooled_extra_reads() {
        let r = runs();
        let prio = r.priority_table("1 2");
        assert_eq!(prio.len(), 2 + 6);
        assert!(prio[2].starts_with("on ") && prio[2].contains("35.0 %") && prio[2].contains(" 126 "), "{}", prio[2]);
        assert!(prio[2].trim_end().ends_with("237            407"), "{}", prio[2]);
        assert!(prio[4].contains("collecting back-end") && prio[4].trim_end().ends_with("81"), "{}", prio[4]);
        let parity = r.parity_table("1 2");
        assert_eq!(parity.len(), 2 + 8);
        let row = &parity[3]; // 70/30, priority on, reads around on
        assert!(row.contains("235 [230–240]") && row.contains("335 [330–340]"), "{row}");
        assert!(row.contains(" 1800 ") && row.trim_end().ends_with("0.25"), "{row}");
        assert!(parity[2].contains("237 [237–237]") && parity[2].contains("407 [394–420]"), "{}", parity[2]);
        let ssdgc = r.ssdgc_table("1 2");
        assert_eq!(ssdgc.len(), 2 + 2);
        assert!(
            ssdgc[3].starts_with("on ") && ssdgc[3].contains(" 2.50 ") && ssdgc[3].contains(" 170 "),
            "{}",
            ssdgc[3]
        );
    }

    #[test]
    fn the_measures_keep_each_seed() {
        let m = runs().measures();
        assert_eq!(m.experiment, "read-rules");
        assert_eq!(m.measures.len(), 12 + 2 * 5 + 4);
        assert_eq!(m.value("mix70.p999_off_us"), Some(407.0));
        assert_eq!(m.measures["mix70.p999_off_us"].spread, Some((394.0, 420.0, 2)));
        assert_eq!(m.value("mix30.p99_on_us"), Some(235.0));
        assert_eq!(m.value("mix30.extra_per_1000"), Some(0.25));
        assert_eq!(m.value("ssdgc.p99_on_us"), Some(235.0));
        assert_eq!(m.value("prio_off.collecting_share"), Some(0.33));
        assert_eq!(m.measures["prio_on.front_us"].unit, "µs");
        assert_eq!(m.measures["prio_on.idle_share"].unit, "%");
    }
}
