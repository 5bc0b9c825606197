//! `swan status` of a running engine, gathered from its parts ([`super::status`] holds the
//! report's types, which the parts fill in too).

use super::gc::GcRunner;
use super::status::{EmulationTiming, GroupStatus, MemberStatus, StatusReport};
use super::store::Store;
use crate::member::BLOCK;
use std::time::Duration;
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
    let groups = match (store.kind, store.scheme.log()) {
        (SchemeKind::Swan(_), Some(la)) => (0..store.io.sb.rgroups)
            .map(|g| GroupStatus {
                group: g,
                gc_jobs: jobs[g as usize],
                role: if st.front_group == Some(g) {
                    "front-end".into()
                } else if st.gc_groups & (1 << (g % 64)) != 0 {
                    "back-end GC".into()
                } else {
                    "back-end idle".into()
                },
                free_segments: la.segments().free_count(g),
            })
            .collect(),
        (_, Some(la)) => vec![GroupStatus {
            group: 0,
            gc_jobs: jobs[0],
            role: if st.gc_groups != 0 { "log, GC".into() } else { "log".into() },
            free_segments: la.segments().free_count(0),
        }],
        _ => vec![GroupStatus { group: 0, gc_jobs: 0, role: "in-place".into(), free_segments: 0 }],
    };
    let d = &store.durability;
    let checks = &gc.checks;
    StatusReport {
        uuid: store.io.sb.uuid_string(),
        scheme: store.kind.to_string(),
        volume_bytes: store.scheme.volume_blocks() * BLOCK as u64,
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
                canonical: std::fs::canonicalize(store.io.members[i].path()).ok().map(|p| p.display().to_string()),
                model: store.exec.emu.as_ref().map(|e| e.member_stats(i as u32)),
                ..st.clone()
            })
            .collect(),
        free_segments: st.free_segments,
        segments: st.segments,
        gc_target: store
            .scheme
            .log()
            .filter(|la| la.config().layout == swan_core::scheme::Layout::Swan)
            .map(|la| la.config().swan_gc_target),
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
