//! Opening the store for a command: a store written by an earlier memctl is migrated, a
//! forget cut short is finished, and a reading command never creates a data dir.

use anyhow::{Context, Result, bail};
use memctl_engine::{Engine, EngineOptions, MigrateReport};

/// How long a CLI command waits for the store's write lock: a person (or a background ingest)
/// can wait for hooks and other ingests to commit; a hook's 2 s would fail `memctl ingest`
/// whenever sessions are busy (seen: 3 of 4 concurrent ingests failed).
const CLI_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The data dir a reading command needs: a mistyped `--data-dir` is an error naming the path,
/// never a new empty data dir created there (writing commands and hooks create theirs).
pub fn existing_data_dir(opts: &EngineOptions) -> Result<()> {
    if opts.data_dir.is_dir() {
        return Ok(());
    }
    bail!(
        "the data dir {} does not exist (check --data-dir / MEMCTL_HOME; `memctl ingest` or \
         the first hook creates it)",
        opts.data_dir.display()
    )
}

/// [`open`] for commands that only read (or remove): the data dir must exist already.
pub fn open_existing(opts: EngineOptions) -> Result<Engine> {
    existing_data_dir(&opts)?;
    open(opts)
}

/// [`open_existing`] for a command that never writes the store (`status`): read-only, so the
/// open and close write nothing durable, unless a read-only open cannot serve (no store file
/// yet, a store to migrate or repair, a forget to finish), which gets the full [`open`].
pub fn open_for_reading(opts: EngineOptions) -> Result<Engine> {
    existing_data_dir(&opts)?;
    match Engine::open_read_only(opts.clone()) {
        Ok(engine) if !engine.forget_pending().unwrap_or(true) => {
            // Only the leftovers of dead processes: a read-only store finishes no forget.
            report_interrupted(&engine);
            return Ok(engine);
        }
        Ok(_) => {}
        Err(e) => tracing::debug!(error = %e, "no read-only open; opening read-write"),
    }
    open(opts)
}

/// Open the engine for a command. A store written by an earlier memctl is migrated first
/// (the old file is kept; one line on stderr says where): a person who upgraded memctl and
/// runs `memctl search` wants an answer, not homework.
pub fn open(opts: EngineOptions) -> Result<Engine> {
    let path = opts.store_path();
    let (mut engine, migrated) = Engine::open_migrating(opts)
        .with_context(|| format!("opening the store at {}", path.display()))?;
    if let Some(rep) = migrated {
        eprintln!("memctl: {}", describe(&rep));
    }
    engine.set_write_timeout(CLI_WRITE_TIMEOUT);
    report_interrupted(&engine);
    Ok(engine)
}

/// A forget killed before its rewrite left forgotten bytes on disk: finished here, said on
/// stderr. A failure does not stop the command; it is said, and the next one retries.
fn report_interrupted(engine: &Engine) {
    match engine.finish_interrupted() {
        Ok(done) => {
            let mut err = std::io::stderr().lock();
            if let Err(e) = crate::forget::print_interrupted(&done, &mut err) {
                tracing::warn!(error = %e, "could not report the finished forget on stderr");
            }
        }
        Err(e) => eprintln!(
            "memctl: warning: an earlier forget did not finish and could not be finished now \
             (its text may still be on disk; the next command retries): {e:#}"
        ),
    }
}

/// One line about a migration that ran.
pub fn describe(rep: &MigrateReport) -> String {
    format!(
        "migrated the store from schema {} to {} in {} ms ({} rows, {} rewritten); the old file is \
         kept at {} (delete it once you no longer need to go back to an earlier memctl)",
        rep.from,
        rep.to,
        rep.millis,
        rep.rows,
        rep.rows_changed,
        rep.backup
            .as_deref()
            .map_or_else(|| "-".into(), |p| p.display().to_string())
    )
}
