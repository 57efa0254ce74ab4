//! `memctl install` / `uninstall`: add or remove memctl's hooks in Claude Code's settings.

use anyhow::{Result, bail};
use clap::Args;
use memctl_engine::Settings;
use std::io::Write;

/// `memctl install` / `uninstall`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// This project's `.claude/settings.json` (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's `~/.claude/settings.json`.
    #[arg(long)]
    pub user: bool,
    /// Print the resulting settings instead of writing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Also add (uninstall: remove) the memory protocol block in ./CLAUDE.md.
    #[arg(long)]
    pub claude_md: bool,
}

pub(super) fn install(a: InstallArgs, add: bool, s: &Settings, out: &mut dyn Write) -> Result<()> {
    use crate::install;
    if a.claude_md {
        crate::lifecycle::claude_md(add, a.dry_run, out)?;
    }
    let path = install::settings_path(a.user, s.home_dir.as_deref())?;
    let (text, changed) = if add {
        let bin = install::hook_binary()?;
        if !bin.is_file() {
            bail!(
                "{} not found: build it first (cargo build --release)",
                bin.display()
            );
        }
        install::merged(&path, &bin)?
    } else {
        install::removed(&path)?
    };
    if a.dry_run {
        write!(out, "{text}")?;
        return Ok(());
    }
    if !changed {
        writeln!(
            out,
            "{}: already {}",
            path.display(),
            if add { "installed" } else { "clean" }
        )?;
        return Ok(());
    }
    install::write_atomic(&path, &text)?;
    writeln!(
        out,
        "{} {}: {}",
        if add {
            "installed hooks in"
        } else {
            "removed hooks from"
        },
        path.display(),
        memctl_engine::hooks::HookEventName::ALL
            .map(|e| e.as_str())
            .join(", ")
    )?;
    Ok(())
}
