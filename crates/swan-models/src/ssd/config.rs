//! What an SSD is made of: geometry, NAND timing, interface rates, GC policy and FTL kind
//! ([`SsdConfig`]), the quantities derived from them (raw blocks, GC trigger level), and
//! the checks that reject a device the model could not run ([`SsdConfigError`]).

use serde::{Deserialize, Serialize};

use crate::Nanos;

/// Flash page size. Fixed: the array addresses members in 4 KiB blocks, and one logical
/// block is one flash page, so every mapping entry covers exactly one host block.
pub const PAGE_BYTES: u64 = 4096;

/// Which flash translation layer maps logical pages to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FtlKind {
    /// Page-level mapping with greedy garbage collection (what real SSDs do).
    Page,
    /// Block-level mapping with merges on out-of-order writes (SWAN §6 "simpler SSDs").
    Block,
}

/// Where a device keeps its free blocks and collects garbage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcDomain {
    /// One free pool and one set of victims for the whole device; writes and GC copies
    /// stripe over every unit, so the units run dry, and collect, together. A controller
    /// that stripes dynamically over all its dies (the 850 PRO-like presets).
    #[default]
    Device,
    /// A free pool, watermarks and greedy victims per unit, as DiskSim's SSD extension
    /// keeps them per element: a unit at its low watermark cleans itself, and only requests
    /// that need that unit wait; GC copies stay in the unit.
    Unit,
}

/// How a write finds its GC domain (with [`GcDomain::Unit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Logical page `p` always lives in unit `p % units` (DiskSim's element stride of one
    /// page), so a unit's load is the workload's share of its pages.
    #[default]
    Static,
    /// Each written page goes to the next unit in turn, wherever it lived before.
    Striped,
}

/// What a host read does about the device's own overtakable work (its preemptible GC, and
/// buffered write-back) that is *in flight* on its die when the read could start. Work merely
/// queued is overtaken in every mode; the modes differ on the operation already running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Suspension {
    /// The read overtakes even the operation in flight, which resumes as if it had never
    /// stopped, at no cost: an idealisation, stronger than any NAND or firmware offers.
    #[default]
    Instant,
    /// The read waits for the operation in flight to end and goes before anything queued:
    /// semi-preemptible GC (Lee et al., 2011), which yields only between page operations and
    /// needs no NAND support. A read then waits at most one program or one erase.
    BetweenOps,
    /// NAND program and/or erase suspension (Wu and He, FAST '12; MQSim's
    /// `CMD_Suspension_Support`, `Suspend_Program_Time`, `Suspend_Erase_Time`): a read
    /// arriving while a program (erase) has at least `min_remaining_ns` left suspends it,
    /// paying `program_ns` (`erase_ns`) before its own sense; `None` means that operation
    /// does not suspend. The operation then resumes with the time it had left, pushed back
    /// by the read. An operation is suspended at most once; a later read waits for it.
    /// Other operations in flight (GC's own senses) are waited for, as
    /// [`Suspension::BetweenOps`].
    Nand { program_ns: Option<Nanos>, erase_ns: Option<Nanos>, min_remaining_ns: Nanos },
}

impl Suspension {
    /// MQSim's default suspend latencies (`Suspend_Program_Time`, `Suspend_Erase_Time`): the
    /// only published simulator values; NAND data sheets of 850 PRO-era MLC list no suspend.
    pub const MQSIM_PROGRAM_NS: Nanos = 100_000;
    pub const MQSIM_ERASE_NS: Nanos = 700_000;
}

/// `instant`, `between-ops`, or `program`, `erase`, `program-erase`, optionally with
/// latencies in µs: `program-erase:100,700` (program, erase), `erase:700`.
impl std::str::FromStr for Suspension {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "use instant, between-ops, program[:US], erase[:US] or program-erase[:US,US]";
        let (mode, latencies) = s.split_once(':').map_or((s, None), |(m, l)| (m, Some(l)));
        let mut us = Vec::new();
        for l in latencies.map(|l| l.split(',').collect::<Vec<_>>()).unwrap_or_default() {
            let v: f64 = l.trim().parse().map_err(|_| format!("`{l}` in `{s}` is not a latency in µs; {usage}"))?;
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("`{l}` in `{s}` is not a latency ≥ 0 µs; {usage}"));
            }
            us.push((v * 1_000.0).round() as Nanos);
        }
        let (program, erase) = (Some(Self::MQSIM_PROGRAM_NS), Some(Self::MQSIM_ERASE_NS));
        let (program_ns, erase_ns) = match (mode, us.as_slice()) {
            ("instant", []) => return Ok(Suspension::Instant),
            ("between-ops", []) => return Ok(Suspension::BetweenOps),
            ("program", []) => (program, None),
            ("program", [p]) => (Some(*p), None),
            ("erase", []) => (None, erase),
            ("erase", [e]) => (None, Some(*e)),
            ("program-erase", []) => (program, erase),
            ("program-erase", [p, e]) => (Some(*p), Some(*e)),
            _ => return Err(format!("`{s}` is not a suspension mode; {usage}")),
        };
        Ok(Suspension::Nand { program_ns, erase_ns, min_remaining_ns: 0 })
    }
}

/// Where a device-wide GC domain ([`GcDomain::Device`]) puts consecutive pages it writes,
/// unit by unit. Which one a real controller uses decides whether a host's TRIM of what it
/// wrote in one run frees whole erase blocks: a block is freed without copying only when
/// every page in it dies together (He et al., "The Unwritten Contract of SSDs", EuroSys '17:
/// "grouping by death time").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteLayout {
    /// Each page goes to the next unit in turn: the most parallel layout, and what MQSim's
    /// static CWDP allocation and DiskSim's element stride of one page both give. A block
    /// then holds every `units`-th page of a run, so a run frees whole blocks only when it
    /// spans one block on every unit ([`SsdConfig::erase_stripe_pages`]).
    #[default]
    PageStriped,
    /// Stay on one unit for `pages` consecutive pages, then move to the next. With `pages`
    /// equal to `pages_per_block` a block holds one run of the write stream, so a TRIM of an
    /// aligned run of a block frees it whole (chunked striping, issue 47's research memo §3
    /// (a)); the price is that one sequential stream programs on one unit at a time unless a
    /// write buffer of about units × block holds enough of it to spread.
    Chunked { pages: u32 },
}

/// An SSD model's parameters. Build one from a preset (see [`super::presets`]) and shrink
/// it with [`SsdConfig::with_user_pages`] for reduced-scale runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SsdConfig {
    pub name: String,
    /// Host-visible capacity in 4 KiB pages: the device's LBA space.
    pub user_pages: u64,
    /// Pages per erase block.
    pub pages_per_block: u32,
    pub channels: u32,
    pub dies_per_channel: u32,
    /// Planes per die. The timing model treats every plane as an independent unit (see
    /// the `timing` module), so parallelism is `channels × dies_per_channel × planes_per_die`.
    pub planes_per_die: u32,
    /// Raw flash beyond the user capacity, as a fraction of the user capacity
    /// (0.07 = 7 % more flash than the host can address).
    pub over_provisioning: f64,
    /// Time to sense one page into the die's register.
    pub t_read_ns: Nanos,
    /// Time to program one page from the die's register. It is the *effective* time per
    /// 4 KiB: presets fold multi-page (16 KiB) programs into it so bandwidth comes out right.
    pub t_prog_ns: Nanos,
    pub t_erase_ns: Nanos,
    /// Transfer rate of one flash channel (MB/s, 10^6 bytes per second).
    pub channel_mbps: u64,
    /// Payload rate of the host interface (MB/s); every byte read or written crosses it.
    pub host_mbps: u64,
    /// Fixed controller overhead added to every command's completion. It is pure latency
    /// and occupies no resource; it is all that trims, flushes and unmapped reads cost.
    pub cmd_latency_ns: Nanos,
    /// Foreground GC runs before a host write when free blocks are at or below this
    /// fraction of all blocks (never fewer than one block per die plus one; see
    /// [`SsdConfig::gc_trigger_blocks`]).
    pub gc_threshold: f64,
    /// Foreground GC returns once the free pool holds this many blocks above the trigger
    /// level. Small values make stalls short and frequent, as real SSDs behave.
    pub gc_reclaim_blocks: u32,
    /// Harmonia's soft limit: a free-block fraction above `gc_threshold` at which the
    /// device reports [`super::GcPressure::SoftLimit`] so an array can coordinate GC.
    pub gc_soft_limit: f64,
    pub ftl: FtlKind,
    /// Where free blocks are kept and garbage is collected (page FTL).
    #[serde(default)]
    pub gc_domain: GcDomain,
    /// How pages find their domain when there is one per unit.
    #[serde(default)]
    pub placement: Placement,
    /// GC copies a page inside its unit without crossing the channel (copy-back): a read
    /// and a program on the unit, nothing else. Otherwise the page crosses the channel out
    /// and back in.
    #[serde(default)]
    pub copy_back: bool,
    /// The device's own GC (its copies and erases) yields to host reads that ask to
    /// preempt ([`super::IoClass::UserPreempt`]), as controllers with preemptible GC
    /// (Lee et al., "Semi-preemptible garbage collection", 2011) and NAND with erase
    /// suspension (Wu and He, FAST '12) let them: such a read waits only for foreground host
    /// work on its die. Otherwise a read waits for every copy and erase queued before it.
    #[serde(default)]
    pub gc_preemptible: bool,
    /// What a host read does about overtakable work in flight on its die ([`Suspension`]).
    #[serde(default, skip_serializing_if = "is_default")]
    pub suspension: Suspension,
    /// Pages of controller DRAM that hold host writes until they are programmed (0: none, a
    /// write completes when its last page is programmed). With a buffer a write completes
    /// once its pages are in DRAM, waiting only while the buffer is full; its programs then
    /// run as write-back that host reads overtake (MQSim's write cache with reads scheduled
    /// first), and a FLUSH completes when every page written before it is programmed, as the
    /// ATA volatile write cache requires. Real drives do not publish the share of their DRAM
    /// that buffers writes, so every value is an assumption a result must name.
    #[serde(default, skip_serializing_if = "is_default")]
    pub write_buffer_pages: u32,
    /// Where consecutive pages go, unit by unit, in a device-wide GC domain (page FTL only).
    /// The default is today's striping, and a default value is left out of the serialised
    /// config so runs recorded before the field existed read and print the same.
    #[serde(default, skip_serializing_if = "is_default")]
    pub layout: WriteLayout,
    /// GC copies go to an open block of their own on each unit, with their own cursor, not
    /// into the blocks host writes fill: MQSim's per-plane `GC_wf` beside its `Data_wf`,
    /// after Van Houdt's "double write frontier" (Perf. Eval. 2014). Relocated pages are
    /// cold and die at other times than fresh host data, so mixing them into host blocks
    /// spoils the host's whole-block TRIMs. Copies stripe page by page whatever the
    /// [`WriteLayout`]: they have no TRIM to line up with, and striping keeps a victim's
    /// copies on every unit at once. It costs a second open block per unit, which the GC
    /// reserve counts ([`SsdConfig::validate`]). Page FTL only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_frontier: bool,
    /// Host reads go before buffered write-back queued on their die (MQSim's default
    /// scheduling, reads first); otherwise write-back is served in order with them, so a read
    /// waits for every buffered program queued on its die before it. Only with a write buffer.
    #[serde(default = "reads_first", skip_serializing_if = "is_reads_first")]
    pub reads_before_write_back: bool,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

fn reads_first() -> bool {
    true
}

fn is_reads_first(value: &bool) -> bool {
    *value
}

/// A configuration the model cannot run, naming the field and what would work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SSD config `{config}`: `{field}` {problem}")]
pub struct SsdConfigError {
    pub config: String,
    pub field: &'static str,
    pub problem: String,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The largest page number a 32-bit map entry can hold; `u32::MAX` is the "unmapped" sentinel.
const MAX_PAGES: u64 = u32::MAX as u64 - 1;

impl SsdConfig {
    /// Independent flash units (planes) the timing model schedules.
    pub fn units(&self) -> u32 {
        self.channels * self.dies_per_channel * self.planes_per_die
    }

    /// The run of consecutive host pages a host must TRIM whole for the SSD to erase blocks
    /// without copying, by where the FTL places consecutive writes ([`WriteLayout`]):
    /// striped page by page, one erase block on every unit (16 × 512 KiB = 8 MiB for the
    /// 850 PRO model); in chunks of whole blocks, one block; in smaller or odd chunks, every
    /// unit's share up to where chunks and blocks end together. It assumes the run reaches
    /// the FTL as one stream; the device's own GC copies join that stream unless it has a
    /// GC frontier ([`SsdConfig::gc_frontier`]).
    pub fn erase_stripe_pages(&self) -> u64 {
        let (units, ppb) = (u64::from(self.units()), u64::from(self.pages_per_block));
        match self.layout {
            WriteLayout::PageStriped => units * ppb,
            WriteLayout::Chunked { pages } => {
                let pages = u64::from(pages.max(1));
                if pages.is_multiple_of(ppb) {
                    ppb
                } else {
                    units.saturating_mul(pages / gcd(pages, ppb) * ppb)
                }
            }
        }
    }

    /// Why an array segment of `segment_pages` per SSD does not line up with this model's
    /// erase stripe, and what would; `None` when it is a whole number of stripes.
    pub fn segment_misalignment(&self, segment_pages: u64) -> Option<String> {
        let stripe = self.erase_stripe_pages();
        (!segment_pages.is_multiple_of(stripe)).then(|| {
            let kib = |pages: u64| pages * PAGE_BYTES / 1024;
            let block = kib(u64::from(self.pages_per_block));
            let made_of = match self.layout {
                WriteLayout::PageStriped => format!("{} units × {block} KiB blocks", self.units()),
                WriteLayout::Chunked { pages } if stripe == u64::from(self.pages_per_block) => format!(
                    "one {block} KiB block: the model writes {} KiB to one unit before it moves on",
                    kib(u64::from(pages))
                ),
                WriteLayout::Chunked { pages } => format!(
                    "{} units × {} KiB: the model writes {} KiB to one unit before it moves on, and those chunks \
                     end with its {block} KiB blocks only that often",
                    self.units(),
                    kib(stripe / u64::from(self.units())),
                    kib(u64::from(pages))
                ),
            };
            format!(
                "a segment of {} KiB per SSD is not a multiple of the {} model's erase stripe ({} KiB = {made_of}): \
                 a victim's TRIM frees no whole erase block and the SSDs' own GC copies what is left; \
                 segments of {} KiB line them up",
                kib(segment_pages),
                self.name,
                kib(stripe),
                kib(stripe)
            )
        })
    }

    /// Open blocks the page FTL keeps on each unit: one for host writes, and one for GC
    /// copies with a GC frontier.
    pub fn open_blocks_per_unit(&self) -> u32 {
        1 + u32::from(self.gc_frontier)
    }

    /// Erase blocks of raw flash: user capacity plus over-provisioning, rounded up to whole blocks.
    pub fn raw_blocks(&self) -> u64 {
        // Rounding the page count first keeps exact figures exact (120 GiB × 16/15 must be
        // 128 GiB, not one block more because of the last bit of 1/15).
        let raw_pages = (self.user_pages as f64 * (1.0 + self.over_provisioning)).round() as u64;
        let blocks = raw_pages.max(self.user_pages).div_ceil(u64::from(self.pages_per_block));
        // Domains own equal shares of the flash: a few blocks more rather than one short.
        let domains = u64::from(self.domains().max(1));
        blocks.div_ceil(domains) * domains
    }

    pub fn raw_pages(&self) -> u64 {
        self.raw_blocks() * u64::from(self.pages_per_block)
    }

    pub fn user_bytes(&self) -> u64 {
        self.user_pages * PAGE_BYTES
    }

    pub fn raw_bytes(&self) -> u64 {
        self.raw_pages() * PAGE_BYTES
    }

    /// Logical blocks (block-FTL mapping units) covering the user capacity.
    pub fn logical_blocks(&self) -> u64 {
        self.user_pages.div_ceil(u64::from(self.pages_per_block))
    }

    /// GC domains: one, or one per unit.
    pub fn domains(&self) -> u32 {
        match self.gc_domain {
            GcDomain::Device => 1,
            GcDomain::Unit => self.units(),
        }
    }

    /// Units each GC domain writes to.
    pub fn domain_units(&self) -> u32 {
        self.units() / self.domains()
    }

    /// Erase blocks each GC domain owns (all of them for a device-wide domain).
    pub fn domain_blocks(&self) -> u64 {
        self.raw_blocks() / u64::from(self.domains())
    }

    /// Free blocks of a domain at or below which foreground GC runs in it (its low
    /// watermark, the hard limit). Never fewer than one per unit plus one: one GC round may
    /// open a fresh block on every unit before it erases its victim, so a smaller reserve
    /// could run the pool dry in the middle of GC. A GC frontier does not raise it: during
    /// GC only the frontier GC writes to opens blocks.
    pub fn gc_trigger_blocks(&self) -> u64 {
        let by_fraction = (self.gc_threshold * self.domain_blocks() as f64).ceil() as u64;
        by_fraction.max(u64::from(self.domain_units()) + 1)
    }

    /// Free blocks of a domain at or below which it reports the soft limit.
    pub fn gc_soft_limit_blocks(&self) -> u64 {
        let by_fraction = (self.gc_soft_limit * self.domain_blocks() as f64).ceil() as u64;
        by_fraction.max(self.gc_trigger_blocks())
    }

    /// Logical pages a domain must be able to hold: all of them, or its static share.
    fn domain_user_pages(&self) -> u64 {
        match (self.gc_domain, self.placement) {
            (GcDomain::Device, _) => self.user_pages,
            (GcDomain::Unit, Placement::Static) => self.user_pages.div_ceil(u64::from(self.domains())),
            // A striped domain holds what writes happened to put there; on average its share.
            (GcDomain::Unit, Placement::Striped) => self.user_pages.div_ceil(u64::from(self.domains())),
        }
    }

    /// The same device (timing, geometry per die, proportions, GC policy) with a smaller or
    /// larger user capacity, for reduced-scale experiments. Raw flash follows from
    /// `over_provisioning`. Call [`SsdConfig::validate`] on the result: very small devices
    /// may not leave GC enough spare blocks.
    pub fn with_user_pages(&self, user_pages: u64) -> Self {
        Self { user_pages, ..self.clone() }
    }

    /// The smallest user capacity, in pages and at most `max_pages`, that the model accepts
    /// for this device, if any. Validity is monotonic in size (a small device leaves GC no
    /// spare blocks; any larger one works), so a binary search finds it.
    pub fn min_user_pages(&self, max_pages: u64) -> Option<u64> {
        let fits = |pages: u64| self.with_user_pages(pages).validate().is_ok();
        // Invariant: `lo` does not fit (0 never does), `hi` does.
        let (mut lo, mut hi) = (0u64, max_pages);
        if !fits(hi) {
            return None;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// [`SsdConfig::with_user_pages`] for a capacity in bytes (rounded down to whole pages).
    pub fn with_user_bytes(&self, bytes: u64) -> Self {
        self.with_user_pages(bytes / PAGE_BYTES)
    }

    /// Checks that the model can run this device, and why not.
    pub fn validate(&self) -> Result<(), SsdConfigError> {
        let err =
            |field: &'static str, problem: String| Err(SsdConfigError { config: self.name.clone(), field, problem });
        for (field, value) in [
            ("channels", self.channels),
            ("dies_per_channel", self.dies_per_channel),
            ("planes_per_die", self.planes_per_die),
        ] {
            if value == 0 {
                return err(
                    field,
                    "is 0: a device needs at least one of each (e.g. 8 channels × 2 dies × 1 plane)".into(),
                );
            }
        }
        if u64::from(self.channels) * u64::from(self.dies_per_channel) * u64::from(self.planes_per_die)
            > u64::from(u16::MAX)
        {
            return err(
                "dies_per_channel",
                "makes more than 65535 units (channels × dies × planes); unit ids are 16-bit".into(),
            );
        }
        if self.pages_per_block < 2 || self.pages_per_block > u32::from(u16::MAX) {
            return err(
                "pages_per_block",
                format!("is {}; use 2..=65535 (valid-page counts are 16-bit), e.g. 64-512", self.pages_per_block),
            );
        }
        if self.user_pages == 0 {
            return err("user_pages", "is 0; give the device some capacity (262144 pages = 1 GiB)".into());
        }
        if !(self.over_provisioning.is_finite() && self.over_provisioning >= 0.0) {
            return err("over_provisioning", format!("is {}; use a fraction ≥ 0 such as 0.07", self.over_provisioning));
        }
        if self.raw_pages() > MAX_PAGES {
            return err(
                "user_pages",
                format!(
                    "gives {} raw pages; page numbers are 32-bit, so keep raw flash under 16 TiB",
                    self.raw_pages()
                ),
            );
        }
        if self.t_read_ns == 0 || self.t_prog_ns == 0 {
            return err("t_prog_ns", "and t_read_ns must be > 0, or bandwidth would be unbounded".into());
        }
        if self.channel_mbps == 0 {
            return err("channel_mbps", "is 0; a channel needs a rate (e.g. 400 MB/s)".into());
        }
        if self.host_mbps == 0 {
            return err("host_mbps", "is 0; a host link needs a rate (SATA ≈ 550 MB/s)".into());
        }
        if !(0.0..1.0).contains(&self.gc_threshold) {
            return err(
                "gc_threshold",
                format!("is {}; use a free-block fraction in [0, 1), e.g. 0.05", self.gc_threshold),
            );
        }
        if !(self.gc_threshold..1.0).contains(&self.gc_soft_limit) {
            return err(
                "gc_soft_limit",
                format!("is {}; it must lie in [gc_threshold = {}, 1)", self.gc_soft_limit, self.gc_threshold),
            );
        }
        if self.gc_reclaim_blocks == 0 {
            return err("gc_reclaim_blocks", "is 0; GC must free at least one block per run".into());
        }
        self.validate_layout()?;
        match self.ftl {
            FtlKind::Page => self.validate_page_ftl_spare(),
            FtlKind::Block => {
                if self.raw_blocks() <= self.logical_blocks() {
                    return err(
                        "over_provisioning",
                        format!(
                            "is {}: the block FTL needs at least one spare physical block for merges; \
                             raw blocks {} ≤ logical blocks {}",
                            self.over_provisioning,
                            self.raw_blocks(),
                            self.logical_blocks()
                        ),
                    );
                }
                Ok(())
            }
        }
    }

    /// The write layout and GC frontier are page-FTL placement, and a layout needs a
    /// device-wide domain: a domain per unit has one unit to place on.
    fn validate_layout(&self) -> Result<(), SsdConfigError> {
        let err =
            |field: &'static str, problem: String| Err(SsdConfigError { config: self.name.clone(), field, problem });
        if let WriteLayout::Chunked { pages } = self.layout {
            if pages == 0 {
                return err(
                    "layout",
                    "is Chunked with 0 pages; use at least 1 (pages_per_block for whole blocks)".into(),
                );
            }
            if self.gc_domain != GcDomain::Device {
                return err(
                    "layout",
                    "is Chunked, but with a GC domain per unit each domain writes one unit; use GcDomain::Device"
                        .into(),
                );
            }
        }
        if self.ftl != FtlKind::Page && (self.layout != WriteLayout::PageStriped || self.gc_frontier) {
            return err(
                if self.gc_frontier { "gc_frontier" } else { "layout" },
                "places pages of the page FTL; the block FTL maps whole blocks and ignores it".into(),
            );
        }
        Ok(())
    }

    /// GC makes progress only if, with the free reserve held back and every unit's open
    /// blocks (one, or two with a GC frontier) out of reach, the closed blocks cannot all be
    /// full of valid data: then the greedy victim always has an invalid page to reclaim.
    fn validate_page_ftl_spare(&self) -> Result<(), SsdConfigError> {
        let ppb = u64::from(self.pages_per_block);
        let open = u64::from(self.open_blocks_per_unit()) * u64::from(self.domain_units());
        let held = self.gc_trigger_blocks() + u64::from(self.gc_reclaim_blocks) + open;
        let raw = self.domain_blocks();
        if raw > held && (raw - held) * ppb > self.domain_user_pages() {
            return Ok(());
        }
        // Smallest raw size that would work: raw·(1 − threshold) must exceed user blocks plus
        // the fixed part of the reserve (the per-unit floor of the trigger counts too).
        let per_domain = self.domain_user_pages().div_ceil(ppb)
            + u64::from(self.gc_reclaim_blocks)
            + open
            + u64::from(self.domain_units())
            + 2;
        let need_raw = ((per_domain as f64) / (1.0 - self.gc_threshold)).ceil() * f64::from(self.domains());
        // Rounded up so the printed value itself passes.
        let min_op = ((need_raw * ppb as f64 / self.user_pages as f64 - 1.0) * 1e4).ceil() / 1e4;
        Err(SsdConfigError {
            config: self.name.clone(),
            field: "over_provisioning",
            problem: format!(
                "is {:.4}: {raw} raw blocks per GC domain minus its reserve ({} free + {} reclaim + {open} open, \
                 {} per unit) cannot hold its {} user pages with room to spare, so GC could never make progress; \
                 use over_provisioning ≥ {min_op:.4}, or fewer units, larger user_pages or a lower gc_threshold",
                self.over_provisioning,
                self.gc_trigger_blocks(),
                self.gc_reclaim_blocks,
                if self.gc_frontier { "two" } else { "one" },
                self.domain_user_pages()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::presets;

    #[test]
    fn segments_line_up_with_whole_erase_stripes_only() {
        let c = presets::preset("sata850pro").unwrap();
        // 16 units × 128 pages of 4 KiB: 8 MiB.
        assert_eq!(c.erase_stripe_pages(), 2048);
        assert_eq!(c.segment_misalignment(2048), None);
        assert_eq!(c.segment_misalignment(4096), None);
        for bad in [256, 1024, 3072] {
            let why = c.segment_misalignment(bad).expect("misaligned");
            assert!(why.contains("8192 KiB") && why.contains("sata850pro"), "{why}");
        }
    }

    #[test]
    fn presets_validate_at_full_and_reduced_scale() {
        for name in presets::PRESET_NAMES {
            let c = presets::preset(name).unwrap();
            c.validate().unwrap();
            c.with_user_bytes(1 << 30).validate().unwrap();
            c.with_user_bytes(4 << 30).validate().unwrap();
        }
    }

    #[test]
    fn suspension_modes_parse_with_mqsims_latencies_by_default() {
        use super::Suspension;
        assert_eq!("instant".parse(), Ok(Suspension::Instant));
        assert_eq!("between-ops".parse(), Ok(Suspension::BetweenOps));
        let nand = |p, e| Suspension::Nand { program_ns: p, erase_ns: e, min_remaining_ns: 0 };
        assert_eq!("program-erase".parse(), Ok(nand(Some(100_000), Some(700_000))));
        assert_eq!("erase:350".parse(), Ok(nand(None, Some(350_000))));
        assert_eq!("program-erase:5,20.5".parse(), Ok(nand(Some(5_000), Some(20_500))));
        for bad in ["", "suspend", "program:x", "erase:-1", "program-erase:5", "instant:3"] {
            assert!(bad.parse::<Suspension>().unwrap_err().contains("between-ops"), "{bad}");
        }
    }

    #[test]
    fn zero_dies_is_rejected_by_name() {
        let mut c = presets::sata850pro();
        c.dies_per_channel = 0;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "dies_per_channel");
        assert!(e.to_string().contains("sata850pro"), "{e}");
    }

    #[test]
    fn too_little_over_provisioning_is_rejected_with_a_working_value() {
        let mut c = presets::sata850pro().with_user_pages(8192);
        c.over_provisioning = 0.01;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "over_provisioning");
        // The suggested value must itself validate.
        let suggested: f64 = e.problem.split("≥ ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
        c.over_provisioning = suggested;
        c.validate().unwrap();
    }

    #[test]
    fn scaling_keeps_proportions() {
        let full = presets::sata850pro();
        let small = full.with_user_pages(262_144);
        assert_eq!(small.t_prog_ns, full.t_prog_ns);
        assert_eq!(small.units(), full.units());
        let ratio = small.raw_pages() as f64 / small.user_pages as f64;
        assert!((ratio - (1.0 + full.over_provisioning)).abs() < 0.001, "{ratio}");
    }
}
