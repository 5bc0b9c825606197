//! `swan sim --ssd zn540|pm1731a`: an array over zoned SSDs, one segment per zone. What the
//! flags mean there: `--ssd-capacity` is how many whole zones each SSD has, `--segment`
//! (at most a zone's capacity) defaults to a whole zone, and the conventional SSD's
//! FTL flags are refused rather than ignored.

use crate::sim_cmd::SimArgs;
use anyhow::bail;
use swan_args::units::format_size;
use swan_core::scheme::ArraySpec;
use swan_models::ssd::PAGE_BYTES;
use swan_models::zns::{zns_preset, ZnsConfig};

/// The zoned SSD `--ssd` names, shaped by the flags that apply to it; `None` for a
/// conventional preset.
pub(crate) fn zoned_model(args: &SimArgs) -> anyhow::Result<Option<ZnsConfig>> {
    let Some(preset) = zns_preset(&args.ssd) else { return Ok(None) };
    let conventional = [
        ("--ssd-gc-preemptible", args.ssd_gc_preemptible.is_some()),
        ("--ssd-write-buffer", args.ssd_write_buffer.is_some()),
        ("--ssd-op", args.ssd_op.is_some()),
        ("--ssd-layout", args.ssd_layout.is_some()),
        ("--ssd-gc-frontier", args.ssd_gc_frontier.is_some()),
        ("--ssd-pages-per-block", args.ssd_pages_per_block.is_some()),
        ("--array", args.array.is_some()),
    ];
    if let Some((flag, _)) = conventional.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} shapes a conventional SSD or array; --ssd {} is a zoned SSD (no FTL, no GC of its own)",
            args.ssd
        );
    }
    let zone_bytes = preset.zones.capacity_blocks * PAGE_BYTES;
    let zones = args.ssd_capacity / zone_bytes;
    if zones == 0 {
        bail!(
            "--ssd-capacity {} holds no whole {} zone ({} MiB writable); give at least that",
            format_size(args.ssd_capacity),
            preset.name,
            zone_bytes >> 20
        );
    }
    let Ok(zones) = u32::try_from(zones) else { bail!("--ssd-capacity is too large") };
    let mut model = preset.with_zones(zones.min(preset.zones.zones));
    model.suspension = args.ssd_suspension.unwrap_or(model.suspension);
    model.reads_before_write_back = args.ssd_reads_first.unwrap_or(model.reads_before_write_back);
    Ok(Some(model))
}

/// The array the flags describe over `zoned`: one segment per zone of each member.
pub(crate) fn zoned_array_spec(args: &SimArgs, zoned: &ZnsConfig) -> anyhow::Result<ArraySpec> {
    let capacity = zoned.zones.capacity_blocks;
    let segment = args.segment.unwrap_or(capacity);
    if segment == 0 || segment > capacity {
        bail!(
            "--segment {} does not fit a {} zone ({} MiB writable): a segment is one zone per SSD",
            format_size(segment * PAGE_BYTES),
            zoned.name,
            (capacity * PAGE_BYTES) >> 20
        );
    }
    let Ok(segment_rows) = u32::try_from(segment) else { bail!("--segment is too large") };
    let mut spec = args.array_spec_with(u64::from(zoned.zones.zones) * segment, segment_rows)?;
    spec.tuning.zoned_members = true;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> SimArgs {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            sim: SimArgs,
        }
        let mut argv = vec!["swan-sim"];
        argv.extend(extra);
        Cli::try_parse_from(argv).expect("flags parse").sim
    }

    #[test]
    fn a_zoned_preset_takes_whole_zones_of_the_capacity_and_a_zone_per_segment() {
        let a = args(&["--ssd", "pm1731a", "--ssd-capacity", "1000MiB", "--scheme", "swan0"]);
        let z = zoned_model(&a).unwrap().unwrap();
        assert_eq!(z.zones.zones, 10, "1000 MiB holds ten 96 MiB zones");
        let spec = zoned_array_spec(&a, &z).unwrap();
        assert_eq!((spec.segment_rows, spec.member_blocks), (96 * 256, 10 * 96 * 256));
        assert!(spec.tuning.zoned_members, "the scheme must write each member in block order");
        assert!(zoned_model(&args(&["--ssd", "sata850pro"])).unwrap().is_none());
    }

    #[test]
    fn flags_of_a_conventional_ssd_or_a_zone_too_small_are_refused_with_the_reason() {
        let e = zoned_model(&args(&["--ssd", "zn540", "--ssd-op", "0.1"])).unwrap_err().to_string();
        assert!(e.contains("--ssd-op shapes a conventional SSD"), "{e}");
        let e = zoned_model(&args(&["--ssd", "zn540"])).unwrap_err().to_string();
        assert!(e.contains("holds no whole zn540 zone (1077 MiB writable)"), "{e}");
        let a = args(&["--ssd", "pm1731a", "--ssd-capacity", "1GiB", "--segment", "128MiB"]);
        let e = zoned_array_spec(&a, &zoned_model(&a).unwrap().unwrap()).unwrap_err().to_string();
        assert!(e.contains("does not fit a pm1731a zone (96 MiB writable)"), "{e}");
    }
}
