//! The detached processes a hook starts, and how a hook tells whether one runs: the resident
//! service (`memctl embedder --background`: query embeddings and the embedding of pending
//! chunks), the deferred archiver (`memctl ingest --background`), the team sync (`memctl sync
//! --background`) and the store's upkeep (`memctl migrate --background`: a migration, the end
//! of an interrupted forget). A hook never waits for any of them; each
//! holds a lock file in the data dir while it runs, so a hook checks without starting one.

use anyhow::{Context, Result};
use memctl_engine::Settings;
use std::path::{Path, PathBuf};

/// Touched when a hook starts the store's upkeep for a forget cut short; the upkeep (and
/// `memctl forget --finish`) removes it. A hook starts it at most once a minute for a forget
/// (the marker's age says when it last did).
pub const FORGET_FINISH_MARKER: &str = ".forget-finish-started";

/// The file holding the team store's connection string when neither `MEMCTL_TEAM_URL` nor
/// `MEMCTL_TEAM_URL_FILE` is set.
pub fn default_team_url_file(data_dir: &Path) -> PathBuf {
    data_dir.join("team.url")
}

/// Whether a team store is configured, without reading a file's content or touching the
/// network: what a hook checks before starting `memctl sync --background`.
pub fn team_configured(s: &Settings, data_dir: &Path) -> bool {
    s.team.url.is_some()
        || s.team.url_file.as_deref().is_some_and(Path::is_file)
        || default_team_url_file(data_dir).is_file()
        || std::env::var_os("PGHOST").is_some()
}

/// The lock a background team sync holds for its whole run (one per data dir).
pub fn team_sync_lock(data_dir: &Path) -> PathBuf {
    data_dir.join("team").join("background.lock")
}

/// True when a background sync holds the data dir's sync lock: a hook then starts none (the
/// running one exits at once otherwise, after starting up; the next archive syncs again).
pub fn team_sync_running(data_dir: &Path) -> bool {
    data_dir.join("team").is_dir()
        && matches!(
            memctl_engine::try_lock_file(&team_sync_lock(data_dir)),
            Ok(None)
        )
}

/// The data dir's embedder lock (`embed.lock`): one embedder of pending chunks at a time (the
/// resident service's bulk thread while it embeds, or a foreground `memctl embed-pending`).
/// None when another holds it.
pub fn embed_lock(data_dir: &Path) -> Result<Option<std::fs::File>> {
    let path = data_dir.join("embed.lock");
    memctl_engine::try_lock_file(&path).with_context(|| format!("locking {}", path.display()))
}

/// True when an embedder of pending chunks holds the data dir's embed lock (the resident
/// service keeps it while it embeds and a while after, watching for new chunks).
pub fn embedder_running(data_dir: &Path) -> bool {
    matches!(embed_lock(data_dir), Ok(None))
}

/// Have the resident service of `data_dir` embed pending chunks: tell a running one (one line
/// into its socket, no wait), else start one with `memctl` (its bulk thread looks for pending
/// chunks first; a second one started while one loads exits at once on the data dir's lock).
pub fn wake_service(memctl: &Path, data_dir: &Path) {
    match memctl_engine::notify_pending(data_dir) {
        Ok(()) => tracing::debug!("told the resident service about pending chunks"),
        Err(e) => {
            tracing::debug!(error = %e, "starting the resident service for pending chunks");
            spawn_detached(memctl, &["embedder", "--background"], None, Some(data_dir));
        }
    }
}

/// Start `program <args> [path]` detached: own process group, no stdio; the caller never
/// waits. `data_dir` is passed on as `MEMCTL_HOME` so the child works on the same data dir.
/// A failure to start is logged: the next hook (or search) starts one again.
pub fn spawn_detached(program: &Path, args: &[&str], path: Option<&Path>, data_dir: Option<&Path>) {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    if let Some(d) = data_dir {
        cmd.env("MEMCTL_HOME", d);
    }
    if let Some(p) = path {
        cmd.arg(p);
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    if let Err(e) = cmd.spawn() {
        tracing::warn!(error = %e, ?args, "could not start a background memctl");
    }
}
