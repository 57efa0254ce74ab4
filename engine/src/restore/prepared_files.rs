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
    crate::paths::remove_files_in(&dir(data_dir))
}

/// Remove the blocks older than `max_age` (a compaction that never finished left its block):
/// what nothing will serve is not kept on disk. Faults are logged: a leftover is only a leftover.
pub(crate) fn remove_stale(data_dir: &Path, max_age: std::time::Duration) {
    let d = dir(data_dir);
    let entries = match std::fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            tracing::warn!(dir = %d.display(), error = %e, "prepared restores not listed");
            return;
        }
    };
    for entry in entries {
        match entry {
            Ok(e) if crate::paths::modified_longer_ago(&e, max_age) => remove(&e.path()),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(dir = %d.display(), error = %e, "prepared restores not listed");
                return;
            }
        }
    }
}

/// Remove one block (used, stale, or dropped); a fault is logged.
pub(crate) fn remove(file: &Path) {
    if let Err(e) = crate::paths::remove_if_present(file) {
        tracing::warn!(file = %file.display(), error = %e, "prepared restore not removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn stale_blocks_go_and_fresh_ones_stay_until_a_forget() {
        let d = tempfile::tempdir().expect("tempdir");
        let (fresh, stale) = (path(d.path(), "fresh"), path(d.path(), "stale"));
        std::fs::create_dir_all(dir(d.path())).expect("mkdir");
        std::fs::write(&fresh, b"{}").expect("write");
        std::fs::write(&stale, b"{}").expect("write");
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .and_then(|f| f.set_modified(an_hour_ago))
            .expect("set mtime");
        remove_stale(d.path(), Duration::from_secs(600));
        assert!(fresh.is_file() && !stale.exists());
        assert_eq!(remove_all(d.path()).expect("remove_all"), 1);
        assert!(!fresh.exists());
        assert_eq!(remove_all(d.path()).expect("again"), 0);
    }
}
