//! What a zoned SSD model delivers, measured on the model as [`crate::ssd::bandwidth`]
//! measures a conventional one: 128 KiB operations on a small copy of the device. A write
//! stream fills one zone at depth one, since a zone takes its writes in order and Linux's
//! zoned write lock lets one at a time reach it; reads of that zone go 32 deep. On a
//! small-zone drive this is one die's rate, not the drive's: an array must keep several
//! zones open per drive to have more.

use super::{ZnsConfig, ZnsSsd};
use crate::{DevOpKind, IoClass, Nanos};

const OP_PAGES: u32 = 32;

/// Sequential (read, write) bandwidth of one zone of `cfg`'s model in MB/s (10^6 B/s).
pub fn zone_sequential_mbps(cfg: &ZnsConfig) -> (f64, f64) {
    let mut ssd = ZnsSsd::new(cfg.with_zones(1)).expect("zone_sequential_mbps needs a valid zoned SSD config");
    let ops = cfg.zones.capacity_blocks.min(1 << 16) / u64::from(OP_PAGES);
    let mut now = 0;
    for i in 0..ops {
        now = ssd.write(now, i * u64::from(OP_PAGES), OP_PAGES, IoClass::User).expect("a zone written in order");
    }
    let write = mbps(ops, now);
    let read = crate::ssd::bandwidth::run(&mut ssd, DevOpKind::Read, ops * u64::from(OP_PAGES));
    (read, write)
}

fn mbps(ops: u64, ns: Nanos) -> f64 {
    (ops * u64::from(OP_PAGES) * crate::ssd::PAGE_BYTES) as f64 * 1e3 / ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zns::presets::{pm1731a, zn540};

    #[test]
    fn one_zone_writes_at_the_drive_rate_on_zn540_and_one_die_rate_on_pm1731a() {
        let (zn_read, zn_write) = zone_sequential_mbps(&zn540());
        assert!((zn_write - 1230.0).abs() < 40.0, "zn540 zone write {zn_write:.0} MB/s");
        assert!(zn_read > zn_write, "zn540 zone read {zn_read:.0} MB/s");
        let (pm_read, pm_write) = zone_sequential_mbps(&pm1731a());
        assert!((pm_write - 45.0).abs() < 2.0, "pm1731a zone write {pm_write:.1} MB/s");
        // One die senses a 4 KiB page in 25.5 µs: 32 deep, a zone reads at that die's rate.
        assert!((100.0..200.0).contains(&pm_read), "pm1731a zone read {pm_read:.0} MB/s");
    }
}
