//! Background jobs that hooks start per transcript (`memctl ingest --background <transcript>`,
//! and `memctl migrate --background`, the store's upkeep, per store file): at most one runs per (kind, file), and
//! no request for one is lost.
//!
//! Why: a burst of prompts asks for a deferred archive of the same transcript on every prompt.
//! Each such process loads the store and (with embedding on) the model; fifty of them side by
//! side took ~700 MB and archived the same bytes fifty times over.
//!
//! Two files per job in `<data dir>/backlog/`, named by the kind and a hash of the transcript's
//! canonical path: a lock file (an exclusive non-blocking `flock`, released by the kernel
//! however the holder ends) and a request file. Whoever wants a run first creates the request,
//! then tries the lock; the holder runs a pass for every request it removes, and after letting
//! the lock go looks once more for a request that came in meanwhile (and takes the lock back
//! for it). So every request is either seen by a pass that starts after it, or its requester
//! got the lock: a request that finds the job running can end at once.

use crate::error::StoreError;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The deferred archive of one transcript (`memctl ingest --background`).
pub const INGEST: &str = "ingest";

/// The store's upkeep (`memctl migrate --background`: migrating an earlier memctl's store,
/// finishing a forget cut short), keyed by the store file: every hook on such a store asks for
/// one, and each would wait for the store's write lock behind the first.
pub const MIGRATE: &str = "migrate";

/// Folder of the data dir holding the jobs' lock and request files.
const DIR: &str = "backlog";

/// The lock file and the request file of job `kind` for `transcript`.
fn files(data_dir: &Path, kind: &str, transcript: &Path) -> Result<(PathBuf, PathBuf), StoreError> {
    use sha2::{Digest, Sha256};
    let dir = data_dir.join(DIR);
    crate::paths::ensure_private_dir(&dir)?;
    // The canonical path, as the store's cursors key a transcript: two spellings of one file
    // are one job.
    let key = std::fs::canonicalize(transcript).unwrap_or_else(|_| transcript.to_path_buf());
    let hash = hex::encode(&Sha256::digest(key.as_os_str().as_encoded_bytes())[..12]);
    let stem = format!("{}-{hash}", crate::paths::sanitize_component(kind));
    Ok((
        dir.join(format!("{stem}.lock")),
        dir.join(format!("{stem}.request")),
    ))
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Record a request for a run of `kind` on `transcript`, then try its lock.
fn request_and_lock(
    data_dir: &Path,
    kind: &str,
    transcript: &Path,
) -> Result<(Option<File>, PathBuf, PathBuf), StoreError> {
    let (lock, request) = files(data_dir, kind, transcript)?;
    std::fs::write(&request, b"").map_err(io_err(&request))?;
    let held = crate::paths::try_lock_file(&lock).map_err(io_err(&lock))?;
    Ok((held, lock, request))
}

/// Ask for a run of job `kind` on `transcript` without running it (a hook, before it starts
/// the job's process): true when no job holds the lock, so the caller should start one; false
/// when one runs, which will see this request. A few file operations, no waiting.
pub fn request(data_dir: &Path, kind: &str, transcript: &Path) -> Result<bool, StoreError> {
    Ok(request_and_lock(data_dir, kind, transcript)?.0.is_some())
}

/// A running job: holds its lock until [`Job::run`] has served every request.
#[derive(Debug)]
pub struct Job {
    lock: Option<File>,
    lock_path: PathBuf,
    request: PathBuf,
}

impl Job {
    /// Become job `kind` for `transcript` (after recording a request): None when another
    /// process runs it; that one serves the request, so the caller can end at once.
    pub fn start(
        data_dir: &Path,
        kind: &str,
        transcript: &Path,
    ) -> Result<Option<Self>, StoreError> {
        let (held, lock_path, request) = request_and_lock(data_dir, kind, transcript)?;
        Ok(held.map(|f| {
            log_lock(&lock_path, "job lock taken");
            Self {
                lock: Some(f),
                lock_path,
                request,
            }
        }))
    }

    /// Run `pass` once for each request found (at least once: [`Job::start`] made one), until
    /// none is left, including one made while the lock was being let go. Returns the passes.
    pub fn run(mut self, mut pass: impl FnMut()) -> usize {
        let mut passes = 0;
        loop {
            while self.take_request() {
                pass();
                passes += 1;
            }
            log_lock(&self.lock_path, "job lock let go");
            self.lock = None;
            if !self.request.exists() {
                return passes;
            }
            // A request came in after the last look: its requester found the lock taken and
            // ended. Take the lock back, unless a newer job took it (that one serves it).
            match crate::paths::try_lock_file(&self.lock_path) {
                Ok(Some(f)) => {
                    log_lock(&self.lock_path, "job lock taken");
                    self.lock = Some(f);
                }
                Ok(None) => return passes,
                Err(e) => {
                    tracing::warn!(lock = %self.lock_path.display(), error = %e, "job lock not taken back; the next request runs it");
                    return passes;
                }
            }
        }
    }

    /// Remove the request file: true when there was one. A removal that fails for another
    /// reason than its absence ends the job (logged) rather than looping on it.
    fn take_request(&self) -> bool {
        match std::fs::remove_file(&self.request) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                tracing::warn!(request = %self.request.display(), error = %e, "job request not removed; ending this job");
                false
            }
        }
    }
}

/// A debug line while the lock is held (after it is taken, before it is let go), with the
/// process id: the lines of all processes show who ran the job when, and that no two did at
/// once.
fn log_lock(lock: &Path, what: &'static str) {
    tracing::debug!(pid = std::process::id(), job = %lock.display(), "{what}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_job_per_kind_and_transcript_and_no_request_lost() {
        let home = tempfile::tempdir().unwrap();
        let t = home.path().join("t.jsonl");
        std::fs::write(&t, b"{}\n").unwrap();
        let job = Job::start(home.path(), INGEST, &t)
            .unwrap()
            .expect("first job");
        // Running: a second job and a hook's request find it taken.
        assert!(Job::start(home.path(), INGEST, &t).unwrap().is_none());
        assert!(!request(home.path(), INGEST, &t).unwrap());
        // Another transcript, or another kind, is another job.
        let u = home.path().join("u.jsonl");
        std::fs::write(&u, b"{}\n").unwrap();
        assert!(request(home.path(), INGEST, &u).unwrap());
        assert!(request(home.path(), "other", &t).unwrap());
        // The requests made while it ran are served by it and coalesce: the first pass serves
        // the three made before `run`, a second one the request made during the first.
        let mut extra = 1;
        let passes = job.run(|| {
            if extra > 0 {
                extra -= 1;
                assert!(!request(home.path(), INGEST, &t).unwrap());
            }
        });
        assert_eq!(passes, 2);
        // Done: the next request finds the lock free.
        assert!(request(home.path(), INGEST, &t).unwrap());
    }
}
