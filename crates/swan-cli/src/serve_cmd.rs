//! `swan serve`: one array served over NBD, or several from one server (`--config`), each
//! its own export with its own engine, members, read-only flag and allow-list.
//!
//! Exports stay independent: each array has its own engine thread, fed through its own
//! unbounded channel (a connection hands a request over without waiting), its own read
//! pool and its own control socket. A connection serves one export, so a slow or failing
//! array holds up only the connections that chose it (their in-flight budget fills and
//! their reader waits); the others, and the accept loop, go on. At stop the engines are
//! shut down side by side, so one slow to make its checkpoint does not keep another's
//! from being written.

use crate::serve_config::{self, ExportSpec};
use crate::server_cmd::{exposure_warning, tls_options, ServeArgs};
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use swan_server::array;
use swan_server::control::ExportEntry;
use swan_server::engine::{Engine, EngineOptions};
use swan_server::layout::Superblock;
use swan_server::member::{Files, MemberSource, Timed};
use swan_server::metrics::exposition::Exported;
use swan_server::metrics::requests::Requests;
use swan_server::metrics::MetricsListener;
use swan_server::nbd::{Export, Listen, NbdServer, ServerOptions};
use swan_server::service::BlockService;
use swan_server::trace_record::{RecordingService, TraceRecorder};

/// The exports to serve: the one the command line names, or those of `--config`. Options
/// that describe one array, or that cannot tell several apart, are refused with `--config`.
fn export_specs(a: &ServeArgs) -> Result<Vec<ExportSpec>> {
    let Some(file) = &a.config else {
        if a.members.is_empty() {
            bail!("name the members of the array to serve (or --config FILE for several exports)");
        }
        return Ok(vec![ExportSpec {
            name: a.name().to_string(),
            members: a.members.clone(),
            read_only: a.read_only,
            allow: Vec::new(),
            direct: None,
            punch_holes: None,
            gc_target: a.gc_target,
            at: String::new(),
        }]);
    };
    let per_export = [
        (!a.members.is_empty(), "member paths (give each export's `members` in the file)"),
        (a.name_given(), "--name (give each export's `name` in the file)"),
        (a.read_only, "--read-only (give `read_only = true` to the exports in the file)"),
        (a.gc_target.is_some(), "--gc-target (give `gc_target` to the exports in the file)"),
        (a.record_trace.is_some(), "--record-trace (it records one array's requests)"),
    ];
    if let Some((_, what)) = per_export.iter().find(|(given, _)| *given) {
        bail!("--config {}: not with {what}", file.display());
    }
    let specs = serve_config::load(file)?;
    if !a.tls_verify_peer {
        if let Some(s) = specs.iter().find(|s| !s.allow.is_empty()) {
            bail!(
                "{}: export {:?} has an allow-list, which needs clients authenticated by certificate: \
                 --tls require --tls-verify-peer --tls-client-ca CA.pem",
                s.at,
                s.name
            );
        }
    }
    Ok(specs)
}

/// One array opened, recovered and its engine started.
struct Running {
    spec: ExportSpec,
    engine: Arc<Engine>,
    sb: Superblock,
}

/// Opens, recovers and starts the engine of `spec`'s array, with the command line's
/// settings where the export does not say otherwise.
fn start_export(a: &ServeArgs, spec: &ExportSpec) -> Result<Running> {
    let direct = spec.direct.unwrap_or(a.direct);
    let source: Arc<dyn MemberSource> = match a.member_timeout.0 {
        Some(timeout) => Arc::new(Timed { inner: Arc::new(Files), timeout }),
        None => Arc::new(Files),
    };
    let opened = array::open_from(source, &spec.members, direct, spec.read_only)?;
    let reads = a.reads.rules(opened.sb.kind)?;
    if reads.parity_min_gain_us.is_some_and(|us| us > 0) && a.emulate.is_none() {
        bail!(
            "--parity-reads on needs --emulate PRESET: without a model of the SSDs the server cannot predict which \
             one is busy (--parity-read-gain-us 0 reads around every block that may be, to test the path)"
        );
    }
    let mut emulate = emulator(a, &opened)?;
    let mut recovered = array::recover(&opened).context("recovering the array")?;
    if let Some(e) = emulate.as_mut().filter(|_| a.emulate_age > 0.0) {
        tell_free_space(e, &recovered.scheme);
    }
    if let Some(segments) = spec.gc_target {
        recovered
            .scheme
            .set_swan_gc_target(segments)
            .map_err(|e| anyhow!("--gc-target: {e} (this array is {})", opened.sb.kind))?;
    }
    eprintln!(
        "swan: array {} ({}): checkpoint {}, {} journal record(s) rolled forward",
        opened.sb.uuid_string(),
        opened.sb.kind,
        recovered.checkpoint_seq,
        recovered.records_replayed
    );
    for &m in &opened.sb.failed {
        // Failed before this start (recorded, behind its peers, or not given): said here, as
        // a failure while serving is, so that a degraded start is never silent.
        eprintln!(
            "swan: member {m} ({}) is failed at this start: serving degraded from parity (replace it: swan replace \
             --member {m} NEW ...)",
            opened.members[m as usize].path().display(),
        );
    }
    let sb = opened.sb.clone();
    let options = EngineOptions {
        name: spec.name.clone(),
        read_only: spec.read_only,
        emulate,
        verbose: a.verbose,
        punch_holes: spec.punch_holes.unwrap_or(a.punch_holes),
        reads,
    };
    let engine = Arc::new(Engine::start(opened, recovered, options)?);
    Ok(Running { spec: spec.clone(), engine, sb })
}

/// Starts every export's engine; if one cannot start, those already started are stopped
/// cleanly and the error names the export.
fn start_all(a: &ServeArgs, specs: &[ExportSpec]) -> Result<Vec<Running>> {
    let mut running: Vec<Running> = Vec::with_capacity(specs.len());
    for spec in specs {
        let started = start_export(a, spec).and_then(|r| match running.iter().find(|o| o.sb.uuid == r.sb.uuid) {
            Some(o) => {
                let _ = r.engine.shutdown();
                Err(anyhow!("array {} is already served as export {:?}", r.sb.uuid_string(), o.spec.name))
            }
            None => Ok(r),
        });
        match started {
            Ok(r) => running.push(r),
            Err(e) => {
                stop_all(&running);
                return Err(match specs.len() {
                    1 => e,
                    _ => e.context(format!("{}: export {:?}", spec.at, spec.name)),
                });
            }
        }
    }
    Ok(running)
}

/// Shuts every engine down side by side; the errors, by export.
fn stop_all(running: &[Running]) -> Vec<(String, anyhow::Error)> {
    std::thread::scope(|s| {
        let stops: Vec<_> = running.iter().map(|r| (r.spec.name.clone(), s.spawn(|| r.engine.shutdown()))).collect();
        stops
            .into_iter()
            .filter_map(|(name, h)| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some((name, e.into())),
                Err(_) => Some((name, anyhow!("the engine's shutdown panicked"))),
            })
            .collect()
    })
}

pub fn serve(a: &ServeArgs) -> Result<()> {
    let listen: Listen = match &a.socket {
        Some(p) => Listen::Unix(p.clone()),
        None => a.listen.parse()?,
    };
    let specs = export_specs(a)?;
    if let Some(w) = exposure_warning(&listen, a.tls, a.tls_verify_peer) {
        eprintln!("{w}");
    }
    // Checked before any array is opened: a bad certificate or a metrics port in use
    // should not cost a recovery.
    let tls = tls_options(a)?;
    let metrics = match a.metrics {
        Some(addr) => {
            Some(MetricsListener::bind(addr).with_context(|| format!("--metrics {addr}: cannot listen there"))?)
        }
        None => None,
    };
    if !(a.handshake_timeout > 0.0 && a.handshake_timeout <= 3600.0) {
        bail!("--handshake-timeout must be in (0, 3600] seconds");
    }
    let handshake_timeout = std::time::Duration::from_secs_f64(a.handshake_timeout);
    if !(1..=65536).contains(&a.max_connections) {
        bail!("--max-connections must be from 1 to 65536, not {}", a.max_connections);
    }
    let trace_file = match &a.record_trace {
        Some(path) => {
            refuse_member_as_trace(path, &a.members)?;
            Some(TraceRecorder::open(path)?)
        }
        None => None,
    };
    let running = start_all(a, &specs)?;
    let served = serve_running(a, &running, listen, tls, handshake_timeout, metrics, trace_file);
    let stopped = stop_all(&running);
    served?;
    if let Some((name, e)) = stopped.into_iter().next() {
        return Err(match running.len() {
            1 => e,
            _ => e.context(format!("stopping export {name:?}")),
        });
    }
    eprintln!("swan: stopped cleanly (checkpoint written)");
    Ok(())
}

/// Serves the running engines until SIGINT or SIGTERM: control sockets, metrics, the trace,
/// the NBD server. The engines are the caller's to stop.
fn serve_running(
    a: &ServeArgs,
    running: &[Running],
    listen: Listen,
    tls: swan_server::nbd::Tls,
    handshake_timeout: std::time::Duration,
    metrics: Option<MetricsListener>,
    trace_file: Option<std::fs::File>,
) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing the signal handler")?;
    }
    // Every socket bound before any is served: each export's entry names its own, and a
    // copy of an array served elsewhere may have taken the first choice of name.
    let mut bound = Vec::with_capacity(running.len());
    for r in running {
        let uuid = r.sb.uuid_string();
        let b = swan_server::control::bind(&uuid).with_context(|| {
            format!("opening the control socket of array {uuid} in {}", swan_server::control::run_dir().display())
        })?;
        bound.push(b);
    }
    let entries: Arc<Vec<ExportEntry>> = Arc::new(
        running
            .iter()
            .zip(&bound)
            .map(|(r, b)| ExportEntry {
                name: r.spec.name.clone(),
                uuid: r.sb.uuid_string(),
                read_only: r.spec.read_only,
                allow_subjects: r.spec.allow.clone(),
                control: b.path.clone(),
            })
            .collect(),
    );
    let mut control_threads = Vec::with_capacity(running.len());
    for (i, (r, b)) in running.iter().zip(bound).enumerate() {
        let path = b.path.clone();
        let t = swan_server::control::serve(b, Arc::clone(&r.engine), Arc::clone(&entries), i, Arc::clone(&stop));
        match t.with_context(|| format!("opening the control socket {}", path.display())) {
            Ok(t) => control_threads.push(t),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                control_threads.into_iter().for_each(|t: std::thread::JoinHandle<()>| drop(t.join()));
                return Err(e);
            }
        }
    }
    let result = serve_nbd(a, running, listen, tls, handshake_timeout, metrics, trace_file, &stop);
    stop.store(true, Ordering::Relaxed);
    for t in control_threads {
        let _ = t.join();
    }
    result
}

/// The NBD server (with metrics and the trace recorder, where asked) until `stop`.
#[allow(clippy::too_many_arguments)]
fn serve_nbd(
    a: &ServeArgs,
    running: &[Running],
    listen: Listen,
    tls: swan_server::nbd::Tls,
    handshake_timeout: std::time::Duration,
    metrics: Option<MetricsListener>,
    trace_file: Option<std::fs::File>,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    let opts = ServerOptions {
        listen,
        verbose: a.verbose,
        tls,
        handshake_timeout,
        max_connections: a.max_connections,
        ..ServerOptions::default()
    };
    let server = NbdServer::bind(opts)?;
    // --record-trace is refused with --config: it records the first (the only) array.
    let first = &running[0];
    let requests: Vec<Arc<Requests>> = running.iter().map(|_| Arc::default()).collect();
    let metrics_thread = match metrics {
        Some(listener) => {
            let addr = listener.local_addr();
            let stats = server.stats();
            let t = if a.config.is_some() {
                let exported = running
                    .iter()
                    .zip(&requests)
                    .map(|(r, req)| {
                        let engine = Arc::clone(&r.engine);
                        Exported {
                            label: Some(r.spec.name.clone()),
                            status: Arc::new(move || engine.status()),
                            requests: Arc::clone(req),
                        }
                    })
                    .collect();
                swan_server::metrics::serve_exports(listener, exported, stats, Arc::clone(stop))
            } else {
                swan_server::metrics::serve(listener, Arc::clone(&first.engine), stats, Arc::clone(stop))
            }
            .context("starting the metrics thread")?;
            eprintln!("swan: metrics on http://{addr}/metrics, dashboard on http://{addr}/");
            Some(t)
        }
        None => None,
    };
    eprintln!("swan: serving on {} ({}{})", server.local_addr(), tls_words(a), exports_words(running));
    let recorder = match (trace_file, &a.record_trace) {
        (Some(file), Some(path)) => {
            let header = trace_header(a, &first.sb);
            Some(Arc::new(TraceRecorder::start(file, path, &header)?))
        }
        _ => None,
    };
    let exports: Vec<Export> = running
        .iter()
        .zip(requests)
        .map(|(r, requests)| {
            let engine = Arc::clone(&r.engine) as Arc<dyn BlockService>;
            let service: Arc<dyn BlockService> = match &recorder {
                Some(rec) => Arc::new(RecordingService::new(engine, Arc::clone(rec))),
                None => engine,
            };
            Export { service, allow_subjects: r.spec.allow.clone(), requests }
        })
        .collect();
    let served = server.run_exports(exports, Arc::clone(stop));
    stop.store(true, Ordering::Relaxed);
    if let Some(r) = recorder {
        report_trace(&r);
    }
    if let Some(t) = metrics_thread {
        let _ = t.join();
    }
    Ok(served?)
}

/// "TLS require, client certificates verified" and the like, for the "serving on" line.
fn tls_words(a: &ServeArgs) -> String {
    format!(
        "TLS {}{}",
        format!("{:?}", a.tls).to_lowercase(),
        if a.tls_verify_peer { ", client certificates verified" } else { "" }
    )
}

/// What the "serving on" line says of the exports: the status command of a lone one, as
/// before `--config` existed; each export's name, flags and allow-list among several.
fn exports_words(running: &[Running]) -> String {
    let member = |r: &Running| {
        let m = r.spec.members.iter().find(|m| m.as_os_str() != array::MISSING).unwrap_or(&r.spec.members[0]);
        m.display().to_string()
    };
    if let [r] = running {
        let ro = if r.spec.read_only { ", read-only" } else { "" };
        return format!("{ro}; status: swan status {}", member(r));
    }
    let each: Vec<String> = running
        .iter()
        .map(|r| {
            let mut w = format!("{:?} {} {}", r.spec.name, r.sb.kind, r.sb.uuid_string());
            if r.spec.read_only {
                w += " read-only";
            }
            if !r.spec.allow.is_empty() {
                w += &format!(" open to CN {}", r.spec.allow.join(","));
            }
            w
        })
        .collect();
    format!("; {} exports: {}; status: swan status {}", running.len(), each.join("; "), member(&running[0]))
}

/// A trace path that names a member would be emptied by `--record-trace`: refused.
fn refuse_member_as_trace(path: &std::path::Path, members: &[PathBuf]) -> Result<()> {
    let Ok(trace) = path.canonicalize() else { return Ok(()) };
    if let Some(m) = members.iter().find(|m| m.canonicalize().is_ok_and(|m| m == trace)) {
        bail!("--record-trace {}: that is the member {}; name a new file for the trace", path.display(), m.display());
    }
    Ok(())
}

/// The `#` lines that open a recorded trace: what was recorded, from which array, by which
/// swan, and the command that replays it.
fn trace_header(a: &ServeArgs, sb: &Superblock) -> Vec<String> {
    let path = a.record_trace.as_deref().unwrap_or(std::path::Path::new("TRACE"));
    let member = a.members.iter().find(|m| m.as_os_str() != array::MISSING).unwrap_or(&a.members[0]);
    let preemptible = a.emulate_gc_preemptible.map(|on| if on { "on" } else { "off" });
    let emulate = match &a.emulate {
        Some(p) => format!(
            "emulate: {p}, aged {}, reads overtake the SSDs' GC: {}",
            a.emulate_age,
            preemptible.unwrap_or("as the preset")
        ),
        None => "emulate: none (the members' own speed)".to_string(),
    };
    let (ssd, age) = (a.emulate.as_deref().unwrap_or("sata850pro"), a.emulate_age);
    let ssd_flags = match preemptible {
        Some(on) => format!("--ssd {ssd} --ssd-gc-preemptible {on}"),
        None => format!("--ssd {ssd}"),
    };
    vec![
        "swan serve --record-trace: every request the NBD front handed the engine, as blkparse text".into(),
        "(action D; RWBS R read, W write, WF write with FUA, F flush, D trim, N write-zeroes; sectors of".into(),
        "512 bytes; [process] names the NBD command; swan's reader replays the R and W lines)".into(),
        format!("swan {} (commit {})", env!("CARGO_PKG_VERSION"), env!("SWAN_COMMIT")),
        format!(
            "array {}: {}, {} R-group(s) x {} SSD(s), {} MiB per member, volume {} bytes",
            sb.uuid_string(),
            sb.kind,
            sb.rgroups,
            sb.ssds_per_rgroup,
            (sb.member_blocks * 4096) >> 20,
            sb.volume_blocks * 4096
        ),
        format!("members: {}", a.members.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(" ")),
        emulate,
        format!(
            "replay: swan sim --array {} {ssd_flags} --age {age} --trace {} --trace-format blkparse --replay recorded",
            member.display(),
            path.display()
        ),
    ]
}

/// What the recorder wrote, on stderr; drops and failures as warnings.
fn report_trace(r: &TraceRecorder) {
    match r.finish() {
        Ok(s) => {
            eprintln!("swan: trace {}: {}", r.path().display(), s.describe());
            if s.dropped > 0 {
                eprintln!(
                    "swan serve: warning: --record-trace {}: {} request(s) were served but are missing from the \
                     trace (the writer fell behind; each gap is marked in the file)",
                    r.path().display(),
                    s.dropped
                );
            }
        }
        Err(e) => eprintln!("swan serve: warning: {e}"),
    }
}

/// The wall-clock SSD models in front of the members, if `--emulate` names one (aged as
/// `--emulate-age` says); a warning if the array's segments do not fit its erase blocks.
/// Zoned members get the zoned SSD model, over their own zones.
fn emulator(a: &ServeArgs, opened: &array::Opened) -> Result<Option<swan_server::emulate::Emulator>> {
    let Some(preset) = &a.emulate else { return Ok(None) };
    let sb = &opened.sb;
    if sb.zoned {
        if a.emulate_age > 0.0 || a.emulate_gc_preemptible.is_some() {
            bail!(
                "--emulate-age and --emulate-gc-preemptible shape a conventional SSD's FTL; a zoned SSD has none \
                 (its zones are what the members hold)"
            );
        }
        let layouts: Vec<_> = opened.members.iter().filter_map(|m| m.zoned()).collect();
        if layouts.len() != opened.members.len() {
            bail!("--emulate over zoned members needs every member present and zoned");
        }
        return Ok(Some(swan_server::emulate::Emulator::zoned(preset, &layouts, std::time::Instant::now())?));
    }
    let mut e = swan_server::emulate::Emulator::configured(
        preset,
        a.emulate_gc_preemptible,
        sb.members,
        sb.member_blocks,
        std::time::Instant::now(),
    )?;
    if sb.kind.is_log_structured() {
        let model = swan_models::ssd::preset(preset).expect("the emulator knows the preset");
        if let Some(why) = model.segment_misalignment(u64::from(sb.segment_rows)) {
            eprintln!("swan serve: warning: {why} (set at swan create --segment)");
        }
    }
    if a.emulate_age > 0.0 {
        e.age(a.emulate_age, 1);
    }
    Ok(Some(e))
}

/// Aged model SSDs must learn what the array's format told the real members: which
/// segments are free. In-place RAID keeps no record of what is unused: nothing to tell.
fn tell_free_space(e: &mut swan_server::emulate::Emulator, scheme: &swan_core::scheme::ArrayScheme) {
    let mut plan = swan_core::io::IoPlan::new();
    scheme.plan_free_trims(&mut plan);
    for io in plan.ios() {
        e.trim_untimed(io.member, io.block, io.count);
    }
}
