//! What an SSD model delivers, measured on the model itself: *sustained* sequential read and
//! write bandwidth of 128 KiB operations at queue depth 32 on a small copy of the device.
//! "Sustained" means the drive has been written once and TRIMmed, so every block is erased
//! before it is programmed again, as in any long run.
//!
//! Reports quote "one SSD's write bandwidth" (SWAN sizes R-groups by it). Deriving it from
//! a formula would drift from what the model does; measuring it cannot.

use super::{Ssd, SsdConfig};
use crate::{DevOp, DevOpKind, Device, IoClass, Nanos};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Sequential (read, write) bandwidth of `cfg`'s model in MB/s (10^6 bytes per second).
pub fn sequential_mbps(cfg: &SsdConfig) -> (f64, f64) {
    // Big enough for every unit to be busy many times over, small enough to be instant.
    // A copy of 64 erase blocks per unit is plenty; a device too small to shrink is used as is.
    let pages = cfg.user_pages.min(u64::from(cfg.units()) * u64::from(cfg.pages_per_block) * 64);
    let mut ssd = Ssd::new(cfg.with_user_pages(pages))
        .or_else(|_| Ssd::new(cfg.clone()))
        .expect("sequential_mbps needs a valid SSD config");
    let span = ssd.user_pages();
    run(&mut ssd, DevOpKind::Write, span);
    let now = ssd.busy_until();
    ssd.submit(now, DevOp { kind: DevOpKind::Trim, block: 0, count: span as u32, class: IoClass::User });
    let write = run(&mut ssd, DevOpKind::Write, span);
    let read = run(&mut ssd, DevOpKind::Read, span);
    (read, write)
}

/// MB/s of `kind` over `span` blocks from block 0 of `ssd`, 128 KiB operations 32 deep,
/// from when it is idle.
pub(crate) fn run(ssd: &mut impl Device, kind: DevOpKind, span: u64) -> f64 {
    const OP_PAGES: u32 = 32;
    const DEPTH: usize = 32;
    let start = ssd.busy_until();
    let mut inflight: BinaryHeap<Reverse<Nanos>> = (0..DEPTH).map(|_| Reverse(start)).collect();
    let ops = span / u64::from(OP_PAGES);
    let mut last = start;
    for i in 0..ops {
        let Reverse(now) = inflight.pop().expect("depth > 0");
        let done =
            ssd.submit(now, DevOp { kind, block: i * u64::from(OP_PAGES), count: OP_PAGES, class: IoClass::User });
        last = last.max(done);
        inflight.push(Reverse(done));
    }
    let bytes = ops * u64::from(OP_PAGES) * super::PAGE_BYTES;
    bytes as f64 / ((last - start) as f64 / 1e9) / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssd::presets;

    #[test]
    fn sata850pro_sustains_what_the_paper_measured() {
        let (r, w) = sequential_mbps(&presets::sata850pro());
        assert!((380.0..420.0).contains(&w), "sustained write {w}, want 400 ± 5 %");
        assert!((460.0..540.0).contains(&r), "read {r}");
    }
}
