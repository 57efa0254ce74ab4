//! `memctl migrate` and `memctl backup`: carrying a store written by an earlier memctl
//! forward, and consistent copies while hooks keep writing ([`memctl_engine::Engine::migrate`]).

use crate::open::describe;
use anyhow::{Context, Result};
use clap::Args;
use memctl_engine::{Engine, EngineOptions};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `memctl migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Started by a hook: log to the data dir instead of the terminal.
    #[arg(long, hide = true)]
    pub background: bool,
}

/// Arguments of `memctl backup`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The backup file to write (must not exist). Default:
    /// `<data dir>/backups/memctl-backup-<UTC time>.redb`.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn migrate(opts: &EngineOptions, a: &MigrateArgs, out: &mut dyn Write) -> Result<()> {
    if a.background {
        return migrate_in_background(opts);
    }
    let rep = Engine::migrate(opts)
        .with_context(|| format!("migrating the store at {}", opts.store_path().display()))?;
    if a.json {
        serde_json::to_writer_pretty(&mut *out, &rep)?;
        writeln!(out)?;
    } else if rep.from == rep.to {
        writeln!(
            out,
            "the store at {} is current (schema {}): nothing to do",
            opts.store_path().display(),
            rep.to
        )?;
    } else {
        writeln!(out, "{}", describe(&rep))?;
        for s in &rep.steps {
            writeln!(out, "  step: {s}")?;
        }
    }
    Ok(())
}

/// `memctl migrate --background`, the store's upkeep, started by hooks that found an earlier
/// memctl's store or a forget cut short: it migrates the store, then finishes the forget (the
/// open every command does). One process kind for both, one per store at a time
/// ([`memctl_engine::Job`]); one started while another runs ends at once, leaving its request
/// to that one. Failures are logged (the next hook asks again).
fn migrate_in_background(opts: &EngineOptions) -> Result<()> {
    use memctl_engine::{JOB_MIGRATE, Job};
    let Some(job) = Job::start(&opts.data_dir, JOB_MIGRATE, &opts.store_path())? else {
        tracing::debug!("the upkeep of this store runs; left the request to it");
        return Ok(());
    };
    job.run(|| {
        match Engine::migrate(opts) {
            Ok(rep) if rep.from == rep.to => tracing::debug!(schema = rep.to, "store is current"),
            Ok(rep) => tracing::info!("{}", describe(&rep)),
            Err(e) => tracing::warn!(error = %e, "background migration failed"),
        }
        if let Err(e) = crate::open::open(opts.clone()) {
            tracing::warn!(error = %format!("{e:#}"), "background upkeep: the store did not open");
        }
        crate::forget::clear_finish_marker(&opts.data_dir);
    });
    Ok(())
}

pub(super) fn backup(engine: Engine, a: &BackupArgs, out: &mut dyn Write) -> Result<()> {
    let rep = engine.backup(a.out.as_deref())?;
    if a.json {
        serde_json::to_writer_pretty(&mut *out, &rep)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "backup: {} ({} bytes, {} rows, {} ms); it opens like any store (MEMCTL_HOME=<its \
             folder>, named memctl.redb)",
            rep.path.display(),
            rep.bytes,
            rep.rows,
            rep.millis
        )?;
    }
    Ok(())
}
