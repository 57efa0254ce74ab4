//! `memctl ingest --background <transcript>`: the deferred archive that UserPromptSubmit starts
//! when it needs no store itself ([`memctl_engine::hooks::handle_without_store`]).
//!
//! One archiver per transcript at a time ([`memctl_engine::hooks::jobs`]): a second one,
//! started while the first runs, leaves a request for it and ends at once; the first archives
//! again for every request it finds, so a burst of prompts costs one process and nothing it
//! asked for is left out. Then the chunks stored without a model vector are embedded (one
//! embedder per data dir, as `memctl embed-pending`). Every failure is logged; the transcript
//! stays the source of truth and the next hook that archives picks up whatever was left.

use anyhow::Result;
use memctl_engine::hooks::jobs::{self, Job};
use memctl_engine::{Engine, EngineOptions, IngestOptions, Settings};
use memctl_hooks::background::embed_lock;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// New transcript bytes per commit (hooks of running sessions get the store between passes).
const COMMIT_BYTES: u64 = 1 << 20;

/// Most chunks embedded by one background run (the rest by the next).
const EMBED_LIMIT: usize = 2_000;

/// How long the background embedder stays up with nothing to do, watching for new pending
/// chunks. Why: a burst of prompts each leaves a few chunks pending; an embedder that exits at
/// once is started again by the next prompt and loads the model again (210–250 ms of CPU
/// each). Staying up a few seconds loads it once per burst.
pub const KEEP_ALIVE: Duration = Duration::from_secs(8);

/// How often an idle background embedder looks for pending chunks (one read transaction).
const POLL: Duration = Duration::from_millis(250);

/// Chunks per round of the background embedder (one store read, one commit, one progress
/// record). Why small: `memctl status` shows progress per round, and each commit hands the
/// store back to the hooks; 64 chunks are a few seconds of embedding.
const ROUND: usize = 64;

/// `memctl ingest --background <paths>`: archive each transcript whose job this process gets
/// (one that is running already serves the request left here), then embed pending chunks
/// unless `no_embed`, then sync to the team store. Ends at once, opening no store, when every
/// transcript is left to a running archiver: that one embeds if it was asked to, and a hook
/// starts `embed-pending` for chunks it left pending itself.
pub fn ingest(opts: EngineOptions, s: &Settings, paths: &[PathBuf], no_embed: bool) -> Result<()> {
    let mut mine = Vec::new();
    for t in paths {
        match Job::start(&opts.data_dir, jobs::INGEST, t)? {
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
    archive(&engine, mine, no_embed)?;
    crate::team::background(&engine, s, false)
}

/// Archive each transcript of `mine` (its job held), then embed pending chunks unless
/// `no_embed`.
fn archive(engine: &Engine, mine: Vec<(&Path, Job)>, no_embed: bool) -> Result<()> {
    memctl_engine::embed::lower_priority();
    let opts = IngestOptions {
        embed_with_model: !no_embed,
        commit_bytes: Some(COMMIT_BYTES),
        ..Default::default()
    };
    for (t, job) in mine {
        let passes = job.run(|| match engine.ingest_transcript(t, &opts) {
            Ok(r) => tracing::debug!(
                transcript = %t.display(),
                turns = r.turns,
                pending = r.pending,
                "deferred archive done"
            ),
            Err(e) => {
                tracing::warn!(transcript = %t.display(), error = %e, "deferred archive failed")
            }
        });
        tracing::debug!(transcript = %t.display(), passes, "deferred archiver done");
    }
    if !no_embed {
        embed_pending(engine)?;
    }
    Ok(())
}

/// Embed pending chunks unless another embedder holds the data dir's embed lock.
fn embed_pending(engine: &Engine) -> Result<()> {
    let Some(_lock) = embed_lock(engine.data_dir())? else {
        return Ok(());
    };
    keep_embedding(engine, EMBED_LIMIT, KEEP_ALIVE);
    Ok(())
}

/// The background embedder's loop (the caller holds the embed lock and has lowered its
/// priority): embed what is pending, then watch for more until `keep_alive` passes with
/// nothing to do or `limit` chunks are done. The model is loaded at the first pending chunk
/// and kept for the whole burst. Progress goes to the data dir's progress record after every
/// round ([`memctl_hooks::progress`], shown by `memctl status`). Returns the chunks embedded.
pub fn keep_embedding(engine: &Engine, limit: usize, keep_alive: Duration) -> usize {
    let mut done = 0;
    let mut idle_since = Instant::now();
    let mut progress = memctl_hooks::progress::Progress::start(engine.options().onnx.intra_threads);
    memctl_hooks::progress::write(engine.data_dir(), &progress);
    while done < limit {
        let round = Instant::now();
        match engine.embed_pending((limit - done).min(ROUND)) {
            Ok(0) => {
                if idle_since.elapsed() >= keep_alive {
                    break;
                }
                std::thread::sleep(POLL);
            }
            Ok(n) => {
                done += n;
                idle_since = Instant::now();
                progress.embedded = done as u64;
                progress.busy_seconds += round.elapsed().as_secs_f64();
                progress.updated_at = memctl_engine::clock::unix_now();
                memctl_hooks::progress::write(engine.data_dir(), &progress);
                tracing::info!(chunks = n, "embedded pending chunks");
            }
            Err(e) => {
                tracing::warn!(error = %e, "pending chunks not embedded");
                break;
            }
        }
    }
    done
}
