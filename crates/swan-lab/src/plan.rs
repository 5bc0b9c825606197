//! `swan plan`: the analytic model of SWAN §3.5 (Eq. 1) as a worked example — how many SSDs
//! an R-group needs to match the network, and how many R-groups keep SWAN-level GC from ever
//! stalling the front-end.
//!
//! This module only parses flags and prints. Every number comes from
//! [`swan_core::analytic::Plan`]; no formula of the model lives here.

use anyhow::Context;
use clap::Args;
use std::fmt::Write as _;
use swan_core::analytic::{Plan, PlanError, PlanInputs};
use swan_core::geometry::RaidLevel;

/// The defaults of every flag: the paper's numbers, defined once in `swan-core`.
const PAPER: PlanInputs = PlanInputs::PAPER;

/// Flags of `swan plan`. Defaults are the paper's measurements (§3.5) and its EMC XtremIO
/// example.
#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    /// Te: time to erase the flash blocks of one segment on one SSD, in milliseconds
    /// (paper's prototype: 4 ms).
    #[arg(long, value_name = "MS", allow_negative_numbers = true, default_value_t = PAPER.erase_ms)]
    pub erase_ms: f64,

    /// tr: time to read one 4 KiB block from an SSD, in microseconds; Tr = tr·B is the
    /// segment read time (paper: 15.6 µs).
    #[arg(long, value_name = "US", allow_negative_numbers = true, default_value_t = PAPER.block_read_us)]
    pub block_read_us: f64,

    /// tw: time to write one 4 KiB block to an SSD, in microseconds; Tw = tw·B is the
    /// segment write time (paper: 19.5 µs).
    #[arg(long, value_name = "US", allow_negative_numbers = true, default_value_t = PAPER.block_write_us)]
    pub block_write_us: f64,

    /// B: blocks per segment on each SSD of an R-group (paper: 256, i.e. 1 MiB).
    #[arg(long, value_name = "BLOCKS", default_value_t = PAPER.segment_blocks)]
    pub segment_blocks: u32,

    /// ud: disk utilization, the fraction of capacity holding live data, in (0, 1); the
    /// segment utilization u of GC victims is solved from ud = (u − 1)/ln u (paper: 0.6).
    #[arg(long, value_name = "UD", allow_negative_numbers = true, default_value_t = PAPER.disk_utilization)]
    pub disk_utilization: f64,

    /// u: segment utilization (valid fraction of a GC victim) given directly instead of
    /// solved from --disk-utilization; 0.33 reproduces the paper's figures exactly.
    #[arg(long, value_name = "U", allow_negative_numbers = true, conflicts_with = "disk_utilization")]
    pub segment_utilization: Option<f64>,

    /// Aggregate network bandwidth of the array, in MB/s (XtremIO example: 10 GB/s); the
    /// data SSDs of one R-group must write at least this fast.
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true, default_value_t = PAPER.network_mbps)]
    pub network_mbps: f64,

    /// Sustained write bandwidth of one SSD, in MB/s (paper: 2.5 GB/s).
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true, default_value_t = PAPER.ssd_write_mbps)]
    pub ssd_write_mbps: f64,

    /// RAID level inside an R-group: 0, 4 or 5 (RAID4/5 add one parity SSD per R-group).
    #[arg(long, value_name = "0|4|5", default_value_t = PAPER.raid, value_parser = parse_raid)]
    pub raid: RaidLevel,

    /// Print the plan as JSON instead of a worked example.
    #[arg(long)]
    pub json: bool,

    /// Simulate N-1, N and N+1 R-groups under sustained writes and report whether GC ever
    /// stalled the front-end.
    #[arg(long)]
    pub verify: bool,
}

impl PlanArgs {
    /// The model's inputs named by these flags.
    pub fn inputs(&self) -> PlanInputs {
        PlanInputs {
            erase_ms: self.erase_ms,
            block_read_us: self.block_read_us,
            block_write_us: self.block_write_us,
            segment_blocks: self.segment_blocks,
            disk_utilization: self.disk_utilization,
            segment_utilization: self.segment_utilization,
            network_mbps: self.network_mbps,
            ssd_write_mbps: self.ssd_write_mbps,
            raid: self.raid,
        }
    }
}

/// `0`, `4`, `5`, or `raid0`/`RAID4`/... (the form the default is displayed in).
fn parse_raid(s: &str) -> Result<RaidLevel, String> {
    let lower = s.trim().to_ascii_lowercase();
    match lower.strip_prefix("raid").unwrap_or(&lower) {
        "0" => Ok(RaidLevel::Raid0),
        "4" => Ok(RaidLevel::Raid4),
        "5" => Ok(RaidLevel::Raid5),
        _ => Err(format!("unknown RAID level `{s}`: use 0, 4 or 5")),
    }
}

/// The flag behind a [`PlanError`], if it names one.
fn flag_of(err: &PlanError) -> Option<String> {
    const FLAGS: [&str; 8] = [
        "erase_ms",
        "block_read_us",
        "block_write_us",
        "segment_blocks",
        "disk_utilization",
        "segment_utilization",
        "network_mbps",
        "ssd_write_mbps",
    ];
    match err {
        PlanError::OutOfRange { name, .. } => {
            let field = name.split(' ').next()?;
            FLAGS.contains(&field).then(|| format!("--{}", field.replace('_', "-")))
        }
        PlanError::TooWide { .. } => Some("--network-mbps / --ssd-write-mbps".to_string()),
    }
}

/// `swan plan`: compute the plan, print it (worked example or JSON) and return it.
/// `--verify` is accepted but not acted on here.
pub fn run(args: &PlanArgs) -> anyhow::Result<Plan> {
    let plan = compute(args)?;
    if args.json {
        let json = serde_json::to_string_pretty(&plan).context("swan plan: serializing the plan")?;
        println!("{json}");
    } else {
        print!("{}", render(&plan));
    }
    Ok(plan)
}

/// The plan for `args`, or an error naming the option to check.
pub fn compute(args: &PlanArgs) -> anyhow::Result<Plan> {
    Plan::compute(args.inputs()).map_err(|err| {
        let hint = match flag_of(&err) {
            Some(flag) => format!("swan plan: check {flag}"),
            None => "swan plan: invalid input".to_string(),
        };
        anyhow::Error::new(err).context(hint)
    })
}

/// The worked example: inputs, u from ud, each term of Eq. 1, both N, the R-group width,
/// the notes.
pub fn render(p: &Plan) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = write_report(&mut s, p);
    s
}

fn write_report(s: &mut String, p: &Plan) -> std::fmt::Result {
    writeln!(s, "SWAN analytic model (paper §3.5, Eq. 1)")?;
    writeln!(s)?;
    writeln!(s, "Inputs")?;
    writeln!(s, "  Te  segment erase time      {:>10.1} us", p.segment_erase_us)?;
    writeln!(s, "  tr  block read time         {:>10.1} us", p.block_read_us)?;
    writeln!(s, "  tw  block write time        {:>10.1} us", p.block_write_us)?;
    writeln!(s, "  B   blocks per segment      {:>10}", p.segment_blocks)?;
    writeln!(s, "  Tr  segment read  = tr*B    {:>10.1} us", p.segment_read_us)?;
    writeln!(s, "  Tw  segment write = tw*B    {:>10.1} us", p.segment_write_us)?;
    if p.segment_utilization_given {
        writeln!(s, "  u   segment utilization     {:>10.4}   (given)", p.segment_utilization)?;
        writeln!(s, "  ud  disk utilization        {:>10.4}   (from ud = (u - 1)/ln u)", p.disk_utilization)?;
    } else {
        writeln!(s, "  ud  disk utilization        {:>10.4}   (given)", p.disk_utilization)?;
        writeln!(s, "  u   segment utilization     {:>10.4}   (solved from ud = (u - 1)/ln u)", p.segment_utilization)?;
    }
    writeln!(s)?;
    writeln!(s, "GC must keep up: S*(Te + u*(Tr + Tw)) <= (N - 1)*S*(1 - u)*Tw")?;
    writeln!(s, "  GC time per segment      Te + u*(Tr + Tw) = {:>10.1} us", p.gc_time_per_segment_us)?;
    writeln!(s, "  refill time per segment  (1 - u)*Tw       = {:>10.1} us", p.refill_time_per_segment_us)?;
    writeln!(s)?;
    writeln!(s, "Eq. 1: N >= (Te/Tw)*1/(1 - u) + u*(Tr/Tw + 1)/(1 - u) + 1")?;
    writeln!(s, "  erase term       (Te/Tw)*1/(1 - u)    = {:.4}", p.erase_term)?;
    writeln!(s, "  read/write term  u*(Tr/Tw + 1)/(1 - u) = {:.4}", p.read_write_term)?;
    writeln!(s, "  N with erase term     = {:.4}  -> {} R-groups", p.rgroups_with_erase, p.rgroups_with_erase_ceil)?;
    writeln!(
        s,
        "  N without erase term  = {:.4}  -> {} R-groups   (the paper's reading)",
        p.rgroups_without_erase, p.rgroups_without_erase_ceil
    )?;
    writeln!(s)?;
    writeln!(s, "R-group width ({})", p.raid)?;
    writeln!(s, "  network {} MB/s, SSD write {} MB/s", p.network_mbps, p.ssd_write_mbps)?;
    writeln!(
        s,
        "  data SSDs = ceil(network / SSD write) = {}, parity SSDs = {}  -> {} SSDs per R-group",
        p.data_ssds_per_rgroup, p.parity_ssds_per_rgroup, p.ssds_per_rgroup
    )?;
    writeln!(
        s,
        "  total SSDs: {} with erase term ({} R-groups x {}), {} without ({} x {})",
        p.total_ssds_with_erase,
        p.rgroups_with_erase_ceil,
        p.ssds_per_rgroup,
        p.total_ssds_without_erase,
        p.rgroups_without_erase_ceil,
        p.ssds_per_rgroup
    )?;
    if !p.notes.is_empty() {
        writeln!(s)?;
        writeln!(s, "Notes")?;
        for note in &p.notes {
            write_wrapped(s, note, "  - ", "    ", 100)?;
        }
    }
    writeln!(s)?;
    let asks = if p.rgroups_with_erase_ceil == p.rgroups_without_erase_ceil {
        format!("Eq. 1 with and without its erase term both ask for {} R-groups", p.rgroups_with_erase_ceil)
    } else {
        format!(
            "Eq. 1 with and without its erase term asks for {} or {} R-groups",
            p.rgroups_with_erase_ceil, p.rgroups_without_erase_ceil
        )
    };
    write_wrapped(s, &format!("{asks}; the simulator can decide between them:"), "", "", 100)?;
    write_wrapped(
        s,
        "`swan plan --verify` simulates N-1, N and N+1 R-groups under sustained writes and reports whether GC \
         ever stalled the front-end.",
        "  ",
        "  ",
        100,
    )
}

/// Greedy word wrap: `first` prefixes the first line, `rest` the others.
fn write_wrapped(s: &mut String, text: &str, first: &str, rest: &str, width: usize) -> std::fmt::Result {
    let mut line = String::from(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            writeln!(s, "{line}")?;
            line = String::from(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    writeln!(s, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        plan: PlanArgs,
    }

    fn parse(args: &[&str]) -> Result<PlanArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("plan").chain(args.iter().copied())).map(|c| c.plan)
    }

    #[test]
    fn defaults_are_the_papers() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.inputs(), PlanInputs::PAPER);
        assert!(!args.json && !args.verify);
    }

    #[test]
    fn flags_parse() {
        let args = parse(&["--raid", "0", "--segment-utilization", "0.33", "--erase-ms", "2", "--json"]).unwrap();
        assert_eq!(args.raid, RaidLevel::Raid0);
        assert_eq!(args.segment_utilization, Some(0.33));
        assert_eq!(args.erase_ms, 2.0);
        assert!(args.json);
        assert_eq!(parse(&["--raid", "RAID5"]).unwrap().raid, RaidLevel::Raid5);
        assert!(parse(&["--raid", "6"]).is_err());
        assert!(parse(&["--disk-utilization", "0.5", "--segment-utilization", "0.3"]).is_err());
    }

    #[test]
    fn report_has_every_term() {
        let plan = Plan::compute(parse(&[]).unwrap().inputs()).unwrap();
        let text = render(&plan);
        for needle in
            ["3.0494", "1.8637", "0.3242", "1.1858", "0.8637", "4 R-groups", "2 R-groups", "5 SSDs per R-group"]
        {
            assert!(text.contains(needle), "missing {needle} in\n{text}");
        }
        assert!(text.contains("swan plan --verify"));
        assert!(text.contains("7.5 GB/s"));
    }

    #[test]
    fn bad_input_names_the_flag() {
        let args = parse(&["--disk-utilization", "1.2"]).unwrap();
        let err = run(&args).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("--disk-utilization") && msg.contains("between 0 and 1"), "{msg}");
    }
}
