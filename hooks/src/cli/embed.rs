//! `memctl embed-pending` and `memctl embedder`: model embedding outside the hooks' hot path.

use super::open;
use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_engine::{EngineOptions, Settings};
use std::io::Write;

/// `memctl embed-pending`.
#[derive(Debug, Args)]
pub struct EmbedPendingArgs {
    /// Stop after this many chunks.
    #[arg(long, default_value_t = 100_000)]
    pub limit: usize,
    /// Run as the hooks' background embedder: exit at once when another one holds the lock,
    /// log to the data dir's log file instead of stderr.
    #[arg(long)]
    pub background: bool,
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
    memctl_engine::paths::ensure_private_dir(&opts.data_dir)?;
    let Some(_lock) = crate::background::embed_lock(&opts.data_dir)? else {
        writeln!(out, "another embedder is running")?;
        return Ok(());
    };
    let engine = open(opts)?;
    let n = if a.background {
        memctl_engine::embed::lower_priority();
        crate::background::keep_embedding(&engine, a.limit, crate::background::KEEP_ALIVE)
    } else {
        engine.embed_pending(a.limit)?
    };
    tracing::info!(chunks = n, "embedded pending chunks");
    writeln!(out, "embedded {n} chunks")?;
    Ok(())
}

/// `memctl embedder`: serve until idle (the process exits from the server's watchdog).
pub(super) fn embedder(opts: &EngineOptions, s: &Settings, out: &mut dyn Write) -> Result<()> {
    if opts.model_disabled {
        bail!("the resident embedder needs the model (MEMCTL_EMBEDDER=hash is set)");
    }
    match memctl_engine::resident::serve(&opts.data_dir, &opts.onnx, &s.resident)
        .context("resident embedder")?
    {
        memctl_engine::resident::ServeEnd::AlreadyRunning => {
            writeln!(out, "a resident embedder already runs for this data dir")?;
        }
        other => writeln!(out, "resident embedder ended: {other:?}")?,
    }
    Ok(())
}
