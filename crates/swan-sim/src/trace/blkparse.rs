//! blkparse default text output:
//! `maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]`.
//!
//! Only action `D` (issued to the driver) lines are kept; other actions (`Q`, `G`, `I`, `C`,
//! `M`, `m`, …) give `Ok(None)`, as do lines whose first token is not `maj,min` (blkparse's
//! per-CPU and total summaries, blank lines, `#` comments). RWBS containing `R` is a read,
//! containing `W` a write; `D` lines with neither (discard `D`, flush-only `F`, `N`) carry no
//! data transfer and give `Ok(None)` from [`parse_line`]; [`parse_request`] gives discards
//! too, for a replay that carries them out (`crate::member_trace`). RWBS letters other than
//! `RWDFSMAEN` are an error. Time is `sec.nsec` since the trace start, converted exactly to
//! ns. Sector and count are 512-byte sectors. The device is the kernel's `MKDEV(maj, min)` =
//! `maj << 20 | min` (maj < 4096, min < 2²⁰).

use super::{
    content, decimal_ns, scaled, split_ws, u32_field, u64_field, ParseError, TraceOp, TraceRecord, SECTOR_BYTES,
};

/// What a `D` line asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Read,
    Write,
    /// A discard (TRIM): the sectors no longer hold data.
    Discard,
}

/// One `D` line that reads, writes or discards, in the format's own time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub action: Action,
    pub time_ns: u64,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub device: u32,
}

pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, ParseError> {
    Ok(parse(line, false)?.map(|r| {
        let op = if r.action == Action::Read { TraceOp::Read } else { TraceOp::Write };
        TraceRecord {
            time_ns: r.time_ns,
            op,
            offset_bytes: r.offset_bytes,
            size_bytes: r.size_bytes,
            device: r.device,
            app: 0,
        }
    }))
}

/// As [`parse_line`], and a discard (RWBS with `D` and neither `R` nor `W`) is a request too.
pub fn parse_request(line: &str) -> Result<Option<Request>, ParseError> {
    parse(line, true)
}

fn parse(line: &str, discards: bool) -> Result<Option<Request>, ParseError> {
    let Some(line) = content(line) else { return Ok(None) };
    let f = split_ws(line);
    let Some((maj, min)) = f[0].split_once(',') else { return Ok(None) };
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !is_num(maj) || !is_num(min) {
        return Ok(None);
    }
    if f.len() < 7 {
        return Err(ParseError::FieldCount { expected: "at least 7", got: f.len() });
    }
    if f[5] != "D" {
        return Ok(None);
    }
    let rwbs = f[6];
    if rwbs.is_empty() || !rwbs.bytes().all(|b| b"RWDFSMAEN".contains(&b)) {
        return Err(ParseError::field(7, "RWBS", "letters from RWDFSMAEN", rwbs));
    }
    let action = if rwbs.contains('R') {
        Action::Read
    } else if rwbs.contains('W') {
        Action::Write
    } else if discards && rwbs.contains('D') {
        Action::Discard
    } else {
        return Ok(None);
    };
    if f.len() < 10 {
        return Err(ParseError::FieldCount { expected: "at least 10", got: f.len() });
    }
    let maj = u32_field(maj, 1, "maj,min").ok().filter(|&m| m < 1 << 12);
    let min = u32_field(min, 1, "maj,min").ok().filter(|&m| m < 1 << 20);
    let device = match (maj, min) {
        (Some(maj), Some(min)) => maj << 20 | min,
        _ => return Err(ParseError::field(1, "maj,min", "a major below 4096 and a minor below 2^20", f[0])),
    };
    let time_ns = decimal_ns(f[3], 9, 4, "sec.nsec")?;
    let sector = u64_field(f[7], 8, "sector")?;
    let offset_bytes = scaled(sector, SECTOR_BYTES, f[7], 8, "sector")?;
    if f[8] != "+" {
        return Err(ParseError::field(9, "+", "'+'", f[8]));
    }
    let count = u64_field(f[9], 10, "nsectors")?;
    let size_bytes = scaled(count, SECTOR_BYTES, f[9], 10, "nsectors")?;
    Ok(Some(Request { action, time_ns, offset_bytes, size_bytes, device }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_err, rec};
    use super::*;

    #[test]
    fn valid_lines() {
        assert_eq!(
            parse_line("  8,0    1       17     0.001234567  4211  D   WS 1000 + 16 [jbd2/sda1-8]").unwrap(),
            Some(rec(1_234_567, TraceOp::Write, 512_000, 8192, 8 << 20))
        );
        assert_eq!(
            parse_line("259,3    0        5     2.500000000   300  D   RA 2048 + 8 [cat]").unwrap(),
            Some(rec(2_500_000_000, TraceOp::Read, 1_048_576, 4096, 259 << 20 | 3))
        );
    }

    #[test]
    fn ignored_lines() {
        assert_eq!(
            parse_line("  8,0    1       16     0.001200000  4211  Q   WS 1000 + 16 [jbd2/sda1-8]").unwrap(),
            None
        );
        assert_eq!(parse_line("  8,0    1       18     0.001300000  4211  D   FN [kworker]").unwrap(), None);
        assert_eq!(parse_line("CPU0 (8,0):").unwrap(), None);
        assert_eq!(parse_line("  8,0    1       19     0.001400000  4211  D   D 2048 + 8 [fstrim]").unwrap(), None);
        assert_eq!(parse_line(" Reads Queued:           3,       12KiB").unwrap(), None);
        assert_eq!(parse_line("").unwrap(), None);
    }

    #[test]
    fn discards_are_requests_only_when_asked_for() {
        let line = "  8,16   0       19     0.001400000     0  D   D 2048 + 8 [fstrim]";
        let r = parse_request(line).unwrap().unwrap();
        assert_eq!(r.action, Action::Discard);
        assert_eq!((r.time_ns, r.offset_bytes, r.size_bytes, r.device), (1_400_000, 1_048_576, 4096, 8 << 20 | 16));
        assert_eq!(parse_request("  8,0 1 18 0.0013 4211 D FN [kworker]").unwrap(), None);
        assert_eq!(parse_request("259,3 0 5 2.5 300 D RA 2048 + 8 [cat]").unwrap().unwrap().action, Action::Read);
    }

    #[test]
    fn malformed_lines() {
        assert_err(
            parse_line("  8,0    1       17     0.001  4211  D   W 1000 +"),
            "expected at least 10 fields, got 9",
        );
        assert_err(parse_line("  8,0    1       17     0.001  4211"), "expected at least 7 fields, got 5");
        assert_err(
            parse_line("  8,0    1       17     0.001  4211  D   X 1000 + 16 [p]"),
            "field 7 (RWBS): expected letters from RWDFSMAEN, got 'X'",
        );
        assert_err(
            parse_line("  8,0    1       17     0.001  4211  D   W 1000 + ten [p]"),
            "field 10 (nsectors): expected an unsigned integer, got 'ten'",
        );
        assert_err(
            parse_line("  8,0    1       17     0,001  4211  D   W 1000 + 8 [p]"),
            "field 4 (sec.nsec): expected a non-negative decimal number, got '0,001'",
        );
    }
}
