//! `swan zones`: a zoned member's zones as its device reports them (what `blkzone report`
//! shows of a kernel zoned device), for an operator looking at where the write pointers
//! are, before or while the array serves.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use swan_server::member::{Member, OpenOptions, BLOCK};

#[derive(clap::Args, Debug)]
pub struct ZonesArgs {
    /// A member file made by `swan create --zone-size` (an emulated zoned device).
    pub member: PathBuf,
    /// One JSON object instead of the table: the layout, then every zone.
    #[arg(long)]
    pub json: bool,
    /// Only the zones that are not empty.
    #[arg(long)]
    pub written: bool,
}

pub fn zones(a: &ZonesArgs) -> Result<()> {
    let m = Member::open(&a.member, OpenOptions { direct: false, read_only: true })
        .with_context(|| format!("opening {}", a.member.display()))?;
    let Some(layout) = m.zoned() else {
        bail!("{} is not a zoned device (swan create --zone-size makes emulated ones)", a.member.display());
    };
    let report = m.report_zones()?;
    let mib = |blocks: u64| blocks as f64 * BLOCK as f64 / (1 << 20) as f64;
    let shown = report.iter().enumerate().filter(|(_, z)| !a.written || z.write_pointer > 0);
    if a.json {
        let zones: Vec<serde_json::Value> = shown
            .map(|(i, z)| {
                serde_json::json!({
                    "zone": i,
                    "start_block": layout.zone_start(i as u32),
                    "condition": format!("{:?}", z.condition),
                    "write_pointer": z.write_pointer,
                    "written": z.written,
                })
            })
            .collect();
        let out = serde_json::json!({
            "conventional_blocks": layout.conventional_blocks,
            "zones": layout.zones.zones,
            "zone_blocks": layout.zones.zone_blocks,
            "capacity_blocks": layout.zones.capacity_blocks,
            "max_open": layout.zones.max_open,
            "max_active": layout.zones.max_active,
            "report": zones,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let count = |c| report.iter().filter(|z| z.condition == c).count();
    use swan_models::zns::zones::ZoneCondition::*;
    println!(
        "{}: {:.0} MiB conventional, {} zones of {:.0} MiB ({:.0} MiB writable); {} empty, {} open, {} closed, {} full",
        a.member.display(),
        mib(layout.conventional_blocks),
        layout.zones.zones,
        mib(layout.zones.zone_blocks),
        mib(layout.zones.capacity_blocks),
        count(Empty),
        count(ImplicitlyOpen) + count(ExplicitlyOpen),
        count(Closed),
        count(Full)
    );
    println!("{:>6} {:>12} {:>16} {:>12} {:>12}", "zone", "start block", "condition", "pointer", "written");
    for (i, z) in shown {
        println!(
            "{i:>6} {:>12} {:>16} {:>12} {:>12}",
            layout.zone_start(i as u32),
            format!("{:?}", z.condition),
            z.write_pointer,
            z.written
        );
    }
    Ok(())
}
