//! The open database and which file it is.
//!
//! Why the file's identity: `memctl forget` rewrites the store into a fresh file and renames it
//! over the old one ([`super::rewrite`]), so that no forgotten byte is left in free pages. A
//! process that opened the old file (a hook, the MCP server holding the store for its whole
//! life) must notice, or its commits would land in an unlinked file and its reads would keep
//! serving what was forgotten. Every transaction compares the path's (device, inode) with the
//! opened file's: one `stat(2)`, about a microsecond.

use super::{Store, create};
use crate::error::StoreError;
use redb::{Database, ReadTransaction, ReadableDatabase, WriteTransaction};
use std::path::Path;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

/// The database: read-write, or read-only where the file cannot be written.
pub(super) enum Handle {
    ReadWrite(Database),
    /// A read-only data dir or file (a read-only mount, another user's store): reads work,
    /// every write is [`StoreError::ReadOnly`].
    ReadOnly(redb::ReadOnlyDatabase),
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ReadWrite(_) => "ReadWrite",
            Self::ReadOnly(_) => "ReadOnly",
        })
    }
}

impl Handle {
    pub(super) fn begin_read(&self) -> Result<ReadTransaction, redb::TransactionError> {
        match self {
            Self::ReadWrite(db) => db.begin_read(),
            Self::ReadOnly(db) => db.begin_read(),
        }
    }
}

/// (device, inode) of a file.
pub(super) type FileId = (u64, u64);

/// The identity of the file at `path` now; None when it cannot be stat'ed (gone) or on a
/// platform without inodes.
pub(super) fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _unused = path;
        None
    }
}

/// A database with the identity of the file it was opened from.
#[derive(Debug)]
pub(super) struct Opened {
    pub(super) db: Handle,
    ident: Option<FileId>,
}

impl Opened {
    /// Open with `open`, recording the identity the path had *before* the open. Why before: if
    /// a rename replaces the file between the stat and the open, the recorded identity is the
    /// old one and the first transaction reopens (a spare reopen); recorded after, it could
    /// name the new file while the database is the old one, and that would never be noticed.
    pub(super) fn open(
        path: &Path,
        open: impl FnOnce() -> Result<Handle, StoreError>,
    ) -> Result<Self, StoreError> {
        let before = file_id(path);
        let db = open()?;
        // No file before: this open created it (nobody can have replaced it yet).
        let ident = before.or_else(|| file_id(path));
        Ok(Self { db, ident })
    }

    /// Is this still the file at `path`? A missing file counts as current: a store deleted by
    /// hand keeps serving this process (as it always did) until it reopens.
    pub(super) fn is_current(&self, path: &Path) -> bool {
        match (self.ident, file_id(path)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    pub(super) fn is_read_only(&self) -> bool {
        matches!(self.db, Handle::ReadOnly(_))
    }
}

impl Store {
    /// The open database, reopened first when the file at the store's path is not the one it
    /// was opened from (a `memctl forget` put a rewritten file in its place, [`rewrite`]).
    pub(super) fn current(&self) -> Result<Arc<Opened>, StoreError> {
        let cur = Arc::clone(&self.opened.read().unwrap_or_else(PoisonError::into_inner));
        if cur.is_current(&self.path) {
            return Ok(cur);
        }
        self.reopen(&cur)
    }

    /// Replace `stale` by a handle on the file now at the path (in the same mode).
    pub(super) fn reopen(&self, stale: &Arc<Opened>) -> Result<Arc<Opened>, StoreError> {
        let mut slot = self.opened.write().unwrap_or_else(PoisonError::into_inner);
        if !Arc::ptr_eq(&slot, stale) && slot.is_current(&self.path) {
            return Ok(Arc::clone(&slot)); // another thread reopened it
        }
        let path = &self.path;
        let fresh = if stale.is_read_only() {
            Opened::open(path, || Self::open_read_only_handle(path))?
        } else {
            Opened::open(path, || {
                create::open_or_create(path, Self::init_new).map(Handle::ReadWrite)
            })?
        };
        tracing::info!(store = %path.display(), "the store file was replaced (rewritten by a forget); reopened it");
        *slot = Arc::new(fresh);
        Ok(Arc::clone(&slot))
    }

    /// Begin a write transaction on the current file: a bounded `try_begin_write` loop (see
    /// [`Self::write`]). The file is checked again once the lock is held: a forget's rewrite
    /// holds the old file's lock until the new file is in place, so a writer that waited on it
    /// must not commit into the old, unlinked file. Returns the handle with the transaction
    /// (the transaction must not outlive the database it belongs to).
    pub(super) fn begin_write(&self) -> Result<(Arc<Opened>, WriteTransaction), StoreError> {
        let start = Instant::now();
        let give_up = self.deadline.map_or(start + self.write_timeout, |d| {
            d.min(start + self.write_timeout)
        });
        let mut sleep = Duration::from_micros(200);
        loop {
            let opened = self.current()?;
            let Handle::ReadWrite(db) = &opened.db else {
                return Err(StoreError::ReadOnly {
                    path: self.path.clone(),
                });
            };
            match db.try_begin_write() {
                Ok(tx) if opened.is_current(&self.path) => return Ok((opened, tx)),
                Ok(tx) => {
                    // Replaced while we waited: let go and take the new file's lock.
                    tx.abort()?;
                    self.reopen(&opened)?;
                }
                Err(redb::TransactionError::WouldBlock) => {
                    if Instant::now() >= give_up {
                        return Err(StoreError::Busy {
                            waited_ms: start.elapsed().as_millis() as u64,
                        });
                    }
                    std::thread::sleep(sleep);
                    sleep = (sleep * 2).min(Duration::from_millis(20));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}
