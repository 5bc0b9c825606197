//! The management module on hand-built observations.

use super::manager::{ActionKind, Autonomic, Carry, Completed, OpKind, Stalled};
use super::{AutonomicConfig, DataLayout, FabricShape, GcLaggard, LaggardDetection, LayoutConfig, PageTiming};

const T: PageTiming = PageTiming { t_dma: 10_000, t_exe_read: 50_000, t_exe_write: 600_000 };
/// Eq. 1 for one page in a 4-FIMM cluster: 10 × 4 + 50 = 90 µs.
const HOT_READ: u64 = 90_000;

fn manager(cfg: AutonomicConfig) -> Autonomic {
    // 2 switches × 4 clusters × 4 FIMMs; 16-page chunks.
    let shape = FabricShape::new(2, 4, 4).unwrap();
    let layout = DataLayout::new(shape, LayoutConfig { chunk_pages: 16, user_slots: 64, spare_slots: 64 }).unwrap();
    Autonomic::new(cfg, T, layout).unwrap()
}

fn read(lpns: &[u64], cluster: u32, latency: u64) -> Completed<'_> {
    Completed { kind: OpKind::Read, lpns, cluster, device_latency: latency, fimm_ready: true }
}

#[test]
fn a_hot_read_migrates_to_the_coldest_cluster_of_its_switch_by_shadow_cloning() {
    let mut m = manager(AutonomicConfig::triple_a());
    let bus = [0.9, 0.2, 0.1, 0.15, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(m.on_complete(0, &read(&[0], 0, HOT_READ - 1), &bus), None, "just under Eq. 1");
    let a = m.on_complete(0, &read(&[0], 0, HOT_READ), &bus).expect("hot");
    assert_eq!(a.kind, ActionKind::Migrate);
    let (mv, carry) = a.moves[0];
    assert_eq!(carry, Carry::FromEndpoint);
    assert_eq!(mv.to.cluster, 2, "the coldest sibling, not a cluster of the other switch");
    assert_eq!(m.resolve(0), mv.to);
    assert_eq!(m.stats().extra_page_writes, 1);
    assert_eq!(m.in_flight(ActionKind::Migrate), 1);
}

#[test]
fn no_migration_without_a_cold_sibling_or_when_the_fimm_was_busy() {
    let mut m = manager(AutonomicConfig::triple_a());
    // One FIMM's share is 1/4: every sibling at 0.25 or more is not cold.
    let bus = [0.9, 0.25, 0.3, 0.5, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(m.on_complete(0, &read(&[0], 0, 10 * HOT_READ), &bus), None);
    assert_eq!(m.stats().no_cold_cluster, 1);
    let busy = Completed { fimm_ready: false, ..read(&[0], 0, 10 * HOT_READ) };
    assert_eq!(m.on_complete(0, &busy, &[0.0; 8]), None, "storage contention is not link contention");
}

#[test]
fn without_shadow_cloning_a_migrated_read_is_read_again() {
    let mut m = manager(AutonomicConfig { shadow_cloning: false, ..AutonomicConfig::triple_a() });
    let a = m.on_complete(0, &read(&[0], 0, HOT_READ), &[0.0; 8]).unwrap();
    assert_eq!(a.moves[0].1, Carry::ReadAgain);
}

#[test]
fn a_moved_page_settles_before_it_moves_again_and_the_cap_holds() {
    let cfg = AutonomicConfig { max_in_flight: 2, settle: 1_000, ..AutonomicConfig::triple_a() };
    let mut m = manager(cfg);
    let bus = [0.0; 8];
    let first = m.on_complete(0, &read(&[0], 0, HOT_READ), &bus).unwrap().moves[0].0.to.cluster;
    assert_eq!(m.on_complete(999, &read(&[0], first, HOT_READ), &bus), None, "not settled yet");
    assert!(m.on_complete(1_000, &read(&[0], first, HOT_READ), &bus).is_some(), "settled");
    assert_eq!(m.in_flight(ActionKind::Migrate), 2);
    assert_eq!(m.on_complete(2_000, &read(&[1], 0, HOT_READ), &bus), None, "the cap");
    assert_eq!(m.stats().deferred, 1);
    let stalled = [Stalled { kind: OpKind::Read, cluster: 0, fimm: 1, lpns: &[1] }];
    assert!(m.on_stall(2_000, &stalled).is_some(), "reshaping has a budget of its own");
    m.copies_done(ActionKind::Migrate, 2);
    assert!(m.on_complete(3_000, &read(&[1], 0, HOT_READ), &bus).is_some());
}

#[test]
fn a_laggard_by_latency_sheds_its_stalled_pages_to_the_other_fimms_of_its_cluster() {
    let mut m = manager(AutonomicConfig::triple_a());
    // Pages 0 and 4 both live on FIMM 0 of cluster 0 (16-page chunks striped over 4 FIMMs).
    assert_eq!((m.resolve(4).cluster, m.resolve(4).fimm), (0, 0));
    let stalled = [
        Stalled { kind: OpKind::Write, cluster: 0, fimm: 0, lpns: &[0] },
        Stalled { kind: OpKind::Read, cluster: 0, fimm: 0, lpns: &[4] },
    ];
    let a = m.on_stall(0, &stalled).expect("two stalled requests need far more than 3.3 µs");
    assert_eq!(a.kind, ActionKind::Reshape);
    assert_eq!(a.moves.len(), 2);
    for (mv, carry) in &a.moves {
        assert_eq!(mv.to.cluster, 0);
        assert_ne!(mv.to.fimm, 0);
        let want = if mv.lpn == 0 { Carry::Redirect } else { Carry::FromEndpoint };
        assert_eq!(*carry, want);
    }
    assert_eq!(m.stats().extra_page_writes, 1, "a redirected write costs no extra write");
    let lax = AutonomicConfig { t_sla: 10_000_000, ..AutonomicConfig::triple_a() };
    assert_eq!(manager(lax).on_stall(0, &stalled), None, "within the SLA");
}

#[test]
fn the_queue_examination_reshapes_one_laggard_or_migrates_a_cluster_that_lags_alike() {
    let cfg = AutonomicConfig { laggard_detection: LaggardDetection::Queue, ..AutonomicConfig::triple_a() };
    let mut m = manager(cfg);
    let on = |fimm, lpns: &'static [u64]| Stalled { kind: OpKind::Read, cluster: 0, fimm, lpns };
    let queue = [on(1, &[1]), on(1, &[5]), on(1, &[9]), on(2, &[2])];
    assert_eq!(m.on_stall(0, &queue[..3]), None, "latency monitoring is off");
    let a = m.on_queue_full(0, &queue, &[0.0; 8]).unwrap();
    assert_eq!(a.kind, ActionKind::Reshape);
    assert_eq!(a.moves.iter().map(|(mv, _)| mv.lpn).collect::<Vec<_>>(), [1, 5, 9], "FIMM 1's pages only");
    let alike = [on(0, &[16 * 8]), on(1, &[16 * 8 + 1]), on(2, &[16 * 8 + 2]), on(3, &[16 * 8 + 3])];
    let a = m.on_queue_full(0, &alike, &[0.0; 8]).unwrap();
    assert_eq!(a.kind, ActionKind::Migrate);
    assert!(a.moves.iter().all(|(mv, _)| mv.to.cluster != 0 && mv.to.cluster < 4));
}

#[test]
fn the_non_autonomic_baseline_never_moves_a_page() {
    let mut m = manager(AutonomicConfig::non_autonomic());
    let stalled = [Stalled { kind: OpKind::Read, cluster: 0, fimm: 0, lpns: &[0] }];
    assert_eq!(m.on_complete(0, &read(&[0], 0, u64::MAX / 4), &[0.0; 8]), None);
    assert_eq!(m.on_stall(0, &stalled), None);
    assert_eq!(m.on_queue_full(0, &stalled, &[0.0; 8]), None);
    assert_eq!(m.layout().moved_pages(), 0);
}

#[test]
fn a_collecting_fimm_is_judged_blind_made_a_laggard_or_exempted_as_configured() {
    let stalled = [Stalled { kind: OpKind::Read, cluster: 0, fimm: 0, lpns: &[4] }];
    let lax = |gc_laggard| AutonomicConfig { t_sla: 10_000_000, gc_laggard, ..AutonomicConfig::triple_a() };
    // Blind: Eq. 3 decides, collecting or not (one read is within a 10 ms SLA).
    assert_eq!(manager(lax(GcLaggard::Blind)).on_stall_gc(0, &stalled, true), None);
    // Laggard: a collecting FIMM lags whatever Eq. 3 says; an idle one is still judged.
    let mut m = manager(lax(GcLaggard::Laggard));
    assert_eq!(m.on_stall_gc(0, &stalled, false), None, "not collecting: Eq. 3 decides");
    let a = m.on_stall_gc(0, &stalled, true).expect("a collecting FIMM lags");
    assert_eq!(a.kind, ActionKind::Reshape);
    assert_eq!((m.stats().laggards_by_latency, m.stats().laggards_collecting), (1, 1));
    // Exempt: even a stall far past t_SLA is not examined while the FIMM collects.
    let mut m = manager(AutonomicConfig { gc_laggard: GcLaggard::Exempt, ..AutonomicConfig::triple_a() });
    assert_eq!(m.on_stall_gc(0, &stalled, true), None);
    assert_eq!(m.stats().gc_stalls_exempted, 1);
    assert!(m.on_stall_gc(0, &stalled, false).is_some(), "not collecting: the paper's detector");
}
