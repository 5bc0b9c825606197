//! ZapRAID's claim (Wang and Lee, "ZapRAID: Toward High-Performance RAID for ZNS SSDs via
//! Zone Append", APSys '23) checked by `swan repro zapraid`.
//!
//! The abstract states the gain and nothing of its setting; the setting is read from
//! ZapRAID's public scripts (`swan repro zapraid` names it), and the drive's command times
//! from Doekemeijer et al.'s ZN540 measurements (the zn540 preset). What the disagreement
//! implies, and why its cause is not shown here, is in docs/zoned.md.

use super::{Check, Claim, Paper};

pub const CLAIMS: &[Claim] = &[Claim {
    says: "ZapRAID, on Zone Append, gives 2.34× the write throughput of Zone Write (RAID-5 3+1 over four ZN540s, 4 KiB writes 16 deep)",
    paper_value: "2.34×",
    checks: &[Check::Within { measure: "qd16.zapraid_over_write", lo: 2.34 * 0.85, hi: 2.34 * 1.15 }],
    shows: &[
        "qd16.write.write_mbps",
        "qd16.zapraid.write_mbps",
        "qd16.append_over_write",
        "qd64.zapraid_over_write",
        "drive.append_over_write",
    ],
    tolerance: "±15 %: one ratio the abstract states with no spread; the setting is ZapRAID's public scripts', not the paper's text",
    ..super::base(Paper::ZapRaid, "zapraid-append-gain", "zapraid", "APSys '23 abstract")
}];
