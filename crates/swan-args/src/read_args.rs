//! The options by which `swan sim` and `swan serve` say how user reads are served, taken
//! once here so that both faces accept the same words and mean the same rules.

use anyhow::bail;
use swan_core::geometry::RaidLevel;
use swan_core::scheme::{ReadRules, SchemeKind, DEFAULT_MIN_GAIN_NS};

#[derive(clap::Args, Debug, Clone)]
pub struct ReadArgs {
    /// SWAN: a user read that falls on a back-end R-group doing GC preempts GC's reads and
    /// writes on that SSD (the paper's rule): on or off. Off, reads queue behind GC work in
    /// arrival order, as Log-RAID's do.
    #[arg(long, default_value = "on", value_parser = parse_on_off, value_name = "on|off", action = clap::ArgAction::Set)]
    pub read_priority: bool,
    /// Log-structured RAID4/5 (swan4, swan5, lograid4, lograid5): serve a read whose SSD is
    /// predicted busy (behind GC, its own or the array's) from the rest of its stripe row and
    /// the row's parity instead, when that is predicted faster by --parity-read-gain-us. Rows
    /// still filling and R-groups with a failed member are always read directly. `swan serve`
    /// predicts from its --emulate models and needs them. Default off: docs/swan.md ("Reads
    /// around a collecting SSD") has the measurement behind it.
    #[arg(long, value_parser = parse_on_off, value_name = "on|off")]
    pub parity_reads: Option<bool>,
    /// With --parity-reads on: read around an SSD only when its predicted wait exceeds the
    /// slowest other column's by at least this many µs (default 500: below that the reads
    /// it costs buy too little).
    #[arg(long, value_name = "US")]
    pub parity_read_gain_us: Option<u64>,
}

pub fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{s}' is neither on nor off")),
    }
}

impl ReadArgs {
    /// The read rules for an array of scheme `kind`; refused, naming the option, where the
    /// scheme cannot follow them.
    pub fn rules(&self, kind: SchemeKind) -> anyhow::Result<ReadRules> {
        let parity = self.parity_reads.unwrap_or(false);
        if let Some(us) = self.parity_read_gain_us {
            if !parity {
                bail!("--parity-read-gain-us {us} needs --parity-reads on");
            }
        }
        if parity {
            if !kind.is_log_structured() {
                bail!(
                    "--parity-reads on: {kind} writes in place; reads around a busy SSD are for lograid4/5 and swan4/5"
                );
            }
            if kind.raid() == RaidLevel::Raid0 {
                bail!("--parity-reads on: {kind} has no parity to rebuild a block from; use swan4/5 or lograid4/5");
            }
        }
        let gain_us = self.parity_read_gain_us.unwrap_or(DEFAULT_MIN_GAIN_NS / 1_000);
        Ok(ReadRules { priority: self.read_priority, parity_min_gain_us: parity.then_some(gain_us) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        reads: ReadArgs,
    }

    fn rules(args: &[&str], kind: &str) -> anyhow::Result<ReadRules> {
        let cli = Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied()))?;
        cli.reads.rules(kind.parse().unwrap())
    }

    #[test]
    fn defaults_are_the_papers_read_priority_and_no_reads_around() {
        assert_eq!(rules(&[], "swan5").unwrap(), ReadRules { priority: true, parity_min_gain_us: None });
        let r = rules(&["--read-priority", "off", "--parity-reads", "on", "--parity-read-gain-us", "80"], "swan4");
        assert_eq!(r.unwrap(), ReadRules { priority: false, parity_min_gain_us: Some(80) });
    }

    #[test]
    fn bad_input_is_refused_naming_the_option() {
        let e = |args: &[&str], kind| rules(args, kind).unwrap_err().to_string();
        assert!(e(&["--read-priority", "yes"], "swan5").contains("neither on nor off"));
        assert!(e(&["--parity-reads", "on"], "swan0").contains("--parity-reads on: swan0 has no parity"));
        assert!(e(&["--parity-reads", "on"], "raid5").contains("writes in place"));
        assert!(e(&["--parity-read-gain-us", "10"], "swan5").contains("needs --parity-reads on"));
        assert!(e(&["--parity-read-gain-us", "-3", "--parity-reads", "on"], "swan5").contains("-3"));
    }
}
