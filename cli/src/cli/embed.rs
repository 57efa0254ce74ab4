//! `memctl embed-pending` and `memctl embedder`: model embedding outside the hooks' hot path.
//! `memctl embedder` is the resident service of a data dir (see [`memctl_engine::resident`]);
//! `memctl embed-pending` is the user's foreground run.

use super::open;
use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_engine::{EngineOptions, Settings};
use std::io::Write;
use std::sync::Arc;

/// `memctl embed-pending`.
#[derive(Debug, Args)]
pub struct EmbedPendingArgs {
    /// Stop after this many chunks.
    #[arg(long, default_value_t = 100_000)]
    pub limit: usize,
    /// Print one JSON object: chunks, seconds, threads, and what the model computed (texts,
    /// tokens, padded cells, padding fraction), for benchmarks and scripts.
    #[arg(long)]
    pub json: bool,
}

/// `memctl embedder`.
#[derive(Debug, Args)]
pub struct EmbedderArgs {
    /// Run as started by a hook: log to the data dir's log file instead of stderr.
    #[arg(long)]
    pub background: bool,
}

pub(super) fn embed_pending(
    opts: EngineOptions,
    a: EmbedPendingArgs,
    out: &mut dyn Write,
) -> Result<()> {
    memctl_engine::ensure_private_dir(&opts.data_dir)?;
    let Some(_lock) = memctl_hooks::background::embed_lock(&opts.data_dir)? else {
        // The resident service's bulk thread (or another `embed-pending`) is at it.
        if let Err(e) = memctl_engine::notify_pending(&opts.data_dir) {
            tracing::debug!(error = %e, "no resident service to tell about pending chunks");
        }
        writeln!(out, "another embedder is running")?;
        return Ok(());
    };
    let threads = opts.onnx.intra_threads;
    let engine = open(opts)?;
    let started = std::time::Instant::now();
    let n = engine.embed_pending(a.limit)?;
    let seconds = started.elapsed().as_secs_f64();
    tracing::info!(chunks = n, seconds, threads, "embedded pending chunks");
    if a.json {
        let model = engine.loaded_model();
        let stats = model.as_ref().map(|m| m.stats()).unwrap_or_default();
        let load = model.as_ref().map(|m| m.info().load_seconds);
        let report = serde_json::json!({
            "chunks": n,
            "seconds": seconds,
            "threads": threads,
            "model_load_seconds": load,
            "texts": stats.texts,
            "batches": stats.batches,
            "tokens": stats.tokens,
            "cells": stats.cells,
            "padding_fraction": stats.padding_fraction(),
        });
        writeln!(out, "{report}")?;
    } else {
        writeln!(out, "embedded {n} chunks")?;
    }
    Ok(())
}

/// `memctl embedder`: serve until idle (the process exits from the server's watchdog), with
/// the bulk thread embedding pending chunks unless `MEMCTL_BACKGROUND_EMBED` is off.
pub(super) fn embedder(opts: &EngineOptions, s: &Settings, out: &mut dyn Write) -> Result<()> {
    if opts.model_disabled {
        bail!("the resident embedder needs the model (MEMCTL_EMBEDDER=hash is set)");
    }
    let bulk = s
        .embed
        .background
        .then(|| crate::background::bulk_embedder(opts.clone().for_background(s)));
    let index = vector_index(opts)?;
    match memctl_engine::serve_resident(&opts.data_dir, &opts.onnx, &s.resident, bulk, index)
        .context("resident embedder")?
    {
        memctl_engine::ServeEnd::AlreadyRunning => {
            writeln!(out, "a resident embedder already runs for this data dir")?;
        }
        other => writeln!(out, "resident embedder ended: {other:?}")?,
    }
    Ok(())
}

/// The service's vector index ([`memctl_ann`]) unless `MEMCTL_ANN=0`. `MEMCTL_ANN_MIN`: the
/// number of vectors from which a project is searched through its graph (below it the
/// caller's exact scan is as fast); `MEMCTL_ANN_SAVE_SECS`: how long a graph stays unchanged
/// before it is saved (defaults: [`memctl_ann::AnnConfig::default`]).
fn vector_index(opts: &EngineOptions) -> Result<Option<Arc<dyn memctl_engine::DenseService>>> {
    if std::env::var("MEMCTL_ANN").is_ok_and(|v| v == "0" || v == "off") {
        return Ok(None);
    }
    let mut cfg = memctl_ann::AnnConfig::default();
    if let Ok(v) = std::env::var("MEMCTL_ANN_MIN") {
        cfg.min_vectors = v
            .parse()
            .with_context(|| format!("MEMCTL_ANN_MIN={v:?} is not a number of vectors"))?;
    }
    if let Ok(v) = std::env::var("MEMCTL_ANN_SAVE_SECS") {
        let secs: u64 = v
            .parse()
            .with_context(|| format!("MEMCTL_ANN_SAVE_SECS={v:?} is not a number of seconds"))?;
        cfg.save_after = std::time::Duration::from_secs(secs);
    }
    let svc = memctl_ann::AnnService::new(opts.clone(), opts.onnx.embedder_id(), cfg);
    Ok(Some(Arc::new(svc)))
}
