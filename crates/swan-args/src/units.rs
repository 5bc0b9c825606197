//! Parsing sizes as people write them: `8k`, `8KiB`, `1MiB`, `1.5G`, `4096`.

/// Bytes in `s`. Suffixes are binary (k = KiB = 1024), as fio reads them.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("'{s}' is not a size (try 8k, 1MiB, 2GiB)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => return Err(format!("unknown size unit '{other}' in '{s}' (use k, M, G or T)")),
    };
    let bytes = value * mult as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("size '{s}' is out of range"));
    }
    Ok(bytes as u64)
}

/// A spare share given in per cent (`10` or `10%`), as a fraction. `swan create` and `swan sim`
/// both read `--spare` with it, so one number means one array. A bare number below 1 is
/// refused: it is far more often a fraction written by mistake than a spare of under 1 %,
/// which can still be asked for as `0.5%`.
pub fn parse_spare_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let explicit = t.ends_with('%');
    let n = t.trim_end_matches('%').trim();
    let v: f64 = n.parse().map_err(|_| format!("'{s}' is not a percentage (e.g. 10 or 10%)"))?;
    if !(0.0..90.0).contains(&v) {
        return Err(format!("{s}: give a percentage from 0 to below 90"));
    }
    if v > 0.0 && v < 1.0 && !explicit {
        // Rounded to the hundredth, so 0.07 suggests 7 and not 7.000000000000001.
        let pct = (v * 10_000.0).round() / 100.0;
        return Err(format!(
            "{s} is read as per cent, not as a fraction: write {pct} for {pct} %, or {s}% for under 1 %"
        ));
    }
    Ok(v / 100.0)
}

/// Like [`parse_size`], but must be a positive multiple of 4 KiB; returns blocks.
pub fn parse_blocks(s: &str) -> Result<u64, String> {
    let bytes = parse_size(s)?;
    if bytes == 0 || bytes % swan_core::BLOCK_BYTES != 0 {
        return Err(format!("'{s}' must be a positive multiple of 4 KiB"));
    }
    Ok(bytes / swan_core::BLOCK_BYTES)
}

/// `bytes` as people write it: the largest binary unit that divides it exactly
/// (`1048576` → `1MiB`, `1536` → `1536`), so that [`parse_size`] reads it back unchanged.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes != 0 && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// `--member-timeout`: none for `off`.
#[derive(Clone, Copy, Debug)]
pub struct MemberTimeout(pub Option<std::time::Duration>);

pub fn member_timeout(s: &str) -> Result<MemberTimeout, String> {
    if s == "off" {
        return Ok(MemberTimeout(None));
    }
    match s.parse::<f64>() {
        Ok(0.0) => Ok(MemberTimeout(None)),
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => {
            Ok(MemberTimeout(Some(std::time::Duration::from_secs_f64(secs))))
        }
        _ => Err(format!("`{s}` is not a number of seconds in (0, 86400], 0 or `off`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_is_per_cent_in_every_command() {
        assert_eq!(parse_spare_percent("10"), Ok(0.1));
        assert_eq!(parse_spare_percent("25%"), Ok(0.25));
        assert_eq!(parse_spare_percent("0"), Ok(0.0));
        assert_eq!(parse_spare_percent("0.5%"), Ok(0.005));
        assert!(parse_spare_percent("0.15").unwrap_err().contains("write 15 for 15 %"));
        assert!(parse_spare_percent("0.07").unwrap_err().contains("write 7 for 7 %"));
        assert!(parse_spare_percent("0.29").unwrap_err().contains("write 29 for 29 %"));
        assert!(parse_spare_percent("0.125").unwrap_err().contains("write 12.5 for 12.5 %"));
        assert!(parse_spare_percent("90").unwrap_err().contains("below 90"));
        assert!(parse_spare_percent("-1").unwrap_err().contains("below 90"));
        assert!(parse_spare_percent("ten").unwrap_err().contains("not a percentage"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("8x").unwrap_err().contains("unit"));
        assert!(parse_size("abc").is_err());
        assert_eq!(member_timeout("off").unwrap().0, None);
        assert_eq!(member_timeout("0").unwrap().0, None);
        assert_eq!(member_timeout("2.5").unwrap().0, Some(std::time::Duration::from_millis(2500)));
        assert!(member_timeout("-1").is_err() && member_timeout("soon").is_err() && member_timeout("inf").is_err());
        assert_eq!(parse_blocks("8k"), Ok(2));
        assert!(parse_blocks("6k").is_err());
        for (bytes, text) in [(1 << 20, "1MiB"), (3 << 29, "1536MiB"), (4096, "4KiB"), (1000, "1000"), (0, "0")] {
            assert_eq!(format_size(bytes), text);
            assert_eq!(parse_size(text), Ok(bytes));
        }
    }
}
