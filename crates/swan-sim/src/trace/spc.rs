//! SPC / UMass ASCII (Financial1/2, WebSearch originals): `ASU,LBA,Size,Opcode,Timestamp[,...]`.
//!
//! ASU is the device; LBA in 512-byte sectors; Size in bytes; Opcode `r`/`R` = read, `w`/`W` =
//! write; Timestamp in (decimal) seconds from the trace start, converted exactly to ns. Fields
//! after the fifth are ignored. Blank lines and `#` comments are ignored.

use super::{
    content, decimal_ns, scaled, split_csv, u32_field, u64_field, ParseError, TraceOp, TraceRecord, SECTOR_BYTES,
};

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_csv(line);
    if f.len() < 5 {
        return Err(ParseError::FieldCount { expected: "at least 5", got: f.len() });
    }
    let device = u32_field(f[0], 1, "ASU")?;
    let lba = u64_field(f[1], 2, "LBA")?;
    let offset_bytes = scaled(lba, SECTOR_BYTES, f[1], 2, "LBA")?;
    let size_bytes = u64_field(f[2], 3, "Size")?;
    let op = match f[3] {
        "r" | "R" => TraceOp::Read,
        "w" | "W" => TraceOp::Write,
        other => return Err(ParseError::field(4, "Opcode", "r, R, w or W", other)),
    };
    let time_ns = decimal_ns(f[4], 9, 5, "Timestamp")?;
    Ok(Some(TraceRecord { time_ns, op, offset_bytes, size_bytes, device, app: 0 }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(
            parse_line("0,20000,8192,W,0.5517061").unwrap(),
            Some(rec(551_706_100, TraceOp::Write, 10_240_000, 8192, 0))
        );
        assert_eq!(
            parse_line("3,7,512,r,12,extra,fields").unwrap(),
            Some(rec(12_000_000_000, TraceOp::Read, 3584, 512, 3))
        );
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(parse_line("   ").unwrap(), None);
        assert_eq!(parse_line("# ASU,LBA,Size,Opcode,Timestamp").unwrap(), None);
    }

    #[test]
    fn malformed_lines() {
        assert_err(parse_line("0,20000,8192,W"), "expected at least 5 fields, got 4");
        assert_err(parse_line("0,20000,8192,X,0.1"), "field 4 (Opcode): expected r, R, w or W, got 'X'");
        assert_err(parse_line("0,2e4,8192,W,0.1"), "field 2 (LBA): expected an unsigned integer, got '2e4'");
        assert_err(
            parse_line("0,1,8192,W,1.2.3"),
            "field 5 (Timestamp): expected a non-negative decimal number, got '1.2.3'",
        );
    }
}
