//! DiskSim ASCII: `time_ms device block_sectors count_sectors flags`, whitespace separated.
//!
//! Time is a decimal in ms, converted exactly to ns; block and count in 512-byte sectors;
//! flags an unsigned decimal integer whose bit 0 set means read (otherwise write; other bits
//! are ignored). Blank lines and `#` comments are ignored.

use super::{
    content, decimal_ns, scaled, split_ws, u32_field, u64_field, ParseError, TraceOp, TraceRecord, SECTOR_BYTES,
};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_ws(line);
    if f.len() != 5 {
        return Err(ParseError::FieldCount { expected: "5", got: f.len() });
    }
    let time_ns = decimal_ns(f[0], 6, 1, "time_ms")?;
    let device = u32_field(f[1], 2, "device")?;
    let block = u64_field(f[2], 3, "block_sectors")?;
    let offset_bytes = scaled(block, SECTOR_BYTES, f[2], 3, "block_sectors")?;
    let count = u64_field(f[3], 4, "count_sectors")?;
    let size_bytes = scaled(count, SECTOR_BYTES, f[3], 4, "count_sectors")?;
    let flags = u64_field(f[4], 5, "flags")
        .map_err(|_| ParseError::field(5, "flags", "an unsigned integer (bit 0 set = read)", f[4]))?;
    let op = if flags & 1 == 1 { TraceOp::Read } else { TraceOp::Write };
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(parse_line("0.000000 1 2048 16 1").unwrap(), Some(rec(0, TraceOp::Read, 1_048_576, 8192, 1)));
        assert_eq!(parse_line("12.3456789 0 3 1 2").unwrap(), Some(rec(12_345_678, TraceOp::Write, 1536, 512, 0)));
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("# time dev block count flags").unwrap(), None);
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("0.5 1 2048 16 1 9"), "expected 5 fields, got 6");
        assert_err(
            parse_line("0.5 1 2048 16 R"),
            "field 5 (flags): expected an unsigned integer (bit 0 set = read), got 'R'",
        );
        assert_err(
            parse_line("-0.5 1 2048 16 1"),
            "field 1 (time_ms): expected a non-negative decimal number, got '-0.5'",
        );
        assert_err(parse_line("0.5 1 0x10 16 1"), "field 3 (block_sectors): expected an unsigned integer, got '0x10'");
    }
}
