//! The zoned drives the ZNS RAID papers ran on, each number with where it comes from. Two
//! public sources carry most of them: the ZRAID paper (Kim, Jeong and Kim, ASPLOS '25, §2.1
//! and §3.1), which measured both drives, and NVMeVirt (Kim et al., FAST '23), whose public
//! `ssd_config.h` configures its emulator as each (`WD_ZN540`, and `ZNS_PROTOTYPE` with its
//! "real device" 96 MiB zones). Where the two disagree the measurement wins, and the NAND
//! time it implies is derived here, not fitted to any result of swan's.

use super::config::{CommandIntake, ZnsConfig};
use super::zones::ZoneGeometry;
use crate::ssd::Suspension;

/// Every preset name [`zns_preset`] knows.
pub const ZNS_PRESET_NAMES: &[&str] = &["zn540", "pm1731a"];

/// A zoned preset by name, or `None`.
pub fn zns_preset(name: &str) -> Option<ZnsConfig> {
    match name {
        "zn540" => Some(zn540()),
        "pm1731a" => Some(pm1731a()),
        _ => None,
    }
}

const MIB_BLOCKS: u64 = 256;

/// Western Digital's Ultrastar DC ZN540, 1 TB: the large-zone drive RAIZN and ZapRAID ran on.
///
/// - Zones: 904 of 2 GiB, each with 1077 MiB of capacity, at most 14 open and active (ZRAID
///   §2.1 and §3.1; ZapRAID's public source hard-codes the same 1077 MiB for this drive).
/// - NAND: 8 channels × 4 dies, a zone striped over all 32 (NVMeVirt's `WD_ZN540`:
///   `DIES_PER_ZONE` is every die). Channels 450 MB/s, PCIe 3050 MB/s, 4 KiB sense 50 µs,
///   firmware 20 µs per read, and a write buffer of ten 96 KiB one-shot pages per zone with
///   early completion (NVMeVirt's `ZONE_WB_SIZE`).
/// - Commands, from the raw fio results Doekemeijer et al. published with their ZN540
///   characterisation (arXiv 2310.19094; `stonet-research/NVMeBenchmarks`, SPDK, 4 KiB
///   format): a 4 KiB Zone Write at depth 1 takes 11.4 µs and a Zone Append 14.8 µs; 4 KiB
///   writes over 8 zones stop at 726 MiB/s (186 k/s) and 4 KiB appends at 516 MiB/s
///   (132 k/s) however deep or spread. So the controller takes in one write per 5.38 µs and
///   one append per 7.57 µs, and the rest of each latency, less the 1.34 µs link transfer,
///   follows it: 4.68 µs after a write, 5.89 µs after an append. (NVMeVirt's 5.6 µs per
///   write has no such ceiling.)
/// - Program: 97.46 µs per 4 KiB (2.34 ms per 96 KiB one-shot), what makes the 32 dies write
///   the 1230 MB/s ZRAID measured: 32 × 4096 B / (9.10 µs channel + 97.46 µs) = 1230 MB/s.
///   NVMeVirt's 561 µs one-shot would give 3 GB/s, far above the measured drive.
/// - Erase: 3.8 ms, MQSim's default; no ZN540 figure is published and NVMeVirt charges a
///   reset nothing. A reset erases the zone's share of each die it wrote (NVMeVirt's
///   `BLK_SIZE` is the zone over its dies: one block per die).
/// - Reads wait for the one program or erase running on their die and go before queued
///   write-back, as the conventional 850 PRO preset: no public source shows this drive
///   suspending either.
pub fn zn540() -> ZnsConfig {
    ZnsConfig {
        name: "zn540".into(),
        zones: ZoneGeometry {
            zones: 904,
            zone_blocks: 2048 * MIB_BLOCKS,
            capacity_blocks: 1077 * MIB_BLOCKS,
            max_open: Some(14),
            max_active: Some(14),
        },
        channels: 8,
        dies_per_channel: 4,
        zone_dies: 32,
        t_read_ns: 50_000,
        t_prog_ns: 97_460,
        t_erase_ns: 3_800_000,
        channel_mbps: 450,
        host_mbps: 3050,
        read_cmd_ns: 20_000,
        write_cmd_ns: 4_677,
        append_cmd_ns: 5_887,
        intake: CommandIntake { write_ns: 5_380, append_ns: 7_570 },
        zone_buffer_pages: 10 * 24,
        suspension: Suspension::BetweenOps,
        reads_before_write_back: true,
    }
}

/// Samsung's PM1731a: the small-zone drive ZRAID compares against, each zone on one die.
///
/// - Zones: 40,704 of 96 MiB, 384 active (ZRAID §2.1, §3.1). The open limit is not
///   published; it is taken as the active one.
/// - NAND: 8 channels × 16 dies, one die per zone, channels 800 MB/s, PCIe 3200 MB/s, 4 KiB
///   sense 25.5 µs, 32.15 µs of firmware per read, none per write, and no early completion:
///   a write completes when programmed (NVMeVirt's `ZNS_PROTOTYPE`, whose real-device zone
///   of 96 MiB is this drive's). No per-command measurement is published: appends cost as
///   writes, and the controller sets no ceiling of its own.
/// - Program: 85.9 µs per 4 KiB, what makes one zone, one die, write the "around 45 MB/s"
///   ZRAID measured: 4096 B / (5.12 µs channel + 85.9 µs) = 45 MB/s. NVMeVirt's 1.91 ms per
///   192 KiB one-shot would give 100 MB/s. Zones on different dies then add up, as ZRAID
///   found ("in proportion to the number of open zones"), until the 3200 MB/s link.
/// - Erase 3.8 ms (MQSim's default), and reads as [`zn540`].
pub fn pm1731a() -> ZnsConfig {
    ZnsConfig {
        name: "pm1731a".into(),
        zones: ZoneGeometry {
            zones: 40_704,
            zone_blocks: 96 * MIB_BLOCKS,
            capacity_blocks: 96 * MIB_BLOCKS,
            max_open: Some(384),
            max_active: Some(384),
        },
        channels: 8,
        dies_per_channel: 16,
        zone_dies: 1,
        t_read_ns: 25_485,
        t_prog_ns: 85_900,
        t_erase_ns: 3_800_000,
        channel_mbps: 800,
        host_mbps: 3200,
        read_cmd_ns: 32_150,
        write_cmd_ns: 0,
        append_cmd_ns: 0,
        intake: CommandIntake::default(),
        zone_buffer_pages: 0,
        suspension: Suspension::BetweenOps,
        reads_before_write_back: true,
    }
}
