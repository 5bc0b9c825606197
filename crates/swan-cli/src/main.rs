//! `swan`: a flash-array storage engine and laboratory.
//!
//! With no arguments, runs the default job: a reduced-scale reproduction of the SWAN
//! paper's Fig. 5 (RAID0, Log-RAID0 and SWAN0 on 8 modelled SSDs), prints the comparison
//! and writes the figures.

use swan_cli::{alloc, docs_cmd, serve_cmd, server_cmd, zones_cmd};
#[cfg(feature = "lab")]
use swan_lab::{apas_cmd, claims_cmd, host_cmd, plan, replay_cmd, report_cmd, repro, sim_cmd, triple_a_cmd, verify};

#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::Allocator;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "swan",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SWAN_COMMIT"), ")"),
    about = "A flash-array storage engine and laboratory: SWAN, Log-RAID and in-place RAID over modelled SSDs",
    long_about = "A flash-array storage engine and laboratory.\n\n\
        With no command, runs the default job: a reduced-scale reproduction of the SWAN paper's \
        Fig. 5 (RAID0, Log-RAID0 and SWAN0 on 8 modelled SATA SSDs under 8 KiB random writes), \
        prints the comparison table and writes the figures under ./out/fig5."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    #[cfg(feature = "lab")]
    /// Simulate one array under one workload in virtual time.
    Sim(Box<sim_cmd::SimArgs>),
    #[cfg(feature = "lab")]
    /// Reproduce a figure of the SWAN paper (several runs, a table and pictures).
    Repro(repro::args::ReproArgs),
    #[cfg(feature = "lab")]
    /// Draw the paper's figures from run directories written by `swan sim`.
    Report(report_cmd::ReportArgs),
    #[cfg(feature = "lab")]
    /// SWAN's analytic model (§3.5, Eq. 1): how many SSDs per R-group and how many R-groups.
    Plan(plan::PlanArgs),
    #[cfg(feature = "lab")]
    /// The papers' claims judged on the reproductions' reference measures: the tables of README.md and repro/README.md.
    Claims(claims_cmd::ClaimsArgs),
    #[cfg(feature = "lab")]
    /// Measure the simulator's speed: simulated user requests per wall-clock second.
    Bench(repro::BenchArgs),
    #[cfg(feature = "lab")]
    /// This machine's host model for `swan sim --host`: fitted to what a server measured.
    Host(host_cmd::HostArgs),
    /// Make a real array over member files or block devices.
    Create(server_cmd::CreateArgs),
    /// Serve a real array over NBD (recovering it first).
    Serve(server_cmd::ServeArgs),
    /// Show a running server's state: R-group roles, free segments, per-member traffic.
    Status(server_cmd::StatusArgs),
    /// Check an array offline: map, summaries, parity.
    Check(server_cmd::CheckArgs),
    /// Verify every live block against its CRC, offline; repair from parity what it can.
    Scrub(server_cmd::ScrubArgs),
    /// Take a member of a running array out of service (as if it had failed).
    Fail(server_cmd::FailArgs),
    /// Rebuild a failed member onto a new file or device while the array serves.
    Replace(server_cmd::ReplaceArgs),
    /// Rewrite one member's damaged superblock from its peers', offline (RAID0's only way back).
    RepairSuperblock(server_cmd::RepairSuperblockArgs),
    /// Report a zoned member's zones: condition and write pointer of each.
    Zones(zones_cmd::ZonesArgs),
    #[cfg(feature = "lab")]
    /// Replay a block trace against an NBD server (swan serve, or any other).
    Replay(Box<replay_cmd::ReplayArgs>),
    #[cfg(feature = "lab")]
    /// Triple-A's micro-benchmark or a block trace on a modelled PCIe flash-array network.
    TripleA(triple_a_cmd::TripleAArgs),
    #[cfg(feature = "lab")]
    /// Apas (an SSD cache over shingled disks) and the HWSR baseline on a block trace, per period.
    Apas(apas_cmd::ApasArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs_cmd::CompletionsArgs),
    /// Write the manual pages (swan.1, swan-serve.1, ...), generated from this help.
    Man(docs_cmd::ManArgs),
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    alloc::tune();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Create(args)) => server_cmd::create(&args),
        Some(Command::Serve(args)) => serve_cmd::serve(&args),
        Some(Command::Status(args)) => server_cmd::status(&args),
        Some(Command::Check(args)) => server_cmd::check(&args),
        Some(Command::Scrub(args)) => server_cmd::scrub(&args),
        Some(Command::Fail(args)) => server_cmd::fail(&args),
        Some(Command::Replace(args)) => server_cmd::replace(&args),
        Some(Command::RepairSuperblock(args)) => server_cmd::repair_superblock(&args),
        Some(Command::Zones(args)) => zones_cmd::zones(&args),
        Some(Command::Completions(args)) => docs_cmd::completions(&args, Cli::command()),
        Some(Command::Man(args)) => docs_cmd::man(&args, Cli::command()),
        #[cfg(feature = "lab")]
        lab => run_lab(lab),
        #[cfg(not(feature = "lab"))]
        None => {
            Cli::command().print_help().ok();
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("swan: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The laboratory's commands, and the default job (no command: `swan repro fig5`).
#[cfg(feature = "lab")]
fn run_lab(command: Option<Command>) -> anyhow::Result<()> {
    // The simulator's maps are large and touched at random: huge pages spare it TLB misses.
    alloc::huge_pages();
    match command {
        None => repro::run(&repro::args::ReproArgs::default_job()),
        Some(Command::Sim(args)) => sim_cmd::run(&args),
        Some(Command::Repro(args)) => repro::run(&args),
        Some(Command::Report(args)) => report_cmd::run(&args),
        Some(Command::Plan(args)) => plan::run(&args).and_then(|p| {
            if args.verify {
                let paper = args.inputs() == swan_core::analytic::PlanInputs::PAPER;
                verify::verify(&p, std::path::Path::new("out/plan-verify"), false, paper)
            } else {
                Ok(())
            }
        }),
        Some(Command::Bench(args)) => repro::bench(&args),
        Some(Command::Claims(args)) => claims_cmd::run(&args),
        Some(Command::Host(args)) => host_cmd::run(&args),
        Some(Command::Replay(args)) => replay_cmd::run(&args),
        Some(Command::TripleA(args)) => triple_a_cmd::run(&args),
        Some(Command::Apas(args)) => apas_cmd::run(&args),
        Some(_) => unreachable!("the server's commands are matched in main"),
    }
}

/// `swan plan | head` closes stdout early. Rust ignores SIGPIPE, so the next `println!`
/// panics ("failed printing to stdout: Broken pipe"); end quietly instead, with the status a
/// shell gives a process killed by SIGPIPE (128 + 13). Every other panic is reported as usual.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg =
            payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied());
        if msg.is_some_and(|m| m.starts_with("failed printing to stdout") && m.contains("os error 32")) {
            std::process::exit(141);
        }
        default(info);
    }));
}
