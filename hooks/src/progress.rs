//! The embedding of pending chunks' progress, for `memctl status`: a small JSON file in the
//! data dir (`embed-progress.json`), rewritten atomically after every batch of the resident
//! service's bulk thread.
//!
//! Why a file and not the store: the embedder writes it every few seconds, and a store commit
//! costs fsyncs and the write lock the hooks wait for; `memctl status` must stay cheap and
//! never take that lock. Whether the embedder still runs is not read from the file (a killed
//! service leaves it behind) but from the embed lock it holds
//! ([`crate::background::embedder_running`]).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// File name of the progress record in the data dir.
pub const FILE: &str = "embed-progress.json";

/// Largest progress file read (it is a few hundred bytes; anything bigger is not ours).
const MAX_BYTES: u64 = 64 * 1024;

/// One burst of the bulk thread, as last recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The process id of the service that embeds.
    pub pid: u32,
    /// When it started (Unix seconds).
    pub started_at: i64,
    /// When this record was written (Unix seconds).
    pub updated_at: i64,
    /// Chunks embedded by this run so far.
    pub embedded: u64,
    /// Seconds spent embedding (model load and idle waits excluded): the rate's denominator.
    pub busy_seconds: f64,
    /// Intra-op threads of its model.
    pub threads: usize,
}

impl Progress {
    /// A record for this process, starting now.
    pub fn start(threads: usize) -> Self {
        let now = memctl_engine::unix_now();
        Self {
            pid: std::process::id(),
            started_at: now,
            updated_at: now,
            embedded: 0,
            busy_seconds: 0.0,
            threads,
        }
    }

    /// Chunks per second while embedding (None before the first chunk).
    pub fn rate(&self) -> Option<f64> {
        (self.embedded > 0 && self.busy_seconds > 0.0)
            .then(|| self.embedded as f64 / self.busy_seconds)
    }

    /// Seconds left for `pending` chunks at [`Self::rate`].
    pub fn eta_seconds(&self, pending: u64) -> Option<f64> {
        self.rate().map(|r| pending as f64 / r)
    }
}

/// Where the progress record of `data_dir` is.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

/// Write the record atomically (a reader sees the old one or the new one). A failure is
/// logged: progress is for display, the embedding itself goes on.
pub fn write(data_dir: &Path, p: &Progress) {
    let result = serde_json::to_vec(p)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            memctl_engine::write_private_atomic(&path(data_dir), &bytes).map_err(|e| e.to_string())
        });
    if let Err(e) = result {
        tracing::warn!(error = %e, "embedder progress not recorded");
    }
}

/// The last record, if any. An unreadable or malformed file is logged and reads as none
/// (status shows no progress rather than failing).
pub fn read(data_dir: &Path) -> Option<Progress> {
    let p = path(data_dir);
    match memctl_engine::read_regular(&p, MAX_BYTES) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(progress) => Some(progress),
            Err(e) => {
                tracing::warn!(path = %p.display(), error = %e, "embedder progress unreadable");
                None
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            tracing::warn!(path = %p.display(), error = %e, "embedder progress unreadable");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_record_reads_back_and_gives_a_rate_and_eta() {
        let d = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(d.path()), None);
        let mut p = Progress::start(2);
        assert_eq!(p.rate(), None);
        p.embedded = 120;
        p.busy_seconds = 10.0;
        write(d.path(), &p);
        let back = read(d.path()).expect("record");
        assert_eq!(back, p);
        assert_eq!(back.rate(), Some(12.0));
        assert_eq!(back.eta_seconds(60), Some(5.0));
    }

    #[test]
    fn a_record_of_an_earlier_release_with_start_ticks_still_reads() {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            path(d.path()),
            br#"{"pid":7,"started_at":1,"updated_at":2,"embedded":3,"busy_seconds":1.5,"threads":2,"start_ticks":99}"#,
        )
        .expect("write");
        let back = read(d.path()).expect("record");
        assert_eq!((back.pid, back.embedded), (7, 3));
    }

    #[test]
    fn a_malformed_file_reads_as_no_progress() {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::write(path(d.path()), b"{not json").expect("write");
        assert_eq!(read(d.path()), None);
    }
}
