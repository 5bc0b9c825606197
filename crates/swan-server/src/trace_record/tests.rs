//! The recorder over files and over a writer that can be held up, and the service wrapper
//! in front of a service that completes at once.

use super::*;
use crate::payload::Payload;
use crate::service::Reply;
use std::io::Write;
use std::sync::Condvar;

fn req(op: BlockOp, offset: u64, len: u32) -> BlockRequest {
    BlockRequest { op, offset, len, fua: false }
}

fn write(offset: u64, len: u32) -> BlockRequest {
    req(BlockOp::Write(Payload::from(vec![7u8; len as usize])), offset, len)
}

/// The `D` lines of a trace, without the comments and blank padding.
fn records(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect()
}

#[test]
fn every_request_is_recorded_with_header_and_trailer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.blkparse");
    let rec = TraceRecorder::create(&path, &["array: test".into(), "swan 0.0".into()]).unwrap();
    rec.record(&write(8192, 16384));
    rec.record(&req(BlockOp::Read, 0, 4096));
    rec.record(&BlockRequest { fua: true, ..write(4096, 4096) });
    rec.record(&req(BlockOp::Flush, 0, 0));
    rec.record(&req(BlockOp::Trim, 1 << 20, 65536));
    rec.record(&req(BlockOp::WriteZeroes { may_trim: true }, 1 << 21, 8192));
    let summary = rec.finish().unwrap();
    assert_eq!(summary.requests, [1, 2, 1, 1, 1]);
    assert_eq!(summary.bytes, [4096, 20480, 0, 65536, 8192]);
    assert_eq!(summary.dropped, 0);

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# array: test");
    assert_eq!(lines[1], "# swan 0.0");
    assert!(lines[2].starts_with("# start: 20") && lines[2].contains("Z (unix "), "{}", lines[2]);
    let end = lines.last().unwrap();
    assert!(end.starts_with("# end: 6 requests in "), "{end}");
    assert!(end.contains("2 write (20480 bytes)") && end.ends_with("0 dropped"), "{end}");
    let recs = records(&text);
    let rwbs: Vec<(&str, &str, &str)> = recs
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((f[0], f[5], f[8]), ("0,0", "D", "+"), "{l}");
            (f[6], f[7], f[9])
        })
        .collect();
    assert_eq!(
        rwbs,
        [
            ("W", "16", "32"),
            ("R", "0", "8"),
            ("WF", "8", "8"),
            ("F", "0", "0"),
            ("D", "2048", "128"),
            ("N", "4096", "16")
        ]
    );
    let seqs: Vec<&str> = recs.iter().map(|l| l.split_whitespace().nth(2).unwrap()).collect();
    assert_eq!(seqs, ["0", "1", "2", "3", "4", "5"]);
    let times: Vec<f64> = recs.iter().map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "one thread's requests in arrival order: {times:?}");
}

#[test]
fn records_reach_the_file_without_a_clean_stop() {
    // What a crash leaves: no trailer, but every record older than FLUSH_EVERY, in whole lines.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.blkparse");
    let rec = TraceRecorder::create(&path, &[]).unwrap();
    for i in 0..1000u64 {
        rec.record(&write(i * 4096, 4096));
    }
    std::thread::sleep(FLUSH_EVERY * 5);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'), "the file ends with a whole line");
    assert_eq!(records(&text).len(), 1000, "all handed to the kernel within FLUSH_EVERY");
    assert!(!text.contains("# end:"));
    rec.finish().unwrap();
}

#[test]
fn an_unwritable_path_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/t.blkparse");
    let err = TraceRecorder::create(&path, &[]).err().expect("cannot create");
    let msg = err.to_string();
    assert!(msg.starts_with(&format!("--record-trace {}: ", path.display())), "{msg}");
    assert!(msg.contains("No such file or directory"), "{msg}");
}

/// A writer held up until the test lets it go; it says when a write first waits.
struct Gate {
    state: Mutex<(bool, bool)>, // (open, a write is waiting)
    cv: Condvar,
    out: Mutex<Vec<u8>>,
}

#[derive(Clone)]
struct Gated(Arc<Gate>);

impl Gated {
    fn set_open(&self, open: bool) {
        self.0.state.lock().unwrap().0 = open;
        self.0.cv.notify_all();
    }

    fn wait_until_held(&self) {
        let mut s = self.0.state.lock().unwrap();
        while !s.1 {
            s = self.0.cv.wait(s).unwrap();
        }
    }
}

impl Write for Gated {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut s = self.0.state.lock().unwrap();
        while !s.0 {
            s.1 = true;
            self.0.cv.notify_all();
            s = self.0.cv.wait(s).unwrap();
        }
        self.0.out.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SyncAll for Gated {
    fn sync_all(&self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_writer_behind_drops_counts_and_marks_records_without_blocking() {
    let gate = Gated(Arc::new(Gate { state: Mutex::new((true, false)), cv: Condvar::new(), out: Mutex::default() }));
    let capacity = 64;
    let rec = TraceRecorder::over(gate.clone(), Path::new("gated"), &[], capacity).unwrap();
    gate.set_open(false);
    // One record, then the timed flush holds the writer up inside `write`.
    rec.record(&req(BlockOp::Read, 0, 4096));
    gate.wait_until_held();
    let t = Instant::now();
    for i in 0..capacity as u64 + 10 {
        rec.record(&write(i * 4096, 4096));
    }
    assert!(t.elapsed() < Duration::from_secs(1), "recording never waits for the writer");
    gate.set_open(true);
    let summary = rec.finish().unwrap();
    assert_eq!(summary.dropped, 10, "what did not fit in the channel");
    assert_eq!(summary.total_requests(), 1 + capacity as u64);
    let text = String::from_utf8(gate.0.out.lock().unwrap().clone()).unwrap();
    assert_eq!(records(&text).len(), 1 + capacity);
    assert!(text.contains("# 10 request(s) dropped here: the trace writer was behind"), "{text}");
    assert!(text.lines().last().unwrap().ends_with("; 10 dropped"), "{text}");
}

/// Completes every request at once, counting them.
#[derive(Default)]
struct Counting {
    seen: Mutex<Vec<(u64, u32)>>,
}

impl BlockService for Counting {
    fn info(&self) -> ExportInfo {
        ExportInfo {
            name: "c".into(),
            description: "counting".into(),
            size_bytes: 1 << 30,
            min_block: 4096,
            preferred_block: 4096,
            max_payload: 1 << 20,
            read_only: false,
            multi_conn: true,
        }
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        self.seen.lock().unwrap().push((req.offset, req.len));
        let reply: Reply = match req.op {
            BlockOp::Read => Ok(vec![0; req.len as usize]),
            _ => Ok(Vec::new()),
        };
        done(reply);
    }
}

#[test]
fn the_service_records_then_passes_each_request_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.blkparse");
    let inner = Arc::new(Counting::default());
    let rec = Arc::new(TraceRecorder::create(&path, &[]).unwrap());
    let svc = RecordingService::new(Arc::clone(&inner) as Arc<dyn BlockService>, Arc::clone(&rec));
    assert_eq!(svc.info(), inner.info());
    let replies = Arc::new(AtomicU64::new(0));
    for i in 0..100u64 {
        let r = Arc::clone(&replies);
        svc.submit(
            req(BlockOp::Read, i * 4096, 4096),
            Box::new(move |reply| {
                assert_eq!(reply.unwrap().len(), 4096);
                r.fetch_add(1, Ordering::Relaxed);
            }),
        );
    }
    assert_eq!(replies.load(Ordering::Relaxed), 100);
    assert_eq!(inner.seen.lock().unwrap().len(), 100);
    let summary = rec.finish().unwrap();
    assert_eq!(summary.requests_of(RecordedOp::Read), 100);
    assert_eq!(summary.bytes_of(RecordedOp::Read), 100 * 4096);
}

/// Takes `budget` bytes, then fails every write (a full disk).
struct Failing {
    budget: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget < buf.len() {
            return Err(io::Error::other("no space left (test)"));
        }
        self.budget -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SyncAll for Failing {
    fn sync_all(&self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_write_counts_every_request_it_loses() {
    // Room for the header only: the first flush of records fails.
    let rec = TraceRecorder::over(Failing { budget: 200 }, Path::new("full"), &[], 1024).unwrap();
    for i in 0..50u64 {
        rec.record(&write(i * 4096, 4096));
    }
    std::thread::sleep(FLUSH_EVERY * 3);
    for i in 0..30u64 {
        rec.record(&write(i * 4096, 4096));
    }
    match rec.finish() {
        Err(RecordError::Write { dropped, .. }) => assert_eq!(dropped, 80, "every record after the failure"),
        other => panic!("expected a write failure, got {other:?}"),
    }
}
