//! The figures `swan serve --metrics` exposes, gathered at scrape time from the same
//! sources `swan status` reads: the engine's [`StatusReport`] (array, R-groups, members,
//! GC, durability, rebuild) and the NBD front's [`ServerStats`] (connections, requests).
//! Nothing here keeps a count of its own; a scrape is one status request to the engine.
//!
//! Names follow Prometheus conventions: `swan_` prefix, base units (bytes, seconds) in the
//! name, `_total` on counters (the text encoder appends it). `docs/metrics.md` lists them.

use crate::engine::{Engine, StatusReport};
use crate::member::BLOCK;
use crate::metrics::requests::Op;
use crate::nbd::ServerStats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeGaugeValue, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Where a scrape reads the engine's status: a running [`Engine`], or anything else that
/// can produce a [`StatusReport`] (`None` while the engine is stopping).
pub type StatusSource = Arc<dyn Fn() -> Option<StatusReport> + Send + Sync>;

/// The scrape-time collector of one server.
pub struct Scrape {
    status: StatusSource,
    server: Arc<ServerStats>,
}

impl Scrape {
    pub fn new(status: StatusSource, server: Arc<ServerStats>) -> Scrape {
        Scrape { status, server }
    }

    /// Over a running engine.
    pub fn of_engine(engine: Arc<Engine>, server: Arc<ServerStats>) -> Scrape {
        Scrape::new(Arc::new(move || engine.status()), server)
    }
}

impl fmt::Debug for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scrape").finish_non_exhaustive()
    }
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        server(&mut enc, &self.server)?;
        if let Some(st) = (self.status)() {
            array(&mut enc, &st)?;
            rgroups(&mut enc, &st)?;
            members(&mut enc, &st)?;
            rebuild(&mut enc, &st)?;
        }
        Ok(())
    }
}

type Label = (&'static str, String);

fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, v: impl EncodeGaugeValue) -> fmt::Result {
    enc.encode_descriptor(name, help, None, MetricType::Gauge)?.encode_gauge(&v)
}

/// A counter named without its `_total`, which the encoder appends.
fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> fmt::Result {
    enc.encode_descriptor(name, help, None, MetricType::Counter)?.encode_counter::<NoLabelSet, _, u64>(&v, None)
}

fn gauges<L: EncodeLabelSet, V: EncodeGaugeValue>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (L, V)>,
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, v) in samples {
        m.encode_family(&labels)?.encode_gauge(&v)?;
    }
    Ok(())
}

fn counters<L: EncodeLabelSet>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (L, u64)>,
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, v) in samples {
        m.encode_family(&labels)?.encode_counter::<NoLabelSet, _, u64>(&v, None)?;
    }
    Ok(())
}

fn op_label(op: Op) -> [Label; 1] {
    [("op", op.name().to_string())]
}

/// Connections and requests, as the NBD front counts them.
fn server(enc: &mut DescriptorEncoder, s: &ServerStats) -> fmt::Result {
    gauge(enc, "swan_connections_open", "NBD connections open now.", s.active_connections() as u64)?;
    counter(enc, "swan_connections_accepted", "NBD connections accepted since the server started.", s.accepted())?;
    counter(
        enc,
        "swan_connections_refused",
        "NBD connections closed at once because the connection limit was reached.",
        s.refused(),
    )?;
    let r = s.requests();
    {
        let mut m = enc.encode_descriptor(
            "swan_request_duration_seconds",
            "Time from a request handed to the engine (its payload read) to its reply being ready, by NBD command.",
            None,
            MetricType::Histogram,
        )?;
        for op in Op::ALL {
            let (sum, count, buckets) = r.op(op).latency.snapshot();
            m.encode_family(&op_label(op))?.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
    }
    counters(
        enc,
        "swan_request_bytes",
        "Bytes named by completed requests (data read or written; the range of TRIM and WRITE_ZEROES), by NBD command.",
        Op::ALL.map(|op| (op_label(op), r.op(op).bytes.load(Ordering::Relaxed))),
    )?;
    counters(
        enc,
        "swan_request_errors",
        "Requests the engine completed with an error, by NBD command.",
        Op::ALL.map(|op| (op_label(op), r.op(op).errors.load(Ordering::Relaxed))),
    )
}

/// The array as a whole: volume, GC, write amplification, durability.
fn array(enc: &mut DescriptorEncoder, st: &StatusReport) -> fmt::Result {
    gauges(
        enc,
        "swan_array_info",
        "The served array: its UUID and scheme (always 1).",
        [([("uuid", st.uuid.clone()), ("scheme", st.scheme.clone())], 1u64)],
    )?;
    gauge(enc, "swan_volume_bytes", "Size of the exported volume.", st.volume_bytes)?;
    gauge(enc, "swan_uptime_seconds", "Seconds since the engine started.", st.uptime_s)?;
    counter(
        enc,
        "swan_user_written_bytes",
        "Bytes users wrote to the volume since the server started.",
        st.user_bytes_written,
    )?;
    counter(
        enc,
        "swan_user_read_bytes",
        "Bytes users read from the volume since the server started.",
        st.user_bytes_read,
    )?;
    let moved = st.gc_blocks_moved * BLOCK as u64;
    counter(enc, "swan_gc_moved_bytes", "Bytes of live blocks GC copied out of victim segments.", moved)?;
    counter(enc, "swan_gc_victims", "GC jobs: victim segments GC took, every R-group together.", st.victims)?;
    if st.user_bytes_written > 0 {
        // The array-level WAF of the SWAN paper: what the log wrote per byte users wrote
        // (parity, the same under every scheme, left out). Undefined before any write.
        let waf = (st.user_bytes_written + moved) as f64 / st.user_bytes_written as f64;
        gauge(
            enc,
            "swan_array_waf",
            "Array write amplification: (user bytes + GC-moved bytes) / user bytes, since the server started.",
            waf,
        )?;
    }
    if let Some(b) = st.gc_onset_user_bytes {
        gauge(
            enc,
            "swan_gc_onset_user_written_bytes",
            "User bytes written (since start) when GC took its first victim.",
            b,
        )?;
    }
    gauge(enc, "swan_segments", "Segments of the log (0 for in-place RAID).", st.segments)?;
    gauge(enc, "swan_free_segments", "Free segments of the log, every R-group together.", st.free_segments)?;
    if let Some(t) = st.gc_target {
        gauge(enc, "swan_gc_target_segments", "SWAN: free segments GC keeps ready in the back-end R-groups.", t)?;
    }
    counter(
        enc,
        "swan_front_end_rotations",
        "SWAN: times the front-end moved to another R-group.",
        st.front_rotations,
    )?;
    counter(
        enc,
        "swan_sync_points",
        "Sync points: every member synced and the journal made durable (FLUSH, FUA).",
        st.sync_points,
    )?;
    counter(
        enc,
        "swan_parity_read_blocks",
        "User blocks read around their member from the rest of the row and parity (--parity-reads).",
        st.parity_read_blocks,
    )?;
    counter(
        enc,
        "swan_parity_extra_reads",
        "Member reads that reading around cost beyond the direct reads (--parity-reads).",
        st.parity_extra_reads,
    )?;
    counter(enc, "swan_journal_records", "Records written to the change journal.", st.journal_records)?;
    counter(enc, "swan_checkpoints", "Checkpoints of the map written.", st.checkpoints)?;
    gauge(enc, "swan_queued_requests", "Requests waiting in the engine's queue at the scrape.", st.queued_requests)?;
    let outcome = |o: &str, v: u64| ([("outcome", o.to_string())], v);
    counters(
        enc,
        "swan_read_check_blocks",
        "Blocks of user reads checked against their CRC, by outcome (verified, mismatch, repaired from parity, failed with EIO, unverified: no CRC known).",
        [
            outcome("verified", st.reads_verified),
            outcome("mismatch", st.read_mismatches),
            outcome("repaired", st.read_repairs),
            outcome("failed", st.read_failures),
            outcome("unverified", st.reads_unverified),
        ],
    )?;
    counters(
        enc,
        "swan_gc_check_blocks",
        "Blocks GC moved, by what their CRC check found (verified, repaired from parity, lost, unverified: no CRC known).",
        [
            outcome("verified", st.gc_verified),
            outcome("repaired", st.gc_repaired),
            outcome("lost", st.gc_lost),
            outcome("unverified", st.gc_unverified),
        ],
    )
}

/// R-groups: which takes the writes, which collect garbage, their free segments.
fn rgroups(enc: &mut DescriptorEncoder, st: &StatusReport) -> fmt::Result {
    let g = |g: u32| [("rgroup", g.to_string())];
    gauges(
        enc,
        "swan_rgroup_front_end",
        "1 for the R-group that takes every user write (SWAN's front-end), 0 for back-end R-groups.",
        st.groups.iter().map(|r| (g(r.group), u64::from(r.role == "front-end"))),
    )?;
    gauges(
        enc,
        "swan_rgroup_gc_active",
        "1 while GC runs in this R-group (SWAN back-end; the one log of Log-RAID), else 0.",
        st.groups.iter().map(|r| (g(r.group), u64::from(r.role.contains("GC")))),
    )?;
    gauges(
        enc,
        "swan_rgroup_role",
        "The R-group's role as swan status names it (always 1).",
        st.groups.iter().map(|r| ([("rgroup", r.group.to_string()), ("role", r.role.clone())], 1u64)),
    )?;
    gauges(
        enc,
        "swan_rgroup_free_segments",
        "Free segments of this R-group.",
        st.groups.iter().map(|r| (g(r.group), r.free_segments)),
    )?;
    counters(
        enc,
        "swan_rgroup_gc_jobs",
        "GC jobs (victim segments) started in this R-group since the server started.",
        st.groups.iter().map(|r| (g(r.group), r.gc_jobs)),
    )
}

/// Members: their I/O, errors and health.
fn members(enc: &mut DescriptorEncoder, st: &StatusReport) -> fmt::Result {
    let m = |i: usize| [("member", i.to_string())];
    let class = |i: usize, c: &str| [("member", i.to_string()), ("class", c.to_string())];
    let each = || st.members.iter().enumerate();
    gauges(
        enc,
        "swan_member_info",
        "The member's path (always 1).",
        each().map(|(i, s)| ([("member", i.to_string()), ("path", s.path.clone())], 1u64)),
    )?;
    counters(
        enc,
        "swan_member_written_bytes",
        "Bytes written to the member, by class: user (user data and its parity) or gc (blocks GC moved).",
        each().flat_map(|(i, s)| [(class(i, "user"), s.user_bytes_written), (class(i, "gc"), s.gc_bytes_written)]),
    )?;
    counters(
        enc,
        "swan_member_read_bytes",
        "Bytes read from the member, by class: user (reads and read-modify-write) or gc (GC reading victims).",
        each().flat_map(|(i, s)| [(class(i, "user"), s.bytes_read), (class(i, "gc"), s.gc_bytes_read)]),
    )?;
    counters(
        enc,
        "swan_member_reads",
        "Read operations issued to the member (contiguous runs).",
        each().map(|(i, s)| (m(i), s.reads)),
    )?;
    counters(
        enc,
        "swan_member_writes",
        "Write operations issued to the member (contiguous runs).",
        each().map(|(i, s)| (m(i), s.writes)),
    )?;
    counters(
        enc,
        "swan_member_trims",
        "TRIMs issued to the member (a log's freed segments).",
        each().map(|(i, s)| (m(i), s.trims)),
    )?;
    counters(enc, "swan_member_errors", "I/O errors the member returned.", each().map(|(i, s)| (m(i), s.errors)))?;
    gauges(
        enc,
        "swan_member_state",
        "1 for the member's current state (healthy, failed, rebuilding), 0 for the others.",
        each().flat_map(|(i, s)| {
            ["healthy", "failed", "rebuilding"]
                .map(|state| ([("member", i.to_string()), ("state", state.to_string())], u64::from(s.health == state)))
        }),
    )?;
    let degraded = st.members.iter().any(|s| s.health != "healthy");
    gauge(
        enc,
        "swan_degraded",
        "1 while any member is failed or rebuilding (the array serves from parity), else 0.",
        u64::from(degraded),
    )
}

/// A rebuild onto a replacement member (`swan replace`).
fn rebuild(enc: &mut DescriptorEncoder, st: &StatusReport) -> fmt::Result {
    gauge(
        enc,
        "swan_rebuild_active",
        "1 while a replacement member is being rebuilt, else 0.",
        u64::from(st.rebuild.is_some()),
    )?;
    if let Some(r) = &st.rebuild {
        let m = [("member", r.member.to_string())];
        let b = BLOCK as u64;
        gauges(
            enc,
            "swan_rebuild_done_bytes",
            "Bytes of the replacement member rebuilt so far.",
            [(m.clone(), r.done_blocks * b)],
        )?;
        gauges(
            enc,
            "swan_rebuild_total_bytes",
            "Bytes of the replacement member to rebuild.",
            [(m, r.total_blocks * b)],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{GroupStatus, MemberStatus, RebuildStatus};
    use prometheus_client::encoding::prometheus_text;
    use prometheus_client::registry::Registry;

    fn report() -> StatusReport {
        let member = |health: &str| MemberStatus {
            path: "m".into(),
            health: health.into(),
            user_bytes_written: 8192,
            ..MemberStatus::default()
        };
        StatusReport {
            uuid: "u".into(),
            scheme: "swan5".into(),
            volume_bytes: 1 << 30,
            uptime_s: 2.5,
            groups: vec![
                GroupStatus { group: 0, gc_jobs: 3, role: "back-end GC".into(), free_segments: 4 },
                GroupStatus { group: 1, gc_jobs: 0, role: "front-end".into(), free_segments: 9 },
            ],
            members: vec![member("healthy"), member("rebuilding")],
            free_segments: 13,
            segments: 40,
            gc_target: Some(5),
            user_bytes_written: 4 * BLOCK as u64,
            user_bytes_read: 0,
            gc_blocks_moved: 2,
            victims: 3,
            gc_onset_user_bytes: None,
            front_rotations: 1,
            parity_read_blocks: 0,
            parity_extra_reads: 0,
            sync_points: 7,
            journal_records: 11,
            checkpoints: 2,
            queued_requests: 0,
            reads_verified: 0,
            read_mismatches: 0,
            read_repairs: 0,
            read_failures: 0,
            reads_unverified: 0,
            gc_verified: 2,
            gc_repaired: 0,
            gc_lost: 0,
            gc_unverified: 0,
            rebuild: Some(RebuildStatus { member: 1, path: "m".into(), done_blocks: 10, total_blocks: 40 }),
        }
    }

    fn text(st: StatusReport) -> String {
        let mut registry = Registry::default();
        let scrape = Scrape::new(Arc::new(move || Some(st.clone())), Arc::default());
        registry.register_collector(Box::new(scrape));
        let mut out = String::new();
        prometheus_text::encode(&mut out, &registry).expect("encodes");
        out
    }

    #[test]
    fn a_report_becomes_its_metric_families() {
        let t = text(report());
        for line in [
            "swan_rgroup_front_end{rgroup=\"0\"} 0",
            "swan_rgroup_front_end{rgroup=\"1\"} 1",
            "swan_rgroup_gc_active{rgroup=\"0\"} 1",
            "swan_rgroup_free_segments{rgroup=\"1\"} 9",
            "swan_rgroup_gc_jobs_total{rgroup=\"0\"} 3",
            "swan_gc_moved_bytes_total 8192",
            "swan_array_waf 1.5",
            "swan_sync_points_total 7",
            "swan_journal_records_total 11",
            "swan_member_state{member=\"1\",state=\"rebuilding\"} 1",
            "swan_member_state{member=\"1\",state=\"healthy\"} 0",
            "swan_degraded 1",
            "swan_rebuild_active 1",
            "swan_rebuild_done_bytes{member=\"1\"} 40960",
            "swan_rebuild_total_bytes{member=\"1\"} 163840",
            "swan_member_written_bytes_total{member=\"0\",class=\"user\"} 8192",
            "# TYPE swan_request_duration_seconds histogram",
        ] {
            assert!(t.lines().any(|l| l == line), "no line {line:?} in\n{t}");
        }
    }

    #[test]
    fn waf_is_absent_before_any_write() {
        let mut st = report();
        st.user_bytes_written = 0;
        st.rebuild = None;
        let t = text(st);
        assert!(!t.lines().any(|l| l.starts_with("swan_array_waf ")), "{t}");
        assert!(t.lines().any(|l| l == "swan_rebuild_active 0"), "{t}");
        assert!(!t.contains("swan_rebuild_done_bytes{"), "{t}");
    }
}
