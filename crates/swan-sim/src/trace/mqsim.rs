//! MQSim ASCII: `arrival_ns device lba_sectors size_sectors type`, whitespace separated.
//!
//! Arrival time is an integer in ns (kept as is); LBA and size in 512-byte sectors; type 1 =
//! read, 0 = write. Blank lines and `#` comments are ignored.

use super::{content, scaled, split_ws, u32_field, u64_field, ParseError, TraceOp, TraceRecord, SECTOR_BYTES};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_ws(line);
    if f.len() != 5 {
        return Err(ParseError::FieldCount { expected: "5", got: f.len() });
    }
    let time_ns = u64_field(f[0], 1, "arrival_ns")?;
    let device = u32_field(f[1], 2, "device")?;
    let lba = u64_field(f[2], 3, "lba_sectors")?;
    let offset_bytes = scaled(lba, SECTOR_BYTES, f[2], 3, "lba_sectors")?;
    let sectors = u64_field(f[3], 4, "size_sectors")?;
    let size_bytes = scaled(sectors, SECTOR_BYTES, f[3], 4, "size_sectors")?;
    let op = match f[4] {
        "1" => TraceOp::Read,
        "0" => TraceOp::Write,
        other => return Err(ParseError::field(5, "type", "1 (read) or 0 (write)", other)),
    };
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(parse_line("1000 2 100 8 1").unwrap(), Some(rec(1000, TraceOp::Read, 51_200, 4096, 2)));
        assert_eq!(parse_line("\t777000  11 0 1 0\n").unwrap(), Some(rec(777_000, TraceOp::Write, 0, 512, 11)));
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("# arrival device lba size type").unwrap(), None);
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("1000 2 100 8"), "expected 5 fields, got 4");
        assert_err(parse_line("1000 2 100 8 R"), "field 5 (type): expected 1 (read) or 0 (write), got 'R'");
        assert_err(parse_line("1.5 2 100 8 1"), "field 1 (arrival_ns): expected an unsigned integer, got '1.5'");
        assert_err(
            parse_line("1 4294967296 100 8 1"),
            "field 2 (device): expected an unsigned integer below 2^32, got '4294967296'",
        );
    }
}
