//! Block-trace readers: public I/O traces parsed into one common [`TraceRecord`].
//!
//! One parser per format, each a pure `parse_line(&str) -> Result<Option<TraceRecord>, ParseError>`
//! (`Ok(None)` for lines that carry no request), and a [`TraceReader`] over any `BufRead` that
//! numbers lines, optionally skips bad ones, and re-times the trace so its first record is at 0.
//! Nothing here opens files or reads a clock: the caller opens the file and names it in messages.
//!
//! | format | module | clock → `time_ns` | address → bytes |
//! |---|---|---|---|
//! | MSR Cambridge CSV | [`msr`] | FILETIME (100 ns ticks) × 100 | bytes |
//! | SPC / UMass ASCII | [`spc`] | decimal seconds × 10⁹ | LBA × 512 |
//! | MQSim ASCII | [`mqsim`] | integer ns | LBA × 512 |
//! | DiskSim ASCII | [`disksim`] | decimal ms × 10⁶ | block × 512 |
//! | blkparse text | [`blkparse`] | `sec.nsec` → ns | sector × 512 |
//! | Heimdall text | [`heimdall`] | decimal ms × 10⁶ | bytes |
//! | CloudPhysics CSV | [`cloudphysics`] | integer seconds × 10⁹ | lbn × 512 |
//! | Microsoft ETW (xperf) CSV | [`etw`] | decimal µs × 10³ | hex bytes |
//!
//! [`TraceReader`] also numbers each record's issuing application ([`apps`]): ASU, MSR volume
//! (host and disk), device, ETW DiskNum; CloudPhysics has none and is one application, with a
//! warning. For ETW dumps it also passes over the header block and counts the lines of every
//! other event type ([`TraceReader::other_events`]).
//!
//! Decimal times are converted exactly (no floating point); digits finer than 1 ns are
//! truncated. Parsers return the format's own (absolute) time; [`TraceReader`] subtracts the
//! first record's time.

pub mod apps;
pub mod blkparse;
pub mod cloudphysics;
pub mod disksim;
pub mod etw;
pub mod heimdall;
pub mod mqsim;
pub mod msr;
pub mod spc;

pub use apps::ApplicationIds;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;
use std::str::FromStr;
use thiserror::Error;

/// Sector size used by every sector-addressed format.
pub const SECTOR_BYTES: u64 = 512;
/// Block size of the volume that [`AddressPolicy`] maps into.
pub const BLOCK_BYTES: u64 = 4096;

/// Direction of a traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceOp {
    Read,
    Write,
}

/// One request of a trace, in the common form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceRecord {
    /// Arrival time in ns. From a parser: the format's own clock; from [`TraceReader`]: relative
    /// to the trace's first record.
    pub time_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// The format's device / disk / ASU number (0 when the format has none).
    pub device: u32,
    /// The issuing application, numbered densely by [`TraceReader`] (see [`apps`]); parsers
    /// leave it 0.
    pub app: u32,
}

impl TraceRecord {
    /// One past the last byte touched (saturating).
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes.saturating_add(self.size_bytes)
    }
}

/// Why one line could not be parsed. Field numbers count from 1.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseError {
    #[error("expected {expected} fields, got {got}")]
    FieldCount { expected: &'static str, got: usize },
    #[error("field {index} ({name}): expected {expected}, got '{got}'")]
    Field { index: usize, name: &'static str, expected: &'static str, got: String },
}

impl ParseError {
    pub(crate) fn field(index: usize, name: &'static str, expected: &'static str, got: &str) -> Self {
        ParseError::Field { index, name, expected, got: got.to_string() }
    }
}

/// A line of a trace that could not be used, with its 1-based line number. The caller adds
/// the file name (as [`crate::replay::ReplayError`] does).
#[derive(Debug, Error)]
pub enum TraceError {
    #[error("line {line}: {error}")]
    Parse { line: u64, error: ParseError },
    #[error("line {line}: not valid UTF-8")]
    Utf8 { line: u64 },
    #[error("line {line}: read failed: {error}")]
    Io { line: u64, error: std::io::Error },
}

impl TraceError {
    /// The 1-based line number the error is about.
    pub fn line(&self) -> u64 {
        match self {
            TraceError::Parse { line, .. } | TraceError::Utf8 { line } | TraceError::Io { line, .. } => *line,
        }
    }
}

/// The supported trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    Msr,
    Spc,
    MqSim,
    DiskSim,
    Blkparse,
    Heimdall,
    CloudPhysics,
    Etw,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 8] = [
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::MqSim,
        TraceFormat::DiskSim,
        TraceFormat::Blkparse,
        TraceFormat::Heimdall,
        TraceFormat::CloudPhysics,
        TraceFormat::Etw,
    ];

    /// The name [`FromStr`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::MqSim => "mqsim",
            TraceFormat::DiskSim => "disksim",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Heimdall => "heimdall",
            TraceFormat::CloudPhysics => "cloudphysics",
            TraceFormat::Etw => "etw",
        }
    }

    /// Parses one line in this format.
    pub fn parse_line(self, line: &str) -> Result<Option<TraceRecord>, ParseError> {
        match self {
            TraceFormat::Msr => msr::parse_line(line),
            TraceFormat::Spc => spc::parse_line(line),
            TraceFormat::MqSim => mqsim::parse_line(line),
            TraceFormat::DiskSim => disksim::parse_line(line),
            TraceFormat::Blkparse => blkparse::parse_line(line),
            TraceFormat::Heimdall => heimdall::parse_line(line),
            TraceFormat::CloudPhysics => cloudphysics::parse_line(line),
            TraceFormat::Etw => etw::parse_line(line),
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A trace format name that is none of [`TraceFormat::ALL`]'s.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown trace format '{0}': expected msr, spc, mqsim, disksim, blkparse, heimdall, cloudphysics or etw")]
pub struct UnknownTraceFormat(pub String);

impl FromStr for TraceFormat {
    type Err = UnknownTraceFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("ms-etw") {
            return Ok(TraceFormat::Etw);
        }
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownTraceFormat(s.to_string()))
    }
}

/// Guesses the format from the first lines of a trace (best effort).
///
/// An ETW dump is recognised by its own words ([`etw::looks_like`]: `BeginHeader`, or an
/// event such as `DiskRead,` or `FileIoCreate,` first on a line): its header block can be
/// longer than the lines looked at, so it need not hold a request. Other candidates are tried in the order CloudPhysics, MSR, SPC, blkparse, MQSim, Heimdall,
/// DiskSim; the first whose parser accepts *every* given line without error and finds at least
/// one request wins. The comma formats differ in field count and op spelling, so they rarely
/// collide. The three 5-column whitespace formats are ambiguous by nature: integer times are
/// taken as MQSim (its parser rejects a decimal point); with decimal times, Heimdall is chosen
/// when every offset and size is a multiple of 512 bytes (it counts bytes), DiskSim otherwise
/// (it counts sectors). Returns `None` when nothing fits; pass a format explicitly then.
pub fn detect(first_lines: &[&str]) -> Option<TraceFormat> {
    if etw::looks_like(first_lines) {
        return Some(TraceFormat::Etw);
    }
    const ORDER: [TraceFormat; 7] = [
        TraceFormat::CloudPhysics,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::MqSim,
        TraceFormat::Heimdall,
        TraceFormat::DiskSim,
    ];
    ORDER.into_iter().find(|&format| {
        let mut records = Vec::new();
        for line in first_lines {
            match format.parse_line(line) {
                Ok(Some(r)) => records.push(r),
                Ok(None) => {}
                Err(_) => return false,
            }
        }
        if format == TraceFormat::Heimdall
            && !records.iter().all(|r| r.offset_bytes % SECTOR_BYTES == 0 && r.size_bytes % SECTOR_BYTES == 0)
        {
            return false;
        }
        !records.is_empty()
    })
}

/// Reads a whole trace line by line, yielding records re-timed so the first is at 0, each
/// with its application id ([`apps`]).
///
/// Records whose time is earlier than the first record's (traces are not always sorted) get
/// time 0. With `skip_bad`, lines that fail to parse (or are not UTF-8) are counted in
/// [`skipped`](Self::skipped) and passed over; otherwise each is yielded as an error carrying
/// its line number and reading continues. An I/O error is yielded once and ends the iteration.
pub struct TraceReader<R> {
    format: TraceFormat,
    reader: R,
    skip_bad: bool,
    line_no: u64,
    skipped: u64,
    base_ns: Option<u64>,
    buf: Vec<u8>,
    done: bool,
    apps: ApplicationIds,
    /// Inside an ETW dump's header block (its lines are passed over unparsed).
    in_header: bool,
    other_events: BTreeMap<String, u64>,
}

impl<R: BufRead> TraceReader<R> {
    pub fn new(format: TraceFormat, reader: R, skip_bad: bool) -> Self {
        TraceReader {
            format,
            reader,
            skip_bad,
            line_no: 0,
            skipped: 0,
            base_ns: None,
            buf: Vec::new(),
            done: false,
            apps: ApplicationIds::new(format),
            in_header: false,
            other_events: BTreeMap::new(),
        }
    }

    /// Lines of event types that carry no request, by type, passed over so far (ETW dumps:
    /// `DiskReadInit`, `DiskFlush`, `FileIoRead`, …; empty for the other formats).
    pub fn other_events(&self) -> &BTreeMap<String, u64> {
        &self.other_events
    }

    /// ETW: whether `text` is in the header block (or one of its markers), which is skipped
    /// whatever its lines hold; counts the event type of a line without a request.
    fn etw_pass_over(&mut self, text: &str) -> bool {
        match text.trim() {
            "BeginHeader" => self.in_header = true,
            "EndHeader" => self.in_header = false,
            _ if self.in_header => {}
            _ => return false,
        }
        true
    }

    fn count_other_event(&mut self, text: &str) {
        if let Some(event) = etw::skipped_event(text) {
            match self.other_events.get_mut(event) {
                Some(n) => *n += 1,
                None => {
                    self.other_events.insert(event.to_string(), 1);
                }
            }
        }
    }

    /// The applications seen so far, and the warning to report if the format names none.
    pub fn applications(&self) -> &ApplicationIds {
        &self.apps
    }

    /// Bad lines passed over so far (only counted when `skip_bad`).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            let n = match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(error) => {
                    self.done = true;
                    return Some(Err(TraceError::Io { line: self.line_no + 1, error }));
                }
            };
            if n == 0 {
                self.done = true;
                break;
            }
            self.line_no += 1;
            let line = self.line_no;
            let etw = self.format == TraceFormat::Etw;
            let buf = std::mem::take(&mut self.buf);
            let parsed = match std::str::from_utf8(&buf) {
                Ok(text) if etw && self.etw_pass_over(text) => Ok(None),
                Ok(text) => match self.format.parse_line(text) {
                    Ok(Some(mut record)) => {
                        let host = if self.format == TraceFormat::Msr { msr::hostname(text) } else { "" };
                        record.app = self.apps.id(host, record.device);
                        Ok(Some(record))
                    }
                    Ok(None) if etw => {
                        self.count_other_event(text);
                        Ok(None)
                    }
                    other => other.map_err(|error| TraceError::Parse { line, error }),
                },
                Err(_) => Err(TraceError::Utf8 { line }),
            };
            self.buf = buf;
            match parsed {
                Ok(Some(mut record)) => {
                    let base = *self.base_ns.get_or_insert(record.time_ns);
                    record.time_ns = record.time_ns.saturating_sub(base);
                    return Some(Ok(record));
                }
                Ok(None) => {}
                Err(_) if self.skip_bad => self.skipped += 1,
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}

/// How trace addresses are fitted into a smaller volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressPolicy {
    /// Block address modulo the volume size: keeps locality within each volume-sized window,
    /// folds distant regions onto each other.
    Wrap,
    /// Block address scaled by `volume / trace span` (the span being the trace's maximum end
    /// offset, rounded up to whole blocks): keeps the relative layout, compresses distances.
    Scale,
}

/// An address policy name other than `wrap` and `scale`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown address policy '{0}': expected wrap or scale")]
pub struct UnknownAddressPolicy(pub String);

impl FromStr for AddressPolicy {
    type Err = UnknownAddressPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "wrap" => Ok(AddressPolicy::Wrap),
            "scale" => Ok(AddressPolicy::Scale),
            _ => Err(UnknownAddressPolicy(s.to_string())),
        }
    }
}

impl fmt::Display for AddressPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressPolicy::Wrap => "wrap",
            AddressPolicy::Scale => "scale",
        })
    }
}

/// A request's place in the volume, in 4 KiB blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockExtent {
    pub start_block: u64,
    pub blocks: u64,
}

impl AddressPolicy {
    /// Maps the byte range `offset..offset+size` into a volume of `volume_blocks` 4 KiB blocks.
    ///
    /// The range is aligned outward to whole blocks (start rounded down, end rounded up; a
    /// zero-length request still takes one block). Its length is capped at the volume size. Its
    /// first block is then placed by the policy — `Wrap`: `first % volume_blocks`; `Scale`:
    /// `first * volume_blocks / span_blocks` with `span_blocks = ceil(max_end_bytes / 4096)`
    /// (`max_end_bytes` is the largest `offset + size` in the trace, ignored by `Wrap`; a
    /// span smaller than the volume leaves addresses unscaled). Requests are kept contiguous:
    /// one that would run past the end is moved back so it ends at the last block.
    ///
    /// # Panics
    /// If `volume_blocks` is 0.
    pub fn map(self, offset_bytes: u64, size_bytes: u64, volume_blocks: u64, max_end_bytes: u64) -> BlockExtent {
        assert!(volume_blocks > 0, "volume must have at least one block");
        let first = offset_bytes / BLOCK_BYTES;
        let end = offset_bytes.saturating_add(size_bytes).div_ceil(BLOCK_BYTES);
        let blocks = end.saturating_sub(first).clamp(1, volume_blocks);
        let start = match self {
            AddressPolicy::Wrap => first % volume_blocks,
            AddressPolicy::Scale => {
                let span = max_end_bytes.div_ceil(BLOCK_BYTES);
                if span <= volume_blocks {
                    first
                } else {
                    (u128::from(first) * u128::from(volume_blocks) / u128::from(span)) as u64
                }
            }
        };
        BlockExtent { start_block: start.min(volume_blocks - blocks), blocks }
    }
}

// ---- shared field helpers for the parsers ----

/// The line without its line ending and surrounding blanks; `None` for blank lines and
/// comments (`#`).
pub(crate) fn content(line: &str) -> Option<&str> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        None
    } else {
        Some(t)
    }
}

pub(crate) fn split_csv(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}

pub(crate) fn split_ws(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

pub(crate) fn u64_field(s: &str, index: usize, name: &'static str) -> Result<u64, ParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::field(index, name, "an unsigned integer", s));
    }
    s.parse().map_err(|_| ParseError::field(index, name, "an unsigned integer below 2^64", s))
}

pub(crate) fn u32_field(s: &str, index: usize, name: &'static str) -> Result<u32, ParseError> {
    let v = u64_field(s, index, name)?;
    u32::try_from(v).map_err(|_| ParseError::field(index, name, "an unsigned integer below 2^32", s))
}

/// Multiplies a parsed field value, reporting overflow against the field.
pub(crate) fn scaled(v: u64, factor: u64, s: &str, index: usize, name: &'static str) -> Result<u64, ParseError> {
    v.checked_mul(factor).ok_or_else(|| ParseError::field(index, name, "a value that fits in 64 bits", s))
}

/// A non-negative decimal (`123`, `123.456`, `.5`) in units of `10^unit_exp` ns, converted
/// exactly to ns; digits finer than 1 ns are truncated.
pub(crate) fn decimal_ns(s: &str, unit_exp: u32, index: usize, name: &'static str) -> Result<u64, ParseError> {
    let bad = || ParseError::field(index, name, "a non-negative decimal number", s);
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let unit = 10u64.pow(unit_exp);
    let overflow = || ParseError::field(index, name, "a time below 2^64 ns", s);
    let whole = if int.is_empty() { 0 } else { int.parse::<u64>().map_err(|_| overflow())? };
    let mut ns = whole.checked_mul(unit).ok_or_else(overflow)?;
    let digits = &frac[..frac.len().min(unit_exp as usize)];
    if !digits.is_empty() {
        let f: u64 = digits.parse().map_err(|_| bad())?;
        ns = ns.checked_add(f * 10u64.pow(unit_exp - digits.len() as u32)).ok_or_else(overflow)?;
    }
    Ok(ns)
}

#[cfg(test)]
pub(crate) fn rec(time_ns: u64, op: TraceOp, offset_bytes: u64, size_bytes: u64, device: u32) -> TraceRecord {
    TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }
}

/// Asserts that `line` fails to parse with exactly `msg`.
#[cfg(test)]
pub(crate) fn assert_err(result: Result<Option<TraceRecord>, ParseError>, msg: &str) {
    match result {
        Err(e) => assert_eq!(e.to_string(), msg),
        Ok(r) => panic!("expected error '{msg}', got {r:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read_all(format: TraceFormat, text: &str, skip_bad: bool) -> (Vec<Result<TraceRecord, TraceError>>, u64) {
        let mut reader = TraceReader::new(format, Cursor::new(text.as_bytes().to_vec()), skip_bad);
        let out: Vec<_> = reader.by_ref().collect();
        (out, reader.skipped())
    }

    #[test]
    fn reader_normalises_time_to_first_record() {
        let text = "# comment\n\n5000 0 0 8 1\n7000 1 8 8 0\n4000 0 16 8 1\n";
        let (out, skipped) = read_all(TraceFormat::MqSim, text, false);
        let times: Vec<u64> = out.into_iter().map(|r| r.unwrap().time_ns).collect();
        assert_eq!(times, vec![0, 2000, 0], "earlier-than-first clamps to 0");
        assert_eq!(skipped, 0);
        let msr = "128000000000000000,h,0,Read,0,512,1\n128000000000000010,h,0,Write,0,512,1\n";
        let (out, _) = read_all(TraceFormat::Msr, msr, false);
        assert_eq!(out[1].as_ref().unwrap().time_ns, 1000, "10 FILETIME ticks = 1000 ns");
    }

    #[test]
    fn reader_errors_carry_line_numbers() {
        let text = "version,time,op,size,lbn\n1,5,28,512,0\n1,5,zz,512,0\n1,6,2a,512,1\n1,6,28\n";
        let (out, skipped) = read_all(TraceFormat::CloudPhysics, text, false);
        assert_eq!(out.len(), 4);
        assert_eq!(skipped, 0);
        let err = out[1].as_ref().unwrap_err();
        assert_eq!(err.line(), 3);
        assert!(err.to_string().starts_with("line 3: field 3 (op): expected a SCSI opcode in hex"), "{err}");
        assert_eq!(out[2].as_ref().unwrap().time_ns, 1_000_000_000);
        assert_eq!(out[3].as_ref().unwrap_err().to_string(), "line 5: expected 5 fields, got 3");
    }

    #[test]
    fn reader_skips_and_counts_bad_lines() {
        let mut bytes = b"0.0 0 0 512 1\nbad line\n1.0 0 512 512 0\n".to_vec();
        bytes.extend_from_slice(b"2.0 0 \xff 512 0\n3.0 0 0 512 7\n4.0 0 1024 512 1");
        let mut reader = TraceReader::new(TraceFormat::Heimdall, Cursor::new(bytes.clone()), true);
        let recs: Vec<TraceRecord> = reader.by_ref().map(|r| r.unwrap()).collect();
        assert_eq!(recs.len(), 3, "last line without a newline is read");
        assert_eq!(recs[2].time_ns, 4_000_000);
        assert_eq!(reader.skipped(), 3);
        assert_eq!(reader.lines_read(), 6);
        let mut strict = TraceReader::new(TraceFormat::Heimdall, Cursor::new(bytes), false);
        let errs: Vec<u64> = strict.by_ref().filter_map(|r| r.err()).map(|e| e.line()).collect();
        assert_eq!(errs, vec![2, 4, 5]);
        assert_eq!(strict.skipped(), 0);
    }

    #[test]
    fn format_names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("MSR".parse::<TraceFormat>().unwrap(), TraceFormat::Msr);
        assert_eq!("ms-etw".parse::<TraceFormat>().unwrap(), TraceFormat::Etw);
        assert!("csv".parse::<TraceFormat>().unwrap_err().to_string().contains("expected msr, spc"));
    }

    #[test]
    fn detect_formats() {
        use TraceFormat::*;
        let cases: [(&[&str], Option<TraceFormat>); 11] = [
            (&["128000000000000000,web,2,Read,1048576,8192,1500"], Some(Msr)),
            (&["0,20000,8192,W,0.551706", "1,20008,512,r,0.6"], Some(Spc)),
            (&["1000 2 100 8 1", "2000 2 108 8 0"], Some(MqSim)),
            (&["0.500 1 2048 16 1", "0.750 1 2049 3 0"], Some(DiskSim)),
            (&["0.500 1 4096 8192 1", "0.750 1 1024 512 0"], Some(Heimdall)),
            (
                &[
                    "  8,0  1  1  0.000000000  697  Q  W 223490 + 8 [kjournald]",
                    "  8,0  1  2  0.000001000  697  D  W 223490 + 8 [kjournald]",
                ],
                Some(Blkparse),
            ),
            (&["version,time,op,size,lbn", "1,5,28,512,0"], Some(CloudPhysics)),
            (
                &[
                    "BeginHeader",
                    "DiskRead, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize, ElapsedTime, DiskNum",
                    "EndHeader",
                    "DiskRead, 100, System (   4), 8, 0x1, 0x2000, 0x1000, 9, 0",
                ],
                Some(Etw),
            ),
            (&["DiskWriteInit, 100, System (   4), 8, 0xfffffa80"], Some(Etw)),
            (&["hello world"], None),
            (&[], None),
        ];
        for (lines, want) in cases {
            assert_eq!(detect(lines), want, "{lines:?}");
        }
    }

    #[test]
    fn decimal_times_are_exact() {
        assert_eq!(decimal_ns("242904.693", 6, 1, "t").unwrap(), 242_904_693_000);
        assert_eq!(decimal_ns(".5", 9, 1, "t").unwrap(), 500_000_000);
        assert_eq!(decimal_ns("7.", 3, 1, "t").unwrap(), 7000);
        assert_eq!(decimal_ns("1.0000000019", 9, 1, "t").unwrap(), 1_000_000_001, "sub-ns digits truncated");
        assert!(decimal_ns(".", 9, 1, "t").is_err());
        assert!(decimal_ns("1e3", 9, 1, "t").is_err());
        assert!(decimal_ns("99999999999", 9, 1, "t").is_err(), "overflow");
    }

    #[test]
    fn address_policy_wrap() {
        let p = AddressPolicy::Wrap;
        assert_eq!(p.map(0, 4096, 100, 0), BlockExtent { start_block: 0, blocks: 1 });
        // 512 bytes straddling a block boundary covers two blocks.
        assert_eq!(p.map(4096 * 3 + 3584, 1024, 100, 0), BlockExtent { start_block: 3, blocks: 2 });
        assert_eq!(p.map(4096 * 205, 8192, 100, 0), BlockExtent { start_block: 5, blocks: 2 });
        // Running past the end is moved back to stay contiguous.
        assert_eq!(p.map(4096 * 199, 8192, 100, 0), BlockExtent { start_block: 98, blocks: 2 });
        assert_eq!(p.map(0, 0, 100, 0), BlockExtent { start_block: 0, blocks: 1 });
        assert_eq!(p.map(0, 4096 * 1000, 100, 0), BlockExtent { start_block: 0, blocks: 100 });
    }

    #[test]
    fn address_policy_names() {
        for p in [AddressPolicy::Wrap, AddressPolicy::Scale] {
            assert_eq!(p.to_string().parse::<AddressPolicy>().unwrap(), p);
        }
        assert_eq!(
            "modulo".parse::<AddressPolicy>().unwrap_err().to_string(),
            "unknown address policy 'modulo': expected wrap or scale"
        );
    }

    #[test]
    fn address_policy_scale() {
        let p = AddressPolicy::Scale;
        let max_end = 4096 * 1000;
        assert_eq!(p.map(4096 * 500, 4096, 100, max_end), BlockExtent { start_block: 50, blocks: 1 });
        assert_eq!(p.map(4096 * 999, 4096, 100, max_end), BlockExtent { start_block: 99, blocks: 1 });
        assert_eq!(p.map(4096 * 999, 8192, 100, max_end), BlockExtent { start_block: 98, blocks: 2 });
        // A trace smaller than the volume is left as is.
        assert_eq!(p.map(4096 * 7, 4096, 100, 4096 * 50), BlockExtent { start_block: 7, blocks: 1 });
        let top = p.map((u64::MAX / 4096 - 1) * 4096, 4096, 1 << 40, u64::MAX);
        assert_eq!(top, BlockExtent { start_block: (1 << 40) - 1, blocks: 1 }, "no overflow at the top of u64");
    }

    // ---- the real traces in the repository's data/traces ----

    fn traces_dir() -> std::path::PathBuf {
        match std::env::var_os("SWAN_TRACES") {
            Some(dir) => dir.into(),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces"),
        }
    }

    /// Parses a whole real trace strictly and checks the record count and read fraction.
    fn check_real(file: &str, format: TraceFormat, requests: usize, read_fraction: f64) {
        let path = traces_dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let head: Vec<&str> = text.lines().take(20).collect();
        assert_eq!(detect(&head), Some(format), "{file}: detect");
        let mut reader = TraceReader::new(format, Cursor::new(text.as_bytes()), false);
        let mut n = 0usize;
        let mut reads = 0usize;
        let mut first = None;
        for r in reader.by_ref() {
            let r = r.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            first.get_or_insert(r.time_ns);
            n += 1;
            reads += usize::from(r.op == TraceOp::Read);
            assert!(r.size_bytes > 0 || format == TraceFormat::CloudPhysics, "{file}: empty request {r:?}");
        }
        assert_eq!(first, Some(0), "{file}: first record at 0");
        assert_eq!(reader.skipped(), 0);
        let frac = reads as f64 / n as f64;
        assert!(n.abs_diff(requests) <= requests / 100, "{file}: {n} requests, README says {requests}");
        assert!((frac - read_fraction).abs() < 0.01, "{file}: read fraction {frac:.4}, README says {read_fraction}");
    }

    #[test]
    fn real_msr_hm_0_excerpt() {
        check_real("msr-hm_0-excerpt.csv", TraceFormat::Msr, 1_000, 0.51);
    }

    #[test]
    fn real_msr_window_heimdall() {
        check_real("msr-window-rw20.heimdall", TraceFormat::Heimdall, 10_000, 0.20);
    }

    #[test]
    fn real_websearch_mqsim() {
        check_real("websearch-small.mqsim", TraceFormat::MqSim, 24_783, 0.9998);
    }

    #[test]
    fn real_tpcc_mqsim() {
        check_real("tpcc-small.mqsim", TraceFormat::MqSim, 6_999, 0.63);
    }

    #[test]
    fn real_cloudphysics_vm() {
        check_real("cloudphysics-vm.csv", TraceFormat::CloudPhysics, 113_872, 0.41);
    }
}
