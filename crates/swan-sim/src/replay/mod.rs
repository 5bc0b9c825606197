//! Block-trace replay: a trace file turned into the requests of a volume, for the simulator
//! (an [`ArrivalSource`](crate::source::ArrivalSource)) and for the real server's replay client
//! (`swan replay --nbd`), which use the same code.
//!
//! A replay is two streaming passes over the file, never holding it in memory:
//! 1. [`open`] resolves the format (given, or guessed from the extension, then the content),
//!    then scans the whole trace (or its first `max_requests` requests): a malformed line is
//!    an error naming the file and line (`FILE:LINE: …`) before anything is replayed, unless
//!    `skip_bad`, which counts it. The scan gives the trace's address span, which
//!    [`AddressPolicy::Scale`] needs and every report states.
//! 2. [`OpenTrace::replayer`] reads it again and yields [`ReplayRequest`]s: each record's byte
//!    range expanded to the 4 KiB blocks covering it, cut into pieces of at most
//!    [`MAX_REQUEST_BLOCKS`] (NBD's interoperable maximum payload), each piece placed in the
//!    volume by the policy; arrival times as recorded, divided by an acceleration factor, or
//!    unused (closed loop).
//!
//! Every request addresses the one volume; device / disk / ASU numbers do not place it (the
//! report counts the devices seen). They name the issuing application instead: each
//! [`ReplayRequest`] carries its application id (see [`crate::trace::apps`]), and a format
//! with none gives every request application 0 and the report a warning
//! ([`ReplayReport::application_warning`]) for the caller to print. Records of zero bytes carry no I/O and are not replayed
//! (the report counts them). A record timed earlier than the one before it (traces are not
//! always sorted) arrives together with it.

mod scan;
mod source;
mod stream;
mod windows;

pub(crate) use scan::open_file;
pub use scan::{guess_format, open, OpenTrace, TraceInput, TraceScan};
pub use source::{engine, TraceSource};
pub use stream::{ReplayRequest, Replayer};
pub use windows::{parse_windows, read_windows, Window, WindowIndex, WindowsError, MAX_WINDOWS};

use crate::trace::{AddressPolicy, ParseError, TraceError, TraceFormat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use thiserror::Error;

/// Largest request a replay issues, in 4 KiB blocks (32 MiB, NBD's interoperable maximum
/// payload); larger trace records are cut into pieces of this size.
pub const MAX_REQUEST_BLOCKS: u64 = 8192;

/// How arrivals are timed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ReplayMode {
    /// At the trace's own times (relative to its first request).
    Recorded,
    /// At the trace's times divided by this factor.
    Accel(f64),
    /// As fast as the array allows, with this many requests outstanding.
    Closed(u32),
}

/// Why a `--replay-mode` does not parse; each names the mode as given.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReplayModeError {
    #[error("replay mode '{0}': the acceleration must be a positive number")]
    Accel(String),
    #[error("replay mode '{0}': the depth must be a whole number of at least 1")]
    Depth(String),
    #[error(
        "unknown replay mode '{0}': expected recorded, accel=FACTOR (times divided by FACTOR) or closed=DEPTH \
         (as fast as the array allows)"
    )]
    Unknown(String),
}

impl FromStr for ReplayMode {
    type Err = ReplayModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "recorded" {
            return Ok(ReplayMode::Recorded);
        }
        if let Some(f) = s.strip_prefix("accel=") {
            return match f.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => Ok(ReplayMode::Accel(v)),
                _ => Err(ReplayModeError::Accel(s.to_string())),
            };
        }
        if let Some(d) = s.strip_prefix("closed=") {
            return match d.parse::<u32>() {
                Ok(v) if v > 0 => Ok(ReplayMode::Closed(v)),
                _ => Err(ReplayModeError::Depth(s.to_string())),
            };
        }
        Err(ReplayModeError::Unknown(s.to_string()))
    }
}

impl fmt::Display for ReplayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayMode::Recorded => f.write_str("recorded"),
            ReplayMode::Accel(v) => write!(f, "accel={v}"),
            ReplayMode::Closed(d) => write!(f, "closed={d}"),
        }
    }
}

impl From<ReplayMode> for String {
    fn from(m: ReplayMode) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for ReplayMode {
    type Error = ReplayModeError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl ReplayMode {
    /// The arrival time of a request the trace times at `trace_ns` (0 in a closed loop).
    pub fn arrival_ns(self, trace_ns: u64) -> u64 {
        match self {
            ReplayMode::Recorded => trace_ns,
            ReplayMode::Accel(factor) => (trace_ns as f64 / factor) as u64,
            ReplayMode::Closed(_) => 0,
        }
    }
}

/// What to replay and how: everything a replay depends on, as the user gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub path: PathBuf,
    /// `None`: guessed (see [`guess_format`]).
    pub format: Option<TraceFormat>,
    pub mode: ReplayMode,
    pub policy: AddressPolicy,
    /// Count malformed lines and go on, instead of stopping at the first.
    pub skip_bad: bool,
    /// Replay only the trace's first requests.
    pub max_requests: Option<u64>,
    /// Windows of the trace's recorded time measured apart (see [`windows`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<Window>,
}

/// What a replay states about itself (printed before the run, and in `summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayReport {
    pub file: String,
    pub format: TraceFormat,
    /// How the format was chosen: "given", or what the guess rested on.
    pub format_from: String,
    pub mode: ReplayMode,
    pub address_policy: AddressPolicy,
    /// One past the highest byte the (replayed part of the) trace addresses.
    pub trace_span_bytes: u64,
    pub volume_bytes: u64,
    /// What the policy did: addresses used as they are, wrapped or scaled.
    pub address_mapping: String,
    pub lines: u64,
    pub skipped_lines: u64,
    /// Trace requests replayed (records with data).
    pub records: u64,
    /// Requests issued: records, plus the extra pieces of those cut at [`MAX_REQUEST_BLOCKS`].
    pub requests: u64,
    pub unaligned_records: u64,
    pub split_records: u64,
    pub empty_records: u64,
    pub devices: u64,
    /// Distinct applications, numbered 0.. in order of first appearance.
    pub applications: u64,
    /// The trace field the application ids come from.
    pub application_ids: String,
    /// Set when the format names no application: every request was given application 0.
    /// Per-application policies (Apas) must report it: their partitioning then has one share.
    pub application_warning: Option<String>,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// From the first request to the last, as recorded.
    pub trace_duration_s: f64,
    /// Whether `max_requests` cut the trace short.
    pub truncated: bool,
    /// Lines of event types without a request, by type (ETW dumps: `DiskReadInit`,
    /// `DiskFlush`, `FileIoRead`, …); not malformed lines.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_events: BTreeMap<String, u64>,
}

impl ReplayReport {
    /// The human statement: format, volume of the trace, policy, span and volume size.
    pub fn statement(&self) -> String {
        let mut s = format!(
            "trace {}: {} format ({}), {} requests ({} reads, {} writes; {} read, {} written) over {:.3} s as recorded{}\n",
            self.file,
            self.format,
            self.format_from,
            self.records,
            self.reads,
            self.writes,
            human_bytes(self.read_bytes),
            human_bytes(self.write_bytes),
            self.trace_duration_s,
            if self.truncated { " (the first ones only: --max-requests)" } else { "" },
        );
        s += &format!(
            "  lines: {} read, {} malformed skipped; {} records without data not replayed\n",
            self.lines, self.skipped_lines, self.empty_records
        );
        if let Some(note) = scan::other_events_note(&self.other_events) {
            s += &format!("  {note}\n");
        }
        s += &format!(
            "  {} records not aligned to 4 KiB expanded to the blocks covering them; {} records over {} cut into {} requests in all\n",
            self.unaligned_records,
            self.split_records,
            human_bytes(MAX_REQUEST_BLOCKS * crate::trace::BLOCK_BYTES),
            self.requests
        );
        if self.devices > 1 {
            s += &format!("  {} device numbers in the trace, all replayed onto the one volume\n", self.devices);
        }
        match &self.application_warning {
            Some(w) => s += &format!("  warning: {w}\n"),
            None => {
                let plural = if self.applications == 1 { "" } else { "s" };
                s += &format!("  {} application{plural} by the trace's {}\n", self.applications, self.application_ids);
            }
        }
        s += &format!(
            "  address policy {}: the trace spans {}, the volume holds {}: {}\n",
            self.address_policy,
            human_bytes(self.trace_span_bytes),
            human_bytes(self.volume_bytes),
            self.address_mapping
        );
        s += &format!("  replay {}", self.mode);
        s
    }
}

/// What `policy` does to a trace spanning `span_bytes` in a volume of `volume_bytes`.
fn mapping_note(policy: AddressPolicy, span_bytes: u64, volume_bytes: u64) -> String {
    if span_bytes <= volume_bytes {
        return "the trace fits, addresses are used as they are".into();
    }
    match policy {
        AddressPolicy::Wrap => "block addresses wrapped modulo the volume size".into(),
        AddressPolicy::Scale => {
            format!("block addresses scaled by {:.6} (volume / span)", volume_bytes as f64 / span_bytes as f64)
        }
    }
}

/// `bytes` with a binary unit, for statements.
pub fn human_bytes(bytes: u64) -> String {
    let units = [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, size) in units {
        if bytes >= size {
            return format!("{:.1} {name}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} B")
}

/// Why a trace cannot be replayed. Every message names the trace file, and the line when
/// one is to blame (`FILE:LINE: …`), so that the operator can find it.
#[derive(Debug, Error)]
pub enum ReplayError {
    #[error("cannot open trace {}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The parse error is part of the message, not its source: the `--skip-bad` hint follows it.
    #[error("{}:{line}: {error}{SKIP_BAD_HINT}", .path.display())]
    BadLine { path: PathBuf, line: u64, error: ParseError },
    #[error("{}:{line}: not valid UTF-8{SKIP_BAD_HINT}", .path.display())]
    NotUtf8 { path: PathBuf, line: u64 },
    #[error("{}:{line}: read failed", .path.display())]
    Read {
        path: PathBuf,
        line: u64,
        #[source]
        source: io::Error,
    },
    #[error(
        "{}: cannot tell the trace format from its extension or its first {lines} lines; give --trace-format msr|spc|mqsim|disksim|blkparse|heimdall|cloudphysics|etw",
        .path.display()
    )]
    UnknownFormat { path: PathBuf, lines: usize },
    #[error(
        "{}: no request to replay in {lines} lines read as {format} ({skipped} skipped, {empty} without data)",
        .path.display()
    )]
    NoRequests { path: PathBuf, format: TraceFormat, lines: u64, skipped: u64, empty: u64 },
    #[error("cannot replay into an empty volume")]
    EmptyVolume,
    #[error(
        "{}: the trace ended after {done} of the {total} requests counted before the replay: it changed meanwhile",
        .path.display()
    )]
    Changed { path: PathBuf, done: u64, total: u64 },
}

/// Follows the message of a line that `skip_bad` would have passed over.
const SKIP_BAD_HINT: &str = " (--skip-bad skips and counts such lines)";

impl ReplayError {
    /// A trace line of the file at `path` that could not be used.
    fn at_line(path: &Path, e: TraceError) -> Self {
        let path = path.to_path_buf();
        match e {
            TraceError::Parse { line, error } => ReplayError::BadLine { path, line, error },
            TraceError::Utf8 { line } => ReplayError::NotUtf8 { path, line },
            TraceError::Io { line, error } => ReplayError::Read { path, line, source: error },
        }
    }
}

#[cfg(test)]
mod tests;
