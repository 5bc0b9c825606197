//! `swan repro zoned`: SWAN, Log-RAID, RAIZN and ZapRAID over zoned SSDs beside the same log
//! schemes (and in-place RAID5) over the conventional 850 PRO model, under one workload: the
//! comparison no paper made (issue 48). Every run is a `swan sim` command, printed, so any
//! row can be rerun on its own; three seeds each. No paper made this comparison, so there is
//! no claim to judge (ZapRAID's is `swan repro zapraid`'s); the measures are recorded.

use crate::claims::Measures;
use crate::repro::args::ReproArgs;
use crate::repro::{mean, min_max};
use crate::runner::{default_parallelism, run_all, Job};
use crate::sim_cmd::SimArgs;
use std::path::PathBuf;
use swan_sim::output::RunSummary;

/// The drives, each with what `swan sim` is told of it: preset, capacity per SSD, zones a
/// segment spans (conventional: none).
const DRIVES: [(&str, &str, Option<u32>); 4] = [
    ("sata850pro", "2GiB", None),
    ("pm1731a", "2GiB", Some(1)),
    ("pm1731a", "16GiB", Some(8)),
    ("zn540", "16GiB", Some(1)),
];

/// The schemes; in-place RAID runs on the conventional drive only, RAIZN and ZapRAID on
/// zoned ones only.
const SCHEMES: [&str; 8] = ["swan0", "lograid0", "swan4", "lograid4", "lograid5", "raizn", "zapraid", "raid5"];

/// Whether `scheme` runs on `drive`: a zone takes no overwrite, and RAIZN and ZapRAID are
/// arrays of zones.
fn runs_on(drive: (&str, &str, Option<u32>), scheme: &str) -> bool {
    match scheme {
        "raid5" => drive.2.is_none(),
        "raizn" | "zapraid" => drive.2.is_some(),
        _ => true,
    }
}

/// The workload and shape every run shares: `swan sim`'s 8 KiB random writes 64 deep over
/// 60 % of the data space, 3 R-groups × 2 SSDs, until twice the raw capacity is written.
const COMMON: [&str; 6] = ["--rgroups", "3", "--ssds-per-rgroup", "2", "--footprint", "2"];

fn flags(drive: (&str, &str, Option<u32>), scheme: &str, seed: u64) -> Vec<String> {
    let (ssd, capacity, zones) = drive;
    let mut f: Vec<String> = ["--scheme", scheme, "--ssd", ssd, "--ssd-capacity", capacity].map(String::from).into();
    if let Some(k) = zones {
        f.extend(["--zones-per-segment".into(), k.to_string()]);
    }
    f.extend(COMMON.map(String::from));
    f.extend(["--seed".into(), seed.to_string()]);
    f
}

fn row_name(drive: (&str, &str, Option<u32>)) -> String {
    match drive {
        (ssd, _, None) => ssd.to_string(),
        (ssd, _, Some(k)) => format!("{ssd} x{k}"),
    }
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let seeds = args.seeds.unwrap_or(3);
    if seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("zoned"));
    let mut jobs = Vec::new();
    let mut cells = Vec::new();
    for drive in DRIVES {
        for scheme in SCHEMES {
            if !runs_on(drive, scheme) {
                continue;
            }
            let first = jobs.len();
            for seed in args.seed..args.seed + seeds {
                let f = flags(drive, scheme, seed);
                let name = format!("{}-{scheme}-s{seed}", row_name(drive).replace(' ', "-"));
                jobs.push(Job { dir: out.join(&name), name, cfg: SimArgs::config_of(&f)? });
            }
            cells.push((drive, scheme, first..jobs.len()));
        }
    }
    println!(
        "swan repro zoned: {} runs, each `swan sim --scheme S --ssd D --ssd-capacity C [--zones-per-segment K] {} --seed N` \
         for seeds {}..={} (results in {})",
        jobs.len(),
        COMMON.join(" "),
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let mut m = Measures::new("zoned");
    println!(
        "\nWrite MB/s after GC onset (mean over seeds, [min–max]), its CV over 1 s intervals, array and device WAF"
    );
    println!(
        "{:<16} {:<10} {:>26} {:>8} {:>8} {:>8}",
        "drive", "scheme", "write MB/s after GC", "CV", "WAF-a", "WAF-d"
    );
    for (drive, scheme, seeds) in cells {
        let runs = &summaries[seeds];
        let of = |f: &dyn Fn(&RunSummary) -> Option<f64>| runs.iter().filter_map(f).collect::<Vec<f64>>();
        let mbps = of(&|s| s.user_write_mbps_after_gc_mean);
        let cv = of(&|s| s.user_write_mbps_after_gc_cv);
        let (waf_a, waf_d) = (of(&|s| s.waf_array), of(&|s| s.waf_ssd));
        let (lo, hi) = min_max(&mbps);
        println!(
            "{:<16} {:<10} {:>9.1} [{:>6.1}–{:>6.1}] {:>7.1}% {:>8.3} {:>8.3}",
            row_name(drive),
            scheme,
            mean(&mbps),
            lo,
            hi,
            100.0 * mean(&cv),
            mean(&waf_a),
            mean(&waf_d)
        );
        let key = format!("{}.{scheme}", row_name(drive).replace(' ', "_"));
        let what = format!("{scheme} over {}", row_name(drive));
        m.set_seeds(
            &format!("{key}.write_mbps_after_gc"),
            &format!("{what}: write MB/s after GC onset"),
            "MB/s",
            &mbps,
        );
        m.set_seeds(&format!("{key}.cv_after_gc"), &format!("{what}: CV of 1 s intervals after GC onset"), "", &cv);
        m.set_seeds(&format!("{key}.waf_array"), &format!("{what}: array WAF"), "", &waf_a);
        m.set_seeds(&format!("{key}.waf_ssd"), &format!("{what}: device WAF"), "", &waf_d);
    }
    crate::claims::publish(&out, &m)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_is_a_swan_sim_command_that_builds() {
        for drive in DRIVES {
            for scheme in SCHEMES {
                if !runs_on(drive, scheme) {
                    continue;
                }
                let cfg = SimArgs::config_of(&flags(drive, scheme, 1)).unwrap();
                assert_eq!(cfg.zoned.is_some(), drive.2.is_some(), "{drive:?} {scheme}");
                assert_eq!(cfg.array.members(), 6);
            }
        }
    }
}
