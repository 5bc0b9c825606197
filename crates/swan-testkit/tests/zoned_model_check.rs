//! The model check of `swan-core/tests/model_check.rs` over zoned members: every
//! log-structured scheme, set to write each member in block order (`zoned_members`), runs a
//! long random mix of requests with GC jobs interleaved, and each member holds its segments
//! in zones ([`swan_models::zns::Zones`]) that refuse a write off the write pointer, a TRIM
//! of part of a zone (only a reset frees space) and more than three zones open or active
//! (what the simulator's zoned members assume), each checked in the order the plan hands
//! operations to the member ([`TokenStore::admit`]); the reference map and the final parity
//! check are the plain check's.
//!
//! `SWAN_MODEL_OPS` sets the operations per scheme (default 1,000,000).

use swan_core::geometry::RaidLevel;
use swan_core::io::{IoKind, MemberBlock, MemberId, MemberIo};
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_models::zns::{ZoneGeometry, Zones};
use swan_testkit::rng::SplitMix64;
use swan_testkit::tokens::{check_parity, drive, model_check_spec, Executor, MemStore, SchemeChecks, TokenStore};

fn ops_per_scheme() -> u64 {
    std::env::var("SWAN_MODEL_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

const SEGMENT: u32 = 8;
const SEGMENTS_PER_MEMBER: u64 = 48;
const ACTIVE_PER_MEMBER: u32 = swan_sim::zoned_array::SEGMENTS_ACTIVE_PER_MEMBER;

/// The plain model check's array, set to write each member in block order.
fn spec(kind: SchemeKind) -> ArraySpec {
    let mut spec = model_check_spec(kind);
    spec.tuning.zoned_members = true;
    spec
}

/// Tokens in memory behind each member's zones, one segment per zone.
struct ZonedStore {
    tokens: MemStore,
    zones: Vec<Zones>,
    /// The most zones any member had active at once.
    most_active: u32,
}

impl ZonedStore {
    fn new(members: u32) -> Self {
        // Three zones open and active: what the simulator's zoned members assume a log
        // scheme needs per member (its user segment, a GC segment, and one awaiting its
        // summary), below a ZN540's 14.
        let geometry = ZoneGeometry {
            zones: SEGMENTS_PER_MEMBER as u32,
            zone_blocks: u64::from(SEGMENT),
            capacity_blocks: u64::from(SEGMENT),
            max_open: Some(ACTIVE_PER_MEMBER),
            max_active: Some(ACTIVE_PER_MEMBER),
        };
        let zones = (0..members).map(|_| Zones::new(geometry).expect("a valid geometry")).collect();
        Self { tokens: MemStore::new(members, geometry.blocks()), zones, most_active: 0 }
    }
}

impl TokenStore for ZonedStore {
    fn read(&mut self, io: &MemberIo, out: &mut [u64]) {
        self.tokens.read(io, out);
    }

    fn write(&mut self, io: &MemberIo, tokens: &[u64]) {
        self.tokens.write(io, tokens);
    }

    fn trim(&mut self, io: &MemberIo) {
        self.tokens.trim(io);
    }

    /// The zoned contract, in the order the member receives the plan: a write is cut at
    /// zone boundaries (a merged write may run from one segment into the next, as the
    /// simulator's zoned members cut it), and a TRIM must reset whole zones.
    fn admit(&mut self, io: &MemberIo) {
        let seg = u64::from(SEGMENT);
        let zones = &mut self.zones[io.member as usize];
        let (start, end) = (io.block, io.block + u64::from(io.count));
        match io.kind {
            IoKind::Write(_) => {
                let mut at = start;
                while at < end {
                    let n = (seg - at % seg).min(end - at);
                    if let Err(e) = zones.write(at, n) {
                        panic!("member {}: {io:?} broke the zoned contract: {e}", io.member);
                    }
                    at += n;
                }
            }
            IoKind::Trim => {
                assert!(
                    start % seg == 0 && end % seg == 0,
                    "member {}: {io:?} trims part of a zone; only a reset frees space",
                    io.member
                );
                for zone in start / seg..end / seg {
                    zones.reset(zone as u32).expect("a zone of the member");
                }
            }
            IoKind::Read(_) | IoKind::Flush => {}
        }
        self.most_active = self.most_active.max(zones.active_count());
    }

    fn peek(&self, member: MemberId, block: MemberBlock) -> u64 {
        self.tokens.peek(member, block)
    }
}

fn zoned_model_check(kind: SchemeKind, seed: u64) {
    let spec = spec(kind);
    let mut scheme = spec.build().unwrap();
    let mut exec = Executor::new(ZonedStore::new(spec.members()), spec.parity_group_width());
    let mut rng = SplitMix64(seed);
    let label = format!("{kind} over zones, seed {seed}");
    let ops = ops_per_scheme();
    let stats = drive(&label, &mut scheme, &mut exec, ops, 20_000, &mut || rng.next_u64(), &mut SchemeChecks);
    check_parity(&label, &spec, &exec);
    let most_active = exec.store().most_active;
    eprintln!(
        "{label}: {ops} ops, {} reads checked, {} GC jobs, at most {most_active} zones active on a member",
        stats.reads_checked, stats.gc_jobs
    );
    assert!(stats.gc_jobs > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", stats.gc_jobs);
}

#[test]
#[should_panic(expected = "broke the zoned contract")]
fn without_zoned_members_a_parity_log_breaks_the_zone_order() {
    // The check can fail: Log-RAID5's GC writes a run's parity rows after its data rows
    // unless told its members are zoned.
    let mut spec = spec(SchemeKind::LogRaid(RaidLevel::Raid5));
    spec.tuning.zoned_members = false;
    let mut scheme = spec.build().unwrap();
    let mut exec = Executor::new(ZonedStore::new(spec.members()), spec.parity_group_width());
    let mut rng = SplitMix64(6);
    drive("lograid5 unordered", &mut scheme, &mut exec, 200_000, 20_000, &mut || rng.next_u64(), &mut SchemeChecks);
}

macro_rules! zoned_model_tests {
    ($($name:ident => $kind:expr, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            zoned_model_check($kind, $seed);
        }
    )*};
}

zoned_model_tests! {
    lograid0_over_zones => SchemeKind::LogRaid(RaidLevel::Raid0), 14;
    lograid4_over_zones => SchemeKind::LogRaid(RaidLevel::Raid4), 15;
    lograid5_over_zones => SchemeKind::LogRaid(RaidLevel::Raid5), 16;
    swan0_over_zones => SchemeKind::Swan(RaidLevel::Raid0), 17;
    swan4_over_zones => SchemeKind::Swan(RaidLevel::Raid4), 18;
    swan5_over_zones => SchemeKind::Swan(RaidLevel::Raid5), 19;
}
