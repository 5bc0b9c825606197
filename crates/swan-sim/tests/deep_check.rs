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
use swan_core::io::{IoPlan, MemberBlock, MemberId, MemberIo};
use swan_core::scheme::{ArraySpec, ReqOp, Scheme, SchemeKind, Submitted};
use swan_core::testkit;
use swan_core::testkit::{parity_group_width, Executor, Expect, GcQueue, Reference, TokenStore};
use swan_core::victim::VictimPolicy;
use swan_models::ssd::{presets, FtlKind, Ssd, SsdConfig};
use swan_models::{DevOp, DevOpKind, Device, Nanos};

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

fn spec(kind: SchemeKind) -> ArraySpec {
    let (rgroups, ssds) = match kind {
        SchemeKind::Swan(RaidLevel::Raid0) => (4, 2),
        SchemeKind::Swan(_) => (3, 3),
        SchemeKind::LogRaid(_) | SchemeKind::Raid(_) => (1, 6),
    };
    ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup: ssds,
        member_blocks: MEMBER_PAGES,
        member_offset: 0,
        segment_rows: 16,
        chunk_blocks: 4,
        victim: if matches!(kind, SchemeKind::Swan(RaidLevel::Raid5)) {
            VictimPolicy::CostBenefit
        } else {
            VictimPolicy::Greedy
        },
        tuning: Default::default(),
    }
}

fn check_all(kind: SchemeKind, scheme: &dyn Scheme, store: &SsdStore, when: &str) {
    scheme.check().unwrap_or_else(|e| panic!("{kind}: scheme invariant broken {when}: {e}"));
    for (m, ssd) in store.ssds.iter().enumerate() {
        ssd.check_invariants().unwrap_or_else(|e| panic!("{kind}: SSD {m} invariant broken {when}: {e}"));
    }
}

fn deep_check(kind: SchemeKind, ftl: FtlKind, seed: u64) {
    let spec = spec(kind);
    let config = ssd_config(ftl);
    config.validate().unwrap();
    let mut scheme = spec.build().unwrap();
    let ssds = (0..spec.members()).map(|_| Ssd::new(config.clone()).unwrap().with_payload()).collect();
    let mut exec = Executor::new(SsdStore { ssds, now: 0 }, parity_group_width(&spec));
    let volume = scheme.volume_blocks();
    // Write over most of the volume so GC has to work hard.
    let working_set = volume * 9 / 10;
    let partial_trims_keep_data = matches!(kind, SchemeKind::Raid(RaidLevel::Raid4 | RaidLevel::Raid5));
    let mut reference = Reference::new(volume);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut plan = IoPlan::new();
    let mut gc = GcQueue::new();
    let mut next_token = 1u64;
    let mut user = Vec::new();
    let mut reply = Vec::new();
    let mut scratch = Vec::new();
    scheme.format(&mut plan);
    exec.run_plan(&plan, &[], &mut [], &mut scratch);
    let ops = ops_per_scheme();
    let (mut reads_checked, mut no_space) = (0u64, 0u64);
    for op_index in 0..ops {
        exec.store_mut().now += OP_GAP_NS;
        // Advance in-flight GC jobs by one phase now and then, so user I/O interleaves.
        if !gc.is_empty() && rng.next_u32() % 3 == 0 {
            gc.step(scheme.as_mut(), &mut exec);
        }
        gc.start(scheme.as_mut(), 4);
        let (roll, size, where_) = (rng.next_u32(), rng.next_u32(), rng.next_u64());
        let req = testkit::random_request(roll, size, where_, working_set);
        let (op, lba, blocks) = (req.op, req.lba, req.blocks);
        testkit::payload_tokens(&req, next_token, &mut user);
        match scheme.submit(&req, &mut plan).unwrap() {
            Submitted::NoSpace => {
                // Only legitimate while GC is in flight and will free space.
                assert!(!gc.is_empty(), "{kind}: out of space with no GC in flight at op {op_index}");
                no_space += 1;
                continue;
            }
            Submitted::Planned => {}
        }
        reply.clear();
        reply.resize(blocks as usize, 0);
        exec.run_plan(&plan, &user, &mut reply, &mut scratch);
        match op {
            ReqOp::Write => {
                reference.write(lba, &user);
                next_token += u64::from(blocks);
            }
            ReqOp::Trim => reference.trim(lba, blocks, partial_trims_keep_data),
            ReqOp::Read => {
                for i in 0..u64::from(blocks) {
                    if let Expect::Token(t) = reference.get(lba + i) {
                        assert_eq!(
                            reply[i as usize],
                            t,
                            "{kind} on {ftl:?} FTL, seed {seed}: block {} read back wrong at op {op_index}",
                            lba + i
                        );
                        reads_checked += 1;
                    }
                }
            }
            ReqOp::Flush => {}
        }
        if op_index % CHECK_EVERY == 0 {
            check_all(kind, scheme.as_ref(), exec.store(), &format!("at op {op_index}"));
        }
    }
    // Drain GC, then check everything: invariants, every live block's content, and parity.
    gc.drain(scheme.as_mut(), &mut exec);
    check_all(kind, scheme.as_ref(), exec.store(), "at the end");
    let mut live = 0u64;
    for (lba, t) in reference.tokens() {
        let got = scheme.locate(lba).map_or(0, |(m, b)| exec.store().peek(m, b));
        assert_eq!(got, t, "{kind} on {ftl:?} FTL: block {lba} lost");
        live += u64::from(t != 0);
    }
    let parity_rows = check_parity(kind, &spec, &exec);
    let c = scheme.counters();
    let ssd_copied: u64 = exec.store().ssds.iter().map(|s| s.stats().gc_pages_copied).sum();
    let ssd_erases: u64 = exec.store().ssds.iter().map(|s| s.stats().erases).sum();
    let ssd_written: u64 = exec.store().ssds.iter().map(|s| s.stats().host_pages_written).sum();
    eprintln!(
        "{kind} ({ftl:?} FTL): {ops} ops, {reads_checked} reads checked, {live} live blocks and {parity_rows} parity rows \
         checked at the end, {} GC jobs ({} blocks moved), {} front-end rotations, {no_space} no-space retries; \
         SSDs: {ssd_copied} pages copied by internal GC, {ssd_erases} erases, WAF {:.2}",
        gc.started(),
        c.gc_blocks_moved,
        c.front_rotations,
        (ssd_written + ssd_copied) as f64 / ssd_written.max(1) as f64,
    );
    assert!(reads_checked > ops / 10, "{kind}: only {reads_checked} reads checked");
    if kind.is_log_structured() {
        assert!(gc.started() > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", gc.started());
    }
    if matches!(kind, SchemeKind::Swan(_)) {
        assert!(c.front_rotations > 100, "{kind}: the front-end barely rotated ({})", c.front_rotations);
    }
    assert!(ssd_copied > 0, "{kind} on {ftl:?} FTL: the SSDs' internal GC never moved a page");
}

/// Every stripe row that has parity must satisfy it, except rows of log segments still
/// open. Returns the rows checked.
fn check_parity(kind: SchemeKind, spec: &ArraySpec, exec: &Executor<SsdStore>) -> u64 {
    if kind.raid() == RaidLevel::Raid0 {
        return 0;
    }
    let width = exec.group_width();
    let mut checked = 0;
    let mut bad = 0;
    for group_first in (0..spec.members()).step_by(width) {
        for row in 0..spec.member_blocks {
            checked += 1;
            if exec.row_parity(group_first, row) != 0 {
                bad += 1;
            }
        }
    }
    // Open segments (one user, one GC per R-group at most) may hold partial rows.
    let open_rows = (spec.rgroups as u64 + 1) * u64::from(spec.segment_rows) * 2;
    assert!(bad <= open_rows, "{kind}: {bad} of {checked} rows fail parity (at most {open_rows} may be open)");
    checked
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
