//! `swan report`: the papers' figures drawn from run directories `swan sim` wrote.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Run directories (each holding summary.json and timeseries.csv).
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Where to write the figures.
    #[arg(long, default_value = "out/report")]
    pub out: PathBuf,
    /// svg or png.
    #[arg(long, default_value = "svg")]
    pub format: swan_sim::report::Format,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    let opts = swan_sim::report::ReportOptions { out_dir: args.out.clone(), format: args.format };
    let written = swan_sim::report::draw(&args.runs, &opts)?;
    if written.is_empty() {
        anyhow::bail!("none of the runs has data for any figure");
    }
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(())
}
