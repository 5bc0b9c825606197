//! Heimdall text: `time_ms device offset_bytes size_bytes op`, whitespace separated.
//!
//! Time is a decimal in ms, converted exactly to ns; offset and size in bytes; op 1 = read,
//! 0 = write. Blank lines and `#` comments are ignored.

use super::{content, decimal_ns, split_ws, u32_field, u64_field, ParseError, TraceOp, TraceRecord};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_ws(line);
    if f.len() != 5 {
        return Err(ParseError::FieldCount { expected: "5", got: f.len() });
    }
    let time_ns = decimal_ns(f[0], 6, 1, "time_ms")?;
    let device = u32_field(f[1], 2, "device")?;
    let offset_bytes = u64_field(f[2], 3, "offset_bytes")?;
    let size_bytes = u64_field(f[3], 4, "size_bytes")?;
    let op = match f[4] {
        "1" => TraceOp::Read,
        "0" => TraceOp::Write,
        other => return Err(ParseError::field(5, "op", "1 (read) or 0 (write)", other)),
    };
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(parse_line("0.000 0 4096 8192 1").unwrap(), Some(rec(0, TraceOp::Read, 4096, 8192, 0)));
        assert_eq!(parse_line("1500.25 3 1000 512 0").unwrap(), Some(rec(1_500_250_000, TraceOp::Write, 1000, 512, 3)));
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("\n").unwrap(), None);
        assert_eq!(parse_line("# time_ms device offset size op").unwrap(), None);
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("0.0 0 4096 8192"), "expected 5 fields, got 4");
        assert_err(parse_line("0.0 0 4096 8192 2"), "field 5 (op): expected 1 (read) or 0 (write), got '2'");
        assert_err(parse_line("0.0 0 4096 8k 1"), "field 4 (size_bytes): expected an unsigned integer, got '8k'");
    }
}
