//! Microsoft's ETW-derived traces (SNIA IOTTA): the xperf text dumps of Windows kernel events
//! behind the Exchange, production-server (cfs, msnfs, …) and TPC-E traces of Kavalanekar,
//! Worthington et al., "Characterization of storage workload traces from production Windows
//! servers" (IISWC 2008).
//!
//! None of those traces is on this machine; the reader follows two public descriptions:
//! - SNIA IOTTA's README of the TPC-E set (same team, same tool): a header block between a
//!   `BeginHeader` and an `EndHeader` line names each event type's fields, one line per type,
//!   e.g. `DiskRead, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize,
//!   ElapsedTime, DiskNum, IrpFlags, DiskSvcTime, I/O Pri, VolSnap, FileObject, FileName`;
//!   data lines follow, comma separated and space padded.
//! - The public trace-editor for DiskSim/MQSim ("Microsoft Server Trace", SNIA IOTTA set 158):
//!   it keeps the `DiskRead` and `DiskWrite` lines, takes TimeStamp in µs, ByteOffset and
//!   IOSize in hexadecimal and DiskNum in decimal.
//!
//! Fields are numbered from 1 with the event name first: TimeStamp is field 2, ByteOffset 6,
//! IOSize 7, DiskNum 9. TimeStamp is a decimal number of µs (converted exactly to ns) and is
//! taken as the request's time, as the converter does (whether xperf stamps a disk event at
//! its issue or its completion is not in the public text; ElapsedTime is not used). ByteOffset
//! and IOSize are hexadecimal, with or without `0x`; the device is DiskNum. The fields after
//! DiskNum may be missing; Process Name, ThreadID and IrpPtr are not checked (the process field
//! is `name ( PID)`, with no comma in it).
//!
//! Every line that is not `DiskRead` or `DiskWrite` gives `Ok(None)`: the header block, the
//! issue and flush events (`DiskReadInit`, `DiskWriteInit`, `DiskFlush`, …), file events
//! (`FileIoRead`, …) and any other event type. [`skipped_event`] names the event of such a
//! line so that the reader can count them; a header line (its second field is the word
//! `TimeStamp`) is not an event. A line whose first field is not an event name (it must start
//! with a letter) is an error, so that another format read as this one fails at once.

use super::{content, decimal_ns, split_csv, u32_field, ParseError, TraceOp, TraceRecord};

/// The two events that carry a request: their lines have its offset and size.
const READ: &str = "DiskRead";
const WRITE: &str = "DiskWrite";

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_csv(line);
    let event = f[0];
    if !event.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(ParseError::field(1, "event", "an event name such as DiskRead or DiskWrite", event));
    }
    let op = match event {
        READ => TraceOp::Read,
        WRITE => TraceOp::Write,
        _ => return Ok(None),
    };
    if is_header(&f) {
        return Ok(None);
    }
    if f.len() < 9 {
        return Err(ParseError::FieldCount { expected: "at least 9 (through DiskNum)", got: f.len() });
    }
    let time_ns = decimal_ns(f[1], 3, 2, "TimeStamp")?;
    let offset_bytes = hex_field(f[5], 6, "ByteOffset")?;
    let size_bytes = hex_field(f[6], 7, "IOSize")?;
    let device = u32_field(f[8], 9, "DiskNum")?;
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

/// The event type of a line [`parse_line`] accepted without a request, for counting: `None`
/// for blank lines, comments, the header block's lines and its markers.
pub fn skipped_event(line: &str) -> Option<&str> {
    let line = content(line)?;
    let f = split_csv(line);
    if is_marker(line) || is_header(&f) || f[0] == READ || f[0] == WRITE {
        return None;
    }
    Some(line.split(',').next().unwrap_or(line).trim())
}

/// `BeginHeader` or `EndHeader`: the lines around the header block.
pub fn is_marker(line: &str) -> bool {
    matches!(line.trim(), "BeginHeader" | "EndHeader")
}

/// Whether the first lines of a file look like an ETW dump: a header marker, or a line whose
/// event is a disk or file event (`DiskRead,`, `DiskWriteInit,`, `FileIoCreate,`, …).
pub fn looks_like(first_lines: &[&str]) -> bool {
    first_lines.iter().any(|l| {
        let l = l.trim();
        is_marker(l)
            || l.split_once(',').is_some_and(|(event, _)| {
                let event = event.trim();
                (event.starts_with("Disk") || event.starts_with("FileIo"))
                    && event.bytes().all(|b| b.is_ascii_alphanumeric())
            })
    })
}

/// A line of the header block names the fields: its second one is the word `TimeStamp`
/// where a data line has a number.
fn is_header(fields: &[&str]) -> bool {
    fields.get(1) == Some(&"TimeStamp")
}

/// A hexadecimal number, with or without `0x`.
fn hex_field(s: &str, index: usize, name: &'static str) -> Result<u64, ParseError> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParseError::field(index, name, "a hexadecimal number (0x…)", s));
    }
    u64::from_str_radix(digits, 16).map_err(|_| ParseError::field(index, name, "a hexadecimal number below 2^64", s))
}

#[cfg(test)]
mod tests;
