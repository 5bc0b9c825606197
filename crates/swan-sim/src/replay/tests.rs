use super::*;
use crate::engine::SimConfig;
use crate::runs::{random_writes, run_config, sata_ssd};
use crate::trace::{TraceOp, BLOCK_BYTES};
use std::fs;
use swan_core::scheme::SchemeKind;

/// A trace file in a fresh temporary directory (removed at the end of the test process's
/// life is not needed: names are unique per process and test).
fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("swan-replay-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn spec(path: &Path, mode: ReplayMode) -> ReplaySpec {
    ReplaySpec {
        path: path.to_path_buf(),
        format: None,
        mode,
        policy: AddressPolicy::Wrap,
        skip_bad: false,
        max_requests: None,
        windows: Vec::new(),
    }
}

fn requests(spec: &ReplaySpec, volume_blocks: u64) -> Vec<ReplayRequest> {
    let t = open(spec).unwrap();
    t.replayer(spec, volume_blocks).unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn replay_modes_parse_and_print() {
    for (text, mode) in
        [("recorded", ReplayMode::Recorded), ("accel=10", ReplayMode::Accel(10.0)), ("closed=8", ReplayMode::Closed(8))]
    {
        assert_eq!(text.parse::<ReplayMode>().unwrap(), mode);
        assert_eq!(mode.to_string(), text);
    }
    assert_eq!("accel=0.5".parse::<ReplayMode>().unwrap(), ReplayMode::Accel(0.5));
    let err = |s: &str| s.parse::<ReplayMode>().unwrap_err().to_string();
    assert!(err("accel=0").contains("positive"));
    assert!(err("accel=x").contains("positive"));
    assert!(err("closed=0").contains("at least 1"));
    assert!(err("fast").contains("expected recorded, accel=FACTOR"));
    assert_eq!("closed=0".parse::<ReplayMode>(), Err(super::ReplayModeError::Depth("closed=0".into())));
    assert_eq!(ReplayMode::Accel(4.0).arrival_ns(1_000), 250);
    assert_eq!(ReplayMode::Closed(2).arrival_ns(1_000), 0);
}

#[test]
fn requests_cover_their_blocks_and_keep_order_in_time() {
    // MQSim: ns, sectors. Record 2 is unaligned (1 sector at sector 7 → block 0),
    // record 3 straddles a block boundary (2 blocks), record 4 is earlier than record 3.
    let p = trace_file("cover.mqsim", "1000 0 8 8 1\n2000 0 7 1 0\n5000 0 15 2 0\n4000 0 0 0 1\n4500 0 16 8 1\n");
    let reqs = requests(&spec(&p, ReplayMode::Recorded), 100);
    let got: Vec<(u64, TraceOp, u64, u64)> = reqs.iter().map(|r| (r.at_ns, r.op, r.block, r.blocks)).collect();
    assert_eq!(
        got,
        vec![
            (0, TraceOp::Read, 1, 1),
            (1000, TraceOp::Write, 0, 1),
            (4000, TraceOp::Write, 1, 2),
            (4000, TraceOp::Read, 2, 1)
        ],
        "the empty record is not replayed; the late one arrives with its predecessor"
    );
    let t = open(&spec(&p, ReplayMode::Recorded)).unwrap();
    assert_eq!((t.scan.records, t.scan.empty_records, t.scan.unaligned_records), (4, 1, 2));
    assert_eq!(t.scan.span_bytes, 24 * 512);
    let accel = requests(&spec(&p, ReplayMode::Accel(1000.0)), 100);
    assert_eq!(accel.iter().map(|r| r.at_ns).collect::<Vec<_>>(), vec![0, 1, 4, 4]);
}

#[test]
fn big_records_are_cut_and_addresses_fitted() {
    // Heimdall: bytes. 40 MiB at 1 GiB: two pieces (32 + 8 MiB).
    let gib = 1u64 << 30;
    let text = format!("0.0 0 {gib} {} 0\n1.0 0 0 4096 1\n", 40u64 << 20);
    let p = trace_file("big.heimdall", &text);
    let volume = 4u64 << 18; // 4 GiB in blocks
    let reqs = requests(&spec(&p, ReplayMode::Closed(4)), volume);
    assert_eq!(reqs.len(), 3);
    assert_eq!((reqs[0].block, reqs[0].blocks), (gib / BLOCK_BYTES, MAX_REQUEST_BLOCKS));
    assert_eq!((reqs[1].block, reqs[1].blocks), (gib / BLOCK_BYTES + MAX_REQUEST_BLOCKS, 2048));
    let t = open(&spec(&p, ReplayMode::Closed(4))).unwrap();
    assert_eq!((t.scan.records, t.scan.requests, t.scan.split_records), (2, 3, 1));
    // A 1 GiB volume: wrap folds the 1 GiB offset onto block 0; scale compresses by the span.
    let small = 1u64 << 18;
    let wrapped = requests(&spec(&p, ReplayMode::Closed(4)), small);
    assert_eq!(wrapped[0].block, 0);
    let mut s = spec(&p, ReplayMode::Closed(4));
    s.policy = AddressPolicy::Scale;
    let scaled = requests(&s, small);
    let span_blocks = (gib + (40 << 20)) / BLOCK_BYTES;
    assert_eq!(scaled[0].block, (gib / BLOCK_BYTES) * small / span_blocks);
    assert!(scaled.iter().all(|r| r.block + r.blocks <= small));
    let report = t.report(&s, small);
    assert_eq!(report.trace_span_bytes, gib + (40 << 20));
    assert!(
        report.statement().contains("address policy scale: the trace spans 1.0 GiB, the volume holds 1.0 GiB"),
        "{}",
        report.statement()
    );
}

#[test]
fn malformed_lines_name_file_and_line_unless_skipped() {
    let p = trace_file("bad.csv", "version,time,op,size,lbn\n1,5,28,512,0\n1,5,zz,512,0\n1,6,2a,512,1\n");
    let err = open(&spec(&p, ReplayMode::Recorded)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}:3: field 3 (op): expected a SCSI opcode in hex (28 = READ(10), 2a = WRITE(10)), got 'zz' (--skip-bad skips and counts such lines)",
            p.display()
        )
    );
    let mut s = spec(&p, ReplayMode::Recorded);
    s.skip_bad = true;
    let t = open(&s).unwrap();
    assert_eq!((t.scan.records, t.scan.skipped_lines, t.scan.lines), (2, 1, 4));
    assert_eq!(requests(&s, 10).len(), 2);
    assert!(t.report(&s, 10).statement().contains("1 malformed skipped"));
}

#[test]
fn errors_name_the_file_and_keep_their_cause() {
    let missing = trace_file("there.mqsim", "").with_file_name("not-there.mqsim");
    let err = open(&spec(&missing, ReplayMode::Recorded)).unwrap_err();
    assert_eq!(err.to_string(), format!("cannot open trace {}", missing.display()));
    let io = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>());
    assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
    let p = trace_file("bad.mqsim", "0 0 0 8 1\n10 0 x 8 1\n20 0 16 8 1\n");
    let err = open(&spec(&p, ReplayMode::Recorded)).unwrap_err();
    assert!(matches!(err, ReplayError::BadLine { line: 2, .. }), "{err:?}");
    // A trace cut short between the two passes is named by the second.
    let p = trace_file("shrinks.mqsim", "0 0 0 8 1\n10 0 8 8 0\n20 0 16 8 1\n");
    let s = spec(&p, ReplayMode::Recorded);
    let t = open(&s).unwrap();
    fs::write(&p, "0 0 0 8 1\n").unwrap();
    let err = t.replayer(&s, 100).unwrap().find_map(Result::err).unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the trace ended after 1 of the 3 requests counted before the replay: it changed meanwhile",
            p.display()
        )
    );
}

#[test]
fn formats_are_guessed_from_extension_then_content() {
    // Decimal ms and byte sizes fit both Heimdall and DiskSim: the extension settles it.
    let text = "0.5 1 4096 8192 1\n";
    let d = trace_file("x.disksim", text);
    assert_eq!(guess_format(&d).unwrap(), (TraceFormat::DiskSim, "guessed from the extension .disksim".into()));
    let h = trace_file("x.txt", text);
    assert_eq!(guess_format(&h).unwrap(), (TraceFormat::Heimdall, "guessed from the first 1 lines".into()));
    // An extension whose format does not fit falls back to the content.
    let m = trace_file("y.heimdall", "128166385295514663,hm,0,Write,9056014336,2048,2833\n");
    assert_eq!(guess_format(&m).unwrap().0, TraceFormat::Msr);
    // ETW: by the extension .etw, or by its first lines under the traces' own .csv.
    let etw = "BeginHeader\nEndHeader\nDiskRead, 10, System (   4), 8, 0x1, 0x2000, 0x1000, 9, 0\n";
    let e = trace_file("x.etw", etw);
    assert_eq!(guess_format(&e).unwrap(), (TraceFormat::Etw, "guessed from the extension .etw".into()));
    let e = trace_file("Exchange.trace.csv", etw);
    assert_eq!(guess_format(&e).unwrap(), (TraceFormat::Etw, "guessed from the first 3 lines".into()));
    let bad = trace_file("z.trace", "hello world\n");
    assert!(guess_format(&bad).unwrap_err().to_string().contains("give --trace-format"));
    let empty = trace_file("empty.csv", "version,time,op,size,lbn\n");
    let mut s = spec(&empty, ReplayMode::Recorded);
    s.format = Some(TraceFormat::CloudPhysics);
    assert!(open(&s).unwrap_err().to_string().contains("no request to replay"));
}

#[test]
fn max_requests_takes_a_prefix() {
    let p = trace_file("prefix.mqsim", "0 0 0 8 1\n10 0 8 8 0\n20 0 16 8 1\n30 0 24 8 1\n");
    let mut s = spec(&p, ReplayMode::Recorded);
    s.max_requests = Some(2);
    let t = open(&s).unwrap();
    assert!(t.scan.truncated);
    assert_eq!(t.scan.span_bytes, 16 * 512);
    assert_eq!(requests(&s, 100).len(), 2);
}

fn small_config(trace: ReplaySpec) -> SimConfig {
    let mut cfg = run_config(
        "swan0".parse::<SchemeKind>().unwrap(),
        2,
        2,
        sata_ssd(0.25, "sata850pro"),
        random_writes(8),
        0.6,
        0.0,
        1.0,
        1,
    );
    cfg.stop.write_bytes = None;
    cfg.trace = Some(trace);
    cfg
}

/// 300 MQSim requests 300 µs apart, alternating 8 KiB writes and 4 KiB reads, beyond a small
/// volume.
fn alternating_trace(name: &str) -> PathBuf {
    let mut text = String::new();
    for i in 0..300u64 {
        let op = i % 2;
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!("{} 0 {} {} {op}\n", i * 300_000, i * 1_000_008, 16 - 8 * op),
        );
    }
    trace_file(name, &text)
}

#[test]
fn the_engine_replays_every_request_in_each_mode() {
    let p = alternating_trace("engine.mqsim");
    for mode in [ReplayMode::Recorded, ReplayMode::Accel(100.0), ReplayMode::Closed(4)] {
        let cfg = small_config(spec(&p, mode));
        let (engine, report) = engine(&cfg).unwrap();
        let report = report.unwrap();
        assert_eq!(report.records, 300);
        assert_eq!(report.mode, mode);
        let out = engine.run(&mut |_| {}).unwrap();
        assert_eq!(out.requests, 300, "{mode}");
        assert_eq!(out.user_write_blocks, 150 * 2, "{mode}");
        assert_eq!(out.user_read_blocks, 150, "{mode}");
        let sim_ms = out.sim_ns as f64 / 1e6;
        match mode {
            // The last arrival is at 89.7 ms; it completes shortly after.
            ReplayMode::Recorded => assert!((89.7..95.0).contains(&sim_ms), "{sim_ms}"),
            ReplayMode::Accel(_) => assert!((0.897..5.0).contains(&sim_ms), "{sim_ms}"),
            ReplayMode::Closed(_) => assert!(sim_ms < 89.7, "{sim_ms}"),
        }
    }
    // A synthetic run's engine refuses a trace it cannot open.
    let cfg = small_config(spec(&p, ReplayMode::Recorded));
    assert!(crate::engine::Engine::new(cfg).is_err());
}

#[test]
fn an_idle_trace_is_not_a_stalled_array() {
    // 20 minutes between two requests: longer than the stall limit (600 s), nothing waiting.
    let p = trace_file("idle.heimdall", "0.0 0 0 4096 0\n1200000.0 0 4096 4096 1\n");
    let cfg = small_config(spec(&p, ReplayMode::Recorded));
    let out = engine(&cfg).unwrap().0.run(&mut |_| {}).unwrap();
    assert_eq!(out.requests, 2);
    assert!(out.sim_ns >= 1_200_000_000_000);
}

#[test]
fn requests_carry_their_application() {
    // SPC: ASU 3 first, then ASU 1; a 40 MiB record is cut into pieces that keep its ASU.
    let text = format!("3,0,4096,w,0.0\n1,8,4096,r,0.1\n3,16,{},w,0.2\n", 40u64 << 20);
    let p = trace_file("apps.spc", &text);
    let reqs = requests(&spec(&p, ReplayMode::Recorded), 1 << 20);
    assert_eq!(reqs.iter().map(|r| r.app).collect::<Vec<_>>(), vec![0, 1, 0, 0]);
    let t = open(&spec(&p, ReplayMode::Recorded)).unwrap();
    assert_eq!(t.scan.application_names, ["ASU 3", "ASU 1"]);
    let report = t.report(&spec(&p, ReplayMode::Recorded), 1 << 20);
    assert_eq!((report.applications, report.application_ids.as_str()), (2, "ASU"));
    assert_eq!(report.application_warning, None);
    assert!(report.statement().contains("2 applications by the trace's ASU"), "{}", report.statement());
}

#[test]
fn a_trace_without_application_ids_warns() {
    let p = trace_file("noapps.cloudphysics", "version,time,op,size,lbn\n1,5,28,4096,0\n1,6,2a,4096,8\n");
    let reqs = requests(&spec(&p, ReplayMode::Recorded), 100);
    assert!(reqs.iter().all(|r| r.app == 0));
    let t = open(&spec(&p, ReplayMode::Recorded)).unwrap();
    let report = t.report(&spec(&p, ReplayMode::Recorded), 100);
    assert_eq!(report.applications, 1);
    let w = report.application_warning.clone().expect("a warning for a trace without application ids");
    assert!(report.statement().contains(&format!("warning: {w}")), "{}", report.statement());
}

#[test]
fn real_traces_have_their_applications() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces");
    let names = |file: &str| {
        let t = open(&spec(&dir.join(file), ReplayMode::Recorded)).unwrap_or_else(|e| panic!("{file}: {e}"));
        (t.scan.application_names, t.scan.application_warning)
    };
    assert_eq!(names("msr-hm_0-excerpt.csv"), (vec!["hm_0".to_string()], None));
    // WebSearch's device is the SPC ASU: 0, 1 and 2 carry nearly all requests, 3 to 5 a few.
    let (web, warn) = names("websearch-small.mqsim");
    assert_eq!(web, (0..6).map(|d| format!("device {d}")).collect::<Vec<_>>());
    assert_eq!(warn, None);
    assert_eq!(names("tpcc-small.mqsim").0.len(), 16);
    let (cp, warn) = names("cloudphysics-vm.csv");
    assert_eq!(cp, ["all"]);
    assert!(warn.is_some());
}

#[test]
fn windows_measure_the_requests_recorded_in_them_in_every_mode() {
    // Windows over the first third and the last third, with the middle third in none.
    let p = alternating_trace("windows.mqsim");
    let windows = parse_windows("first 0 0.03\nlast 0.06 1\n", "w").unwrap();
    for mode in [ReplayMode::Recorded, ReplayMode::Closed(4)] {
        let mut s = spec(&p, mode);
        s.windows = windows.clone();
        let out = engine(&small_config(s)).unwrap().0.run(&mut |_| {}).unwrap();
        let [first, last] = &out.windows[..] else { panic!("two windows, got {}", out.windows.len()) };
        // Recorded at 0..29.7 ms: requests 0..99; at 60 ms and after: requests 200..299.
        assert_eq!((first.reads, first.writes), (50, 50), "{mode}");
        assert_eq!((last.reads, last.writes), (50, 50), "{mode}");
        assert_eq!((first.read_bytes, first.write_bytes), (50 * BLOCK_BYTES, 100 * BLOCK_BYTES));
        assert_eq!(first.latencies.read.len(), 50);
        assert!(first.last_completion_ns <= last.first_issue_ns.unwrap(), "{mode}: the windows follow each other");
        assert!(first.span_s() > 0.0 && first.mbps() > 0.0);
        if mode == ReplayMode::Recorded {
            // The first window spans its recorded 29.7 ms and a completion.
            assert!((0.0297..0.035).contains(&first.span_s()), "{}", first.span_s());
        }
    }
}

#[test]
fn a_gzipped_trace_replays_as_the_plain_one() {
    use std::io::Write;
    let text = "8,0 0 1 0.000001000 7 D W 0 + 16 [db]\n8,0 0 2 0.000002000 7 D R 64 + 8 [db]\n";
    let plain = trace_file("plain.blkparse", text);
    let gz = plain.with_file_name("zipped.blkparse.gz");
    let mut enc = flate2::write::GzEncoder::new(fs::File::create(&gz).unwrap(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap();
    let (format, from) = guess_format(&gz).unwrap();
    assert_eq!((format, from.as_str()), (TraceFormat::Blkparse, "guessed from the extension .blkparse"));
    assert_eq!(requests(&spec(&gz, ReplayMode::Recorded), 100), requests(&spec(&plain, ReplayMode::Recorded), 100));
    // A file named .gz that is not gzip is a read error naming it, not a silent empty trace.
    let fake = trace_file("fake.blkparse.gz", text);
    let e = open(&spec(&fake, ReplayMode::Recorded)).unwrap_err();
    assert!(e.to_string().contains("fake.blkparse.gz"), "{e}");
}

#[test]
fn an_etw_statement_counts_the_events_passed_over() {
    // Two disks, a flush and the issue events: the requests are the DiskRead and DiskWrite
    // lines; the others are counted by type, not as malformed lines.
    let text =
        "BeginHeader\nDiskRead, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize\nEndHeader\n\
                DiskReadInit, 10, store.exe ( 1234), 8, 0x1\n\
                DiskRead, 12, store.exe ( 1234), 8, 0x1, 0x2000, 0x1000, 2, 3\n\
                DiskFlush, 20, System (   4), 8, 0x2, 1, 0, 0x0, 1, Normal\n\
                DiskWrite, 1012, System (   4), 8, 0x3, 0x0, 0x2000, 5, 0, 0x0, 4, Normal, 0x0, 0x0, \n";
    let p = trace_file("apps.etw", text);
    let t = open(&spec(&p, ReplayMode::Recorded)).unwrap();
    assert_eq!(t.scan.application_names, ["disk 3", "disk 0"]);
    assert_eq!((t.scan.reads, t.scan.writes, t.scan.duration_ns), (1, 1, 1_000_000));
    let report = t.report(&spec(&p, ReplayMode::Recorded), 100);
    let statement = report.statement();
    assert!(statement.contains("0 malformed skipped"), "{statement}");
    assert!(
        statement.contains("2 lines of events without a request passed over: DiskFlush 1, DiskReadInit 1"),
        "{statement}"
    );
    assert!(statement.contains("2 applications by the trace's DiskNum (the disk)"), "{statement}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["other_events"]["DiskFlush"], 1);
}
