//! What a forget does after its removal committed, and finishing it when it was killed.
//!
//! **The order.** The removal commits with [`META_REWRITE_PENDING`] set (and the removed tool
//! outputs noted, see [`crate::store::remove::META_FORGOTTEN_OUTPUTS`]); then the backups in the
//! data dir are checked; then the store file is rewritten, and the rewritten file holds neither
//! key. So a forget killed anywhere after its commit leaves the flag, and whoever opens the
//! store next finishes the job ([`finish`]): the next forget, every CLI command
//! ([`crate::Engine::finish_interrupted`], which says so on stderr) and the hooks (which start
//! the store's upkeep, `memctl migrate --background`: a rewrite takes seconds, never on a
//! hook's path).
//!
//! **Backups.** `<data dir>/backups/` holds `memctl backup`'s default copies and the old files
//! migrations keep. One that holds a chunk this store tombstoned, or a tool output the forget
//! removed, is deleted: a backup is a copy of the store at one moment, and one with the
//! forgotten text cut out would no longer be that. One that cannot be read to tell (a schema 1
//! store, a damaged file) is deleted too, and the report says why. memctl records no backup it
//! wrote elsewhere (`memctl backup --out`): those are not touched, and the CLI says so.
//!
//! **Leftovers of killed processes.** A store being created (`.<store>.init-<pid>-<n>`), a
//! rewrite (`.<store>.rewrite-<pid>-<n>`) and a backup (`.<backup>.partial-<pid>-<n>` in its
//! folder) write a temporary file first; a kill leaves it, a full copy of the store each (a
//! partial backup may hold text forgotten since). Those of processes that are gone are removed
//! by [`remove_leftovers`] (the pid in the name, `/proc` as in [`crate::claim`]).

use super::ForgetError;
use crate::core::Core;
use crate::error::{EngineError, StoreError};
use crate::store::rewrite::{META_REWRITE_PENDING, RewriteReport};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The backups folder of a data dir (`memctl backup`'s default, migrations' old files).
pub const BACKUPS_DIR: &str = "backups";

/// What a forget did to the backups in the data dir.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BackupsReport {
    /// The folder checked (`<data dir>/backups`).
    pub dir: PathBuf,
    /// Backups that held what was forgotten: deleted.
    pub removed: Vec<PathBuf>,
    /// Backups that could not be read to tell, with why: deleted too.
    pub unreadable_removed: Vec<(PathBuf, String)>,
    /// Backups checked that hold nothing forgotten: kept.
    pub kept: u64,
    /// Backups that hold (or may hold) what was forgotten but could not be deleted, with why.
    pub failed: Vec<(PathBuf, String)>,
}

impl BackupsReport {
    /// Every backup deleted.
    pub fn deleted(&self) -> impl Iterator<Item = &Path> {
        self.removed
            .iter()
            .chain(self.unreadable_removed.iter().map(|(p, _)| p))
            .map(PathBuf::as_path)
    }
}

/// A forget finished after its removal: backups checked, store file rewritten.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FinishReport {
    /// The backups in the data dir.
    pub backups: BackupsReport,
    /// The store file rewrite.
    pub rewrite: RewriteReport,
}

/// What [`crate::Engine::finish_interrupted`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Interrupted {
    /// A forget that was killed (or failed) after its removal committed, finished now.
    pub forget: Option<FinishReport>,
    /// Temporary files of processes that died, removed.
    pub leftovers: Vec<PathBuf>,
}

impl Interrupted {
    /// Nothing was left to finish or remove.
    pub fn is_empty(&self) -> bool {
        self.forget.is_none() && self.leftovers.is_empty()
    }
}

/// Did a forget commit a removal whose store file rewrite has not run yet?
pub(crate) fn pending(core: &Core) -> Result<bool, EngineError> {
    Ok(core
        .store()
        .read()?
        .meta_value(META_REWRITE_PENDING)?
        .is_some())
}

/// Finish a forget whose removal committed: backups, then the rewrite (which clears the
/// flag). `None` when none is pending.
pub(crate) fn finish(core: &Core) -> Result<Option<FinishReport>, EngineError> {
    if !pending(core)? {
        return Ok(None);
    }
    remove_leftovers(core);
    let backups = clean_backups(core)?;
    let rewrite = core
        .store()
        .rewrite()
        .map_err(|source| ForgetError::Rewrite { source })?;
    Ok(Some(FinishReport { backups, rewrite }))
}

/// Delete every backup in `<data dir>/backups` that holds what a forget removed, or that
/// cannot be read to tell.
fn clean_backups(core: &Core) -> Result<BackupsReport, EngineError> {
    let dir = core.data_dir().join(BACKUPS_DIR);
    let mut rep = BackupsReport {
        dir: dir.clone(),
        ..BackupsReport::default()
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(rep),
        Err(source) => return Err(StoreError::Io { path: dir, source }.into()),
    };
    let r = core.store().read()?;
    for entry in entries.flatten() {
        // Temporaries (`.…partial-…`) are leftovers, see `remove_leftovers`.
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let why = match r.backup_holds_forgotten(&path) {
            Ok(false) => {
                rep.kept += 1;
                continue;
            }
            Ok(true) => None,
            Err(e) => Some(e.to_string()),
        };
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                rep.failed.push((path, e.to_string()));
            }
            _ => match why {
                None => rep.removed.push(path),
                Some(w) => rep.unreadable_removed.push((path, w)),
            },
        }
    }
    rep.removed.sort();
    rep.unreadable_removed.sort();
    if !rep.failed.is_empty() {
        tracing::warn!(failed = ?rep.failed, "backups holding forgotten turns could not be deleted");
    }
    Ok(rep)
}

/// The pid in a temporary file's name `<stem>.<kind>-<pid>-<nanos>` for the kinds killed
/// operations leave.
fn temp_pid(name: &str) -> Option<u32> {
    [".init-", ".rewrite-", ".partial-"].iter().find_map(|k| {
        let rest = &name[name.rfind(k)? + k.len()..];
        let (pid, nanos) = rest.split_once('-')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(pid) && digits(nanos)).then(|| pid.parse().ok())?
    })
}

/// Remove the temporary files of processes that died (see the module doc), beside the store
/// and in the backups folder. Best effort: returns what was removed.
pub(crate) fn remove_leftovers(core: &Core) -> Vec<PathBuf> {
    let store = core.store().path().to_path_buf();
    let mut dirs = vec![core.data_dir().join(BACKUPS_DIR)];
    if let Some(d) = store.parent() {
        dirs.push(d.to_path_buf());
    }
    let me = std::process::id();
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix('.').and_then(temp_pid) else {
                continue;
            };
            if pid == me || crate::claim::pid_alive(pid) {
                continue;
            }
            match std::fs::remove_file(entry.path()) {
                Ok(()) => out.push(entry.path()),
                Err(e) => {
                    tracing::warn!(file = %entry.path().display(), error = %e, "could not remove a killed process's temporary file");
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::temp_pid;

    #[test]
    fn temporary_names_give_their_pid() {
        assert_eq!(temp_pid("memctl.redb.init-123-456"), Some(123));
        assert_eq!(temp_pid("memctl.redb.rewrite-9-1"), Some(9));
        assert_eq!(
            temp_pid("memctl-backup-20260101T000000Z.redb.partial-77-88"),
            Some(77)
        );
        assert_eq!(temp_pid("memctl.redb.init-123"), None);
        assert_eq!(temp_pid("memctl.redb.uninitialised-5"), None);
        assert_eq!(temp_pid("memctl.redb.partial-x-1"), None);
    }
}
