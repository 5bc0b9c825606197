//! The figures `swan serve --metrics` exposes, gathered at scrape time from the same
//! sources `swan status` reads: the engine's [`StatusReport`] (array, R-groups, members,
//! GC, durability, rebuild) and the NBD front's [`ServerStats`] (connections, requests).
//! Nothing here keeps a count of its own; a scrape is one status request to the engine.
//!
//! Names follow Prometheus conventions: `swan_` prefix, base units (bytes, seconds) in the
//! name, `_total` on counters (the text encoder appends it). `docs/metrics.md` lists them.

use crate::engine::{Engine, StatusReport};
use crate::member::BLOCK;
use crate::metrics::requests::{Op, Requests};
use crate::nbd::ServerStats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeGaugeValue, NoLabelSet};
use prometheus_client::metrics::MetricType;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Where a scrape reads the engine's status: a running [`Engine`], or anything else that
/// can produce a [`StatusReport`] (`None` while the engine is stopping).
pub type StatusSource = Arc<dyn Fn() -> Option<StatusReport> + Send + Sync>;

/// One export of the server, as a scrape sees it.
pub struct Exported {
    /// The value of the `export` label on every series of this export; `None` for the lone
    /// array of a server without `--config`, whose series carry no such label.
    pub label: Option<String>,
    pub status: StatusSource,
    /// What the NBD front counted of this export's requests.
    pub requests: Arc<Requests>,
}

/// The scrape-time collector of one server.
pub struct Scrape {
    exports: Vec<Exported>,
    server: Arc<ServerStats>,
}

impl Scrape {
    /// A server of one array, unlabelled, whose requests the server's own counters hold.
    pub fn new(status: StatusSource, server: Arc<ServerStats>) -> Scrape {
        let requests = server.requests_shared();
        Scrape { exports: vec![Exported { label: None, status, requests }], server }
    }

    /// Over a running engine.
    pub fn of_engine(engine: Arc<Engine>, server: Arc<ServerStats>) -> Scrape {
        Scrape::new(Arc::new(move || engine.status()), server)
    }

    /// A server of several exports: each family once, a series per export with its label.
    pub fn of_exports(exports: Vec<Exported>, server: Arc<ServerStats>) -> Scrape {
        Scrape { exports, server }
    }
}

impl fmt::Debug for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scrape").finish_non_exhaustive()
    }
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        connections(&mut enc, &self.server)?;
        requests(&mut enc, &self.exports)?;
        // One status request per export per scrape; an export whose engine is stopping
        // has none and is left out of the families below.
        let reports: Vec<(Labels, StatusReport)> =
            self.exports.iter().filter_map(|e| (e.status)().map(|st| (export_label(e), st))).collect();
        array(&mut enc, &reports)?;
        rgroups(&mut enc, &reports)?;
        members(&mut enc, &reports)?;
        rebuild(&mut enc, &reports)
    }
}

type Label = (&'static str, String);
type Labels = Vec<Label>;
type Reports = [(Labels, StatusReport)];

/// The labels every series of `e` starts with.
fn export_label(e: &Exported) -> Labels {
    e.label.iter().map(|l| ("export", l.clone())).collect()
}

/// `prefix` followed by `own`.
fn with(prefix: &Labels, own: impl IntoIterator<Item = Label>) -> Labels {
    prefix.iter().cloned().chain(own).collect()
}

/// Every report's samples as `of` gives them, each labelled with its export first.
fn samples<L: IntoIterator<Item = Label>, V, I: IntoIterator<Item = (L, V)>>(
    rs: &Reports,
    of: impl Fn(&StatusReport) -> I,
) -> Vec<(Labels, V)> {
    rs.iter().flat_map(|(prefix, st)| of(st).into_iter().map(|(l, v)| (with(prefix, l), v))).collect()
}

/// A gauge family: per report, the samples `of` gives (their own labels after the export's).
/// Nothing at all (no descriptor) when no report gives one.
fn gauges<L: IntoIterator<Item = Label>, V: EncodeGaugeValue, I: IntoIterator<Item = (L, V)>>(
    enc: &mut DescriptorEncoder,
    rs: &Reports,
    name: &str,
    help: &str,
    of: impl Fn(&StatusReport) -> I,
) -> fmt::Result {
    let samples = samples(rs, of);
    if samples.is_empty() {
        return Ok(());
    }
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, v) in samples {
        m.encode_family(&labels)?.encode_gauge(&v)?;
    }
    Ok(())
}

/// A gauge with no labels of its own (but the export's).
fn gauge<V: EncodeGaugeValue>(
    enc: &mut DescriptorEncoder,
    rs: &Reports,
    name: &str,
    help: &str,
    of: impl Fn(&StatusReport) -> Option<V>,
) -> fmt::Result {
    gauges(enc, rs, name, help, |st| of(st).map(|v| (None::<Label>, v)))
}

/// A counter family, as [`gauges`]; named without its `_total`, which the encoder appends.
fn counters<L: IntoIterator<Item = Label>, I: IntoIterator<Item = (L, u64)>>(
    enc: &mut DescriptorEncoder,
    rs: &Reports,
    name: &str,
    help: &str,
    of: impl Fn(&StatusReport) -> I,
) -> fmt::Result {
    let samples = samples(rs, of);
    if samples.is_empty() {
        return Ok(());
    }
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, v) in samples {
        m.encode_family(&labels)?.encode_counter::<NoLabelSet, _, u64>(&v, None)?;
    }
    Ok(())
}

/// A counter with no labels of its own (but the export's).
fn counter(
    enc: &mut DescriptorEncoder,
    rs: &Reports,
    name: &str,
    help: &str,
    of: impl Fn(&StatusReport) -> u64,
) -> fmt::Result {
    counters(enc, rs, name, help, |st| [(None::<Label>, of(st))])
}

fn op_label(op: Op) -> Label {
    ("op", op.name().to_string())
}

/// Connections, as the NBD front counts them: the server's, shared by its exports (a
/// connection has no export until its handshake chose one), so never labelled by export.
fn connections(enc: &mut DescriptorEncoder, s: &ServerStats) -> fmt::Result {
    let one = |enc: &mut DescriptorEncoder, name: &str, help: &str, kind: MetricType, v: u64| {
        let mut m = enc.encode_descriptor(name, help, None, kind)?;
        match kind {
            MetricType::Counter => m.encode_counter::<NoLabelSet, _, u64>(&v, None),
            _ => m.encode_gauge(&v),
        }
    };
    one(enc, "swan_connections_open", "NBD connections open now.", MetricType::Gauge, s.active_connections() as u64)?;
    one(
        enc,
        "swan_connections_accepted",
        "NBD connections accepted since the server started.",
        MetricType::Counter,
        s.accepted(),
    )?;
    one(
        enc,
        "swan_connections_refused",
        "NBD connections closed at once because the connection limit was reached.",
        MetricType::Counter,
        s.refused(),
    )
}

/// Requests, as the NBD front counts them for each export.
fn requests(enc: &mut DescriptorEncoder, exports: &[Exported]) -> fmt::Result {
    {
        let mut m = enc.encode_descriptor(
            "swan_request_duration_seconds",
            "Time from a request handed to the engine (its payload read) to its reply being ready, by NBD command.",
            None,
            MetricType::Histogram,
        )?;
        for e in exports {
            for op in Op::ALL {
                let (sum, count, buckets) = e.requests.op(op).latency.snapshot();
                let labels = with(&export_label(e), [op_label(op)]);
                m.encode_family(&labels)?.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
            }
        }
    }
    let per_op = |what: fn(&crate::metrics::requests::OpCounts) -> u64| {
        exports
            .iter()
            .flat_map(move |e| Op::ALL.map(|op| (with(&export_label(e), [op_label(op)]), what(e.requests.op(op)))))
            .collect::<Vec<_>>()
    };
    let mut family = |name: &str, help: &str, samples: Vec<(Labels, u64)>| -> fmt::Result {
        let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
        for (labels, v) in samples {
            m.encode_family(&labels)?.encode_counter::<NoLabelSet, _, u64>(&v, None)?;
        }
        Ok(())
    };
    family(
        "swan_request_bytes",
        "Bytes named by completed requests (data read or written; the range of TRIM and WRITE_ZEROES), by NBD command.",
        per_op(|c| c.bytes.load(Ordering::Relaxed)),
    )?;
    family(
        "swan_request_errors",
        "Requests the engine completed with an error, by NBD command.",
        per_op(|c| c.errors.load(Ordering::Relaxed)),
    )
}

/// The array as a whole: volume, GC, write amplification, durability.
fn array(enc: &mut DescriptorEncoder, rs: &Reports) -> fmt::Result {
    gauges(enc, rs, "swan_array_info", "The served array: its UUID and scheme (always 1).", |st| {
        [([("uuid", st.uuid.clone()), ("scheme", st.scheme.clone())], 1u64)]
    })?;
    gauge(enc, rs, "swan_volume_bytes", "Size of the exported volume.", |st| Some(st.volume_bytes))?;
    gauge(enc, rs, "swan_uptime_seconds", "Seconds since the engine started.", |st| Some(st.uptime_s))?;
    counter(enc, rs, "swan_user_written_bytes", "Bytes users wrote to the volume since the server started.", |st| {
        st.user_bytes_written
    })?;
    counter(enc, rs, "swan_user_read_bytes", "Bytes users read from the volume since the server started.", |st| {
        st.user_bytes_read
    })?;
    let moved = |st: &StatusReport| st.gc_blocks_moved * BLOCK as u64;
    counter(enc, rs, "swan_gc_moved_bytes", "Bytes of live blocks GC copied out of victim segments.", moved)?;
    counter(enc, rs, "swan_gc_victims", "GC jobs: victim segments GC took, every R-group together.", |st| st.victims)?;
    // The array-level WAF of the SWAN paper: what the log wrote per byte users wrote
    // (parity, the same under every scheme, left out). Undefined before any write.
    gauge(
        enc,
        rs,
        "swan_array_waf",
        "Array write amplification: (user bytes + GC-moved bytes) / user bytes, since the server started.",
        |st| {
            (st.user_bytes_written > 0)
                .then(|| (st.user_bytes_written + moved(st)) as f64 / st.user_bytes_written as f64)
        },
    )?;
    gauge(
        enc,
        rs,
        "swan_gc_onset_user_written_bytes",
        "User bytes written (since start) when GC took its first victim.",
        |st| st.gc_onset_user_bytes,
    )?;
    gauge(enc, rs, "swan_segments", "Segments of the log (0 for in-place RAID).", |st| Some(st.segments))?;
    gauge(enc, rs, "swan_free_segments", "Free segments of the log, every R-group together.", |st| {
        Some(st.free_segments)
    })?;
    gauge(enc, rs, "swan_gc_target_segments", "SWAN: free segments GC keeps ready in the back-end R-groups.", |st| {
        st.gc_target
    })?;
    counter(enc, rs, "swan_front_end_rotations", "SWAN: times the front-end moved to another R-group.", |st| {
        st.front_rotations
    })?;
    counter(
        enc,
        rs,
        "swan_sync_points",
        "Sync points: every member synced and the journal made durable (FLUSH, FUA).",
        |st| st.sync_points,
    )?;
    counter(
        enc,
        rs,
        "swan_parity_read_blocks",
        "User blocks read around their member from the rest of the row and parity (--parity-reads).",
        |st| st.parity_read_blocks,
    )?;
    counter(
        enc,
        rs,
        "swan_parity_extra_reads",
        "Member reads that reading around cost beyond the direct reads (--parity-reads).",
        |st| st.parity_extra_reads,
    )?;
    counter(enc, rs, "swan_journal_records", "Records written to the change journal.", |st| st.journal_records)?;
    gauge(
        enc,
        rs,
        "swan_durability_stopped",
        "1 while every FLUSH fails (durability stopped by an error); 0 otherwise.",
        |st| Some(u64::from(st.durability != "on")),
    )?;
    gauge(
        enc,
        rs,
        "swan_durability_stopped_by_full",
        "1 while a member's full file system stops durability (writes refused with ENOSPC until it has room, then the array resumes by itself).",
        |st| Some(u64::from(st.stopped_by_full)),
    )?;
    counter(
        enc,
        rs,
        "swan_resumes",
        "Times the array recovered in-process and resumed writes once a full file system had room again.",
        |st| st.resumes,
    )?;
    counter(enc, rs, "swan_checkpoints", "Checkpoints of the map written.", |st| st.checkpoints)?;
    counter(
        enc,
        rs,
        "swan_batches_overlapped",
        "Batches whose O_DIRECT writes were still in flight while the next batch was served.",
        |st| st.batches_overlapped,
    )?;
    gauge(enc, rs, "swan_queued_requests", "Requests waiting in the engine's queue at the scrape.", |st| {
        Some(st.queued_requests)
    })?;
    gauges(
        enc,
        rs,
        "swan_engine_cpu_seconds",
        "CPU seconds of the engine thread since start, by part of its round (docs/host-model.md).",
        |st| {
            let e = st.engine_cpu;
            [
                ("receiving", e.receiving_s),
                ("serving", e.serving_s),
                ("gc", e.gc_s),
                ("durability", e.durability_s),
                ("replies", e.replies_s),
                ("rebuild", e.rebuild_s),
            ]
            .map(|(p, v)| ([("part", p.to_string())], v))
        },
    )?;
    counter(enc, rs, "swan_engine_requests", "User requests the engine has taken from its queue.", |st| {
        st.engine_cpu.requests
    })?;
    gauge(
        enc,
        rs,
        "swan_engine_queued_seconds",
        "Summed wait of requests from their connection handing them over to the engine taking them.",
        |st| Some(st.engine_cpu.queued_s),
    )?;
    gauges(
        enc,
        rs,
        "swan_thread_cpu_seconds",
        "CPU seconds of the server's live threads, by the stage of a request's path they serve.",
        |st| st.threads.iter().map(|t| ([("stage", t.stage.clone())], t.cpu_s)).collect::<Vec<_>>(),
    )?;
    gauges(
        enc,
        rs,
        "swan_thread_runq_wait_seconds",
        "Seconds the server's live threads were runnable but waited for a CPU, by stage.",
        |st| st.threads.iter().map(|t| ([("stage", t.stage.clone())], t.runq_wait_s)).collect::<Vec<_>>(),
    )?;
    let outcome = |o: &str, v: u64| ([("outcome", o.to_string())], v);
    counters(
        enc,
        rs,
        "swan_read_check_blocks",
        "Blocks of user reads checked against their CRC, by outcome (verified, mismatch, repaired from parity, failed with EIO, unverified: no CRC known).",
        |st| {
            [
                outcome("verified", st.reads_verified),
                outcome("mismatch", st.read_mismatches),
                outcome("repaired", st.read_repairs),
                outcome("failed", st.read_failures),
                outcome("unverified", st.reads_unverified),
            ]
        },
    )?;
    counters(
        enc,
        rs,
        "swan_gc_check_blocks",
        "Blocks GC moved, by what their CRC check found (verified, repaired from parity, lost, unverified: no CRC known).",
        |st| {
            [
                outcome("verified", st.gc_verified),
                outcome("repaired", st.gc_repaired),
                outcome("lost", st.gc_lost),
                outcome("unverified", st.gc_unverified),
            ]
        },
    )
}

/// R-groups: which takes the writes, which collect garbage, their free segments.
fn rgroups(enc: &mut DescriptorEncoder, rs: &Reports) -> fmt::Result {
    let g = |g: u32| [("rgroup", g.to_string())];
    gauges(
        enc,
        rs,
        "swan_rgroup_front_end",
        "1 for the R-group that takes every user write (SWAN's front-end), 0 for back-end R-groups.",
        |st| st.groups.iter().map(|r| (g(r.group), u64::from(r.role == "front-end"))).collect::<Vec<_>>(),
    )?;
    gauges(
        enc,
        rs,
        "swan_rgroup_gc_active",
        "1 while GC runs in this R-group (SWAN back-end; the one log of Log-RAID), else 0.",
        |st| st.groups.iter().map(|r| (g(r.group), u64::from(r.role.contains("GC")))).collect::<Vec<_>>(),
    )?;
    gauges(enc, rs, "swan_rgroup_role", "The R-group's role as swan status names it (always 1).", |st| {
        st.groups
            .iter()
            .map(|r| ([("rgroup", r.group.to_string()), ("role", r.role.clone())], 1u64))
            .collect::<Vec<_>>()
    })?;
    gauges(enc, rs, "swan_rgroup_free_segments", "Free segments of this R-group.", |st| {
        st.groups.iter().map(|r| (g(r.group), r.free_segments)).collect::<Vec<_>>()
    })?;
    counters(
        enc,
        rs,
        "swan_rgroup_gc_jobs",
        "GC jobs (victim segments) started in this R-group since the server started.",
        |st| st.groups.iter().map(|r| (g(r.group), r.gc_jobs)).collect::<Vec<_>>(),
    )
}

/// Members: their I/O, errors and health.
fn members(enc: &mut DescriptorEncoder, rs: &Reports) -> fmt::Result {
    let m = |i: usize| [("member", i.to_string())];
    let class = |i: usize, c: &str| [("member", i.to_string()), ("class", c.to_string())];
    let each = |st: &StatusReport, f: &dyn Fn(usize, &crate::engine::MemberStatus) -> u64| {
        st.members.iter().enumerate().map(|(i, s)| (m(i), f(i, s))).collect::<Vec<_>>()
    };
    gauges(enc, rs, "swan_member_info", "The member's path (always 1).", |st| {
        st.members
            .iter()
            .enumerate()
            .map(|(i, s)| ([("member", i.to_string()), ("path", s.path.clone())], 1u64))
            .collect::<Vec<_>>()
    })?;
    counters(
        enc,
        rs,
        "swan_member_written_bytes",
        "Bytes written to the member, by class: user (user data and its parity) or gc (blocks GC moved).",
        |st| {
            st.members
                .iter()
                .enumerate()
                .flat_map(|(i, s)| [(class(i, "user"), s.user_bytes_written), (class(i, "gc"), s.gc_bytes_written)])
                .collect::<Vec<_>>()
        },
    )?;
    counters(
        enc,
        rs,
        "swan_member_read_bytes",
        "Bytes read from the member, by class: user (reads and read-modify-write) or gc (GC reading victims).",
        |st| {
            st.members
                .iter()
                .enumerate()
                .flat_map(|(i, s)| [(class(i, "user"), s.bytes_read), (class(i, "gc"), s.gc_bytes_read)])
                .collect::<Vec<_>>()
        },
    )?;
    counters(enc, rs, "swan_member_reads", "Read operations issued to the member (contiguous runs).", |st| {
        each(st, &|_, s| s.reads)
    })?;
    counters(enc, rs, "swan_member_writes", "Write operations issued to the member (contiguous runs).", |st| {
        each(st, &|_, s| s.writes)
    })?;
    counters(enc, rs, "swan_member_trims", "TRIMs issued to the member (a log's freed segments).", |st| {
        each(st, &|_, s| s.trims)
    })?;
    counters(enc, rs, "swan_member_errors", "I/O errors the member returned.", |st| each(st, &|_, s| s.errors))?;
    gauges(
        enc,
        rs,
        "swan_member_state",
        "1 for the member's current state (healthy, failed, rebuilding), 0 for the others.",
        |st| {
            st.members
                .iter()
                .enumerate()
                .flat_map(|(i, s)| {
                    ["healthy", "failed", "rebuilding"].map(|state| {
                        ([("member", i.to_string()), ("state", state.to_string())], u64::from(s.health == state))
                    })
                })
                .collect::<Vec<_>>()
        },
    )?;
    gauge(
        enc,
        rs,
        "swan_degraded",
        "1 while any member is failed or rebuilding (the array serves from parity), else 0.",
        |st| Some(u64::from(st.members.iter().any(|s| s.health != "healthy"))),
    )
}

/// A rebuild onto a replacement member (`swan replace`).
fn rebuild(enc: &mut DescriptorEncoder, rs: &Reports) -> fmt::Result {
    gauge(enc, rs, "swan_rebuild_active", "1 while a replacement member is being rebuilt, else 0.", |st| {
        Some(u64::from(st.rebuild.is_some()))
    })?;
    let b = BLOCK as u64;
    gauges(enc, rs, "swan_rebuild_done_bytes", "Bytes of the replacement member rebuilt so far.", |st| {
        st.rebuild.as_ref().map(|r| ([("member", r.member.to_string())], r.done_blocks * b))
    })?;
    gauges(enc, rs, "swan_rebuild_total_bytes", "Bytes of the replacement member to rebuild.", |st| {
        st.rebuild.as_ref().map(|r| ([("member", r.member.to_string())], r.total_blocks * b))
    })
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
            zone_bytes: None,
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
            batches_overlapped: 5,
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
            durability: "stopped by a full file system (m)".into(),
            stopped_by_full: true,
            resumes: 2,
            emulation: None,
            engine_cpu: Default::default(),
            threads: Vec::new(),
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
            "swan_batches_overlapped_total 5",
            "swan_durability_stopped 1",
            "swan_durability_stopped_by_full 1",
            "swan_resumes_total 2",
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
    fn several_exports_share_each_family_with_an_export_label() {
        let (a, mut b) = (report(), report());
        b.scheme = "raid5".into();
        b.user_bytes_written = 0;
        b.rebuild = None;
        let export = |name: &str, st: StatusReport| Exported {
            label: Some(name.into()),
            status: Arc::new(move || Some(st.clone())),
            requests: Arc::default(),
        };
        let exports = vec![export("a", a), export("b", b)];
        exports[1].requests.completed(Op::Write, 4096, std::time::Duration::from_micros(30), true);
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Scrape::of_exports(exports, Arc::default())));
        let mut t = String::new();
        prometheus_text::encode(&mut t, &registry).expect("encodes");
        for line in [
            "swan_volume_bytes{export=\"a\"} 1073741824",
            "swan_volume_bytes{export=\"b\"} 1073741824",
            "swan_array_info{export=\"b\",uuid=\"u\",scheme=\"raid5\"} 1",
            "swan_array_waf{export=\"a\"} 1.5",
            "swan_rgroup_front_end{export=\"b\",rgroup=\"1\"} 1",
            "swan_rebuild_done_bytes{export=\"a\",member=\"1\"} 40960",
            "swan_request_bytes_total{export=\"b\",op=\"write\"} 4096",
            "swan_request_bytes_total{export=\"a\",op=\"write\"} 0",
            "swan_connections_open 0",
        ] {
            assert!(t.lines().any(|l| l == line), "no line {line:?} in\n{t}");
        }
        // No WAF before a write, and no rebuild: B has no such series.
        assert!(
            !t.contains("swan_array_waf{export=\"b\"}") && !t.contains("swan_rebuild_done_bytes{export=\"b\""),
            "{t}"
        );
        // Each family described once, whatever the number of exports.
        for family in ["swan_volume_bytes", "swan_request_duration_seconds", "swan_member_state"] {
            let typed = t.lines().filter(|l| l.starts_with(&format!("# TYPE {family} "))).count();
            assert_eq!(typed, 1, "{family} typed {typed} times in\n{t}");
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
