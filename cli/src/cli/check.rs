//! `memctl check`: redb's integrity check and memctl's cross-table rules over the store
//! ([`memctl_engine::check_store`]); one line per broken rule, exit 1 when any is broken.

use anyhow::{Result, bail};
use clap::Args;
use memctl_engine::{CheckReport, Integrity, check_store};
use std::io::Write;
use std::path::Path;

/// Arguments of `memctl check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print the report as JSON (the exit code still says whether a rule is broken).
    #[arg(long)]
    pub json: bool,
}

pub(super) fn check(store: &Path, a: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let report = check_store(store)?;
    if a.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        print(&report, out)?;
    }
    let n = report.violations.len() as u64 + report.not_listed;
    if n > 0 {
        bail!(
            "the store at {} breaks {n} rule{} (listed above)",
            store.display(),
            if n == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn print(r: &CheckReport, out: &mut dyn Write) -> Result<()> {
    let integrity = match r.integrity {
        Integrity::Clean => "clean",
        Integrity::Repaired => "damage found and repaired by redb",
        Integrity::NotChecked => "not checked (the store is read-only here)",
        _ => "unknown",
    };
    let c = &r.counts;
    writeln!(out, "store:      {}", r.path.display())?;
    writeln!(out, "integrity:  {integrity}")?;
    writeln!(
        out,
        "checked:    {} chunks, {} turn entries, {} sessions, {} postings, {} re-scoring vectors, \
         {} int8 block entries, {} stored tool outputs",
        c.chunks, c.turns, c.sessions, c.postings, c.vectors, c.block_vectors, c.swap_entries
    )?;
    for v in &r.violations {
        writeln!(out, "violation:  {v}")?;
    }
    if r.not_listed > 0 {
        writeln!(out, "violation:  ... and {} more not listed", r.not_listed)?;
    }
    if r.is_consistent() {
        writeln!(out, "ok:         every rule holds")?;
    }
    Ok(())
}
