//! The first pass over a trace: its format, then every line checked and summed up (request
//! counts, bytes, the address span the policy needs), streaming.

use super::{mapping_note, ReplayError, ReplayReport, ReplaySpec, Replayer, MAX_REQUEST_BLOCKS};
use crate::trace::{self, TraceFormat, TraceOp, TraceReader, BLOCK_BYTES};
use flate2::read::MultiGzDecoder;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Lines the content guess looks at.
const GUESS_LINES: usize = 20;
/// Device numbers remembered (a trace with more is reported as having at least this many).
const MAX_DEVICES: usize = 1 << 16;

/// What the first pass found, over the requests that will be replayed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceScan {
    pub lines: u64,
    pub skipped_lines: u64,
    /// Records with data (replayed).
    pub records: u64,
    pub empty_records: u64,
    pub unaligned_records: u64,
    pub split_records: u64,
    /// Requests after cutting records at [`MAX_REQUEST_BLOCKS`].
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub span_bytes: u64,
    pub duration_ns: u64,
    pub devices: u64,
    /// Application names by id, as the replay numbers them (see [`crate::trace::apps`]).
    pub application_names: Vec<String>,
    /// Set when the format names no application (all requests are application 0).
    pub application_warning: Option<String>,
    /// `max_requests` stopped the scan before the end of the file.
    pub truncated: bool,
    /// Lines of event types without a request, by type (ETW dumps; see
    /// [`crate::trace::TraceReader::other_events`]).
    pub other_events: BTreeMap<String, u64>,
}

impl TraceScan {
    /// `DiskFlush 2, DiskReadInit 5, …`: the event types passed over, for the statements;
    /// `None` when there were none.
    pub fn other_events_note(&self) -> Option<String> {
        other_events_note(&self.other_events)
    }
}

/// The note of [`TraceScan::other_events_note`] for a count by event type.
pub fn other_events_note(events: &BTreeMap<String, u64>) -> Option<String> {
    if events.is_empty() {
        return None;
    }
    let list: Vec<String> = events.iter().map(|(event, n)| format!("{event} {n}")).collect();
    let lines: u64 = events.values().sum();
    Some(format!("{lines} lines of events without a request passed over: {}", list.join(", ")))
}

impl TraceScan {
    /// Scans `reader` in `format`; stops after `max_requests` records with data. Errors are
    /// `FILE:LINE: …` (with `path` as the file's name).
    pub fn run<R: BufRead>(
        path: &Path,
        format: TraceFormat,
        reader: R,
        skip_bad: bool,
        max_requests: Option<u64>,
    ) -> Result<TraceScan, ReplayError> {
        let mut reader = TraceReader::new(format, reader, skip_bad);
        let mut s = TraceScan::default();
        let mut devices = BTreeSet::new();
        let limit = max_requests.unwrap_or(u64::MAX);
        while s.records < limit {
            let Some(r) = reader.next() else { break };
            let r = r.map_err(|e| ReplayError::at_line(path, e))?;
            if r.size_bytes == 0 {
                s.empty_records += 1;
                continue;
            }
            s.records += 1;
            if devices.len() < MAX_DEVICES {
                devices.insert(r.device);
            }
            if r.offset_bytes % BLOCK_BYTES != 0 || r.size_bytes % BLOCK_BYTES != 0 {
                s.unaligned_records += 1;
            }
            let first = r.offset_bytes / BLOCK_BYTES;
            let blocks = r.end_bytes().div_ceil(BLOCK_BYTES) - first;
            let pieces = blocks.div_ceil(MAX_REQUEST_BLOCKS);
            s.requests += pieces;
            s.split_records += u64::from(pieces > 1);
            match r.op {
                TraceOp::Read => (s.reads, s.read_bytes) = (s.reads + 1, s.read_bytes.saturating_add(r.size_bytes)),
                TraceOp::Write => {
                    (s.writes, s.write_bytes) = (s.writes + 1, s.write_bytes.saturating_add(r.size_bytes))
                }
            }
            s.span_bytes = s.span_bytes.max(r.end_bytes());
            s.duration_ns = s.duration_ns.max(r.time_ns);
        }
        s.truncated = s.records == limit && reader.next().is_some();
        s.lines = reader.lines_read();
        s.skipped_lines = reader.skipped();
        s.devices = devices.len() as u64;
        s.application_names = reader.applications().names().to_vec();
        s.application_warning = reader.applications().warning();
        s.other_events = reader.other_events().clone();
        Ok(s)
    }
}

/// A trace whose format is known and whose content has been checked.
#[derive(Clone, Debug)]
pub struct OpenTrace {
    pub path: PathBuf,
    pub format: TraceFormat,
    pub format_from: String,
    pub scan: TraceScan,
}

/// A trace file as read: gunzipped on the fly when its name ends in `.gz`, as published
/// traces often are (MSR Cambridge's, and the recorded YCSB trace under `data/traces`).
pub type TraceInput = BufReader<Box<dyn Read + Send>>;

pub(crate) fn open_file(path: &Path) -> Result<TraceInput, ReplayError> {
    let f = File::open(path).map_err(|source| ReplayError::Open { path: path.to_path_buf(), source })?;
    let r: Box<dyn Read + Send> = if is_gzip(path) { Box::new(MultiGzDecoder::new(f)) } else { Box::new(f) };
    Ok(BufReader::with_capacity(1 << 16, r))
}

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Resolves the format and scans the trace `spec` names (first pass). Refuses a trace with no
/// request to replay.
pub fn open(spec: &ReplaySpec) -> Result<OpenTrace, ReplayError> {
    let (format, format_from) = match spec.format {
        Some(f) => (f, "given".to_string()),
        None => guess_format(&spec.path)?,
    };
    let scan = TraceScan::run(&spec.path, format, open_file(&spec.path)?, spec.skip_bad, spec.max_requests)?;
    if scan.records == 0 {
        return Err(ReplayError::NoRequests {
            path: spec.path.clone(),
            format,
            lines: scan.lines,
            skipped: scan.skipped_lines,
            empty: scan.empty_records,
        });
    }
    Ok(OpenTrace { path: spec.path.clone(), format, format_from, scan })
}

impl OpenTrace {
    /// The second pass: the trace's requests, mapped into a volume of `volume_blocks`.
    pub fn replayer(&self, spec: &ReplaySpec, volume_blocks: u64) -> Result<Replayer<TraceInput>, ReplayError> {
        if volume_blocks == 0 {
            return Err(ReplayError::EmptyVolume);
        }
        let reader = TraceReader::new(self.format, open_file(&self.path)?, spec.skip_bad);
        Ok(Replayer::new(
            self.path.clone(),
            reader,
            spec.mode,
            spec.policy,
            volume_blocks,
            self.scan.span_bytes,
            self.scan.records,
        ))
    }

    /// What the replay of this trace into `volume_blocks` states.
    pub fn report(&self, spec: &ReplaySpec, volume_blocks: u64) -> ReplayReport {
        let s = &self.scan;
        let volume_bytes = volume_blocks * BLOCK_BYTES;
        ReplayReport {
            file: self.path.display().to_string(),
            format: self.format,
            format_from: self.format_from.clone(),
            mode: spec.mode,
            address_policy: spec.policy,
            trace_span_bytes: s.span_bytes,
            volume_bytes,
            address_mapping: mapping_note(spec.policy, s.span_bytes, volume_bytes),
            lines: s.lines,
            skipped_lines: s.skipped_lines,
            records: s.records,
            requests: s.requests,
            unaligned_records: s.unaligned_records,
            split_records: s.split_records,
            empty_records: s.empty_records,
            devices: s.devices,
            applications: s.application_names.len() as u64,
            application_ids: self
                .format
                .application_field()
                .unwrap_or("none: the format has no such field")
                .to_string(),
            application_warning: s.application_warning.clone(),
            reads: s.reads,
            writes: s.writes,
            read_bytes: s.read_bytes,
            write_bytes: s.write_bytes,
            trace_duration_s: s.duration_ns as f64 / 1e9,
            truncated: s.truncated,
            other_events: s.other_events.clone(),
        }
    }
}

/// The format of the trace at `path`, and what the guess rested on.
///
/// A file extension naming a format (`.msr`, `.spc`, `.mqsim`, `.disksim`, `.blkparse`,
/// `.blktrace`, `.heimdall`, `.cloudphysics`, `.etw`) is taken if the first lines parse in it — it
/// settles the whitespace formats, which look alike. Otherwise the content decides
/// ([`trace::detect`] over the first non-blank lines, or the format most of them are
/// detected as). Nothing fitting is an error asking for `--trace-format`.
pub fn guess_format(path: &Path) -> Result<(TraceFormat, String), ReplayError> {
    let mut lines = Vec::new();
    for line in open_file(path)?.lines() {
        let line = match line {
            Ok(l) => l,
            // Not text (or not UTF-8) at the start: leave it to the content guess to fail.
            Err(_) => break,
        };
        if !line.trim().is_empty() {
            lines.push(line);
        }
        if lines.len() == GUESS_LINES {
            break;
        }
    }
    let head: Vec<&str> = lines.iter().map(String::as_str).collect();
    // `t.blkparse.gz` is named by its inner extension.
    let named = if is_gzip(path) { Path::new(path.file_stem().unwrap_or_default()) } else { path };
    let ext = named.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let by_ext = match ext.as_deref() {
        Some("blktrace") => Some(TraceFormat::Blkparse),
        Some(e) => e.parse::<TraceFormat>().ok(),
        None => None,
    };
    if let Some(f) = by_ext {
        let good = head.iter().filter(|l| f.parse_line(l).is_ok()).count();
        if 2 * good > head.len() && head.iter().any(|l| matches!(f.parse_line(l), Ok(Some(_)))) {
            return Ok((f, format!("guessed from the extension .{}", ext.unwrap_or_default())));
        }
    }
    match trace::detect(&head).or_else(|| majority(&head)) {
        Some(f) => Ok((f, format!("guessed from the first {} lines", head.len()))),
        None => Err(ReplayError::UnknownFormat { path: path.to_path_buf(), lines: head.len() }),
    }
}

/// The format most lines are detected as, if more than half are: a malformed line among the
/// first ones must not hide the format (the scan then names that line).
fn majority(head: &[&str]) -> Option<TraceFormat> {
    let votes: Vec<TraceFormat> = head.iter().filter_map(|l| trace::detect(std::slice::from_ref(l))).collect();
    let best = TraceFormat::ALL.into_iter().max_by_key(|f| votes.iter().filter(|v| *v == f).count())?;
    // Headers and comments parse (to nothing) and count for the format, bad lines against it.
    let good = head.iter().filter(|l| best.parse_line(l).is_ok()).count();
    (votes.contains(&best) && 2 * good > head.len()).then_some(best)
}
