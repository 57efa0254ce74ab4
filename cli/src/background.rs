//! The detached work of the `memctl` binary: the deferred archive that UserPromptSubmit starts
//! when it needs no store itself (`memctl ingest --background`,
//! [`memctl_engine::handle_event_without_store`]) and the resident service's bulk thread,
//! which embeds the chunks archived with hash vectors only ([`bulk_embedder`]).
//!
//! One archiver per transcript at a time ([`memctl_engine::Job`]): a second one,
//! started while the first runs, leaves a request for it and ends at once; the first archives
//! again for every request it finds, so a burst of prompts costs one process and nothing it
//! asked for is left out. The archiver never loads the model: it stores hash vectors and
//! hands the chunks to the resident service (one per data dir, which holds the model anyway).
//! Every failure is logged; the transcript stays the source of truth and the next hook that
//! archives picks up whatever was left.

use anyhow::Result;
use memctl_engine::{Bulk, BulkWork, Engine, EngineOptions, IngestOptions, Job, Settings};
use memctl_hooks::background::embed_lock;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// New transcript bytes per commit (hooks of running sessions get the store between passes).
const COMMIT_BYTES: u64 = 1 << 20;

/// How long the bulk thread keeps its store handle and model after the last pending chunk,
/// watching for more. Why: a burst of prompts each leaves a few chunks pending; dropping the
/// model at once would load it again (210–250 ms of CPU) for the next prompt's chunks.
/// Dropping it afterwards gives its memory back while the service only answers queries.
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// How often the bulk thread looks for pending chunks while it keeps its model (one read
/// transaction), besides being woken by an archiver or a hook.
const POLL: Duration = Duration::from_millis(500);

/// How often an idle bulk thread looks for pending chunks unwoken (a hook whose wake-up was
/// lost, chunks left by a killed service).
const IDLE_LOOK: Duration = Duration::from_secs(60);

/// How soon the bulk thread looks again when it found the embed lock taken.
const LOCK_RETRY: Duration = Duration::from_secs(1);

/// Chunks per bulk batch (one store read, one inference, one commit, one progress record).
/// Why small: the service starts no batch while a query is answered, so a prompt waits at
/// most for one batch's CPU share; 8 chunks are well under a second on one thread.
const BATCH: usize = 8;

/// `memctl ingest --background <paths>`: archive each transcript whose job this process gets
/// (one that is running already serves the request left here), then, unless `no_embed`, have
/// the resident service embed the new chunks, then sync to the team store. Ends at once,
/// opening no store, when every transcript is left to a running archiver.
pub fn ingest(opts: EngineOptions, s: &Settings, paths: &[PathBuf], no_embed: bool) -> Result<()> {
    let mut mine = Vec::new();
    for t in paths {
        match Job::start(&opts.data_dir, memctl_engine::JOB_INGEST, t)? {
            Some(job) => mine.push((t.as_path(), job)),
            None => tracing::debug!(
                pid = std::process::id(),
                transcript = %t.display(),
                "an archiver of this transcript runs; left the request to it"
            ),
        }
    }
    if mine.is_empty() {
        return Ok(());
    }
    // A failed open drops the jobs unrun: their requests stay for the next archiver.
    let engine = crate::open::open(opts)?;
    let pending = archive(&engine, mine);
    if !no_embed && pending > 0 {
        wake_service(engine.data_dir());
    }
    crate::team::background(&engine, s, false)
}

/// Archive each transcript of `mine` (its job held) with hash vectors only; returns the
/// chunks left pending a model vector.
fn archive(engine: &Engine, mine: Vec<(&Path, Job)>) -> u64 {
    memctl_engine::lower_priority();
    let opts = IngestOptions {
        embed_with_model: false,
        commit_bytes: Some(COMMIT_BYTES),
        ..Default::default()
    };
    let mut pending = 0;
    for (t, job) in mine {
        let passes = job.run(|| match engine.ingest_transcript(t, &opts) {
            Ok(r) => {
                pending += r.pending;
                // A prompt's archive may be the first to see a compaction no session start
                // announced (Gemini CLI's): the next prompt must recall.
                memctl_engine::note_compactions(engine, &r);
                tracing::debug!(
                    transcript = %t.display(),
                    turns = r.turns,
                    pending = r.pending,
                    "deferred archive done"
                )
            }
            Err(e) => {
                tracing::warn!(transcript = %t.display(), error = %e, "deferred archive failed")
            }
        });
        tracing::debug!(transcript = %t.display(), passes, "deferred archiver done");
    }
    pending
}

/// Have the resident service of `data_dir` embed pending chunks: tell a running one, else
/// start one (`memctl embedder --background`, which exits at once if one is starting). Only
/// from the `memctl` binary itself (a test harness calling the CLI in-process is not).
pub fn wake_service(data_dir: &Path) {
    let Some(me) = std::env::current_exe()
        .ok()
        .filter(|p| p.file_stem().is_some_and(|n| n == "memctl"))
    else {
        return;
    };
    memctl_hooks::background::wake_service(&me, data_dir);
}

/// The resident service's bulk work for `opts` (the options of a background embedder).
pub fn bulk_embedder(opts: EngineOptions) -> BulkWork {
    Box::new(move |signals| bulk_loop(&opts, &signals))
}

/// The bulk thread: lowest priority first (its model's threads, created later, inherit it),
/// then a burst of embedding whenever woken or every [`IDLE_LOOK`]. A foreground `memctl
/// embed-pending` holding the embed lock is left to it. Runs until the process exits.
fn bulk_loop(opts: &EngineOptions, signals: &Bulk) {
    memctl_engine::lower_priority();
    // The first look is at once: the service may have been started for pending chunks.
    let mut woken = true;
    loop {
        if !woken {
            signals.wait_for_wake(IDLE_LOOK);
        }
        woken = false;
        // No store, nothing pending; and opening one would create it (and its data dir, if
        // that was deleted under the service).
        if !opts.store_path().is_file() {
            continue;
        }
        match embed_lock(&opts.data_dir) {
            Ok(Some(_lock)) => match burst(opts, signals) {
                Ok(0) => {}
                Ok(n) => tracing::info!(chunks = n, "resident service: burst of embedding done"),
                Err(e) => tracing::warn!(error = %format!("{e:#}"), "pending chunks not embedded"),
            },
            Ok(None) => {
                // A foreground `embed-pending`, or `memctl status` testing the lock for a
                // moment: look again shortly rather than at the next wake-up.
                tracing::debug!("another embedder holds the embed lock");
                std::thread::sleep(LOCK_RETRY);
                woken = true;
            }
            Err(e) => tracing::warn!(error = %format!("{e:#}"), "embed lock unavailable"),
        }
    }
}

/// One burst (the caller holds the embed lock): open the store, embed [`BATCH`] chunks at a
/// time, never beside a query being answered, until nothing was pending for [`KEEP_ALIVE`].
/// The model loads at the first pending chunk and is dropped with the engine at the end.
/// Progress goes to the data dir's progress record after every batch
/// ([`memctl_hooks::progress`], shown by `memctl status`). Returns the chunks embedded.
fn burst(opts: &EngineOptions, signals: &Bulk) -> Result<usize> {
    let mut engine = Engine::open(opts.clone())?;
    engine.set_write_timeout(Duration::from_secs(10));
    let mut done = 0;
    let mut idle_since = Instant::now();
    let mut progress = None;
    loop {
        signals.yield_to_queries();
        let round = Instant::now();
        let n = {
            let _batch = signals.batch_started();
            engine.embed_pending(BATCH)?
        };
        if n == 0 {
            if idle_since.elapsed() >= KEEP_ALIVE {
                return Ok(done);
            }
            signals.wait_for_wake(POLL);
            continue;
        }
        done += n;
        idle_since = Instant::now();
        signals.touch();
        let p = progress.get_or_insert_with(|| {
            memctl_hooks::progress::Progress::start(opts.onnx.intra_threads)
        });
        p.embedded = done as u64;
        p.busy_seconds += round.elapsed().as_secs_f64();
        p.updated_at = memctl_engine::unix_now();
        memctl_hooks::progress::write(engine.data_dir(), p);
        tracing::debug!(chunks = n, "embedded pending chunks");
    }
}
