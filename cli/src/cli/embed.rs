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
    let index = vector_index(opts, s);
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

/// The service's vector index ([`memctl_ann`]) as the settings ask (`MEMCTL_ANN*`).
fn vector_index(
    opts: &EngineOptions,
    s: &Settings,
) -> Option<Arc<dyn memctl_engine::DenseService>> {
    if !s.index.enabled {
        return None;
    }
    let cfg = memctl_ann::AnnConfig {
        min_vectors: s.index.min_vectors,
        save_after: s.index.save_after,
        freeze: memctl_ann::FreezePolicy {
            min_points: s.index.freeze_min,
            ..memctl_ann::FreezePolicy::default()
        },
        ..memctl_ann::AnnConfig::default()
    };
    let svc = memctl_ann::AnnService::new(opts.clone(), opts.onnx.embedder_id(), cfg);
    Some(Arc::new(svc))
}
