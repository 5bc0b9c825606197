//! What `swan status` shows of a running engine.

use super::gc::GcRunner;
use super::store::Store;
use crate::member::BLOCK;
use serde::Serialize;
use std::time::Duration;
use swan_core::scheme::SchemeKind;

/// What `swan status` shows.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    pub uuid: String,
    pub scheme: String,
    pub volume_bytes: u64,
    pub uptime_s: f64,
    pub groups: Vec<GroupStatus>,
    pub members: Vec<MemberStatus>,
    pub free_segments: u64,
    pub segments: u64,
    /// SWAN: free segments GC keeps in the back-end R-groups (`swan serve --gc-target`).
    pub gc_target: Option<u64>,
    pub user_bytes_written: u64,
    pub user_bytes_read: u64,
    pub gc_blocks_moved: u64,
    pub victims: u64,
    /// User bytes written (since the server started) when GC took its first victim.
    pub gc_onset_user_bytes: Option<u64>,
    pub front_rotations: u64,
    pub sync_points: u64,
    pub journal_records: u64,
    pub checkpoints: u64,
    pub queued_requests: usize,
    /// Blocks of pooled reads checked against their CRC, found not to match, rebuilt from
    /// parity, or answered with EIO; and blocks with no CRC to check (adopted segments).
    pub reads_verified: u64,
    pub read_mismatches: u64,
    pub read_repairs: u64,
    pub read_failures: u64,
    pub reads_unverified: u64,
    /// Blocks GC moved: checked against their CRC, rebuilt from parity first, lost (moved
    /// marked bad), or without a CRC to check.
    pub gc_verified: u64,
    pub gc_repaired: u64,
    pub gc_lost: u64,
    pub gc_unverified: u64,
    /// A replacement member being rebuilt (`swan replace`).
    pub rebuild: Option<RebuildStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupStatus {
    pub group: u32,
    /// GC jobs (victims) started in this R-group since the server started.
    pub gc_jobs: u64,
    /// "front-end", "back-end GC", "back-end idle" (SWAN); "log" or "in-place" otherwise.
    pub role: String,
    pub free_segments: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct MemberStatus {
    pub path: String,
    /// "healthy", "failed" or "rebuilding".
    pub health: String,
    pub user_bytes_written: u64,
    pub gc_bytes_written: u64,
    pub bytes_read: u64,
    pub gc_bytes_read: u64,
    pub trims: u64,
    pub errors: u64,
}

/// What `swan status` says of a rebuild.
#[derive(Clone, Debug, Serialize)]
pub struct RebuildStatus {
    pub member: u32,
    pub path: String,
    pub done_blocks: u64,
    pub total_blocks: u64,
}

/// What `swan status` shows of `store`, its GC (`gc`), `queued` requests and `uptime`.
pub(super) fn report(store: &Store, gc: &GcRunner, queued: usize, uptime: Duration) -> StatusReport {
    let counts = &store.crcs.counts;
    let read_count = |f: fn(&crate::pool::ReadChecks) -> &std::sync::atomic::AtomicU64| {
        f(counts).load(std::sync::atomic::Ordering::Relaxed)
    };
    let st = store.scheme.status();
    let c = store.scheme.counters();
    let jobs = &gc.jobs;
    let groups = match (store.kind, store.scheme.log_array()) {
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
            .map(|(i, st)| MemberStatus { health: store.io.members.health(i as u32).name().into(), ..st.clone() })
            .collect(),
        free_segments: st.free_segments,
        segments: st.segments,
        gc_target: store
            .scheme
            .log_array()
            .filter(|la| la.config().layout == swan_core::scheme::Layout::Swan)
            .map(|la| la.config().swan_gc_target),
        user_bytes_written: c.user_blocks_written * BLOCK as u64,
        user_bytes_read: c.user_blocks_read * BLOCK as u64,
        gc_blocks_moved: c.gc_blocks_moved,
        victims: c.victims,
        gc_onset_user_bytes: c.gc_onset_user_blocks.map(|b| b * BLOCK as u64),
        front_rotations: c.front_rotations,
        sync_points: d.sync_points,
        journal_records: d.journal_records,
        checkpoints: d.checkpoints,
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
    }
}
