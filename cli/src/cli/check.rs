//! `memctl check`: redb's integrity check and memctl's cross-table rules over the store
//! ([`memctl_engine::check_store`]), then the service's saved vector index against the store
//! ([`memctl_ann::check_index`]); one line per broken rule, exit 1 when any is broken.

use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_ann::{GraphState, IndexCheck, check_index};
use memctl_engine::{CheckReport, EngineOptions, Integrity, ann_dir, check_store};
use serde::Serialize;
use std::io::Write;

/// Arguments of `memctl check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print the report as JSON (the exit code still says whether a rule is broken).
    #[arg(long)]
    pub json: bool,
}

/// The JSON of `memctl check --json`: the store's report, and the index's when one is saved.
#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    store: CheckReport,
    index: Option<IndexCheck>,
}

pub(super) fn check(opts: &EngineOptions, a: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let store = &opts.store_path();
    let report = check_store(store)?;
    let index = index(opts, &report)?;
    if a.json {
        let r = Report {
            store: report,
            index,
        };
        serde_json::to_writer_pretty(&mut *out, &r)?;
        writeln!(out)?;
        return verdict(store, &r.store, r.index.as_ref());
    }
    print(&report, out)?;
    if let Some(ix) = &index {
        print_index(ix, out)?;
    }
    if report.is_consistent() && index.as_ref().is_none_or(|i| i.violations.is_empty()) {
        writeln!(out, "ok:         every rule holds")?;
    }
    verdict(store, &report, index.as_ref())
}

/// The saved vector index checked against the store, when there is one and the store itself
/// is sound (a broken or old store is fixed first).
fn index(opts: &EngineOptions, report: &CheckReport) -> Result<Option<IndexCheck>> {
    let dir = ann_dir(&opts.data_dir);
    if !report.is_consistent() || !dir.is_dir() {
        return Ok(None);
    }
    let engine = crate::open::open_for_reading(opts.clone())?;
    let space = opts.onnx.embedder_id();
    let ix = check_index(&dir, &engine, &space)
        .with_context(|| format!("checking the vector index in {}", dir.display()))?;
    Ok(Some(ix))
}

fn print_index(ix: &IndexCheck, out: &mut dyn Write) -> Result<()> {
    for g in &ix.graphs {
        let state = match g.state {
            GraphState::Current => "matches the store",
            GraphState::Stale => "stale (older blocks or another model: the service re-reads it)",
            GraphState::Broken => "broken",
            _ => "unknown",
        };
        writeln!(
            out,
            "index:      project {}: {} points, {} tombstones, {} entries behind: {state}",
            g.project, g.points, g.tombstones, g.behind
        )?;
    }
    for v in &ix.violations {
        writeln!(out, "violation:  {v}")?;
    }
    Ok(())
}

fn verdict(store: &std::path::Path, report: &CheckReport, ix: Option<&IndexCheck>) -> Result<()> {
    let n = report.violations.len() as u64
        + report.not_listed
        + ix.map_or(0, |i| i.violations.len() as u64);
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
    Ok(())
}
