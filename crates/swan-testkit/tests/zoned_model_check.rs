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

use std::collections::HashMap;
use swan_core::geometry::RaidLevel;
use swan_core::io::{IoClass, IoKind, MemberBlock, MemberId, MemberIo, Src};
use swan_core::scheme::{ArraySpec, Scheme, SchemeKind};
use swan_models::zns::{ZoneGeometry, Zones};
use swan_testkit::rng::SplitMix64;
use swan_testkit::tokens::{
    check_parity, drive, model_check_spec, DriveHooks, Executor, MemStore, SchemeChecks, TokenStore,
};

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
    /// Three zones open and active (`active`): what the simulator's zoned members assume a
    /// log scheme needs per member (its user segment, a GC segment, and one awaiting its
    /// summary), below a ZN540's 14; RAIZN's partial-parity log takes one more.
    fn new(members: u32, active: u32) -> Self {
        let geometry = ZoneGeometry {
            zones: SEGMENTS_PER_MEMBER as u32,
            zone_blocks: u64::from(SEGMENT),
            capacity_blocks: u64::from(SEGMENT),
            max_open: Some(active),
            max_active: Some(active),
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
    let mut exec = Executor::new(ZonedStore::new(spec.members(), ACTIVE_PER_MEMBER), spec.parity_group_width());
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
    let mut exec = Executor::new(ZonedStore::new(spec.members(), ACTIVE_PER_MEMBER), spec.parity_group_width());
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

/// RAIZN's partial-parity log, as a store sees it: where each stripe row's latest entry went
/// and what it held, and which write last put data in each row.
struct RaiznStore {
    zoned: ZonedStore,
    /// Members per stripe row, and the first block past the segments (the log's).
    width: u32,
    log_base: MemberBlock,
    seq: u64,
    /// (first member of the row's group, row) → (seq, class) of the row's last data write.
    last_data: HashMap<(MemberId, MemberBlock), (u64, IoClass)>,
    /// (first member of the row's group, row) → (seq, member, block, token) of its latest entry.
    entries: HashMap<(MemberId, MemberBlock), (u64, MemberId, MemberBlock, u64)>,
}

impl TokenStore for RaiznStore {
    fn read(&mut self, io: &MemberIo, out: &mut [u64]) {
        self.zoned.read(io, out);
    }

    fn write(&mut self, io: &MemberIo, tokens: &[u64]) {
        self.seq += 1;
        let group_first = io.member / self.width * self.width;
        match io.kind {
            IoKind::Write(Src::Parity { row, .. }) if io.block >= self.log_base => {
                self.entries.insert((group_first, row), (self.seq, io.member, io.block, tokens[0]));
            }
            IoKind::Write(Src::Parity { .. }) => {}
            IoKind::Write(_) if io.block < self.log_base => {
                for row in io.block..io.block + u64::from(io.count) {
                    self.last_data.insert((group_first, row), (self.seq, io.class));
                }
            }
            _ => {}
        }
        self.zoned.write(io, tokens);
    }

    fn trim(&mut self, io: &MemberIo) {
        self.zoned.trim(io);
    }

    fn admit(&mut self, io: &MemberIo) {
        self.zoned.admit(io);
    }

    fn peek(&self, member: MemberId, block: MemberBlock) -> u64 {
        self.zoned.peek(member, block)
    }
}

/// The scheme's invariants, and RAIZN's: every stripe row whose parity does not hold yet has
/// an entry in its parity member's log, written after the row's last data and still there,
/// holding the row's parity as it stands. A row GC's job in flight wrote last may wait for
/// the job to finish (its moves count only then); at the end every job has.
struct RaiznChecks {
    rows: MemberBlock,
    members: u32,
    partial_rows_checked: u64,
}

impl DriveHooks<RaiznStore> for RaiznChecks {
    fn check(&mut self, scheme: &dyn Scheme, exec: &Executor<RaiznStore>, when: &str) {
        DriveHooks::<RaiznStore>::check(&mut SchemeChecks, scheme, exec, when);
        let store = exec.store();
        let at_end = when == "at the end";
        for group_first in (0..self.members).step_by(store.width as usize) {
            for row in 0..self.rows {
                if exec.row_parity(group_first, row) == 0 {
                    continue;
                }
                let Some(&(data_seq, class)) = store.last_data.get(&(group_first, row)) else { continue };
                if class == IoClass::Gc && !at_end {
                    continue;
                }
                self.partial_rows_checked += 1;
                let Some(&(seq, member, block, token)) = store.entries.get(&(group_first, row)) else {
                    panic!(
                        "{when}: row {row} of the group at member {group_first} is partly filled with no parity logged"
                    );
                };
                assert!(seq > data_seq, "{when}: row {row}'s logged parity is older than its last data");
                assert_eq!(
                    store.peek(member, block),
                    token,
                    "{when}: row {row}'s log entry was reset before it was superseded"
                );
                assert_eq!(token, exec.row_xor(member, row), "{when}: row {row}'s logged parity is not the row's");
            }
        }
    }
}

fn raizn_model_check(seed: u64) {
    let mut spec = spec(SchemeKind::LogRaid(RaidLevel::Raid5));
    spec.tuning.partial_parity_log = true;
    let log_base = spec.log_config().unwrap().unwrap().geometry.segments_end();
    assert!(log_base < spec.member_blocks, "the log lies after the segments, inside the members");
    let mut scheme = spec.build().unwrap();
    let store = RaiznStore {
        zoned: ZonedStore::new(spec.members(), ACTIVE_PER_MEMBER + 1),
        width: spec.parity_group_width(),
        log_base,
        seq: 0,
        last_data: HashMap::new(),
        entries: HashMap::new(),
    };
    let mut exec = Executor::new(store, spec.parity_group_width());
    let mut rng = SplitMix64(seed);
    let label = format!("raizn over zones, seed {seed}");
    let mut checks = RaiznChecks { rows: log_base, members: spec.members(), partial_rows_checked: 0 };
    let ops = ops_per_scheme();
    // Checked far more often than the other schemes: each check meets about one filling row.
    let stats = drive(&label, &mut scheme, &mut exec, ops, 500, &mut || rng.next_u64(), &mut checks);
    check_parity(&label, &spec, &exec);
    let swan_core::scheme::ArrayScheme::Log(log) = &scheme else { unreachable!("RAIZN is log-structured") };
    let (entries, blocks) = log.partial_parity_logged();
    let most_active = exec.store().zoned.most_active;
    eprintln!(
        "{label}: {ops} ops, {} reads checked, {} GC jobs, {entries} partial-parity entries ({blocks} blocks), {} partly filled rows checked, at most {most_active} zones active on a member",
        stats.reads_checked, stats.gc_jobs, checks.partial_rows_checked
    );
    assert!(stats.gc_jobs > 1000, "GC barely ran ({} jobs): the test is too easy", stats.gc_jobs);
    assert!(checks.partial_rows_checked > ops / 1000, "the log check met few partly filled rows: it proves little");
    // Entries outnumber a log segment's room many times over, so the log swapped often.
    assert!(blocks > 100 * u64::from(SEGMENT), "the log barely moved ({blocks} blocks)");
}

#[test]
fn raizn_over_zones() {
    raizn_model_check(20);
}

#[test]
#[should_panic(expected = "partly filled with no parity logged")]
fn without_its_log_a_partly_filled_row_has_no_parity_on_the_members() {
    // The check can fail: plain Log-RAID5 holds a filling row's parity in memory.
    let spec = spec(SchemeKind::LogRaid(RaidLevel::Raid5));
    let mut scheme = spec.build().unwrap();
    let store = RaiznStore {
        zoned: ZonedStore::new(spec.members(), ACTIVE_PER_MEMBER),
        width: spec.parity_group_width(),
        log_base: spec.member_blocks,
        seq: 0,
        last_data: HashMap::new(),
        entries: HashMap::new(),
    };
    let mut exec = Executor::new(store, spec.parity_group_width());
    let mut rng = SplitMix64(21);
    let mut checks = RaiznChecks { rows: spec.member_blocks, members: spec.members(), partial_rows_checked: 0 };
    drive("lograid5 without a log", &mut scheme, &mut exec, 50_000, 20_000, &mut || rng.next_u64(), &mut checks);
}
