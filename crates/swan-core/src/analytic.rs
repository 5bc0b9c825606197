//! The analytic model of SWAN §3.5 ("Optimizing SWAN Configuration"): how wide an R-group
//! must be, and how many R-groups an array needs so that SWAN-level GC in the back-end never
//! falls behind the front-end (Eq. 1).
//!
//! This module owns the arithmetic of the model and nothing else: pure functions of `f64`s, no
//! I/O, no clock. `swan plan` prints a [`Plan`]; the simulator can check it (`swan plan --verify`).
//!
//! ## The model
//!
//! Times are per *segment on one SSD* (a segment is `B` blocks on each member of an R-group,
//! see [`crate::geometry`]): `Tw = tw·B` and `Tr = tr·B` are the times to write and read one
//! segment, `Te` the time to erase the flash blocks of one segment. `u` is the segment
//! utilization (fraction of valid blocks in a GC victim), `S` the segments in an R-group and
//! `N` the number of R-groups.
//!
//! - GC of a back-end R-group reads and rewrites the valid blocks of every segment and erases
//!   it: `S·(Te + u·(Tr + Tw))`.
//! - That frees `S·(1 − u)` segments, which the front-end consumes in `S·(1 − u)·Tw` at full
//!   speed. An R-group moved to the back-end comes back to the front-end after the other
//!   `N − 1` R-groups have been consumed: `(N − 1)·S·(1 − u)·Tw` at the earliest.
//! - GC never stalls the front-end iff
//!   `S·(Te + u·(Tr + Tw)) ≤ (N − 1)·S·(1 − u)·Tw` ([`gc_keeps_up`]).
//!   Dividing by `S·(1 − u)·Tw` gives Eq. 1 exactly:
//!   `N ≥ (Te/Tw)·1/(1 − u) + u·(Tr/Tw + 1)/(1 − u) + 1`
//!   = [`erase_term`] + [`read_write_term`] + 1 ([`min_rgroups`]).
//!
//! The front-end is assumed to consume a segment in `Tw`, i.e. the network saturates the
//! R-group's write bandwidth. If the R-group is wider than the network needs, the front-end
//! fills more slowly and the `N` of Eq. 1 is an upper bound.
//!
//! `u` comes from the disk utilization `ud` through `ud = (u − 1)/ln u`, the classic result for
//! greedy cleaning of a log-structured store that the paper cites ([`disk_utilization`] and its
//! inverse [`segment_utilization`]).
//!
//! ## Two discrepancies in the paper, reproduced here on purpose
//!
//! 1. **The erase term.** With the paper's measurements (Te = 4 ms per segment erase,
//!    tr = 15.6 µs and tw = 19.5 µs per block, B = 256, so Tr = 3.9936 ms and
//!    Tw = 4.992 ms; ud = 60 %, "roughly u = 0.33") the paper reports N ≈ 1.89. That is
//!    Eq. 1 *without* its erase term: read/write term 0.33·1.8/0.67 = 0.887, plus 1. The erase
//!    term is (4/4.992)/0.67 = 1.196, so Eq. 1 as printed gives N ≈ 3.08: four R-groups, not
//!    two. (1.89 is also what one gets if Te is taken per block, 4 ms/256 = 15.6 µs per
//!    segment, making erasure negligible, or if the SSD hides erases behind TRIM; the paper
//!    does not say.) The model therefore reports both, [`min_rgroups`] and
//!    [`min_rgroups_without_erase`], and leaves the simulator to decide between them.
//! 2. **The R-group width.** For 10 GB/s of network and 2.5 GB/s SSDs the paper assigns "four
//!    SSDs (three for data and one for parity)" to a RAID4 R-group, but three data SSDs write
//!    only 7.5 GB/s < 10 GB/s. [`rgroup_width`] takes `ceil(network / ssd)` data SSDs plus the
//!    parity members: 4 + 1 = 5 for RAID4/5. The paper's four is the RAID0 answer.
//!
//! A third, smaller one: ud = 0.6 gives u = 0.3242, which the paper rounds to 0.33. The paper's
//! 1.89 / 3.08 need u = 0.33 exactly; the exact u gives 1.86 / 3.05 (same ceilings).

use crate::geometry::RaidLevel;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A bad input to the model, named, with the range it must lie in.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum PlanError {
    #[error("{name} = {value} is out of range: it must be {range}")]
    OutOfRange { name: &'static str, value: f64, range: &'static str },
    #[error(
        "an R-group would need {data_ssds} data SSDs ({network_mbps} MB/s network / {ssd_write_mbps} MB/s per SSD), \
         too many to count; check the units of --network-mbps and --ssd-write-mbps"
    )]
    TooWide { data_ssds: f64, network_mbps: f64, ssd_write_mbps: f64 },
}

const POSITIVE: &str = "finite and > 0";
const NON_NEGATIVE: &str = "finite and >= 0";
const OPEN_UNIT: &str = "strictly between 0 and 1";
const HALF_OPEN_UNIT: &str = "in [0, 1)";
const CLOSED_UNIT: &str = "in [0, 1]";

fn positive(name: &'static str, value: f64) -> Result<f64, PlanError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(PlanError::OutOfRange { name, value, range: POSITIVE })
    }
}

fn non_negative(name: &'static str, value: f64) -> Result<f64, PlanError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(PlanError::OutOfRange { name, value, range: NON_NEGATIVE })
    }
}

fn segment_utilization_in_range(u: f64) -> Result<f64, PlanError> {
    if (0.0..1.0).contains(&u) {
        Ok(u)
    } else {
        Err(PlanError::OutOfRange { name: "segment_utilization (u)", value: u, range: HALF_OPEN_UNIT })
    }
}

/// Disk utilization `ud` of a log-structured store whose GC victims have segment utilization
/// `u`: `ud = (u − 1)/ln u`. Increasing in `u`; the limits 0 at `u = 0` and 1 at `u = 1` are
/// returned at the ends. Error unless `u` is in `[0, 1]`.
pub fn disk_utilization(u: f64) -> Result<f64, PlanError> {
    if !(0.0..=1.0).contains(&u) {
        return Err(PlanError::OutOfRange { name: "segment_utilization (u)", value: u, range: CLOSED_UNIT });
    }
    if u == 0.0 {
        return Ok(0.0);
    }
    if u == 1.0 {
        return Ok(1.0);
    }
    // Near 1, ln_1p(u − 1) is accurate where ln u loses digits (u − 1 is exact for u ≥ 0.5).
    let ln_u = if u >= 0.5 { (u - 1.0).ln_1p() } else { u.ln() };
    Ok((u - 1.0) / ln_u)
}

/// The inverse of [`disk_utilization`]: the segment utilization `u` at which `(u − 1)/ln u`
/// equals `ud`, by bisection on `x = ln u`. Error unless `0 < ud < 1`.
///
/// `ud = 0.6` gives `u = 0.3242` (the paper's "roughly 0.33"). For `ud` below about 0.0014,
/// `u ≈ e^(−1/ud)` is smaller than the smallest `f64` and 0 is returned.
pub fn segment_utilization(ud: f64) -> Result<f64, PlanError> {
    if !(ud > 0.0 && ud < 1.0) {
        return Err(PlanError::OutOfRange { name: "disk_utilization (ud)", value: ud, range: OPEN_UNIT });
    }
    // f(x) = (e^x − 1)/x is increasing on x < 0, tends to 1 as x → 0 and, since
    // f(x) ≤ −1/x, f(−1/ud) ≤ ud: the root lies in [−1/ud, 0).
    let f = |x: f64| x.exp_m1() / x;
    let (mut lo, mut hi) = (-1.0 / ud, 0.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break; // lo and hi are adjacent floats
        }
        if f(mid) < ud {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok((0.5 * (lo + hi)).exp())
}

/// The erase term of Eq. 1, `(Te/Tw)·1/(1 − u)`. `te` and `tw` in the same unit.
pub fn erase_term(te: f64, tw: f64, u: f64) -> Result<f64, PlanError> {
    let te = non_negative("segment erase time (Te)", te)?;
    let tw = positive("segment write time (Tw)", tw)?;
    let u = segment_utilization_in_range(u)?;
    Ok(te / tw / (1.0 - u))
}

/// The read/write term of Eq. 1, `u·(Tr/Tw + 1)/(1 − u)`. `tr` and `tw` in the same unit.
pub fn read_write_term(tr: f64, tw: f64, u: f64) -> Result<f64, PlanError> {
    let tr = non_negative("segment read time (Tr)", tr)?;
    let tw = positive("segment write time (Tw)", tw)?;
    let u = segment_utilization_in_range(u)?;
    Ok(u * (tr / tw + 1.0) / (1.0 - u))
}

/// Eq. 1: the minimum number of R-groups `N` for GC never to stall the front-end,
/// `(Te/Tw)·1/(1 − u) + u·(Tr/Tw + 1)/(1 − u) + 1` (a real number; round up).
/// `te`, `tr`, `tw` are per-segment times in one unit; `u` in `[0, 1)`.
///
/// With the paper's numbers (Te = 4000, Tr = 3993.6, Tw = 4992 µs, u = 0.33) this is 3.08,
/// not the paper's 1.89 — see the module comment and [`min_rgroups_without_erase`].
pub fn min_rgroups(te: f64, tr: f64, tw: f64, u: f64) -> Result<f64, PlanError> {
    Ok(erase_term(te, tw, u)? + read_write_term(tr, tw, u)? + 1.0)
}

/// Eq. 1 without its erase term, `u·(Tr/Tw + 1)/(1 − u) + 1`: the figure the paper reports
/// (1.89 for its numbers).
pub fn min_rgroups_without_erase(tr: f64, tw: f64, u: f64) -> Result<f64, PlanError> {
    Ok(read_write_term(tr, tw, u)? + 1.0)
}

/// The inequality Eq. 1 comes from, per segment (`S` cancels):
/// `Te + u·(Tr + Tw) ≤ (N − 1)·(1 − u)·Tw` — does GC of an R-group finish before the
/// other `rgroups − 1` R-groups have been filled? Pass `te = 0` to leave erasure out.
pub fn gc_keeps_up(rgroups: u32, te: f64, tr: f64, tw: f64, u: f64) -> Result<bool, PlanError> {
    let gc = gc_time_per_segment(te, tr, tw, u)?;
    let refill = refill_time_per_segment(tw, u)?;
    Ok(gc <= f64::from(rgroups.saturating_sub(1)) * refill)
}

/// Left side of the inequality, per segment: time to clean one segment, `Te + u·(Tr + Tw)`.
pub fn gc_time_per_segment(te: f64, tr: f64, tw: f64, u: f64) -> Result<f64, PlanError> {
    let te = non_negative("segment erase time (Te)", te)?;
    let tr = non_negative("segment read time (Tr)", tr)?;
    let tw = positive("segment write time (Tw)", tw)?;
    let u = segment_utilization_in_range(u)?;
    Ok(te + u * (tr + tw))
}

/// Right side of the inequality per segment and per other R-group: time for the front-end to
/// consume the free space that cleaning one segment yields, `(1 − u)·Tw`.
pub fn refill_time_per_segment(tw: f64, u: f64) -> Result<f64, PlanError> {
    let tw = positive("segment write time (Tw)", tw)?;
    let u = segment_utilization_in_range(u)?;
    Ok((1.0 - u) * tw)
}

/// SSDs per R-group: `ceil(network / ssd_write)` data SSDs, so that their aggregate write
/// bandwidth is at least the network's, plus `parity_members` (0 for RAID0, 1 for RAID4/5).
/// Bandwidths in one unit (MB/s in `swan plan`).
///
/// The paper's example (10 GB/s network, 2.5 GB/s SSDs, RAID4) says "four SSDs (three for data
/// and one for parity)"; but 3 × 2.5 = 7.5 < 10 GB/s. This function answers 4 + 1 = 5.
pub fn rgroup_width(network_mbps: f64, ssd_write_mbps: f64, parity_members: u32) -> Result<u32, PlanError> {
    let network_mbps = positive("network_mbps", network_mbps)?;
    let ssd_write_mbps = positive("ssd_write_mbps", ssd_write_mbps)?;
    let data_ssds = (network_mbps / ssd_write_mbps).ceil().max(1.0);
    let too_wide = PlanError::TooWide { data_ssds, network_mbps, ssd_write_mbps };
    if data_ssds >= f64::from(u32::MAX) {
        return Err(too_wide);
    }
    // In range by the check above, so the cast is exact.
    (data_ssds as u32).checked_add(parity_members).ok_or(too_wide)
}

/// The inputs of [`Plan::compute`]. Defaults ([`PlanInputs::PAPER`]) are the paper's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanInputs {
    /// `Te`: time to erase the flash blocks of one segment, ms.
    pub erase_ms: f64,
    /// `tr`: time to read one 4 KiB block from an SSD, µs.
    pub block_read_us: f64,
    /// `tw`: time to write one 4 KiB block to an SSD, µs.
    pub block_write_us: f64,
    /// `B`: blocks per segment on each SSD.
    pub segment_blocks: u32,
    /// `ud`: fraction of the array's capacity holding live data, in (0, 1).
    pub disk_utilization: f64,
    /// `u`, given directly instead of solved from `ud` (the paper rounds u(0.6) to 0.33).
    pub segment_utilization: Option<f64>,
    /// Aggregate network bandwidth of the array, MB/s.
    pub network_mbps: f64,
    /// Sustained write bandwidth of one SSD, MB/s.
    pub ssd_write_mbps: f64,
    /// Redundancy inside an R-group; decides the parity members.
    pub raid: RaidLevel,
}

impl PlanInputs {
    /// The paper's numbers: its AFA prototype's measurements (§3.5) and the EMC XtremIO
    /// example (10 GB/s network, 2.5 GB/s SSD writes, RAID4).
    pub const PAPER: PlanInputs = PlanInputs {
        erase_ms: 4.0,
        block_read_us: 15.6,
        block_write_us: 19.5,
        segment_blocks: 256,
        disk_utilization: 0.6,
        segment_utilization: None,
        network_mbps: 10_000.0,
        ssd_write_mbps: 2_500.0,
        raid: RaidLevel::Raid4,
    };
}

impl Default for PlanInputs {
    fn default() -> Self {
        PlanInputs::PAPER
    }
}

/// A worked instance of the model: every input, every term, both answers and the notes that
/// explain where they part from the paper. Times in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// `Te`, µs.
    pub segment_erase_us: f64,
    /// `tr`, µs.
    pub block_read_us: f64,
    /// `tw`, µs.
    pub block_write_us: f64,
    /// `B`.
    pub segment_blocks: u32,
    /// `Tr = tr·B`, µs.
    pub segment_read_us: f64,
    /// `Tw = tw·B`, µs.
    pub segment_write_us: f64,
    /// `ud`: as given, or derived from `u` when `u` was given.
    pub disk_utilization: f64,
    /// `u`: solved from `ud`, or as given.
    pub segment_utilization: f64,
    /// True when `u` was given directly rather than solved from `ud`.
    pub segment_utilization_given: bool,
    /// `(Te/Tw)·1/(1 − u)`.
    pub erase_term: f64,
    /// `u·(Tr/Tw + 1)/(1 − u)`.
    pub read_write_term: f64,
    /// `Te + u·(Tr + Tw)`, µs: GC time per segment (left side of the inequality).
    pub gc_time_per_segment_us: f64,
    /// `(1 − u)·Tw`, µs: front-end time per cleaned segment (right side, per R-group).
    pub refill_time_per_segment_us: f64,
    /// Eq. 1 as printed: erase term + read/write term + 1.
    pub rgroups_with_erase: f64,
    /// Eq. 1 without its erase term: what the paper's 1.89 is.
    pub rgroups_without_erase: f64,
    pub rgroups_with_erase_ceil: u32,
    pub rgroups_without_erase_ceil: u32,
    pub network_mbps: f64,
    pub ssd_write_mbps: f64,
    pub raid: RaidLevel,
    /// `ceil(network / ssd_write)`.
    pub data_ssds_per_rgroup: u32,
    pub parity_ssds_per_rgroup: u32,
    /// Data + parity SSDs.
    pub ssds_per_rgroup: u32,
    /// `ceil(N with erase) · ssds_per_rgroup`.
    pub total_ssds_with_erase: u32,
    /// `ceil(N without erase) · ssds_per_rgroup`.
    pub total_ssds_without_erase: u32,
    /// Where this plan and the paper part, and why.
    pub notes: Vec<String>,
}

/// Round up a value of Eq. 1 (≥ 1 and finite by construction) to whole R-groups.
fn ceil_rgroups(n: f64, name: &'static str) -> Result<u32, PlanError> {
    let c = n.ceil();
    if c.is_finite() && c >= 1.0 && c < f64::from(u32::MAX) {
        Ok(c as u32)
    } else {
        // Only reachable for u within ~1e-9 of 1 or absurd time ratios.
        Err(PlanError::OutOfRange { name, value: n, range: "a count of R-groups that fits in a u32" })
    }
}

impl Plan {
    /// Validate `inputs` and work the model through.
    pub fn compute(inputs: PlanInputs) -> Result<Plan, PlanError> {
        let PlanInputs {
            erase_ms,
            block_read_us,
            block_write_us,
            segment_blocks,
            disk_utilization: ud_given,
            segment_utilization: u_given,
            network_mbps,
            ssd_write_mbps,
            raid,
        } = inputs;
        positive("erase_ms (Te)", erase_ms)?;
        positive("block_read_us (tr)", block_read_us)?;
        positive("block_write_us (tw)", block_write_us)?;
        if segment_blocks == 0 {
            return Err(PlanError::OutOfRange { name: "segment_blocks (B)", value: 0.0, range: ">= 1" });
        }
        positive("network_mbps", network_mbps)?;
        positive("ssd_write_mbps", ssd_write_mbps)?;

        let (u, ud) = match u_given {
            Some(u) => {
                if !(u > 0.0 && u < 1.0) {
                    return Err(PlanError::OutOfRange { name: "segment_utilization (u)", value: u, range: OPEN_UNIT });
                }
                (u, disk_utilization(u)?)
            }
            None => (segment_utilization(ud_given)?, ud_given),
        };

        let te = erase_ms * 1000.0;
        let b = f64::from(segment_blocks);
        let tr = block_read_us * b;
        let tw = block_write_us * b;

        let erase = erase_term(te, tw, u)?;
        let read_write = read_write_term(tr, tw, u)?;
        let with_erase = min_rgroups(te, tr, tw, u)?;
        let without_erase = min_rgroups_without_erase(tr, tw, u)?;
        let with_erase_ceil = ceil_rgroups(with_erase, "N with erase term")?;
        let without_erase_ceil = ceil_rgroups(without_erase, "N without erase term")?;

        let parity = raid.parity_members();
        let width = rgroup_width(network_mbps, ssd_write_mbps, parity)?;
        let data = width - parity;
        let total = |n: u32| {
            n.checked_mul(width).ok_or(PlanError::OutOfRange {
                name: "total SSDs",
                value: f64::from(n) * f64::from(width),
                range: "a count that fits in a u32",
            })
        };

        let mut plan = Plan {
            segment_erase_us: te,
            block_read_us,
            block_write_us,
            segment_blocks,
            segment_read_us: tr,
            segment_write_us: tw,
            disk_utilization: ud,
            segment_utilization: u,
            segment_utilization_given: u_given.is_some(),
            erase_term: erase,
            read_write_term: read_write,
            gc_time_per_segment_us: gc_time_per_segment(te, tr, tw, u)?,
            refill_time_per_segment_us: refill_time_per_segment(tw, u)?,
            rgroups_with_erase: with_erase,
            rgroups_without_erase: without_erase,
            rgroups_with_erase_ceil: with_erase_ceil,
            rgroups_without_erase_ceil: without_erase_ceil,
            network_mbps,
            ssd_write_mbps,
            raid,
            data_ssds_per_rgroup: data,
            parity_ssds_per_rgroup: parity,
            ssds_per_rgroup: width,
            total_ssds_with_erase: total(with_erase_ceil)?,
            total_ssds_without_erase: total(without_erase_ceil)?,
            notes: Vec::new(),
        };
        plan.notes = plan.make_notes()?;
        Ok(plan)
    }

    fn make_notes(&self) -> Result<Vec<String>, PlanError> {
        let mut notes = Vec::new();
        // The paper's own example, for reference in the notes.
        let p = PlanInputs::PAPER;
        let (p_te, p_tr, p_tw) = (
            p.erase_ms * 1000.0,
            p.block_read_us * f64::from(p.segment_blocks),
            p.block_write_us * f64::from(p.segment_blocks),
        );
        let paper_u = 0.33;
        let paper_without = min_rgroups_without_erase(p_tr, p_tw, paper_u)?;
        let paper_with = min_rgroups(p_te, p_tr, p_tw, paper_u)?;

        notes.push(format!(
            "Erase term: Eq. 1 as printed gives N = {:.2} (erase term {:.2} + read/write term {:.2} + 1), {} R-groups; \
             without the erase term N = {:.2}, {} R-groups. The paper's example (Te = 4 ms, tr = 15.6 us, tw = 19.5 us, \
             B = 256, u = 0.33) reports N = 1.89, which is Eq. 1 without its erase term ({:.2}); with it the same \
             equation gives {:.2}. Which one holds is for the simulator to decide.",
            self.rgroups_with_erase,
            self.erase_term,
            self.read_write_term,
            self.rgroups_with_erase_ceil,
            self.rgroups_without_erase,
            self.rgroups_without_erase_ceil,
            paper_without,
            paper_with,
        ));

        if !self.segment_utilization_given && (self.disk_utilization - p.disk_utilization).abs() < 1e-12 {
            notes.push(format!(
                "Rounding of u: ud = 0.6 gives u = {:.4}; the paper rounds it to 0.33, and its 1.89 needs u = 0.33 \
                 exactly. Pass --segment-utilization 0.33 to reproduce the paper's figures.",
                self.segment_utilization
            ));
        }

        let paper_width = rgroup_width(p.network_mbps, p.ssd_write_mbps, p.raid.parity_members())?;
        notes.push(format!(
            "R-group width: {} data SSD(s) = ceil({} / {} MB/s), so that they write at least the network's bandwidth, \
             plus {} parity for {}: {} SSDs per R-group. The paper puts \"four SSDs (three for data and one for \
             parity)\" in a RAID4 R-group for a 10 GB/s network and 2.5 GB/s SSDs, but 3 x 2.5 = 7.5 GB/s < 10 GB/s; \
             this model gives {} (four is the RAID0 answer). So the paper's smallest XtremIO (18 SSDs) holds {} \
             R-groups of {} ({} spare), not four R-groups of four (one front-end, three back-end, two spare): \
             {} the paper's N without erase ({}), {} its N with erase ({}).",
            self.data_ssds_per_rgroup,
            self.network_mbps,
            self.ssd_write_mbps,
            self.parity_ssds_per_rgroup,
            self.raid,
            self.ssds_per_rgroup,
            paper_width,
            18 / paper_width,
            paper_width,
            18 % paper_width,
            if 18 / paper_width >= paper_without.ceil() as u32 { "enough for" } else { "too few for" },
            paper_without.ceil(),
            if 18 / paper_width >= paper_with.ceil() as u32 { "and for" } else { "not for" },
            paper_with.ceil(),
        ));

        let data_mbps = f64::from(self.data_ssds_per_rgroup) * self.ssd_write_mbps;
        if data_mbps > self.network_mbps * (1.0 + 1e-9) {
            notes.push(format!(
                "Headroom: the data SSDs write {data_mbps} MB/s, more than the network's {} MB/s, so the front-end fills \
                 more slowly than one segment per Tw; Eq. 1 assumes full speed, so both N are upper bounds.",
                self.network_mbps
            ));
        }

        if self.rgroups_without_erase_ceil < 2 || self.rgroups_with_erase_ceil < 2 {
            notes.push(
                "SWAN needs at least two R-groups (one front-end, one back-end) whatever Eq. 1 says.".to_string(),
            );
        }
        Ok(notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's per-segment times, µs: Te, Tr = 15.6·256, Tw = 19.5·256.
    const TE: f64 = 4000.0;
    const TR: f64 = 15.6 * 256.0;
    const TW: f64 = 19.5 * 256.0;

    fn round2(x: f64) -> f64 {
        (x * 100.0).round() / 100.0
    }

    #[test]
    fn paper_figures_at_u_033() {
        // The paper reports 1.89: Eq. 1 without the erase term.
        let without = min_rgroups_without_erase(TR, TW, 0.33).unwrap();
        assert_eq!(round2(without), 1.89, "{without}");
        // Eq. 1 as printed, with the erase term.
        let with = min_rgroups(TE, TR, TW, 0.33).unwrap();
        assert_eq!(round2(with), 3.08, "{with}");
        assert_eq!(round2(erase_term(TE, TW, 0.33).unwrap()), 1.20);
        assert_eq!(round2(read_write_term(TR, TW, 0.33).unwrap()), 0.89);
        assert_eq!(round2(with - without), round2(erase_term(TE, TW, 0.33).unwrap()));
    }

    #[test]
    fn paper_u_from_ud() {
        let u = segment_utilization(0.6).unwrap();
        assert!((u - 0.33).abs() < 0.01, "{u}");
        assert_eq!((u * 10_000.0).round() / 10_000.0, 0.3242);
        // With the exact u, Eq. 1 gives 1.86 / 3.05: same ceilings as the paper's rounded u.
        assert_eq!(round2(min_rgroups_without_erase(TR, TW, u).unwrap()), 1.86);
        assert_eq!(round2(min_rgroups(TE, TR, TW, u).unwrap()), 3.05);
    }

    #[test]
    fn utilization_round_trips() {
        // From ud = 0.01 (u ≈ 4e-44); below about 0.0014, u underflows to 0 (documented).
        for i in 10..1000 {
            let ud = f64::from(i) / 1000.0;
            let u = segment_utilization(ud).unwrap();
            assert!(u > 0.0 && u < 1.0 && u < ud, "ud {ud} -> u {u}");
            let back = disk_utilization(u).unwrap();
            assert!((back - ud).abs() < 1e-12, "ud {ud} -> u {u} -> ud {back}");
        }
        for i in 1..1000 {
            let u = f64::from(i) / 1000.0;
            let ud = disk_utilization(u).unwrap();
            let back = segment_utilization(ud).unwrap();
            assert!(((back - u) / u).abs() < 1e-9, "u {u} -> ud {ud} -> u {back}");
        }
        // Far ends.
        assert!((disk_utilization(segment_utilization(0.999_999).unwrap()).unwrap() - 0.999_999).abs() < 1e-12);
        assert!(segment_utilization(0.01).unwrap() < 1e-40);
        assert_eq!(segment_utilization(1e-4).unwrap(), 0.0);
        assert_eq!(disk_utilization(0.0).unwrap(), 0.0);
        assert_eq!(disk_utilization(1.0).unwrap(), 1.0);
        assert!((disk_utilization(1.0 - 1e-12).unwrap() - 1.0).abs() < 1e-11);
        assert!(disk_utilization(1e-300).unwrap() < 0.01);
    }

    #[test]
    fn disk_utilization_is_increasing() {
        let mut prev = 0.0;
        for i in 1..=1000 {
            let ud = disk_utilization(f64::from(i) / 1000.0).unwrap();
            assert!(ud > prev);
            prev = ud;
        }
    }

    #[test]
    fn n_grows_with_u_and_te() {
        let mut prev = (0.0, 0.0);
        for i in 0..100 {
            let u = f64::from(i) / 100.0;
            let n = (min_rgroups(TE, TR, TW, u).unwrap(), min_rgroups_without_erase(TR, TW, u).unwrap());
            assert!(n.0 > prev.0 && n.1 > prev.1, "u {u}");
            assert!(n.0 > n.1);
            prev = n;
        }
        let mut prev = 0.0;
        for i in 0..100 {
            let te = f64::from(i) * 100.0;
            let n = min_rgroups(te, TR, TW, 0.33).unwrap();
            assert!(n > prev, "te {te}");
            prev = n;
        }
        assert_eq!(min_rgroups(0.0, TR, TW, 0.33).unwrap(), min_rgroups_without_erase(TR, TW, 0.33).unwrap());
        assert_eq!(min_rgroups_without_erase(TR, TW, 0.0).unwrap(), 1.0);
    }

    #[test]
    fn ceiling_of_eq1_is_the_least_n_that_keeps_up() {
        for i in 0..99 {
            let u = f64::from(i) / 100.0;
            for (te, n) in
                [(TE, min_rgroups(TE, TR, TW, u).unwrap()), (0.0, min_rgroups_without_erase(TR, TW, u).unwrap())]
            {
                let c = n.ceil() as u32;
                assert!(gc_keeps_up(c, te, TR, TW, u).unwrap(), "u {u} te {te} N {n}");
                if n.fract() != 0.0 {
                    assert!(!gc_keeps_up(c - 1, te, TR, TW, u).unwrap(), "u {u} te {te} N {n}");
                }
            }
        }
        // The paper's example: 2 R-groups keep up only if erasure is free.
        assert!(gc_keeps_up(2, 0.0, TR, TW, 0.33).unwrap());
        assert!(!gc_keeps_up(2, TE, TR, TW, 0.33).unwrap());
        assert!(!gc_keeps_up(3, TE, TR, TW, 0.33).unwrap());
        assert!(gc_keeps_up(4, TE, TR, TW, 0.33).unwrap());
    }

    #[test]
    fn width() {
        // 10 GB/s over 2.5 GB/s SSDs: 4 data SSDs, + 1 parity for RAID4/5 (the paper says 3 + 1).
        assert_eq!(rgroup_width(10_000.0, 2_500.0, 1).unwrap(), 5);
        assert_eq!(rgroup_width(10_000.0, 2_500.0, 0).unwrap(), 4);
        assert_eq!(rgroup_width(10_000.0, 2_400.0, 1).unwrap(), 6);
        assert_eq!(rgroup_width(1_000.0, 2_500.0, 1).unwrap(), 2);
        assert_eq!(rgroup_width(1_000.0, 2_500.0, 0).unwrap(), 1);
        assert!(matches!(rgroup_width(1e300, 1e-300, 1), Err(PlanError::TooWide { .. })));
    }

    #[test]
    fn default_plan() {
        let plan = Plan::compute(PlanInputs::default()).unwrap();
        assert_eq!(plan.segment_erase_us, 4000.0);
        assert!((plan.segment_read_us - 3993.6).abs() < 1e-9);
        assert!((plan.segment_write_us - 4992.0).abs() < 1e-9);
        assert_eq!(round2(plan.segment_utilization), 0.32);
        assert_eq!(round2(plan.rgroups_with_erase), 3.05);
        assert_eq!(round2(plan.rgroups_without_erase), 1.86);
        assert_eq!((plan.rgroups_with_erase_ceil, plan.rgroups_without_erase_ceil), (4, 2));
        assert_eq!((plan.data_ssds_per_rgroup, plan.parity_ssds_per_rgroup, plan.ssds_per_rgroup), (4, 1, 5));
        assert_eq!((plan.total_ssds_with_erase, plan.total_ssds_without_erase), (20, 10));
        assert!(plan.notes.len() >= 3, "{:#?}", plan.notes);
        assert!(plan.notes[0].contains("1.89") && plan.notes[0].contains("3.08"), "{}", plan.notes[0]);
        assert!(plan.notes.iter().any(|n| n.contains("7.5 GB/s")));
    }

    #[test]
    fn plan_with_paper_u_reproduces_paper() {
        let plan = Plan::compute(PlanInputs { segment_utilization: Some(0.33), ..PlanInputs::PAPER }).unwrap();
        assert_eq!(round2(plan.rgroups_without_erase), 1.89);
        assert_eq!(round2(plan.rgroups_with_erase), 3.08);
        assert!(plan.segment_utilization_given);
        assert!((plan.disk_utilization - 0.604).abs() < 0.001, "{}", plan.disk_utilization);
        let raid0 = Plan::compute(PlanInputs { raid: RaidLevel::Raid0, ..PlanInputs::PAPER }).unwrap();
        assert_eq!(raid0.ssds_per_rgroup, 4);
        assert_eq!(raid0.total_ssds_with_erase, 16);
    }

    #[test]
    fn errors_name_the_input() {
        let bad = |i: PlanInputs| Plan::compute(i).unwrap_err();
        let p = PlanInputs::PAPER;
        for ud in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            let e = bad(PlanInputs { disk_utilization: ud, ..p });
            assert!(matches!(e, PlanError::OutOfRange { name: "disk_utilization (ud)", .. }), "{e}");
            assert!(e.to_string().contains("strictly between 0 and 1"), "{e}");
        }
        for u in [0.0, 1.0, 2.0, f64::NAN] {
            let e = bad(PlanInputs { segment_utilization: Some(u), ..p });
            assert!(matches!(e, PlanError::OutOfRange { name: "segment_utilization (u)", .. }), "{e}");
        }
        for t in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert!(bad(PlanInputs { erase_ms: t, ..p }).to_string().starts_with("erase_ms (Te)"));
            assert!(bad(PlanInputs { block_read_us: t, ..p }).to_string().starts_with("block_read_us (tr)"));
            assert!(bad(PlanInputs { block_write_us: t, ..p }).to_string().starts_with("block_write_us (tw)"));
            assert!(bad(PlanInputs { network_mbps: t, ..p }).to_string().starts_with("network_mbps"));
            assert!(bad(PlanInputs { ssd_write_mbps: t, ..p }).to_string().starts_with("ssd_write_mbps"));
        }
        assert!(bad(PlanInputs { segment_blocks: 0, ..p }).to_string().starts_with("segment_blocks (B)"));
        assert!(bad(PlanInputs { erase_ms: -1.0, ..p }).to_string().contains("> 0"));

        // The pure functions.
        assert!(segment_utilization(0.0).is_err());
        assert!(segment_utilization(1.0).is_err());
        assert!(disk_utilization(-0.01).is_err());
        assert!(disk_utilization(1.01).is_err());
        assert!(min_rgroups(TE, TR, TW, 1.0).is_err());
        assert!(min_rgroups(TE, TR, TW, -0.1).is_err());
        assert!(min_rgroups(TE, TR, 0.0, 0.3).is_err());
        assert!(min_rgroups(-1.0, TR, TW, 0.3).is_err());
        assert!(min_rgroups_without_erase(-1.0, TW, 0.3).is_err());
        assert!(rgroup_width(0.0, 2500.0, 1).is_err());
        assert!(rgroup_width(10_000.0, -1.0, 1).is_err());
        assert!(gc_keeps_up(2, TE, TR, TW, 1.0).is_err());
    }
}
