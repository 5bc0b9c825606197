//! CloudPhysics CSV (VMware virtual-disk SCSI traces), header `version,time,op,size,lbn`.
//!
//! `time` is an integer in whole seconds (the README does not state the unit; the sample's
//! 2-hour trace spans 7,200 units), converted × 10⁹ to ns — so records within a second share
//! a time. `op` is the SCSI opcode in hex: only `28` (READ(10)) and `2a` (WRITE(10)) are kept;
//! any other opcode (other reads/writes sizes, TEST UNIT READY, …) gives `Ok(None)`. `size` is
//! in bytes, `lbn` in 512-byte sectors; `version` must be an integer and is otherwise ignored.
//! The format has no device field: device is 0. The header line, blank lines and `#` comments
//! are ignored.

use super::{content, scaled, split_csv, u64_field, ParseError, TraceOp, TraceRecord, SECTOR_BYTES};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    if line.starts_with("version") {
        return Ok(None);
    }
    let f = split_csv(line);
    if f.len() != 5 {
        return Err(ParseError::FieldCount { expected: "5", got: f.len() });
    }
    u64_field(f[0], 1, "version")?;
    let secs = u64_field(f[1], 2, "time")?;
    let time_ns = scaled(secs, 1_000_000_000, f[1], 2, "time")?;
    let opcode = u8::from_str_radix(f[2], 16)
        .ok()
        .filter(|_| !f[2].starts_with('+'))
        .ok_or_else(|| ParseError::field(3, "op", "a SCSI opcode in hex (28 = READ(10), 2a = WRITE(10))", f[2]))?;
    let op = match opcode {
        0x28 => TraceOp::Read,
        0x2a => TraceOp::Write,
        _ => return Ok(None),
    };
    let size_bytes = u64_field(f[3], 4, "size")?;
    let lbn = u64_field(f[4], 5, "lbn")?;
    let offset_bytes = scaled(lbn, SECTOR_BYTES, f[4], 5, "lbn")?;
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device: 0, app: 0 }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(parse_line("1,100,28,4096,80").unwrap(), Some(rec(100_000_000_000, TraceOp::Read, 40_960, 4096, 0)));
        assert_eq!(parse_line("1,101,2A,512,3\r\n").unwrap(), Some(rec(101_000_000_000, TraceOp::Write, 1536, 512, 0)));
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("version,time,op,size,lbn").unwrap(), None);
        assert_eq!(parse_line("1,100,00,0,0").unwrap(), None, "TEST UNIT READY is not kept");
        assert_eq!(parse_line("1,100,88,4096,0").unwrap(), None, "READ(16) is not kept");
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("1,100,28,4096"), "expected 5 fields, got 4");
        assert_err(
            parse_line("1,100,rd,4096,80"),
            "field 3 (op): expected a SCSI opcode in hex (28 = READ(10), 2a = WRITE(10)), got 'rd'",
        );
        assert_err(parse_line("1,100,28,4096,x"), "field 5 (lbn): expected an unsigned integer, got 'x'");
    }
}
