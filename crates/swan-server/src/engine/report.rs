//! `swan status` of a running engine, gathered from its parts ([`super::status`] holds the
//! report's types, which the parts fill in too).

use super::gc::GcRunner;
use super::status::{EmulationTiming, GroupStatus, MemberStatus, StatusReport};
use super::store::Store;
use crate::member::BLOCK;
use std::time::Duration;
use swan_core::driver::GroupRole;
use swan_core::scheme::SchemeKind;

/// What `swan status` shows of `store`, its GC (`gc`), `queued` requests, `uptime`, the
/// times it `resumed` after a full file system, its replies' `emulation` timing and its
/// thread's CPU by part (`engine_cpu`).
pub(super) fn report(
    store: &Store,
    gc: &GcRunner,
    queued: usize,
    uptime: Duration,
    resumed: u64,
    emulation: EmulationTiming,
    engine_cpu: super::EngineCpu,
) -> StatusReport {
    let counts = &store.crcs.counts;
    let read_count = |f: fn(&crate::pool::ReadChecks) -> &std::sync::atomic::AtomicU64| {
        f(counts).load(std::sync::atomic::Ordering::Relaxed)
    };
    let st = store.scheme.status();
    let c = store.scheme.counters();
    let jobs = &gc.jobs;
    // SWAN's R-groups each; a log-RAID array's one log and an in-place array's one stripe
    // as group 0.
    let groups = if matches!(store.kind, SchemeKind::Swan(_)) { store.io.sb.rgroups } else { 1 };
    let groups = (0..groups)
        .map(|g| GroupStatus {
            group: g,
            gc_jobs: if store.kind.is_log_structured() { jobs[g as usize] } else { 0 },
            role: GroupRole::of(store.kind, &st, g).name().into(),
            free_segments: store.scheme.free_segments_in(g),
        })
        .collect();
    let d = &store.durability;
    let checks = &gc.checks;
    StatusReport {
        uuid: store.io.sb.uuid_string(),
        scheme: store.kind.to_string(),
        volume_bytes: store.scheme.volume_blocks() * BLOCK as u64,
        zone_bytes: store.io.sb.zoned.then(|| u64::from(store.io.sb.segment_rows) * BLOCK as u64),
        uptime_s: uptime.as_secs_f64(),
        groups,
        members: store
            .io
            .stats
            .iter()
            .enumerate()
            .map(|(i, st)| MemberStatus {
                health: store.io.members.health(i as u32).name().into(),
                file: store.io.members[i].identity(),
                canonical: store.io.members[i].canonical().map(|p| p.display().to_string()),
                model: store.exec.emu.as_ref().map(|e| e.member_stats(i as u32)),
                ..st.clone()
            })
            .collect(),
        free_segments: st.free_segments,
        segments: st.segments,
        gc_target: store.scheme.swan_gc_target(),
        user_bytes_written: c.user_blocks_written * BLOCK as u64,
        user_bytes_read: c.user_blocks_read * BLOCK as u64,
        gc_blocks_moved: c.gc_blocks_moved,
        victims: c.victims,
        gc_onset_user_bytes: c.gc_onset_user_blocks.map(|b| b * BLOCK as u64),
        front_rotations: c.front_rotations,
        parity_read_blocks: c.parity_read_blocks,
        parity_extra_reads: c.parity_extra_reads,
        sync_points: d.sync_points,
        journal_records: d.journal_records,
        checkpoints: d.checkpoints,
        batches_overlapped: store.exec.batches_overlapped,
        queued_requests: queued,
        reads_verified: read_count(|c| &c.verified),
        read_mismatches: read_count(|c| &c.mismatches),
        read_repairs: read_count(|c| &c.repaired),
        read_failures: read_count(|c| &c.failed),
        reads_unverified: read_count(|c| &c.unverified),
        gc_verified: checks.verified,
        gc_repaired: checks.repaired,
        gc_lost: checks.lost,
        gc_unverified: checks.unverified,
        rebuild: store.io.rebuild_status(),
        durability: durability(store),
        stopped_by_full: d.full.is_some(),
        resumes: resumed,
        emulation: store.exec.emu.is_some().then_some(emulation),
        engine_cpu,
        threads: crate::threads::by_stage(),
    }
}

/// Whether FLUSH works, and if not why and until when.
fn durability(store: &Store) -> String {
    let d = &store.durability;
    match (&d.lost, &d.full) {
        (None, _) => "on".into(),
        (Some(why), Some(stop)) => format!(
            "stopped by a full file system ({}): writes are refused with ENOSPC and FLUSH fails until it has room; \
             the array then resumes by itself ({why})",
            stop.first_path().map_or_else(String::new, |p| p.display().to_string())
        ),
        (Some(why), None) => format!("stopped until a restart: {why}"),
    }
}
