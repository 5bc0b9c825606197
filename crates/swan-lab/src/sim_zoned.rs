//! `swan sim --ssd zn540|pm1731a`: an array over zoned SSDs, each segment over one zone of
//! each SSD or, with `--zones-per-segment`, several. What the flags mean there:
//! `--ssd-capacity` is how many whole zones each SSD has, `--segment` defaults to the whole
//! zones a segment spans, and the conventional SSD's FTL flags are refused rather than
//! ignored.

use crate::sim_args::SimArgs;
use anyhow::bail;
use swan_args::units::format_size;
use swan_models::ssd::PAGE_BYTES;
use swan_models::zns::zones::ZoneGeometry;
use swan_models::zns::{zns_preset, ZnsConfig};
use swan_server::member::ZonedLayout;
use swan_sim::engine::{AppendGroups, ZonedSpec};
use swan_sim::zoned_array::ZonePrimitive;

/// The zoned SSD `--ssd` names, shaped by the flags that apply to it; `None` for a
/// conventional preset. `served`: the zoned members of the array `--array` names, whose
/// zones the model then has.
pub(crate) fn zoned_model(args: &SimArgs, served: Option<ZonedLayout>) -> anyhow::Result<Option<ZonedSpec>> {
    match (zns_preset(&args.ssd), served, &args.array) {
        (None, Some(_), Some(array)) => bail!(
            "--array {}: the array's members are zoned; give --ssd {}, the zoned SSD to simulate them as \
             (--ssd {} is conventional)",
            array.display(),
            swan_models::zns::ZNS_PRESET_NAMES.join(" or --ssd "),
            args.ssd
        ),
        (Some(_), None, Some(array)) => {
            bail!("--array {}: the array's members are not zoned; --ssd {} is a zoned SSD", array.display(), args.ssd)
        }
        (Some(preset), Some(layout), _) => return served_model(args, &preset, &layout).map(Some),
        _ => {}
    }
    let Some(preset) = zns_preset(&args.ssd) else {
        if args.zoned.zones_per_segment.is_some()
            || args.zoned.zone_stripe.is_some()
            || args.zoned.zone_primitive.is_some()
            || args.zoned.append_group.is_some()
            || args.zoned.append_in_flight.is_some()
        {
            bail!(
                "--zones-per-segment, --zone-stripe, --zone-primitive, --append-group and --append-in-flight lay segments over a zoned SSD's zones; --ssd {} is not zoned",
                args.ssd
            );
        }
        return Ok(None);
    };
    let conventional = [
        ("--ssd-gc-preemptible", args.ssd_gc_preemptible.is_some()),
        ("--ssd-write-buffer", args.ssd_write_buffer.is_some()),
        ("--ssd-op", args.ssd_op.is_some()),
        ("--ssd-layout", args.ssd_layout.is_some()),
        ("--ssd-gc-frontier", args.ssd_gc_frontier.is_some()),
        ("--ssd-pages-per-block", args.ssd_pages_per_block.is_some()),
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
    let zones_per_segment = args.zoned.zones_per_segment.unwrap_or(1);
    if zones_per_segment == 0 {
        bail!("--zones-per-segment must be at least 1");
    }
    // RAIZN's partial-parity log takes zones of its own beside the capacity the segments
    // take, as its metadata zones do on a drive (5 of a ZN540's 904): a scaled-down drive
    // would otherwise lose a large share of its segments to them.
    let log_zones = if args.scheme.partial_parity_log {
        swan_core::scheme::PARTIAL_PARITY_LOG_SEGMENTS.saturating_mul(zones_per_segment)
    } else {
        0
    };
    let zones = zones.min(preset.zones.zones.saturating_sub(log_zones)).saturating_add(log_zones);
    let mut model = preset.with_zones(zones);
    model.suspension = args.ssd_suspension.unwrap_or(model.suspension);
    model.reads_before_write_back = args.ssd_reads_first.unwrap_or(model.reads_before_write_back);
    let stripe = args.zoned.zone_stripe.unwrap_or(1);
    let Ok(stripe_blocks) = u32::try_from(stripe) else { bail!("--zone-stripe is too large") };
    if stripe_blocks == 0 {
        bail!("--zone-stripe must be at least one 4 KiB block");
    }
    let primitive = args.zoned.zone_primitive.unwrap_or_default();
    let groups = append_groups(args, primitive)?;
    Ok(Some(ZonedSpec { ssd: model, zones_per_segment, stripe_blocks, primitive, groups }))
}

/// The zoned SSD `preset` over the zones of served members laid out as `layout`, as `swan
/// serve --emulate` puts it in front of each (`swan-server/src/emulate/zoned.rs`): its
/// NAND and command times over the members' zones, one zone a segment, by Zone Write. The
/// members' metadata blocks (their conventional zones) are zones of the model the scheme
/// never writes: the simulator does not time the server's metadata.
fn served_model(args: &SimArgs, preset: &ZnsConfig, layout: &ZonedLayout) -> anyhow::Result<ZonedSpec> {
    let z = &args.zoned;
    if z.zones_per_segment.is_some()
        || z.zone_stripe.is_some()
        || z.append_group.is_some()
        || z.append_in_flight.is_some()
    {
        bail!("--array lays its segments over the members' zones as `swan create` did: --zones-per-segment, --zone-stripe, --append-group and --append-in-flight do not apply");
    }
    if z.zone_primitive.is_some_and(|p| p != ZonePrimitive::Write) {
        bail!("the server writes its zoned members by Zone Write: --zone-primitive append does not apply to --array");
    }
    let zone_blocks = layout.zones.zone_blocks;
    if !layout.conventional_blocks.is_multiple_of(zone_blocks) {
        bail!("the members' metadata area is not whole zones: not an array `swan create` made");
    }
    let zones = ZoneGeometry {
        zones: u32::try_from(layout.conventional_blocks / zone_blocks)?.saturating_add(layout.zones.zones),
        max_open: preset.zones.max_open,
        max_active: preset.zones.max_active,
        ..layout.zones
    };
    let mut ssd = preset.with_geometry(zones);
    ssd.suspension = args.ssd_suspension.unwrap_or(ssd.suspension);
    ssd.reads_before_write_back = args.ssd_reads_first.unwrap_or(ssd.reads_before_write_back);
    Ok(ZonedSpec { ssd, zones_per_segment: 1, stripe_blocks: 1, primitive: ZonePrimitive::Write, groups: None })
}

/// ZapRAID's group layout, if `--scheme zapraid` or `--append-group` asks for it.
fn append_groups(args: &SimArgs, primitive: ZonePrimitive) -> anyhow::Result<Option<AppendGroups>> {
    let z = &args.zoned;
    if !args.scheme.append_groups && z.append_group.is_none() {
        if z.append_in_flight.is_some() {
            bail!("--append-in-flight bounds the appends of a group layout: give --append-group or --scheme zapraid");
        }
        return Ok(None);
    }
    if primitive == ZonePrimitive::Write {
        bail!("a group layout (--scheme zapraid, --append-group) orders Zone Appends; --zone-primitive write keeps one write per zone in flight already");
    }
    let stripes = z.append_group.unwrap_or(AppendGroups::ZAPRAID.stripes);
    let in_flight = z.append_in_flight.unwrap_or(AppendGroups::ZAPRAID.in_flight);
    if stripes == 0 || in_flight == 0 {
        bail!("--append-group and --append-in-flight must be at least 1");
    }
    Ok(Some(AppendGroups { stripes, in_flight }))
}

/// How the flags lay the array over `zoned`: each member's blocks and a segment's blocks
/// per member, every segment over `zones_per_segment` zones.
pub(crate) fn zoned_layout(args: &SimArgs, zoned: &ZonedSpec) -> anyhow::Result<(u64, u32)> {
    let (capacity, k) = (zoned.ssd.zones.capacity_blocks, u64::from(zoned.zones_per_segment));
    // The default fills each zone's capacity with whole stripe units.
    let unit = if k == 1 { 1 } else { u64::from(zoned.stripe_blocks) };
    let segment = args.segment.unwrap_or(capacity / unit * unit * k);
    if segment == 0 || segment > capacity * k {
        bail!(
            "--segment {} does not fit {k} {} zone(s) ({} MiB writable each): a segment spans --zones-per-segment zones per SSD",
            format_size(segment * PAGE_BYTES),
            zoned.ssd.name,
            (capacity * PAGE_BYTES) >> 20
        );
    }
    let segments = u64::from(zoned.ssd.zones.zones) / k;
    if segments == 0 {
        bail!("--zones-per-segment {k} is more than the {} zones each SSD has", zoned.ssd.zones.zones);
    }
    let Ok(segment_rows) = u32::try_from(segment) else { bail!("--segment is too large") };
    Ok((segments * segment, segment_rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn zoned_model_of(args: &SimArgs) -> anyhow::Result<Option<ZonedSpec>> {
        zoned_model(args, None)
    }

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
        let z = zoned_model_of(&a).unwrap().unwrap();
        assert_eq!(z.ssd.zones.zones, 10, "1000 MiB holds ten 96 MiB zones");
        assert_eq!(zoned_layout(&a, &z).unwrap(), (10 * 96 * 256, 96 * 256));
        let cfg = a.to_config().unwrap();
        assert!(cfg.array.tuning.zoned_members, "the scheme must write each member in block order");
        assert!(zoned_model_of(&args(&["--ssd", "sata850pro"])).unwrap().is_none());
        // Four zones a segment, page by page: ten zones make two segments of four.
        let a = args(&["--ssd", "pm1731a", "--ssd-capacity", "1000MiB", "--zones-per-segment", "4"]);
        let z = zoned_model_of(&a).unwrap().unwrap();
        assert_eq!((z.zones_per_segment, z.stripe_blocks), (4, 1));
        assert_eq!(zoned_layout(&a, &z).unwrap(), (2 * 4 * 96 * 256, 4 * 96 * 256));
    }

    #[test]
    fn raizn_is_lograid5_with_its_partial_parity_log_over_zoned_ssds_only() {
        let cfg = args(&[
            "--ssd",
            "pm1731a",
            "--ssd-capacity",
            "2GiB",
            "--scheme",
            "raizn",
            "--rgroups",
            "1",
            "--ssds-per-rgroup",
            "4",
        ])
        .to_config()
        .unwrap();
        assert_eq!(cfg.array.kind.to_string(), "lograid5");
        assert!(cfg.array.tuning.partial_parity_log);
        assert_eq!(cfg.scheme_label(), "raizn");
        // The log's two zones come beside the 21 the capacity holds, and the working set is a
        // share of the segments' blocks.
        let g = cfg.array.log_config().unwrap().unwrap().geometry;
        assert_eq!(g.segments_per_group, 21);
        assert_eq!(cfg.zoned.as_ref().unwrap().ssd.zones.zones, 23);
        // A footprint counts the segments' capacity, so RAIZN writes what Log-RAID5 writes.
        let flags = ["--ssd", "pm1731a", "--ssd-capacity", "2GiB", "--rgroups", "1", "--ssds-per-rgroup", "4"];
        let stop = |scheme: &str| {
            let cfg = args(&[&flags[..], &["--footprint", "2", "--scheme", scheme]].concat()).to_config().unwrap();
            cfg.stop.write_bytes
        };
        assert_eq!(stop("raizn"), stop("lograid5"));
        assert_eq!(stop("lograid5"), Some((2 * 4 * 21 * 96) << 20));
        let e = args(&["--scheme", "raizn"]).to_config().unwrap_err().to_string();
        assert!(e.contains("--scheme raizn is an array of zoned SSDs"), "{e}");
        let e = crate::sim_args::parse_scheme("raizm").unwrap_err();
        assert!(e.ends_with(", raizn, zapraid"), "{e}");
    }

    #[test]
    fn zapraid_is_lograid5_appending_in_its_groups_over_zoned_ssds_only() {
        let zoned = ["--ssd", "zn540", "--ssd-capacity", "16GiB", "--rgroups", "1", "--ssds-per-rgroup", "4"];
        let cfg = args(&[&zoned[..], &["--scheme", "zapraid"]].concat()).to_config().unwrap();
        assert_eq!(cfg.array.kind.to_string(), "lograid5");
        assert!(!cfg.array.tuning.partial_parity_log);
        let z = cfg.zoned.as_ref().unwrap();
        assert_eq!((z.primitive, z.groups), (ZonePrimitive::Append, Some(AppendGroups::ZAPRAID)));
        assert_eq!(cfg.scheme_label(), "zapraid");
        let tuned = [&zoned[..], &["--scheme", "zapraid", "--append-group", "64", "--append-in-flight", "4"]].concat();
        let z = args(&tuned).to_config().unwrap().zoned.unwrap();
        assert_eq!(z.groups, Some(AppendGroups { stripes: 64, in_flight: 4 }));
        // Plain Log-RAID5 appends with no groups, and keeps its name.
        let cfg = args(&[&zoned[..], &["--scheme", "lograid5"]].concat()).to_config().unwrap();
        assert_eq!((cfg.zoned.as_ref().unwrap().groups, cfg.scheme_label().as_str()), (None, "lograid5"));
        let refused = |extra: &[&str]| args(&[&zoned[..], extra].concat()).to_config().unwrap_err().to_string();
        let e = refused(&["--scheme", "zapraid", "--zone-primitive", "write"]);
        assert!(e.contains("orders Zone Appends"), "{e}");
        let e = refused(&["--append-in-flight", "4"]);
        assert!(e.contains("give --append-group or --scheme zapraid"), "{e}");
        let e = refused(&["--append-group", "0"]);
        assert!(e.contains("must be at least 1"), "{e}");
        let e = args(&["--scheme", "zapraid"]).to_config().unwrap_err().to_string();
        assert!(e.contains("--scheme zapraid is an array of zoned SSDs"), "{e}");
        let e = args(&["--append-group", "8"]).to_config().unwrap_err().to_string();
        assert!(e.contains("--ssd sata850pro is not zoned"), "{e}");
    }

    #[test]
    fn flags_of_a_conventional_ssd_or_a_zone_too_small_are_refused_with_the_reason() {
        let e = zoned_model_of(&args(&["--ssd", "zn540", "--ssd-op", "0.1"])).unwrap_err().to_string();
        assert!(e.contains("--ssd-op shapes a conventional SSD"), "{e}");
        let e = zoned_model_of(&args(&["--ssd", "zn540"])).unwrap_err().to_string();
        assert!(e.contains("holds no whole zn540 zone (1077 MiB writable)"), "{e}");
        let a = args(&["--ssd", "pm1731a", "--ssd-capacity", "1GiB", "--segment", "128MiB"]);
        let e = zoned_layout(&a, &zoned_model_of(&a).unwrap().unwrap()).unwrap_err().to_string();
        assert!(e.contains("does not fit 1 pm1731a zone(s) (96 MiB writable each)"), "{e}");
        let e = zoned_model_of(&args(&["--zones-per-segment", "2"])).unwrap_err().to_string();
        assert!(e.contains("--ssd sata850pro is not zoned"), "{e}");
    }
}
