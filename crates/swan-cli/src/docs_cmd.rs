//! `swan completions` and `swan man`: shell completions and manual pages, generated from
//! the same clap definitions that parse the command line, so they never drift from it.

use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    swan completions bash > /etc/bash_completion.d/swan\n  \
    swan completions zsh > \"${fpath[1]}/_swan\"\n  \
    swan completions fish > ~/.config/fish/completions/swan.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  swan man --out /usr/local/share/man/man1 && man swan-serve")]
pub struct ManArgs {
    /// Write swan.1 and one page per command (swan-serve.1, ...) into this directory
    /// (created if missing). Without it, swan.1 goes to standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    clap_complete::generate(args.shell, &mut cmd, "swan", &mut std::io::stdout());
    Ok(())
}

pub fn man(args: &ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    let Some(dir) = &args.out else {
        clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = 0;
    write_page(dir, &cmd, "swan", "swan", &mut written)?;
    eprintln!("swan: {written} manual pages written to {}", dir.display());
    Ok(())
}

/// The page of `cmd` as `name.1`, then its subcommands' as `name-sub.1`, recursively;
/// `invoked` is how it is typed (`swan serve`), for the synopsis.
fn write_page(
    dir: &std::path::Path,
    cmd: &clap::Command,
    name: &str,
    invoked: &str,
    written: &mut usize,
) -> anyhow::Result<()> {
    let page = cmd.clone().name(name.to_string()).bin_name(invoked.to_string());
    let path = dir.join(format!("{name}.1"));
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    *written += 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let sub_name = sub.get_name();
        write_page(dir, sub, &format!("{name}-{sub_name}"), &format!("{invoked} {sub_name}"), written)?;
    }
    Ok(())
}
