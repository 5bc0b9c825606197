//! Deep check of every scheme over modelled SSDs that carry the data: a long random mix of
//! reads, writes, trims and flushes, with the scheme's GC jobs kept in flight across user
//! requests (their phases run one at a time, interleaved with user I/O), against a
//! reference map of what every block must hold.
//!
//! It is `swan-core`'s `model_check` with the in-memory members replaced by
//! [`Ssd`]s in payload-tracking mode: every member block the scheme writes is a token stored
//! in a *physical* flash page, which the SSD's own FTL moves when it garbage-collects (page
//! FTL) or merges (block FTL). So one run exercises, all at once, the scheme's GC, SWAN's
//! front-end rotation and the SSDs' internal GC, and checks that
//! - every read returns what was last written,
//! - the scheme's invariants hold (valid counts add up, every live block is mapped once, no
//!   free segment holds live data) and so do the SSDs' (maps agree both ways, no page
//!   outside a live mapping carries a token), checked periodically and at the end,
//! - at the end, every live block holds its token and every closed parity row XORs to 0.
//!
//! The SSDs are the 850 PRO preset shrunk to a few hundred erase blocks, the smallest the
//! model accepts with its 16 dies, so that their internal GC runs constantly. Virtual time
//! advances 1 µs per user request and every member operation is submitted at the current
//! time, so timing runs as it would in the simulator (far behind the devices' backlog,
//! which only delays completions nobody waits for).
//!
//! `SWAN_DEEP_OPS` sets the operations per scheme (default 1,000,000).

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_core::geometry::RaidLevel;
use swan_core::io::{MemberBlock, MemberId, MemberIo};
use swan_core::scheme::{ArraySpec, Scheme, SchemeKind};
use swan_models::ssd::{presets, FtlKind, Ssd, SsdConfig};
use swan_models::{DevOp, DevOpKind, Device, Nanos};
use swan_testkit::tokens::{check_parity, drive, model_check_spec, DriveHooks, Executor, TokenStore};

/// Members' user capacity in 4 KiB pages: just above the smallest 850 PRO the page FTL
/// accepts (16 units each holding back a free and an open block), a multiple of the
/// 128-page erase block.
const MEMBER_PAGES: u64 = 544 * 128;

/// Virtual time between user requests.
const OP_GAP_NS: Nanos = 1_000;

/// How often (in user requests) the scheme's and the SSDs' invariants are checked.
const CHECK_EVERY: u64 = 25_000;

fn ops_per_scheme() -> u64 {
    std::env::var("SWAN_DEEP_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

/// Member blocks are SSD pages; tokens live in the SSDs' physical pages.
struct SsdStore {
    ssds: Vec<Ssd>,
    now: Nanos,
}

impl SsdStore {
    fn submit(&mut self, io: &MemberIo, kind: DevOpKind) {
        let op = DevOp { kind, block: io.block, count: io.count, class: io.class };
        self.ssds[io.member as usize].submit(self.now, op);
    }
}

impl TokenStore for SsdStore {
    fn read(&mut self, io: &MemberIo, out: &mut [u64]) {
        self.ssds[io.member as usize].read_tokens(self.now, io.block, out, io.class);
    }

    fn write(&mut self, io: &MemberIo, tokens: &[u64]) {
        self.ssds[io.member as usize].write_tokens(self.now, io.block, tokens, io.class);
    }

    fn trim(&mut self, io: &MemberIo) {
        self.submit(io, DevOpKind::Trim);
    }

    fn flush(&mut self, io: &MemberIo) {
        self.submit(io, DevOpKind::Flush);
    }

    fn peek(&self, member: MemberId, block: MemberBlock) -> u64 {
        self.ssds[member as usize].token(block)
    }
}

fn ssd_config(ftl: FtlKind) -> SsdConfig {
    let preset = match ftl {
        FtlKind::Page => presets::sata850pro(),
        FtlKind::Block => presets::sata850pro_blockftl(),
    };
    preset.with_user_pages(MEMBER_PAGES)
}

/// The model checks' array ([`model_check_spec`]) over larger members and segments.
fn spec(kind: SchemeKind) -> ArraySpec {
    ArraySpec { member_blocks: MEMBER_PAGES, segment_rows: 16, ..model_check_spec(kind) }
}

fn check_all(kind: SchemeKind, scheme: &dyn Scheme, store: &SsdStore, when: &str) {
    scheme.check().unwrap_or_else(|e| panic!("{kind}: scheme invariant broken {when}: {e}"));
    for (m, ssd) in store.ssds.iter().enumerate() {
        ssd.check_invariants().unwrap_or_else(|e| panic!("{kind}: SSD {m} invariant broken {when}: {e}"));
    }
}

/// Virtual time moves on between operations, and the SSDs' invariants are checked with
/// the scheme's.
struct SsdChecks {
    kind: SchemeKind,
}

impl DriveHooks<SsdStore> for SsdChecks {
    fn before_op(&mut self, exec: &mut Executor<SsdStore>) {
        exec.store_mut().now += OP_GAP_NS;
    }

    fn check(&mut self, scheme: &dyn Scheme, exec: &Executor<SsdStore>, when: &str) {
        check_all(self.kind, scheme, exec.store(), when);
    }
}

fn deep_check(kind: SchemeKind, ftl: FtlKind, seed: u64) {
    let spec = spec(kind);
    let config = ssd_config(ftl);
    config.validate().unwrap();
    let mut scheme = spec.build().unwrap();
    let ssds = (0..spec.members()).map(|_| Ssd::new(config.clone()).unwrap().with_payload()).collect();
    let mut exec = Executor::new(SsdStore { ssds, now: 0 }, spec.parity_group_width());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let label = format!("{kind} on {ftl:?} FTL, seed {seed}");
    let ops = ops_per_scheme();
    let mut hooks = SsdChecks { kind };
    let stats = drive(&label, &mut scheme, &mut exec, ops, CHECK_EVERY, &mut || rng.next_u64(), &mut hooks);
    let parity_rows = check_parity(&label, &spec, &exec);
    let c = scheme.counters();
    let ssd_copied: u64 = exec.store().ssds.iter().map(|s| s.stats().gc_pages_copied).sum();
    let ssd_erases: u64 = exec.store().ssds.iter().map(|s| s.stats().erases).sum();
    let ssd_written: u64 = exec.store().ssds.iter().map(|s| s.stats().host_pages_written).sum();
    eprintln!(
        "{kind} ({ftl:?} FTL): {ops} ops, {} reads checked, {} live blocks and {parity_rows} parity rows \
         checked at the end, {} GC jobs ({} blocks moved), {} front-end rotations, {} no-space retries; \
         SSDs: {ssd_copied} pages copied by internal GC, {ssd_erases} erases, WAF {:.2}",
        stats.reads_checked,
        stats.live_checked,
        stats.gc_jobs,
        c.gc_blocks_moved,
        c.front_rotations,
        stats.no_space,
        (ssd_written + ssd_copied) as f64 / ssd_written.max(1) as f64,
    );
    assert!(stats.reads_checked > ops / 10, "{kind}: only {} reads checked", stats.reads_checked);
    if kind.is_log_structured() {
        assert!(stats.gc_jobs > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", stats.gc_jobs);
    }
    if matches!(kind, SchemeKind::Swan(_)) {
        assert!(c.front_rotations > 100, "{kind}: the front-end barely rotated ({})", c.front_rotations);
    }
    assert!(ssd_copied > 0, "{kind} on {ftl:?} FTL: the SSDs' internal GC never moved a page");
}

macro_rules! deep_tests {
    ($($name:ident => $kind:expr, $ftl:expr, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            deep_check($kind, $ftl, $seed);
        }
    )*};
}

deep_tests! {
    raid0_deep => SchemeKind::Raid(RaidLevel::Raid0), FtlKind::Page, 11;
    raid4_deep => SchemeKind::Raid(RaidLevel::Raid4), FtlKind::Page, 12;
    raid5_deep => SchemeKind::Raid(RaidLevel::Raid5), FtlKind::Page, 13;
    lograid0_deep => SchemeKind::LogRaid(RaidLevel::Raid0), FtlKind::Page, 14;
    lograid4_deep => SchemeKind::LogRaid(RaidLevel::Raid4), FtlKind::Page, 15;
    lograid5_deep => SchemeKind::LogRaid(RaidLevel::Raid5), FtlKind::Page, 16;
    swan0_deep => SchemeKind::Swan(RaidLevel::Raid0), FtlKind::Page, 17;
    swan4_deep => SchemeKind::Swan(RaidLevel::Raid4), FtlKind::Page, 18;
    swan5_deep => SchemeKind::Swan(RaidLevel::Raid5), FtlKind::Page, 19;
    swan0_block_ftl_deep => SchemeKind::Swan(RaidLevel::Raid0), FtlKind::Block, 20;
}
