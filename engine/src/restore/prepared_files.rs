//! Where PreCompact leaves the compaction restore it prepared (`crate::hooks`' `prepared`
//! module says why): one file per session under `<data dir>/prepared/`. Kept here, below
//! `forget`, which removes them all.

use crate::error::StoreError;
use std::path::{Path, PathBuf};

/// The folder of prepared blocks.
pub(crate) fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("prepared")
}

/// `<data dir>/prepared/<sanitized session id>.json`.
pub(crate) fn path(data_dir: &Path, session_id: &str) -> PathBuf {
    dir(data_dir).join(format!(
        "{}.json",
        crate::paths::sanitize_component(session_id)
    ))
}

/// Remove every prepared block (a forget: they may quote what went). Returns how many.
pub(crate) fn remove_all(data_dir: &Path) -> Result<u64, StoreError> {
    let d = dir(data_dir);
    let entries = match std::fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(source) => return Err(StoreError::Io { path: d, source }),
    };
    let mut n = 0;
    for entry in entries {
        let path = entry
            .map_err(|source| StoreError::Io {
                path: d.clone(),
                source,
            })?
            .path();
        match std::fs::remove_file(&path) {
            Ok(()) => n += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(StoreError::Io { path, source }),
        }
    }
    Ok(n)
}
