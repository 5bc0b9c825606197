//! MSR Cambridge CSV (SNIA IOTTA), no header:
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! Timestamp is a Windows FILETIME (100 ns ticks since 1601-01-01), converted as ticks × 100 ns.
//! Type is `Read` or `Write` (case-insensitive); Offset and Size are bytes; the device is
//! DiskNumber. Hostname and ResponseTime are checked for presence only (ResponseTime must be an
//! integer). A line starting with `Timestamp` (a header some copies add), blank lines and `#`
//! comments are ignored.

use super::{content, scaled, split_csv, u32_field, u64_field, ParseError, TraceOp, TraceRecord};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    if line.starts_with("Timestamp") {
        return Ok(None);
    }
    let f = split_csv(line);
    if f.len() != 7 {
        return Err(ParseError::FieldCount { expected: "7", got: f.len() });
    }
    let ticks = u64_field(f[0], 1, "Timestamp")?;
    let time_ns = scaled(ticks, 100, f[0], 1, "Timestamp")?;
    let device = u32_field(f[2], 3, "DiskNumber")?;
    let op = if f[3].eq_ignore_ascii_case("read") {
        TraceOp::Read
    } else if f[3].eq_ignore_ascii_case("write") {
        TraceOp::Write
    } else {
        return Err(ParseError::field(4, "Type", "Read or Write", f[3]));
    };
    let offset_bytes = u64_field(f[4], 5, "Offset")?;
    let size_bytes = u64_field(f[5], 6, "Size")?;
    u64_field(f[6], 7, "ResponseTime")?;
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

/// The Hostname field of a line [`parse_line`] accepted (with DiskNumber, it names the
/// volume: the application).
pub fn hostname(line: &str) -> &str {
    content(line).and_then(|l| l.split(',').nth(1)).map_or("", str::trim)
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(
            parse_line("128000000000000000,web,2,Read,1048576,8192,1500").unwrap(),
            Some(rec(12_800_000_000_000_000_000, TraceOp::Read, 1_048_576, 8192, 2))
        );
        assert_eq!(
            parse_line("128000000000000123,src1,0,Write,512,4096,77\r\n").unwrap(),
            Some(rec(12_800_000_000_000_012_300, TraceOp::Write, 512, 4096, 0))
        );
    }

    #[test]
    fn hostname_field() {
        assert_eq!(hostname("128000000000000000, src1 ,2,Read,1048576,8192,1500"), "src1");
        assert_eq!(hostname(""), "");
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").unwrap(), None);
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("# comment").unwrap(), None);
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("128000000000000000,web,2,Read,1048576,8192"), "expected 7 fields, got 6");
        assert_err(
            parse_line("128000000000000000,web,2,Rd,1048576,8192,1"),
            "field 4 (Type): expected Read or Write, got 'Rd'",
        );
        assert_err(
            parse_line("128000000000000000,web,2,Read,-5,8192,1"),
            "field 5 (Offset): expected an unsigned integer, got '-5'",
        );
        assert_err(
            parse_line("99999999999999999999,web,2,Read,0,8192,1"),
            "field 1 (Timestamp): expected an unsigned integer below 2^64, got '99999999999999999999'",
        );
        assert_err(
            parse_line("999999999999999999,web,2,Read,0,8192,1"),
            "field 1 (Timestamp): expected a value that fits in 64 bits, got '999999999999999999'",
        );
    }
}
