//! Named device presets and how each number was derived. Bandwidths are not parameters:
//! they come out of the model (units × page / t_prog for writes, the host link for SATA
//! reads), so every preset states the figure it was calibrated to reproduce.

use super::config::{FtlKind, GcDomain, Placement, SsdConfig, Suspension, WriteLayout, PAGE_BYTES};

/// Every preset name [`preset`] knows.
pub const PRESET_NAMES: &[&str] =
    &["sata850pro", "sata850pro-blockftl", "harmonia", "openchannel", "apas-slc", "x25e", "ultradrive-gx"];

/// A preset by name, or `None`.
pub fn preset(name: &str) -> Option<SsdConfig> {
    match name {
        "sata850pro" => Some(sata850pro()),
        "sata850pro-blockftl" => Some(sata850pro_blockftl()),
        "harmonia" => Some(harmonia()),
        "openchannel" => Some(openchannel()),
        "apas-slc" => Some(apas_slc()),
        "x25e" => Some(x25e()),
        "ultradrive-gx" => Some(ultradrive_gx()),
        _ => None,
    }
}

const GIB: u64 = 1 << 30;

/// The SWAN paper's Samsung 850 PRO (§5: ~500 MB/s sequential read, ~400 MB/s sequential
/// write), page-level FTL.
///
/// - Capacity: the paper's "120 GB" with 128 GiB of raw flash and ~7 % over-provisioning.
///   Those three agree only if "120 GB" means 120 GiB (128/120 − 1 = 6.7 %); with decimal
///   GB the spare would be 14.5 %, which halves random-write amplification. We keep the
///   7 % that drives GC behaviour: 120 GiB user, OP = 1/15, raw = exactly 128 GiB.
/// - Parallelism: 8 channels (the MEX controller has 8) × 2 dies = 16 units. Not a teardown:
///   16 is the smallest count that reaches both figures below with plausible NAND times.
/// - Write: a die takes one 4 KiB channel transfer (4096 B at 400 MB/s = 10.24 µs) then
///   t_prog per page, so 16 × 4096 B / (10.24 + 153.6) µs = 400 MB/s. The 153.6 µs is an
///   effective per-4 KiB program time (V-NAND programs 16 KiB pages on two planes at once).
/// - Read: 16 × 4096 B / (50 + 10.24) µs ≈ 1.09 GB/s inside the drive, so sequential reads
///   are held to the SATA link: 6 Gb/s line rate, 8b/10b → 600 MB/s, less FIS and protocol
///   overhead → 520 MB/s of payload, close to the paper's ~500 MB/s.
/// - Erase 1.5 ms; blocks of 128 pages (512 KiB), which also makes the block FTL's map
///   8 MB per TB, the figure SWAN §6 quotes. The erase time is set so that *sustained*
///   sequential writing — every block erased before it is programmed again — runs at the
///   paper's measured ~400 MB/s: each page holds its die for the 10.24 µs channel transfer
///   plus t_prog = 142 µs, so 16 × 512 KiB per (128 × 152.24 µs + 1.5 ms) ≈ 400 MB/s; a
///   fresh, never-written drive bursts at ≈ 430 MB/s. (With 3 ms the erase would cost
///   15 % of a block's program time; real MLC spends a few percent, on larger blocks.)
/// - GC: trigger at 0.5 % free blocks (≥ one per unit), reclaim one block per run, so
///   stalls are short and frequent; soft limit at 2 %.
/// - One GC domain for the whole drive, writes striped page by page over every die (as MQSim
///   and DiskSim's SSD extension both place them): what makes a segment of one erase block
///   per die (8 MiB) the unit a TRIM frees whole. GC copies share the host's open blocks.
///   A separate GC write frontier (MQSim's) lifts SWAN0 at 1 MiB segments from 109 to
///   627 MB/s (docs/findings/swan.md) but holds a second open block per die, which SSDs under
///   376 MiB, as some reduced-scale runs use, cannot spare: a named sensitivity
///   (`swan sim --ssd-gc-frontier on`), not the preset.
/// - Write buffer of 16 pages (one per die). Samsung's data sheet gives 4 KB random writes at
///   QD1 up to 36K IOPS (28 µs each), under one program here (142 µs): the drive acknowledges
///   writes from DRAM (smartctl reports its volatile write cache on), and a FLUSH must wait for
///   them. The buffer's size is not published (the DRAM, 1 MB per GB, is mostly mapping table);
///   16 pages is the least that keeps one program in flight per die, MQSim's write-back bound,
///   and what the data sheet's random-write figures need. Larger buffers are sensitivities.
/// - Host reads go before the drive's queued GC copies and erases and its buffered write-back
///   (MQSim's default scheduling, reads first; preemptible GC, Lee et al. 2011), but wait for
///   the one operation already running on their die ([`Suspension::BetweenOps`]): no public
///   source shows 850 PRO-era MLC suspending programs or erases (their data sheets list no
///   suspend command), so suspension is a sensitivity, not the preset.
pub fn sata850pro() -> SsdConfig {
    SsdConfig {
        name: "sata850pro".into(),
        user_pages: 120 * GIB / PAGE_BYTES,
        pages_per_block: 128,
        channels: 8,
        dies_per_channel: 2,
        planes_per_die: 1,
        over_provisioning: 1.0 / 15.0,
        t_read_ns: 50_000,
        t_prog_ns: 142_000,
        t_erase_ns: 1_500_000,
        channel_mbps: 400,
        host_mbps: 520,
        cmd_latency_ns: 10_000,
        gc_threshold: 0.005,
        gc_reclaim_blocks: 1,
        gc_soft_limit: 0.02,
        ftl: FtlKind::Page,
        gc_domain: GcDomain::Device,
        placement: Placement::Static,
        copy_back: false,
        gc_preemptible: true,
        suspension: Suspension::BetweenOps,
        write_buffer_pages: 16,
        reads_before_write_back: true,
        layout: WriteLayout::PageStriped,
        gc_frontier: false,
    }
}

/// [`sata850pro`] with a block-level FTL: SWAN §6 argues its sequential, TRIM-friendly
/// writes let an array use such "simpler SSDs" with a far smaller mapping table.
pub fn sata850pro_blockftl() -> SsdConfig {
    SsdConfig { name: "sata850pro-blockftl".into(), ftl: FtlKind::Block, ..sata850pro() }
}

/// Harmonia's Table IX SSD, as DiskSim's SSD extension (Microsoft Research's, which the
/// paper's §V simulator is) models it: 32 GB, 15 % reserved, 5 % minimum free blocks,
/// greedy cleaning, 64 chip elements, 4 planes per package, 512 blocks per plane, 64 pages
/// per block, 4 KiB pages, 0.025 ms read, 0.200 ms program, 1.5 ms erase.
///
/// - Raw: 64 elements × 4 planes × 512 blocks × 64 pages × 4 KiB = 32 GiB. "15 % reserved"
///   is a share of raw flash, so user = 85 % of raw and over_provisioning (a share of
///   *user* capacity) = 0.15 / 0.85.
/// - Elements are the units: each has its own pins, serialises its planes (the
///   extension's default of one parallel unit per element) and owns 2,048 blocks (its
///   4 × 512). GC is per element ([`GcDomain::Unit`]): an element at its low watermark
///   (5 % of its blocks, Table IX's minimum) cleans one greedy victim at a time by
///   copy-back inside itself until it is above it (the extension's high watermark is the
///   low one plus a block), and only requests for that element wait (§I: "if their target
///   is the same Flash chip that is busy with GC"). The extension keeps watermarks per plane
///   and picks the plane with the most free pages for each write, so an element's planes
///   stay even and one watermark per element behaves alike.
/// - Placement is static: logical page `p` lives on element `p % 64` (the extension's
///   `ssd_choose_element` with an element stride of one page).
/// - Transfer: the extension charges 25 ns per byte on an element's pins (4 KiB in
///   102.4 µs; it counts 528 bytes per sector, 105.6 µs), on top of t_read or t_prog, so a
///   channel per element at 40 MB/s; copy-back moves nothing over it. Its bus to the host:
///   0.2384 µs per 512 B sector, ≈ 2,147 MB/s. No command overhead is charged.
/// - Soft limit 6 % free: not in the paper. §IV-C.1 has the O-SSD notify when it "will soon
///   need to initiate a GC process", so the soft limit sits just above the hard limit: one
///   per cent of an element's blocks (21) of warning.
pub fn harmonia() -> SsdConfig {
    let raw_pages: u64 = 64 * 4 * 512 * 64;
    SsdConfig {
        name: "harmonia".into(),
        // 85 % of raw, rounded down to a whole page; the raw size rounds back up to 32 GiB.
        user_pages: raw_pages * 85 / 100,
        pages_per_block: 64,
        channels: 64,
        dies_per_channel: 1,
        planes_per_die: 1,
        over_provisioning: 0.15 / 0.85,
        t_read_ns: 25_000,
        t_prog_ns: 200_000,
        t_erase_ns: 1_500_000,
        channel_mbps: 40,
        host_mbps: 2_147,
        cmd_latency_ns: 0,
        gc_threshold: 0.05,
        gc_reclaim_blocks: 1,
        gc_soft_limit: 0.06,
        ftl: FtlKind::Page,
        gc_domain: GcDomain::Unit,
        placement: Placement::Static,
        copy_back: true,
        gc_preemptible: false,
        suspension: Suspension::Instant,
        write_buffer_pages: 0,
        layout: WriteLayout::PageStriped,
        gc_frontier: false,
        reads_before_write_back: true,
    }
}

/// The open-channel SSD of SWAN's Fig. 12 (used to observe SSD-internal latency): NAND
/// read ≈ 100 µs, program ≈ 500 µs, page-level FTL.
///
/// Geometry is ours, a small plausible device: 8 channels × 4 dies (32 parallel units),
/// 256-page (1 MiB) blocks, 64 GiB user with 7 % over-provisioning (as the 850 PRO),
/// 400 MB/s channels and a PCIe 3 ×4 host link (3.2 GB/s, never the bottleneck here).
/// Out of the model: writes 32 × 4 KiB / (10.24 + 500) µs ≈ 257 MB/s, reads
/// 32 × 4 KiB / (100 + 10.24) µs ≈ 1.19 GB/s.
pub fn openchannel() -> SsdConfig {
    SsdConfig {
        name: "openchannel".into(),
        user_pages: 64 * GIB / PAGE_BYTES,
        pages_per_block: 256,
        channels: 8,
        dies_per_channel: 4,
        planes_per_die: 1,
        over_provisioning: 1.0 / 15.0,
        t_read_ns: 100_000,
        t_prog_ns: 500_000,
        t_erase_ns: 3_000_000,
        channel_mbps: 400,
        host_mbps: 3_200,
        cmd_latency_ns: 10_000,
        gc_threshold: 0.005,
        gc_reclaim_blocks: 1,
        gc_soft_limit: 0.02,
        ftl: FtlKind::Page,
        gc_domain: GcDomain::Device,
        placement: Placement::Static,
        copy_back: false,
        gc_preemptible: false,
        suspension: Suspension::Instant,
        write_buffer_pages: 0,
        layout: WriteLayout::PageStriped,
        gc_frontier: false,
        reads_before_write_back: true,
    }
}

/// Apas's SSD cache (§IV-A): "based on Disksim and SSD extension", SLC NAND that "takes
/// 25us to read a page, 200us to write a page, 1.5ms to erase a block". The paper gives no
/// geometry, so the rest is the SSD extension's, as [`harmonia`] reads it (64 elements,
/// 4 KiB pages, 64-page blocks, 25 ns per byte on an element's pins, 15 % reserved, greedy
/// GC per element at 5 % free). The capacity is the cache's: the Apas driver sizes the
/// device to its cache with [`SsdConfig::with_user_pages`]; 32 GiB raw is only the default.
pub fn apas_slc() -> SsdConfig {
    SsdConfig { name: "apas-slc".into(), ..harmonia() }
}

/// Harmonia §III's SSD(S): the Intel X25-E 64 GB (SSDSA2SH064G1), SLC on SATA-II, which the
/// paper measured alone and in RAID-0/5/6 of 4 and 6 behind an LSI MegaRAID controller.
///
/// - Capacity: 64 GB (decimal) user on 80 GiB of flash, the 20 packages reviews of the drive
///   count; a 34 % spare.
/// - Parallelism: Intel's ten-channel controller (its data sheet and Tom's Hardware), one
///   unit per channel: ten units.
/// - NAND: the SLC times of Harmonia's own Table IX (25 µs read, 200 µs program, 1.5 ms
///   erase), 64-page (256 KiB) blocks.
/// - Channel rate from the data sheet's 75 µs read latency: 25 µs sense + 4 KiB over the
///   channel + 4 KiB over the host link = 75 µs gives 112 MB/s. Writes then come out of the
///   model at 10 × 4 KiB / (36 + 200) µs ≈ 173 MB/s, the data sheet's 170 MB/s sequential
///   write, without fitting.
/// - Host link: SATA-II, 3 Gb/s less 8b/10b = 300 MB/s. The paper's 285 MB/s at 20 %
///   writes (Table IV) needs at least that; the data sheet's 250 MB/s read is below it.
/// - Write buffer: one page per unit, as [`sata850pro`] (the data sheet's 85 µs write
///   latency is under one program). GC as [`sata850pro`]: device-wide, greedy, writes
///   striped page by page; reads wait for the operation running on their die.
pub fn x25e() -> SsdConfig {
    SsdConfig {
        name: "x25e".into(),
        user_pages: 64_000_000_000 / PAGE_BYTES,
        pages_per_block: 64,
        channels: 10,
        dies_per_channel: 1,
        planes_per_die: 1,
        over_provisioning: (80 * GIB) as f64 / 64e9 - 1.0,
        t_read_ns: 25_000,
        t_prog_ns: 200_000,
        t_erase_ns: 1_500_000,
        channel_mbps: 112,
        host_mbps: 300,
        cmd_latency_ns: 0,
        gc_preemptible: false,
        write_buffer_pages: 10,
        ..sata850pro()
    }
}

/// Harmonia §III's SSD(M): the Super Talent UltraDrive GX 128 GB (FTM28GX25H), MLC on
/// SATA-II behind an Indilinx Barefoot controller. Its data sheet is not on this machine, so
/// only what the paper and the controller's public description give is taken from them:
///
/// - Capacity: Table I's 120 GB (decimal) user on 128 GiB of flash, a 14.5 % spare.
/// - Parallelism: the Barefoot's four channels, four dies each: sixteen units.
/// - NAND: MLC of its time, 50 µs read, 1.5 ms erase, 128-page (512 KiB) blocks; the
///   channel and host link as [`x25e`] (same SATA-II generation).
/// - Program time: *calibrated* on the paper, the one number fitted: 1.1 ms effective per
///   4 KiB makes one drive at 80 % writes (320 KiB requests, 64 deep, aged) carry Table IV's
///   176.4 MB/s. Table IV's 80 % row for SSD(M) is therefore a calibration, not a result; the
///   other rows, the variation and the RAID measurements are predictions.
/// - Buffer and GC as [`x25e`].
pub fn ultradrive_gx() -> SsdConfig {
    SsdConfig {
        name: "ultradrive-gx".into(),
        user_pages: 120_000_000_000 / PAGE_BYTES,
        pages_per_block: 128,
        channels: 4,
        dies_per_channel: 4,
        over_provisioning: (128 * GIB) as f64 / 120e9 - 1.0,
        t_read_ns: 50_000,
        t_prog_ns: 400_000,
        t_erase_ns: 1_500_000,
        write_buffer_pages: 16,
        ..x25e()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmonia_geometry_multiplies_out_to_32_gib_raw() {
        let c = harmonia();
        assert_eq!(c.units(), 64, "64 chip elements");
        assert_eq!(c.domains(), 64, "GC per element");
        assert_eq!(c.pages_per_block, 64);
        let blocks_per_plane = c.domain_blocks() / 4;
        assert_eq!(blocks_per_plane, 512);
        assert_eq!(c.raw_bytes(), 32 * GIB);
        assert_eq!(64 * 4 * blocks_per_plane * 64 * PAGE_BYTES, 32 * GIB);
        let reserved = 1.0 - c.user_pages as f64 / c.raw_pages() as f64;
        assert!((reserved - 0.15).abs() < 1e-6, "{reserved}");
    }

    #[test]
    fn sata850pro_is_120_gib_user_on_128_gib_raw() {
        let c = sata850pro();
        assert_eq!(c.user_bytes(), 120 * GIB);
        assert_eq!(c.raw_bytes(), 128 * GIB);
    }

    #[test]
    fn apas_slc_has_the_papers_slc_timings() {
        use crate::{DevOp, DevOpKind, Device};
        let c = apas_slc();
        assert_eq!((c.t_read_ns, c.t_prog_ns, c.t_erase_ns), (25_000, 200_000, 1_500_000));
        // On an idle device one 4 KiB page costs the NAND time plus its 4096 B at 40 MB/s
        // on the element's pins (102.4 µs) and over the host link (4096 B at 2,147 MB/s).
        let pins = 4096 * 1000 / 40; // ns
        let host = 4096 * 1000 / 2_147;
        let mut ssd = crate::ssd::Ssd::new(c.with_user_pages(1 << 18)).unwrap();
        let op = |kind| DevOp { kind, block: 7, count: 1, class: crate::IoClass::User };
        let w = ssd.submit(0, op(DevOpKind::Write));
        assert_eq!(w, host + pins + 200_000, "write: host link, pins, program");
        let t0 = 10_000_000;
        let r = ssd.submit(t0, op(DevOpKind::Read)) - t0;
        assert_eq!(r, 25_000 + pins + host, "read: sense, pins, host link");
    }

    /// Samsung's 850 PRO data sheet: 4 KB random writes at QD1 up to 36K IOPS, random reads at
    /// QD1 up to 10K. A write acknowledged only once programmed could not reach the first
    /// (one program is 142 µs here): the drive's write buffer is what the figure shows.
    #[test]
    fn sata850pro_reaches_its_data_sheets_qd1_random_iops() {
        use crate::{DevOp, DevOpKind, Device, IoClass};
        let qd1_iops = |config: SsdConfig, kind: DevOpKind| {
            let mut ssd = crate::ssd::Ssd::new(config.with_user_pages(1 << 18)).unwrap();
            // Data sheets measure a fresh drive: writes meet no GC, reads need mapped pages.
            if kind == DevOpKind::Read {
                ssd.fill_sequential(1.0);
            }
            let (mut now, mut x, n) = (0, 0x850u64, 20_000);
            for _ in 0..n {
                let block = swan_testkit::rng::xorshift64(&mut x) % (1 << 18);
                now = ssd.submit(now, DevOp { kind, block, count: 1, class: IoClass::User });
            }
            n as f64 / (now as f64 / 1e9)
        };
        let write = qd1_iops(sata850pro(), DevOpKind::Write);
        assert!(write >= 36_000.0, "QD1 random writes at {write:.0} IOPS");
        let unbuffered = qd1_iops(SsdConfig { write_buffer_pages: 0, ..sata850pro() }, DevOpKind::Write);
        assert!(unbuffered < 10_000.0, "without the buffer: {unbuffered:.0} IOPS");
        let read = qd1_iops(sata850pro(), DevOpKind::Read);
        assert!((10_000.0..14_000.0).contains(&read), "QD1 random reads at {read:.0} IOPS");
    }

    /// Intel's X25-E data sheet: 75 µs read latency and 170 MB/s sequential write. The first
    /// sets the channel rate; the second comes out of ten units at SLC's 200 µs program.
    #[test]
    fn x25e_meets_its_data_sheets_read_latency_and_write_rate() {
        use crate::{DevOp, DevOpKind, Device, IoClass};
        let c = x25e();
        assert_eq!(c.user_bytes(), 64_000_000_000 / PAGE_BYTES * PAGE_BYTES);
        assert_eq!(c.raw_bytes().div_ceil(GIB), 80, "80 GiB of flash");
        let mut ssd = crate::ssd::Ssd::new(c.clone().with_user_pages(1 << 18)).unwrap();
        ssd.fill_sequential(1.0);
        let read = ssd.submit(0, DevOp { kind: DevOpKind::Read, block: 5, count: 1, class: IoClass::User });
        assert!((74_000..=76_000).contains(&read), "4 KiB read in {read} ns");
        // A fresh drive written sequentially, 64 pages a command, 64 commands in flight.
        let mut fresh = crate::ssd::Ssd::new(c.with_user_pages(1 << 18)).unwrap();
        let (mut end, pages) = (0, 64 * 64);
        for cmd in 0..64 {
            let op = DevOp { kind: DevOpKind::Write, block: cmd * 64, count: 64, class: IoClass::User };
            end = end.max(fresh.submit(0, op));
        }
        let mbps = (pages * PAGE_BYTES) as f64 / end as f64 * 1e3;
        assert!((165.0..=180.0).contains(&mbps), "sequential write at {mbps:.0} MB/s");
    }

    /// SSD(M) is Table I's 120 GB on 128 GiB of flash, and slower to program than SSD(S), as
    /// MLC is: one drive writes below the SLC one.
    #[test]
    fn ultradrive_gx_is_table_is_capacity_on_128_gib() {
        let (m, s) = (ultradrive_gx(), x25e());
        assert_eq!(m.user_bytes(), 120_000_000_000 / PAGE_BYTES * PAGE_BYTES);
        assert_eq!(m.raw_bytes().div_ceil(GIB), 128);
        assert!(m.units() > s.units() && m.t_prog_ns > s.t_prog_ns);
        m.validate().unwrap();
        s.validate().unwrap();
    }

    #[test]
    fn every_name_resolves_and_unknown_names_do_not() {
        for name in PRESET_NAMES {
            assert_eq!(preset(name).unwrap().name, *name);
        }
        assert!(preset("floppy").is_none());
    }
}
