//! No write inside the volume is ever refused for want of space.
//!
//! For every log-structured scheme over many geometries — R-groups, SSDs per R-group,
//! segment sizes, segments per R-group from the fewest that leave a volume at all, and
//! spare from none up — a driver that behaves as `swan serve` does (the server's own
//! configuration from [`LogTuning::served`]; GC started whenever the scheme wants it and
//! finished now and then between writes; victims released in batches, as the server's sync
//! points release them; a write that does not fit waits while GC runs, and is refused only
//! when no GC job can start and no victim awaits release) writes the volume over three times
//! and more, at random and skewed, in writes up to the largest the scheme says it can always
//! place. Not one may be refused, and every block must read back as last written.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use swan_core::geometry::RaidLevel;
use swan_core::io::IoPlan;
use swan_core::scheme::{ArrayScheme, ArraySpec, GcJobId, LogTuning, ReqOp, Request, SchemeKind, Submitted};
use swan_core::victim::VictimPolicy;
use swan_testkit::tokens::{Executor, MemStore, Reference, SummaryStore, TokenStore};

/// Victims the server gathers before a sync point releases them (its `RELEASE_BATCH`).
const RELEASE_BATCH: usize = 8;
/// The server's largest NBD payload, in blocks (32 MiB).
const SERVER_MAX_WRITE_BLOCKS: u64 = 8192;

#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Every block equally likely.
    Uniform,
    /// Nine writes in ten to the first tenth of the volume.
    Skewed,
}

/// A server in miniature: the scheme, its members as tokens, GC jobs in flight.
struct Served {
    scheme: ArrayScheme,
    exec: Executor<MemStore>,
    summaries: SummaryStore,
    jobs: VecDeque<(GcJobId, IoPlan)>,
    follow_up: IoPlan,
    staged: Vec<u64>,
}

impl Served {
    fn new(spec: &ArraySpec) -> Self {
        let mut scheme = spec.build().expect("geometry accepted");
        assert!(spec.kind.is_log_structured(), "{}: not log-structured", spec.kind);
        let mut exec = Executor::new(MemStore::new(spec.members(), spec.member_blocks), spec.parity_group_width());
        let mut plan = IoPlan::new();
        scheme.format(&mut plan);
        exec.run_plan(&plan, &[], &mut [], &mut Vec::new());
        Self {
            scheme,
            exec,
            summaries: SummaryStore::default(),
            jobs: VecDeque::new(),
            follow_up: IoPlan::new(),
            staged: Vec::new(),
        }
    }

    /// Start every job the scheme wants now (it decides by its target or watermarks, or
    /// because a write waits); their reads and writes run at once.
    fn start_gc(&mut self) {
        loop {
            let mut plan = IoPlan::new();
            let Some(id) = self.scheme.start_gc_with(&mut plan, &mut self.summaries) else { break };
            self.staged.clear();
            self.exec.run_plan(&plan, &[], &mut [], &mut self.staged);
            self.jobs.push_back((id, plan));
        }
    }

    /// Finish the oldest job: its moves land in the map, its victim awaits release.
    fn finish_one(&mut self) -> bool {
        let Some((id, _)) = self.jobs.pop_front() else { return false };
        self.scheme.finish_gc(id, &mut self.follow_up);
        self.exec.run_plan(&self.follow_up, &[], &mut [], &mut self.staged);
        self.summaries.record(&self.follow_up, &mut self.scheme);
        true
    }

    /// A sync point: the moves are durable, so the victims may be freed and trimmed.
    fn sync_point(&mut self) {
        if self.scheme.release_deferred(&mut self.follow_up) > 0 {
            self.exec.run_plan(&self.follow_up, &[], &mut [], &mut self.staged);
        }
    }

    /// A write waits for space as the server's does: GC runs, victims are released once a
    /// batch has gathered or no more are coming. False when nothing can free space: the
    /// server would answer ENOSPC.
    fn collect_for_space(&mut self) -> bool {
        loop {
            self.start_gc();
            let pending = self.scheme.pending_release();
            if pending >= RELEASE_BATCH || (pending > 0 && self.jobs.is_empty()) {
                self.sync_point();
                return true;
            }
            if !self.finish_one() {
                return false;
            }
        }
    }

    /// Write `blocks` fresh tokens at `lba`, waiting for space as long as GC can free some.
    fn write(&mut self, lba: u64, blocks: u32, first_token: u64) -> Result<(), String> {
        let req = Request::new(ReqOp::Write, lba, blocks);
        let tokens: Vec<u64> = (0..u64::from(blocks)).map(|i| first_token + i).collect();
        let mut plan = IoPlan::new();
        loop {
            match self.scheme.submit(&req, &mut plan).map_err(|e| format!("{e:?}"))? {
                Submitted::Planned => break,
                Submitted::NoSpace if self.collect_for_space() => {}
                Submitted::NoSpace => {
                    let st = self.scheme.status();
                    return Err(format!(
                        "a write of {blocks} blocks at {lba} refused: {} free segments of {}, front-end {:?}, \
                         {} victims awaiting release",
                        st.free_segments,
                        st.segments,
                        st.front_group,
                        self.scheme.pending_release()
                    ));
                }
            }
        }
        self.exec.run_plan(&plan, &tokens, &mut [], &mut self.staged);
        self.summaries.record(&plan, &mut self.scheme);
        Ok(())
    }
}

/// Drive one array; Err names the first refused write or lost block.
fn overwrite(spec: &ArraySpec, pattern: Pattern, seed: u64) -> Result<u64, String> {
    let mut s = Served::new(spec);
    let volume = s.scheme.volume_blocks();
    let largest = s.scheme.largest_write_blocks().min(SERVER_MAX_WRITE_BLOCKS);
    assert!(largest >= 1, "a scheme that can place no write at all");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut reference = Reference::new(volume);
    let (mut written, mut token, mut writes) = (0u64, 1u64, 0u64);
    while written < 3 * volume + largest {
        // Mostly small writes, one in eight as large as the scheme can always place.
        let blocks = if rng.next_u32().is_multiple_of(8) { largest } else { 1 + rng.next_u64() % largest.min(4) };
        let span = match pattern {
            Pattern::Uniform => volume,
            Pattern::Skewed if !rng.next_u32().is_multiple_of(10) => (volume / 10).max(blocks),
            Pattern::Skewed => volume,
        };
        let lba = rng.next_u64() % (span - blocks + 1);
        s.write(lba, blocks as u32, token)?;
        let tokens: Vec<u64> = (token..token + blocks).collect();
        reference.write(lba, &tokens);
        token += blocks;
        written += blocks;
        writes += 1;
        // GC in the background, as the server's round loop runs it between requests.
        s.start_gc();
        if rng.next_u32().is_multiple_of(2) {
            s.finish_one();
        }
        if s.scheme.pending_release() >= RELEASE_BATCH || rng.next_u32().is_multiple_of(16) {
            s.sync_point();
        }
    }
    while s.finish_one() {}
    s.sync_point();
    s.scheme.check().map_err(|e| e.to_string())?;
    for (lba, t) in reference.tokens() {
        let got = s.scheme.locate(lba).map_or(0, |(m, b)| s.exec.store().peek(m, b));
        if got != t {
            return Err(format!("block {lba} reads {got}, last written {t}"));
        }
    }
    Ok(writes)
}

/// Every geometry the sweep tries: R-groups × SSDs per R-group for the scheme, segments of
/// 4, 16 and 64 rows, from two segments per R-group (the fewest [`ArraySpec::build`] accepts)
/// up, with no spare beyond the core's own and with more. Arrays that leave no volume are
/// ones `swan create` refuses.
fn geometries(kind: SchemeKind) -> Vec<ArraySpec> {
    let raid = kind.raid();
    let layouts: Vec<(u32, u32)> = match kind {
        SchemeKind::Swan(_) => {
            (1..=4).flat_map(|r| (raid.min_members()..=raid.min_members() + 2).map(move |n| (r, n))).collect()
        }
        _ => (raid.min_members()..=6).map(|n| (1, n)).collect(),
    };
    let mut out = Vec::new();
    for (rgroups, ssds) in layouts {
        for segment_rows in [4u32, 16, 64] {
            for segments in [2u64, 3, 4, 5, 6, 8, 12, 20, 40] {
                for spare in [None, Some(0.05), Some(0.1), Some(0.3)] {
                    let mut spec = ArraySpec {
                        kind,
                        rgroups,
                        ssds_per_rgroup: ssds,
                        member_blocks: segments * u64::from(segment_rows),
                        member_offset: 0,
                        segment_rows,
                        chunk_blocks: 4,
                        victim: VictimPolicy::Greedy,
                        tuning: LogTuning::served(None),
                    };
                    let Ok(scheme) = spec.build() else { continue };
                    let Some(geo) = scheme.log_geometry() else { continue };
                    if let Some(spare) = spare {
                        let payload = geo.payload_blocks();
                        spec.tuning.volume_blocks = Some((payload as f64 * (1.0 - spare)) as u64);
                    }
                    if spec.build().is_ok_and(|s| s.volume_blocks() > 0) {
                        out.push(spec);
                    }
                }
            }
        }
    }
    out
}

fn sweep(kind: SchemeKind) {
    let specs = geometries(kind);
    assert!(specs.len() >= 50, "{kind}: only {} geometries: the sweep is too thin", specs.len());
    let (mut failures, mut writes) = (Vec::new(), 0u64);
    for (i, spec) in specs.iter().enumerate() {
        for (p, pattern) in [Pattern::Uniform, Pattern::Skewed].into_iter().enumerate() {
            let seed = (i * 2 + p) as u64;
            match overwrite(spec, pattern, seed) {
                Ok(n) => writes += n,
                Err(e) => failures.push(format!(
                    "{kind} {}×{} segment {} rows, {} blocks per member, volume {:?}, {pattern:?} seed {seed}: {e}",
                    spec.rgroups,
                    spec.ssds_per_rgroup,
                    spec.segment_rows,
                    spec.member_blocks,
                    spec.tuning.volume_blocks
                )),
            }
        }
    }
    eprintln!("{kind}: {} geometries × 2 patterns, {writes} writes, {} refused", specs.len(), failures.len());
    assert!(
        failures.is_empty(),
        "{} of {} runs refused a write:\n{}",
        failures.len(),
        specs.len() * 2,
        failures.join("\n")
    );
}

#[test]
fn swan0_never_refuses_a_write() {
    sweep(SchemeKind::Swan(RaidLevel::Raid0));
}

#[test]
fn swan4_never_refuses_a_write() {
    sweep(SchemeKind::Swan(RaidLevel::Raid4));
}

#[test]
fn swan5_never_refuses_a_write() {
    sweep(SchemeKind::Swan(RaidLevel::Raid5));
}

#[test]
fn lograid0_never_refuses_a_write() {
    sweep(SchemeKind::LogRaid(RaidLevel::Raid0));
}

#[test]
fn lograid4_never_refuses_a_write() {
    sweep(SchemeKind::LogRaid(RaidLevel::Raid4));
}

#[test]
fn lograid5_never_refuses_a_write() {
    sweep(SchemeKind::LogRaid(RaidLevel::Raid5));
}
