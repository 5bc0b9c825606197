//! Writing a run directory (the format is specified in `OUTPUT.md`) and computing the
//! summary figures from a run's output.

use crate::engine::{RunOutput, SimConfig};
use crate::metrics::{cdf_points, mean_cv};
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Clone, Debug, Serialize)]
pub struct LatencySummary {
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: f64,
    /// Standard deviation (population) and coefficient of variation (σ/µ): Harmonia's
    /// measures of variability.
    #[serde(default)]
    pub stddev: f64,
    #[serde(default)]
    pub cv: f64,
}

/// The figures of one run; serialized as `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub scheme: String,
    pub seed: u64,
    pub options: SimConfig,
    pub ssd_write_mbps: f64,
    pub ssd_read_mbps: f64,
    /// First interval in which GC moved data: array-level GC for log-structured schemes,
    /// SSD-internal GC for in-place RAID (which has no array-level GC).
    pub gc_onset_s: Option<f64>,
    pub user_write_mbps_mean: f64,
    pub user_write_mbps_after_gc_mean: Option<f64>,
    pub user_write_mbps_after_gc_cv: Option<f64>,
    /// Over the second half of the run: the steady state, once aged SSDs have been
    /// overwritten and GC has settled.
    pub user_write_mbps_steady_mean: Option<f64>,
    pub user_write_mbps_steady_cv: Option<f64>,
    pub user_read_mbps_mean: f64,
    pub waf_array: Option<f64>,
    pub waf_ssd: Option<f64>,
    pub latency_us: LatencySummary,
    pub read_latency_us: Option<LatencySummary>,
    pub write_latency_us: Option<LatencySummary>,
    pub requests: u64,
    pub sim_s: f64,
    /// Wall-clock seconds of the whole run, setup (SSD aging, building the array) included.
    pub wall_s: f64,
    /// Wall-clock seconds of the setup alone.
    pub setup_wall_s: f64,
    /// Simulated user requests per wall-clock second of the simulation loop (setup excluded).
    pub requests_per_wall_s: f64,
    pub volume_blocks: u64,
    pub user_write_bytes: u64,
    pub victims: u64,
    /// User bytes written when the array's GC took its first victim (0: GC already ran
    /// when measurement began; absent: it never ran).
    pub gc_onset_user_bytes: Option<u64>,
    /// Mean valid fraction of the victims GC chose over the whole run.
    pub victim_valid_fraction: Option<f64>,
    /// Log-structured schemes: the victims' valid and payload blocks, and what GC passed
    /// over at each pick (see [`swan_core::scheme::VictimChoice`]); raw counts, so that two
    /// runs cut at different points can be subtracted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub victim_choice: Option<VictimChoiceSummary>,
    /// Simulated seconds during which user writes waited for GC to free space.
    pub stall_s: f64,
    pub front_rotations: u64,
    pub ssd_gc_copied_pages: u64,
    pub ssd_erases: u64,
    pub ssd_map_dram_bytes: u64,
    pub ssd_ftl: String,
    /// Simulator memory (scheme metadata + SSD models) per modelled 4 KiB block.
    pub bytes_per_modelled_block: f64,
    /// For a trace run: the trace, its format, the address policy, span and volume size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::ReplayReport>,
    /// Harmonia: GGC cycles and what triggered them (all zero without coordination).
    pub ggc: swan_core::ggc::GgcCounters,
    /// Per SSD: GC runs of its own (hard limit), forced runs, pages copied, erases.
    pub ssd_gc: Vec<crate::ggc::SsdGcCounts>,
    /// Log-structured schemes: what the untimed pre-fill wrote and collected before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<crate::prefill::PrefillReport>,
    /// Per SSD: speed factor, slow time, flash busy fraction, writes and write latency.
    pub ssd_load: Vec<crate::engine::SsdLoad>,
    /// SWAN: measured user reads by the role of the R-group they landed on (Table 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_roles: Option<Vec<RoleSummary>>,
    /// User blocks read around their SSD from the rest of their stripe row (`--parity-reads`).
    pub parity_read_blocks: u64,
    /// Member block reads those cost beyond the direct reads they replaced.
    pub parity_extra_reads: u64,
    /// Per window of the trace's recorded time (`--windows`): each phase measured alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowSummary>,
    /// Members behind a fabric (`--fabric`): where their page operations waited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<crate::fabric_array::report::FabricReport>,
    /// With a host model (`--host`): its CPU per request by part, as `swan status` shows the
    /// server's, so a simulated run and a live one can be set side by side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<HostCpuSummary>,
}

/// The host model's CPU time per request over the run, µs, by part of the path, and the
/// share of a core the engine thread kept busy.
#[derive(Clone, Debug, Serialize)]
pub struct HostCpuSummary {
    pub client_us: f64,
    pub reader_us: f64,
    pub engine_in_us: f64,
    pub engine_out_us: f64,
    pub gc_us: f64,
    pub engine_cores: f64,
}

impl HostCpuSummary {
    fn new(busy: swan_models::host::HostBusy, requests: u64, sim_ns: u64) -> Self {
        let per = |ns: u64| ns as f64 / requests.max(1) as f64 / 1e3;
        HostCpuSummary {
            client_us: per(busy.client_ns),
            reader_us: per(busy.reader_ns),
            engine_in_us: per(busy.engine_in_ns),
            engine_out_us: per(busy.engine_out_ns),
            gc_us: per(busy.gc_ns),
            engine_cores: busy.engine_ns() as f64 / sim_ns.max(1) as f64,
        }
    }
}

/// One window of a trace replay (an application's phase) measured on its own.
#[derive(Clone, Debug, Serialize)]
pub struct WindowSummary {
    pub name: String,
    /// Where it lies in the trace's recorded time, in seconds from the trace's start.
    pub recorded_start_s: f64,
    pub recorded_end_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Simulated seconds from its first request's issue to its last one's completion.
    pub span_s: f64,
    /// Bytes read and written per simulated second of its span, MB/s.
    pub mbps: f64,
    pub read_latency_us: Option<LatencySummary>,
    pub write_latency_us: Option<LatencySummary>,
    /// The tail of its read latency (µs) at [`READ_TAIL_QUANTILES`]: Fig. 10/11's CDFs.
    pub read_tail_us: Vec<(f64, u64)>,
    /// SWAN: its reads by the role of the R-group they landed on (Table 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_roles: Option<Vec<RoleSummary>>,
}

/// Where a window's read tail is sampled (SWAN's Fig. 10/11 plot the CDF from 0.995).
pub const READ_TAIL_QUANTILES: [f64; 8] = [0.5, 0.9, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1.0];

fn window_rows(cfg: &SimConfig, out: &RunOutput) -> Vec<WindowSummary> {
    let Some(spec) = &cfg.trace else { return Vec::new() };
    let swan = matches!(cfg.array.kind, swan_core::scheme::SchemeKind::Swan(_));
    let nonempty = |h: &hdrhistogram::Histogram<u64>| (!h.is_empty()).then(|| latency_summary(h));
    spec.windows
        .iter()
        .zip(&out.windows)
        .map(|(w, o)| WindowSummary {
            name: w.name.clone(),
            recorded_start_s: w.start_s,
            recorded_end_s: w.end_s,
            reads: o.reads,
            writes: o.writes,
            read_bytes: o.read_bytes,
            write_bytes: o.write_bytes,
            span_s: o.span_s(),
            mbps: o.mbps(),
            read_latency_us: nonempty(&o.latencies.read),
            write_latency_us: nonempty(&o.latencies.write),
            read_tail_us: if o.latencies.read.is_empty() {
                Vec::new()
            } else {
                READ_TAIL_QUANTILES.iter().map(|&q| (q, o.latencies.read.value_at_quantile(q))).collect()
            },
            read_roles: swan.then(|| role_rows(&o.read_roles)),
        })
        .collect()
}

/// One row of SWAN's Table 4: reads landing on R-groups in one role, their share of all
/// reads and their mean latency; and why they waited: the mean wait before their SSDs
/// started them, and how many found user writes in flight on their SSD, with the mean
/// latency of those and of the others.
#[derive(Clone, Debug, Serialize)]
pub struct RoleSummary {
    pub role: &'static str,
    pub reads: u64,
    pub share: f64,
    pub mean_latency_us: f64,
    pub mean_wait_us: f64,
    pub behind_writes_share: f64,
    pub mean_latency_behind_writes_us: f64,
    pub mean_latency_clear_us: f64,
}

fn role_rows(roles: &crate::engine::ReadRoles) -> Vec<RoleSummary> {
    let all = [
        ("front-end", roles.front_end),
        ("idle back-end", roles.idle_back_end),
        ("collecting back-end", roles.collecting_back_end),
    ];
    let total: u64 = all.iter().map(|(_, t)| t.reads).sum();
    let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    all.into_iter()
        .map(|(role, t)| {
            let clear = t.reads - t.behind_writes;
            RoleSummary {
                role,
                reads: t.reads,
                share: ratio(t.reads, total),
                mean_latency_us: ratio(t.latency_ns_sum, t.reads) / 1e3,
                mean_wait_us: ratio(t.wait_ns_sum, t.reads) / 1e3,
                behind_writes_share: ratio(t.behind_writes, t.reads),
                mean_latency_behind_writes_us: ratio(t.behind_writes_latency_ns_sum, t.behind_writes) / 1e3,
                mean_latency_clear_us: ratio(t.latency_ns_sum - t.behind_writes_latency_ns_sum, clear) / 1e3,
            }
        })
        .collect()
}

/// Percentiles, maximum and mean of a latency histogram (µs).
pub fn latency_summary(h: &hdrhistogram::Histogram<u64>) -> LatencySummary {
    LatencySummary {
        p50: h.value_at_quantile(0.50),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
        mean: h.mean(),
        stddev: h.stdev(),
        cv: if h.mean() > 0.0 { h.stdev() / h.mean() } else { 0.0 },
    }
}

impl RunSummary {
    /// `setup_s` and `run_s` are the wall-clock seconds of building the engine (SSD aging
    /// included) and of running it; the engine never reads the clock, the caller does.
    pub fn new(cfg: &SimConfig, out: &RunOutput, setup_s: f64, run_s: f64) -> Self {
        let wall_s = setup_s + run_s;
        let log = cfg.array.kind.is_log_structured();
        let onset_row =
            out.rows.iter().position(|r| if log { r.array_gc_write_blocks > 0 } else { r.ssd_gc_pages > 0 });
        let after: Vec<f64> =
            onset_row.map(|i| out.rows[i + 1..].iter().map(|r| r.user_write_mbps).collect()).unwrap_or_default();
        let after = mean_cv(&after);
        let all_w: Vec<f64> = out.rows.iter().map(|r| r.user_write_mbps).collect();
        let steady = mean_cv(&all_w[all_w.len() / 2..]);
        let all_r: Vec<f64> = out.rows.iter().map(|r| r.user_read_mbps).collect();
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        let sim_s = out.sim_ns as f64 / 1e9;
        let (ssd_read_mbps, ssd_write_mbps) = match &cfg.zoned {
            Some(z) => swan_models::zns::bandwidth::zone_sequential_mbps(&z.ssd),
            None => swan_models::ssd::bandwidth::sequential_mbps(&cfg.ssd),
        };
        let nonempty = |h: &hdrhistogram::Histogram<u64>| (!h.is_empty()).then(|| latency_summary(h));
        Self {
            scheme: cfg.scheme_label(),
            seed: cfg.seed,
            options: cfg.clone(),
            ssd_write_mbps,
            ssd_read_mbps,
            gc_onset_s: onset_row.map(|i| out.rows[i].t_s),
            user_write_mbps_mean: mean_cv(&all_w).map_or(0.0, |m| m.0),
            user_write_mbps_after_gc_mean: after.map(|m| m.0),
            user_write_mbps_after_gc_cv: after.map(|m| m.1),
            user_write_mbps_steady_mean: steady.map(|m| m.0),
            user_write_mbps_steady_cv: steady.map(|m| m.1),
            user_read_mbps_mean: mean_cv(&all_r).map_or(0.0, |m| m.0),
            waf_array: ratio(out.member_write_blocks, out.user_write_blocks),
            waf_ssd: ratio(out.nand_program_pages, out.ssd_host_write_pages),
            latency_us: latency_summary(&out.latencies.all),
            read_latency_us: nonempty(&out.latencies.read),
            write_latency_us: nonempty(&out.latencies.write),
            requests: out.requests,
            sim_s,
            wall_s,
            setup_wall_s: setup_s,
            requests_per_wall_s: if run_s > 0.0 { out.requests as f64 / run_s } else { 0.0 },
            volume_blocks: out.volume_blocks,
            user_write_bytes: out.user_write_blocks * swan_core::BLOCK_BYTES,
            victims: out.counters.victims,
            gc_onset_user_bytes: out.counters.gc_onset_user_blocks.map(|b| b * swan_core::BLOCK_BYTES),
            victim_valid_fraction: ratio(out.counters.victim_valid_blocks, out.counters.victim_payload_blocks),
            victim_choice: (out.counters.victims > 0).then_some(VictimChoiceSummary {
                victim_valid_blocks: out.counters.victim_valid_blocks,
                victim_payload_blocks: out.counters.victim_payload_blocks,
                choice: out.counters.victim_choice,
            }),
            stall_s: out.stall_ns as f64 / 1e9,
            front_rotations: out.counters.front_rotations,
            ssd_gc_copied_pages: out.ssd_gc_copied_pages,
            ssd_erases: out.ssd_erases,
            ssd_map_dram_bytes: out.ssd_map_dram_bytes,
            ssd_ftl: match &cfg.zoned {
                Some(_) => "zoned".into(),
                None => format!("{:?}", cfg.ssd.ftl).to_lowercase(),
            },
            bytes_per_modelled_block: (out.scheme_heap_bytes + out.ssd_heap_bytes) as f64
                / out.modelled_blocks.max(1) as f64,
            replay: None,
            ggc: out.ggc.counters,
            ssd_gc: out.ggc.per_ssd.clone(),
            prefill: out.prefill.clone(),
            ssd_load: out.ssd_load.clone(),
            read_roles: out.read_roles.as_ref().map(role_rows),
            parity_read_blocks: out.counters.parity_read_blocks,
            parity_extra_reads: out.counters.parity_extra_reads,
            windows: window_rows(cfg, out),
            fabric: out.fabric.clone(),
            host_cpu: out.host_busy.map(|b| HostCpuSummary::new(b, out.requests, out.sim_ns)),
        }
    }
}

/// The victims of a run, with what GC passed over ([`RunSummary::victim_choice`]).
#[derive(Clone, Debug, Serialize)]
pub struct VictimChoiceSummary {
    pub victim_valid_blocks: u64,
    pub victim_payload_blocks: u64,
    #[serde(flatten)]
    pub choice: swan_core::scheme::VictimChoice,
}

/// Per-SSD user operations in the timeline window (Harmonia Fig. 9), when one was asked for.
pub const SSD_TIMELINE_FILE: &str = "ssd_timeline.csv";

/// Each trace window's read-latency CDF, when the replay had windows.
pub const WINDOW_READ_CDF_FILE: &str = "window_read_cdf.csv";

/// Why a run directory could not be written: the directory or file, and the I/O error.
#[derive(Debug, Error)]
pub enum OutputError {
    #[error("creating run directory {}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing {}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("serializing the run summary")]
    Summary(#[source] serde_json::Error),
}

/// Write `summary.json`, `timeseries.csv`, `latency_cdf.csv`, `ssd_latency_cdf.csv`, with a
/// timeline window `ssd_timeline.csv`, and with trace windows `window_read_cdf.csv`.
pub fn write_run(dir: &Path, summary: &RunSummary, out: &RunOutput) -> Result<(), OutputError> {
    fs::create_dir_all(dir).map_err(|source| OutputError::CreateDir { path: dir.to_path_buf(), source })?;
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        fs::write(&path, text).map_err(|source| OutputError::Write { path, source })
    };
    write("summary.json", serde_json::to_string_pretty(summary).map_err(OutputError::Summary)? + "\n")?;
    write("timeseries.csv", timeseries_csv(out))?;
    let mut cdf = String::from("op,latency_us,fraction\n");
    for (op, h) in [("all", &out.latencies.all), ("read", &out.latencies.read), ("write", &out.latencies.write)] {
        for (us, f) in cdf_points(h) {
            let _ = writeln!(cdf, "{op},{us},{f:.6}");
        }
    }
    write("latency_cdf.csv", cdf)?;
    let mut ssd = String::from("op,latency_us,fraction\n");
    for (op, h) in [("read", &out.ssd_read_latency), ("write", &out.ssd_write_latency)] {
        for (us, f) in cdf_points(h) {
            let _ = writeln!(ssd, "{op},{us},{f:.6}");
        }
    }
    write("ssd_latency_cdf.csv", ssd)?;
    if let Some(spec) = summary.options.trace.as_ref().filter(|t| !t.windows.is_empty()) {
        let mut w = String::from("window,latency_us,fraction\n");
        for (window, o) in spec.windows.iter().zip(&out.windows) {
            for (us, f) in cdf_points(&o.latencies.read) {
                let _ = writeln!(w, "{},{us},{f:.6}", window.name);
            }
        }
        write(WINDOW_READ_CDF_FILE, w)?;
    }
    if !out.ggc.timeline.is_empty() {
        let mut t = String::from("t_ms,ssd,latency_us,op\n");
        for p in &out.ggc.timeline {
            let op = if p.write { "write" } else { "read" };
            let _ = writeln!(t, "{:.4},{},{:.1},{op}", p.t_ns as f64 / 1e6, p.member, p.latency_ns as f64 / 1e3);
        }
        write(SSD_TIMELINE_FILE, t)?;
    }
    Ok(())
}

fn timeseries_csv(out: &RunOutput) -> String {
    let members = out.rows.first().map_or(0, |r| r.members.len());
    let mut s = String::from("t_s,user_read_mbps,user_write_mbps,free_segments,victim_util,front_group,gc_group");
    for i in 0..members {
        let _ = write!(s, ",ssd{i}_read_mbps,ssd{i}_write_mbps,ssd{i}_gc_read_mbps,ssd{i}_gc_write_mbps");
    }
    s.push('\n');
    for r in &out.rows {
        let _ = write!(s, "{:.3},{:.3},{:.3},{},", r.t_s, r.user_read_mbps, r.user_write_mbps, r.free_segments);
        if let Some(u) = r.victim_util {
            let _ = write!(s, "{u:.4}");
        }
        s.push(',');
        if let Some(g) = r.front_group {
            let _ = write!(s, "{g}");
        }
        s.push(',');
        let groups: Vec<String> = (0..64).filter(|g| r.gc_groups & (1u64 << g) != 0).map(|g| g.to_string()).collect();
        s.push_str(&groups.join(";"));
        for m in &r.members {
            let _ = write!(s, ",{:.3},{:.3},{:.3},{:.3}", m.read, m.write, m.gc_read, m.gc_write);
        }
        s.push('\n');
    }
    s
}
