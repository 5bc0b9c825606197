//! What `swan repro` is asked: which experiment, at what scale, with which seeds, and
//! where its report goes. Shared by the SWAN and the Harmonia reproductions.

use crate::experiments::Scale;
use std::path::PathBuf;
use swan_sim::report::Format;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    /// Fig. 4(a), 5, 6 and 7: RAID0, Log-RAID0 and SWAN0 (4R-2SSD) on 8 SSDs.
    Fig5,
    /// Fig. 4(b): Log-RAID0 and SWAN0 on 3, 6 and 9 SSDs.
    Fig4b,
    /// Fig. 4(a)/(b) and 5 on SSDs that are not identical (Hao et al.'s field variation),
    /// three seeds, beside identical SSDs: does the slowest SSD make Log-RAID0 fall?
    SsdSpread,
    /// Fig. 8–11 and Table 4: RocksDB's YCSB-like phases, recorded live at the server, replayed
    /// over RAID4, RAID5, Log-RAID4 and SWAN4 (3R-3SSD).
    Ycsb,
    /// Fig. 12: SSD-internal latency CDFs of SWAN0 and RAID0 on open-channel SSDs.
    Fig12,
    /// §6: SWAN0 and RAID0 over block-level-FTL SSDs, and the FTL map DRAM.
    SimpleSsd,
    /// Reads that do not wait for GC: SWAN4 3R-3SSD under random 70/30 and 30/70 mixes,
    /// read priority on and off (reads by R-group role, Table 4) and reads around a busy SSD
    /// (--parity-reads) off and on, also over SSDs that collect on their own; three seeds.
    ReadRules,
    /// Harmonia Fig. 6/10: HPC(W) and HPC(R) on 8 SSDs, baseline vs GGC policies, SWAN0, Log-RAID0.
    HarmoniaHpc,
    /// Harmonia Fig. 7: response time and its variability against arrival rate.
    HarmoniaFig7,
    /// Harmonia Fig. 8: baseline and GGC response time on 2 … 18 SSDs.
    HarmoniaFig8,
    /// Harmonia Fig. 9: per-SSD request latency over 300 ms.
    HarmoniaFig9,
    /// Harmonia's claims against the forced-GC bound (victims per element per cycle).
    HarmoniaBound,
    /// Harmonia's claims under the paper's warm-up and under a steady-state one.
    HarmoniaWarmup,
    /// Harmonia's standard-deviation cut against run length, warm-up and array layer.
    HarmoniaLength,
    /// Harmonia §III (Tables IV–VII, Fig. 1–3): its two measured drives, alone and in RAID-0/5
    /// of 4 and 6, bandwidth and its variation by write share, width and RAID level.
    HarmoniaDrives,
    /// Triple-A Fig. 12: non-autonomic and Triple-A with 1 … 8 hot clusters (4x16, random reads).
    TripleAFig12,
    /// Triple-A Fig. 13–15: 4x8 … 4x20 networks, 4 hot clusters: IOPS, latency, contention, stalls.
    TripleAFig13,
    /// Triple-A Fig. 16: migration with and without shadow cloning.
    TripleAFig16,
    /// Triple-A Table 2: the 4x16 non-autonomic array on the hm, web and MSR-window traces.
    TripleATable2,
    /// Triple-A Fig. 9: latency and IOPS of Triple-A normalised to the non-autonomic array, per trace.
    TripleAFig9,
    /// Triple-A Fig. 10: link contention, storage contention and queue stall, normalised, per trace.
    TripleAFig10,
    /// Triple-A Fig. 11: latency CDF points of both arrays, per trace.
    TripleAFig11,
    /// Triple-A beyond the paper: GC-active FIMMs under the hot-cluster micro-benchmark with
    /// writes, a collecting FIMM blind to laggard detection, made a laggard, or exempted.
    TripleAGc,
    /// Triple-A beyond the paper: SWAN0/4, Log-RAID0/4 and RAID5 with each member a cluster
    /// behind the 4x16 fabric, random writes and a 50/50 mix, FIMMs programming in place or
    /// collecting garbage: throughput, latency, link vs storage contention.
    TripleAArrays,
    /// Apas Fig. 3: mean response time per period, Apas against HWSR, on the stand-in traces.
    ApasFig3,
    /// Apas Fig. 4: read response time per period, Apas against HWSR.
    ApasFig4,
    /// Apas Fig. 5: write response time per period, Apas against HWSR.
    ApasFig5,
    /// Apas beyond the paper: cache size (5/10/20 % of the footprint) and band size (8/32/128 MiB, stripe chunk fixed) swept.
    ApasSweep,
    /// Apas: the causes apas-sweep left open, by experiment (msr-win on 8 disks, the greedy
    /// cleaner's extra cleanings on TPC-C with 8 MiB bands, what the read gains are made of).
    ApasWhy,
    /// Zoned SSDs (issue 48): SWAN and Log-RAID over zn540 and pm1731a (one zone and eight
    /// zones a segment) beside the same schemes and RAID5 over the 850 PRO model, one
    /// workload, three seeds.
    Zoned,
    /// ZapRAID's Zone Append against Zone Write: Log-RAID5 (3+1) over four zn540s, 4 KiB
    /// random writes before GC, by each primitive, three seeds.
    Zapraid,
}

#[derive(clap::Args, Debug)]
pub struct ReproArgs {
    /// Which figure.
    #[arg(value_enum)]
    pub experiment: Experiment,
    /// Capacity of each modelled SSD in GiB (quick default: 0.5; the paper: 120 GB; Harmonia:
    /// its Table IX SSD at full size, 27.2 GiB user).
    #[arg(long)]
    pub ssd_gib: Option<f64>,
    /// User bytes written, in multiples of the array's capacity (default 10; the paper ≈ 12).
    #[arg(long)]
    pub footprint: Option<f64>,
    /// A larger scale: 4 GiB SSDs and a footprint of 12× capacity (fig5 takes about two
    /// minutes on two cores; the checked-in reference outputs use the quick default).
    /// Harmonia: 1,800 instead of 600 simulated seconds per run.
    #[arg(long)]
    pub full: bool,
    /// The seed that drives every random choice of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run every cell with this many seeds, from --seed up, and report the mean and spread
    /// (default: 3 for the Harmonia, Triple-A, Apas, ssd-spread and read-rules reproductions, whose cells
    /// move between seeds; 1 for the others).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Output directory (one run directory per scheme and a figures/ directory inside).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Figure format: svg or png.
    #[arg(long, default_value = "svg")]
    pub format: Format,
    /// Runs at a time (default: up to two, one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
    /// SWAN reproductions: SSD-to-SSD variation in GC state. SSD i of n is aged
    /// 0.6 × (1 − SPREAD·i/n) instead of all to 0.6, so the SSDs of a striped log do not
    /// reach their GC thresholds in lockstep (0, the default: identical SSDs).
    #[arg(long, default_value_t = 0.0)]
    pub age_spread: f64,
    /// SWAN's fig5, fig4b and ycsb: the host a request's path crosses. `paper` (the
    /// default): the paper's own host, chosen on its Fig. 1 (one fio thread at 7.3 µs a
    /// request, so Log-RAID0 on 8 SSDs writes at most 1.12 GB/s); `none`: no host, requests
    /// reach the array the moment they are sent; or a host model file (`swan host fit`,
    /// docs/host-model.md).
    #[arg(long, value_name = "paper|none|FILE")]
    pub host: Option<String>,
    /// SWAN's ycsb: every SSD's `swan sim --ssd-suspension` (a sensitivity of the SSD model;
    /// default: the preset's).
    #[arg(long, value_name = "MODE", value_parser = checked::<swan_models::ssd::Suspension>)]
    pub ssd_suspension: Option<String>,
    /// SWAN's ycsb: every SSD's `swan sim --ssd-write-buffer` (default: the preset's, none).
    #[arg(long, value_name = "SIZE", value_parser = checked_size)]
    pub ssd_write_buffer: Option<String>,
    /// SWAN's ycsb: every SSD's `swan sim --ssd-reads-first` (default: the preset's, on).
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub ssd_reads_first: Option<String>,
}

/// `s` itself, once it parses as a `T`: the flag is passed on to `swan sim` as given.
fn checked<T: std::str::FromStr<Err = String>>(s: &str) -> Result<String, String> {
    s.parse::<T>().map(|_| s.to_string())
}

fn checked_size(s: &str) -> Result<String, String> {
    swan_args::units::parse_size(s).map(|_| s.to_string())
}

impl ReproArgs {
    pub fn default_job() -> Self {
        Self {
            experiment: Experiment::Fig5,
            ssd_gib: None,
            footprint: None,
            full: false,
            seed: 1,
            seeds: None,
            out: None,
            format: Format::Svg,
            jobs: None,
            quiet: false,
            age_spread: 0.0,
            host: None,
            ssd_suspension: None,
            ssd_write_buffer: None,
            ssd_reads_first: None,
        }
    }

    /// The host model of SWAN's fig5, fig4b and ycsb: the paper's unless `--host` says.
    pub fn host_model(&self) -> anyhow::Result<Option<swan_models::host::HostModel>> {
        match self.host.as_deref() {
            None => Ok(Some(swan_models::host::HostModel::paper())),
            Some("none") => Ok(None),
            Some(other) => crate::sim_cmd::read_host_model(std::path::Path::new(other)).map(Some),
        }
    }

    /// How [`ReproArgs::host_model`]'s host is named in a reproduction's header.
    pub fn host_label(&self) -> String {
        match self.host.as_deref() {
            None => "the paper's host (Fig. 1)".into(),
            Some("none") => "no host".into(),
            Some(other) => format!("host model {other}"),
        }
    }

    pub fn scale(&self) -> Scale {
        let base = if self.full { Scale::FULL } else { Scale::QUICK };
        Scale { ssd_gib: self.ssd_gib.unwrap_or(base.ssd_gib), footprint: self.footprint.unwrap_or(base.footprint) }
    }
}
