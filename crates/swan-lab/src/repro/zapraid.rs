//! `swan repro zapraid`: ZapRAID's headline, Zone Append's write throughput against Zone
//! Write's on the same log-structured RAID-5 (Wang and Lee, APSys '23: "a 2.34x write
//! throughput gain compared with using the Zone Write primitive"). The abstract gives no
//! setting; ZapRAID's public scripts give one (RAID-5, three data chunks and one parity
//! over four drives hard-coded as ZN540s, 4 KiB chunks, fio 4 KiB random writes 16 deep,
//! one open segment), and its extended version runs the same 64 deep. swan runs Log-RAID5
//! over four zn540 models the same way before any GC, three seeds, three ways: by Zone
//! Write, by Zone Append with no layout (what appends alone give), and as ZapRAID
//! (`--scheme zapraid`: appends in its groups); and one drive alone, to show what the
//! primitive is worth there.

use crate::claims::Measures;
use crate::repro::args::ReproArgs;
use crate::repro::{mean, min_max};
use crate::runner::{default_parallelism, run_all, Job};
use crate::sim_cmd::SimArgs;
use std::path::PathBuf;
use swan_models::zns::{presets::zn540, ZnsSsd};
use swan_models::{IoClass, Nanos};

/// The client depths: ZapRAID's APSys scripts, then its extended version's.
const DEPTHS: [u32; 2] = [16, 64];

/// What every run shares: 4 KiB random writes over a Log-RAID5 of four zn540s large enough
/// (60 zones each) that 5 s of writing never starts GC, as ZapRAID's 64 GiB never does on
/// four 4 TB drives.
const COMMON: [&str; 14] = [
    "--rgroups",
    "1",
    "--ssds-per-rgroup",
    "4",
    "--ssd",
    "zn540",
    "--ssd-capacity",
    "64GiB",
    "--bs",
    "4KiB",
    "--working-set",
    "0.4",
    "--time",
    "5",
];

/// The ways the array writes its zones: (key, flags, what the row is).
const ARRAYS: [(&str, [&str; 4], &str); 3] = [
    ("write", ["--scheme", "lograid5", "--zone-primitive", "write"], "Zone Write"),
    ("append", ["--scheme", "lograid5", "--zone-primitive", "append"], "Zone Append, no group layout"),
    ("zapraid", ["--scheme", "zapraid", "--zone-primitive", "append"], "ZapRAID, Zone Append in groups"),
];

fn flags(array: [&str; 4], depth: u32, seed: u64) -> Vec<String> {
    let mut f: Vec<String> = array.map(String::from).into();
    f.extend(COMMON.map(String::from));
    f.extend(["--iodepth".into(), depth.to_string(), "--seed".into(), seed.to_string()]);
    f
}

/// One zn540 model alone, 4 KiB at a time into one zone: (Zone Write one in flight, Zone
/// Append four in flight) in MiB/s, the two settings of ZapRAID's motivating experiment.
pub(crate) fn one_drive_mib_s() -> (f64, f64) {
    const OPS: u64 = 20_000;
    let mib_s = |ns: Nanos| (OPS * 4096) as f64 / 1048576.0 * 1e9 / ns as f64;
    let mut ssd = ZnsSsd::new(zn540().with_zones(1)).expect("the zn540 preset is valid");
    let mut now = 0;
    for block in 0..OPS {
        now = ssd.write(now, block, 1, IoClass::User).expect("a zone written in order");
    }
    let write = mib_s(now);
    let mut ssd = ZnsSsd::new(zn540().with_zones(1)).expect("the zn540 preset is valid");
    let mut free: [Nanos; 4] = [0; 4];
    for _ in 0..OPS {
        let slot = (0..4).min_by_key(|&i| free[i]).expect("four slots");
        free[slot] = ssd.append(free[slot], 0, 1, IoClass::User).expect("a zone with room").0;
    }
    (write, mib_s(free.into_iter().max().unwrap_or(1)))
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let seeds = args.seeds.unwrap_or(3);
    if seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("zapraid"));
    let mut jobs = Vec::new();
    let mut cells = Vec::new();
    for depth in DEPTHS {
        for (key, array, what) in ARRAYS {
            let first = jobs.len();
            for seed in args.seed..args.seed + seeds {
                let name = format!("qd{depth}-{key}-s{seed}");
                jobs.push(Job { dir: out.join(&name), name, cfg: SimArgs::config_of(&flags(array, depth, seed))? });
            }
            cells.push((depth, key, what, first..jobs.len()));
        }
    }
    println!(
        "swan repro zapraid: {} runs, each `swan sim {{{}}} {} --iodepth D --seed N` for seeds {}..={} (results in {})",
        jobs.len(),
        ARRAYS.map(|(_, a, _)| a.join(" ")).join(" | "),
        COMMON.join(" "),
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let mut m = Measures::new("zapraid");
    let (write, append) = one_drive_mib_s();
    println!("\nOne zn540 model, one zone, 4 KiB: Zone Write one in flight {write:.0} MiB/s, Zone Append four in flight {append:.0} MiB/s ({:.2}x)", append / write);
    m.set("drive.write_mib_s", "one drive, Zone Write 4 KiB one in flight", "MiB/s", write);
    m.set("drive.append_mib_s", "one drive, Zone Append 4 KiB four in flight", "MiB/s", append);
    m.set("drive.append_over_write", "one drive, Append ÷ Write", "", append / write);
    println!("\nLog-RAID5 (3+1) over four zn540s, 4 KiB random writes: user write MB/s (mean over seeds, [min–max]) and p99 latency");
    println!("{:>6} {:<8} {:>24} {:>10}", "depth", "array", "write MB/s", "p99 µs");
    let mut rates = std::collections::BTreeMap::new();
    for (depth, key, what, range) in cells {
        let runs = &summaries[range];
        let mbps: Vec<f64> = runs.iter().map(|s| s.user_write_mbps_mean).collect();
        let p99: Vec<f64> = runs.iter().filter_map(|s| s.write_latency_us.as_ref()).map(|l| l.p99 as f64).collect();
        let (lo, hi) = min_max(&mbps);
        println!("{depth:>6} {key:<8} {:>9.1} [{lo:>6.1}–{hi:>6.1}] {:>10.0}", mean(&mbps), mean(&p99));
        let what = format!("{what}, depth {depth}");
        m.set_seeds(&format!("qd{depth}.{key}.write_mbps"), &format!("{what}: write MB/s"), "MB/s", &mbps);
        m.set_seeds(&format!("qd{depth}.{key}.p99_us"), &format!("{what}: write p99"), "µs", &p99);
        rates.insert((depth, key), mbps);
    }
    for depth in DEPTHS {
        for (key, name) in [("append", "Zone Append"), ("zapraid", "ZapRAID")] {
            let ratio: Vec<f64> =
                rates[&(depth, key)].iter().zip(&rates[&(depth, "write")]).map(|(a, w)| a / w).collect();
            println!("depth {depth}: {name} ÷ Zone Write {:.3}", mean(&ratio));
            m.set_seeds(
                &format!("qd{depth}.{key}_over_write"),
                &format!("{name} ÷ Zone Write, depth {depth}"),
                "",
                &ratio,
            );
        }
    }
    crate::claims::publish(&out, &m)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_sim::zoned_array::ZonePrimitive;

    #[test]
    fn every_run_is_a_swan_sim_command_that_builds() {
        for depth in DEPTHS {
            for (key, array, _) in ARRAYS {
                let cfg = SimArgs::config_of(&flags(array, depth, 1)).unwrap();
                let zoned = cfg.zoned.as_ref().expect("zoned members");
                let primitive = if key == "write" { ZonePrimitive::Write } else { ZonePrimitive::Append };
                assert_eq!(
                    (zoned.primitive, zoned.groups.is_some(), cfg.array.members()),
                    (primitive, key == "zapraid", 4)
                );
                assert_eq!(cfg.array.kind.to_string(), "lograid5");
            }
        }
    }

    #[test]
    fn one_drive_gives_the_characterisations_figures() {
        // 333 MiB/s one write in flight, 516 four appends (the preset's calibration).
        let (write, append) = one_drive_mib_s();
        assert!((write - 333.0).abs() < 333.0 * 0.05 && (append - 516.0).abs() < 516.0 * 0.05, "{write} {append}");
    }
}
