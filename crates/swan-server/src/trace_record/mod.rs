//! `swan serve --record-trace`: the block trace of a live run, for `swan sim` to replay.
//!
//! [`RecordingService`] wraps the engine's [`BlockService`]: every request the NBD front
//! hands it is stamped with its arrival time (since the recorder started) and passed on. The
//! record goes through a bounded channel to a writer thread that formats it as blkparse text
//! ([`blkparse`]) into a buffered file, so the data path never waits on the file.
//!
//! If the writer falls behind (the channel is full), the request is served and its record
//! dropped, counted, and marked in the file where the writer notices it; the writer warns on
//! stderr at the first drop and the trailer and [`RecordSummary`] give the total. Drops, not
//! back-pressure: the trace is taken to compare with what the live run measured, and a
//! recorder that slowed the server would change that measurement silently, while a drop is
//! counted exactly and said out loud.
//!
//! The file starts with `#` comment lines (what was recorded, when, by which swan), which
//! every trace reader passes over, and ends with a `#` trailer on a clean stop. The writer
//! hands its buffer to the kernel at least every [`FLUSH_EVERY`] and never lets a line cross
//! a page (see [`blkparse::PageLines`]), so after a crash the file is a prefix of whole lines.

pub mod blkparse;

use crate::service::{BlockOp, BlockRequest, BlockService, Completion, ExportInfo};
use blkparse::{format_line, PageLines, Recorded, RecordedOp};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Records the channel holds before the writer is behind: at ~80 bytes a line, a few MiB
/// of memory, and more than a second of requests at the server's highest rates.
pub const CHANNEL_RECORDS: usize = 1 << 16;

/// Longest a record waits in the writer's buffer before it is handed to the kernel: what a
/// crash of the server can lose beyond the channel.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// What a finished recording holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordSummary {
    /// Requests written, by [`RecordedOp::index`].
    pub requests: [u64; 5],
    /// Their bytes (flushes carry none).
    pub bytes: [u64; 5],
    /// Requests served but not in the trace: the writer was behind, or had failed.
    pub dropped: u64,
    /// Seconds from the start of the recording to its end.
    pub elapsed_s: f64,
}

impl RecordSummary {
    pub fn requests_of(&self, op: RecordedOp) -> u64 {
        self.requests[op.index()]
    }

    pub fn bytes_of(&self, op: RecordedOp) -> u64 {
        self.bytes[op.index()]
    }

    pub fn total_requests(&self) -> u64 {
        self.requests.iter().sum()
    }

    /// One line: per-operation counts and bytes, and the drops.
    pub fn describe(&self) -> String {
        let per_op: Vec<String> = RecordedOp::ALL
            .iter()
            .map(|&op| match op {
                RecordedOp::Flush => format!("{} flush", self.requests_of(op)),
                _ => format!("{} {} ({} bytes)", self.requests_of(op), op.name(), self.bytes_of(op)),
            })
            .collect();
        format!(
            "{} requests in {:.3} s: {}; {} dropped",
            self.total_requests(),
            self.elapsed_s,
            per_op.join(", "),
            self.dropped
        )
    }
}

enum Msg {
    Req(Recorded),
    Stop,
}

/// The recording: its channel, its clock and its writer thread.
pub struct TraceRecorder {
    tx: SyncSender<Msg>,
    start: Instant,
    dropped: Arc<AtomicU64>,
    writer: Mutex<Option<JoinHandle<io::Result<RecordSummary>>>>,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("--record-trace {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("--record-trace {}: writing failed ({source}); {dropped} request(s) served are missing from the trace or cut short", path.display())]
    Write { path: PathBuf, source: io::Error, dropped: u64 },
    #[error("--record-trace {}: the writer thread panicked", path.display())]
    Panicked { path: PathBuf },
}

impl TraceRecorder {
    /// Creates (or truncates) `path`, writes `header` (each line given without its `#`) and
    /// the start time, and starts the writer. The clock starts now.
    pub fn create(path: &Path, header: &[String]) -> Result<TraceRecorder, RecordError> {
        let file = TraceRecorder::open(path)?;
        TraceRecorder::start(file, path, header)
    }

    /// Creates (or truncates) the trace file: what `swan serve` does before it opens the
    /// array, so a path it cannot write is refused before anything else happens.
    pub fn open(path: &Path) -> Result<File, RecordError> {
        File::create(path).map_err(|source| RecordError::Io { path: path.to_path_buf(), source })
    }

    /// The recorder over `file`, opened by [`open`](Self::open) as `path`: writes `header`
    /// and the start time, and starts the writer. The clock starts now.
    pub fn start(file: File, path: &Path, header: &[String]) -> Result<TraceRecorder, RecordError> {
        TraceRecorder::over(file, path, header, CHANNEL_RECORDS)
            .map_err(|source| RecordError::Io { path: path.to_path_buf(), source })
    }

    /// The recorder over an open `out` (named `path` in messages).
    fn over<W: io::Write + Send + 'static + SyncAll>(
        out: W,
        path: &Path,
        header: &[String],
        capacity: usize,
    ) -> io::Result<TraceRecorder> {
        let start = Instant::now();
        let wall = SystemTime::now();
        let mut lines = PageLines::new(BufWriter::with_capacity(64 << 10, out));
        for h in header {
            lines.line(format!("# {h}\n").as_bytes())?;
        }
        lines.line(format!("# start: {} (times below are seconds since then)\n", utc(wall)).as_bytes())?;
        lines.flush()?;
        let (tx, rx) = mpsc::sync_channel(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        let writer = {
            let dropped = Arc::clone(&dropped);
            let path = path.to_path_buf();
            std::thread::Builder::new()
                .name("swan-trace".into())
                .spawn(move || write_loop(rx, lines, &dropped, start, &path))?
        };
        Ok(TraceRecorder { tx, start, dropped, writer: Mutex::new(Some(writer)), path: path.to_path_buf() })
    }

    /// Records `req`, arrived now. Never blocks: a full channel drops the record (counted).
    pub fn record(&self, req: &BlockRequest) {
        let op = match req.op {
            BlockOp::Read => RecordedOp::Read,
            BlockOp::Write(_) => RecordedOp::Write,
            BlockOp::Flush => RecordedOp::Flush,
            BlockOp::Trim => RecordedOp::Trim,
            BlockOp::WriteZeroes { .. } => RecordedOp::WriteZeroes,
        };
        let time_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let r = Recorded { time_ns, op, offset_bytes: req.offset, len_bytes: req.len, fua: req.fua };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(Msg::Req(r)) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writes what is queued and the trailer, syncs the file and stops the writer. Call it
    /// once the NBD front has stopped submitting; later records are dropped (counted).
    pub fn finish(&self) -> Result<RecordSummary, RecordError> {
        // Blocks until there is room: the front has stopped, the writer is draining.
        let _ = self.tx.send(Msg::Stop);
        let Some(writer) = self.writer.lock().expect("trace writer").take() else {
            return Err(RecordError::Io { path: self.path.clone(), source: io::Error::other("already finished") });
        };
        match writer.join() {
            Ok(Ok(mut summary)) => {
                summary.dropped = self.dropped.load(Ordering::Relaxed);
                Ok(summary)
            }
            Ok(Err(source)) => Err(RecordError::Write {
                path: self.path.clone(),
                source,
                dropped: self.dropped.load(Ordering::Relaxed),
            }),
            Err(_) => Err(RecordError::Panicked { path: self.path.clone() }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Files are synced on a clean stop; other writers (tests' buffers) have nothing to sync.
pub trait SyncAll {
    fn sync_all(&self) -> io::Result<()>;
}

impl SyncAll for File {
    fn sync_all(&self) -> io::Result<()> {
        File::sync_all(self)
    }
}

/// The writer thread: records to lines until [`Msg::Stop`], then the trailer.
///
/// On a write error it says so once on stderr and keeps taking records off the channel, so
/// that each one still counts: as dropped, like those formatted since the last write that
/// reached the kernel (they may be missing from the file or cut short).
fn write_loop<W: io::Write + SyncAll>(
    rx: Receiver<Msg>,
    lines: PageLines<BufWriter<W>>,
    dropped: &AtomicU64,
    start: Instant,
    path: &Path,
) -> io::Result<RecordSummary> {
    let mut w = Writer { lines, summary: RecordSummary::default(), line: Vec::with_capacity(128), seq: 0, kept: 0 };
    let mut dropped_seen = 0u64;
    let mut flushed = Instant::now();
    let failure = loop {
        let msg = match rx.recv_timeout(FLUSH_EVERY) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = w.flush() {
                    break Some(e);
                }
                flushed = Instant::now();
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break None,
        };
        let now_dropped = dropped.load(Ordering::Relaxed);
        if now_dropped > dropped_seen {
            if dropped_seen == 0 {
                eprintln!(
                    "swan serve: warning: --record-trace {}: the trace writer fell behind; requests are served \
                     but left out of the trace (counted, and marked in the file)",
                    path.display()
                );
            }
            let n = now_dropped - dropped_seen;
            dropped_seen = now_dropped;
            if let Err(e) = w.comment(&format!("{n} request(s) dropped here: the trace writer was behind")) {
                break Some(e);
            }
        }
        let Msg::Req(r) = msg else { break None };
        if let Err(e) = w.record(&r) {
            dropped.fetch_add(1, Ordering::Relaxed);
            break Some(e);
        }
        if flushed.elapsed() >= FLUSH_EVERY {
            if let Err(e) = w.flush() {
                break Some(e);
            }
            flushed = Instant::now();
        }
    };
    w.summary.elapsed_s = start.elapsed().as_secs_f64();
    let failure = failure.or_else(|| {
        let trailer = RecordSummary { dropped: dropped.load(Ordering::Relaxed), ..w.summary.clone() };
        w.comment(&format!("end: {}", trailer.describe())).and_then(|()| w.flush()).and_then(|()| w.sync()).err()
    });
    let Some(e) = failure else { return Ok(w.summary) };
    eprintln!(
        "swan serve: warning: --record-trace {}: writing the trace failed ({e}); requests from here on are \
         served but not recorded",
        path.display()
    );
    dropped.fetch_add(w.seq - w.kept, Ordering::Relaxed);
    for msg in rx {
        match msg {
            Msg::Req(_) => dropped.fetch_add(1, Ordering::Relaxed),
            Msg::Stop => break,
        };
    }
    Err(e)
}

/// The writer thread's file and counts.
struct Writer<W: io::Write + SyncAll> {
    lines: PageLines<BufWriter<W>>,
    summary: RecordSummary,
    line: Vec<u8>,
    /// Records formatted.
    seq: u64,
    /// Records handed to the kernel (the rest are in the buffer).
    kept: u64,
}

impl<W: io::Write + SyncAll> Writer<W> {
    fn record(&mut self, r: &Recorded) -> io::Result<()> {
        self.line.clear();
        format_line(&mut self.line, self.seq, r);
        self.lines.line(&self.line)?;
        self.seq += 1;
        self.summary.requests[r.op.index()] += 1;
        if r.op != RecordedOp::Flush {
            self.summary.bytes[r.op.index()] += u64::from(r.len_bytes);
        }
        Ok(())
    }

    fn comment(&mut self, text: &str) -> io::Result<()> {
        self.lines.line(format!("# {text}\n").as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lines.flush()?;
        self.kept = self.seq;
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.lines.get_ref().get_ref().sync_all()
    }
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffffZ (unix S.fffffffff)`.
fn utc(t: SystemTime) -> String {
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let when = time::OffsetDateTime::UNIX_EPOCH + since;
    let iso = when.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| "?".into());
    format!("{iso} (unix {}.{:09})", since.as_secs(), since.subsec_nanos())
}

/// A [`BlockService`] that records each request, then hands it to the service it wraps.
pub struct RecordingService {
    inner: Arc<dyn BlockService>,
    recorder: Arc<TraceRecorder>,
}

impl RecordingService {
    pub fn new(inner: Arc<dyn BlockService>, recorder: Arc<TraceRecorder>) -> Self {
        RecordingService { inner, recorder }
    }
}

impl BlockService for RecordingService {
    fn info(&self) -> ExportInfo {
        self.inner.info()
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        self.recorder.record(&req);
        self.inner.submit(req, done);
    }
}

#[cfg(test)]
mod tests;
