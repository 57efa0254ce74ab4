//! Creating the store file so that no crash can leave a file that never opens again.
//!
//! redb initialises a new file in place: it sizes the file, writes a header *without* its magic
//! number, fsyncs, then writes the magic. A process killed (or an fsync failing, or the disk
//! filling up) between the two leaves a ~1 MB file whose header has no magic number, and every
//! later open fails with "Not a redb database: magic number mismatch" — the store is bricked and
//! every hook from then on archives nothing.
//!
//! So a new store is built aside (`.memctl.redb.init-<pid>-<nanos>` in the same directory), its
//! tables and schema version committed, and only then hard-linked into place. `link(2)` fails
//! when the target exists, so when two processes race to create the store, the first one wins and
//! the other opens the winner's file; nobody ever sees a half-made store under the real name.
//!
//! Stores bricked by an earlier release are recognised when the file is not a redb database and
//! its magic-number bytes are all zero (redb writes them last, so a real store never has them
//! zero): such a file holds no data; it is renamed aside (`<name>.uninitialised-<nanos>`, kept
//! for inspection) and a fresh store is created. Any other file that is not a redb database is
//! left alone and reported: it may be the user's data.

use crate::error::StoreError;
use redb::{Builder, ConcurrencyMode, Database};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// redb's page cache for every handle we open.
pub(super) const CACHE_BYTES: usize = 16 << 20;

/// Length of redb's magic number at offset 0 of the file.
const MAGIC_LEN: usize = 9;

/// Init files older than this belong to a process that died while creating the store.
const STALE_INIT: Duration = Duration::from_secs(60);

pub(super) fn builder() -> Builder {
    let mut b = Builder::new();
    b.set_concurrency_mode(ConcurrencyMode::MultiWriter)
        .set_cache_size(CACHE_BYTES);
    b
}

pub(super) fn nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn open_err(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Open the existing store at `path`, creating it atomically first when it does not exist, and
/// replacing a never-initialised file (see the module doc). `init` commits the tables and the
/// schema version into a freshly created database before it is published.
pub(super) fn open_or_create(
    path: &Path,
    init: impl Fn(&Database) -> Result<(), StoreError>,
) -> Result<Database, StoreError> {
    open_or_create_with(path, &|p| builder().create(p), &init)
}

/// How a new database file is made; tests pass one with an injected storage fault.
pub(super) type CreateFn<'a> = &'a dyn Fn(&Path) -> Result<Database, redb::DatabaseError>;

/// [`open_or_create`] with the creation step given (the fault-injection seam).
pub(super) fn open_or_create_with(
    path: &Path,
    create: CreateFn<'_>,
    init: &dyn Fn(&Database) -> Result<(), StoreError>,
) -> Result<Database, StoreError> {
    // Two rounds: the file can vanish between our check and our open (a user deleting the store
    // by hand), and a bricked file is replaced once.
    for _ in 0..2 {
        if !path.exists() {
            create_aside(path, create, init)?;
        }
        match builder().open(path) {
            Ok(db) => return Ok(db),
            Err(e) => {
                if !path.exists() {
                    continue;
                }
                if never_initialised(path)? {
                    let aside = set_aside(path)?;
                    tracing::warn!(
                        store = %path.display(),
                        aside = %aside.display(),
                        "the store file was never initialised (a crash during its creation); set it aside and created a new store"
                    );
                    continue;
                }
                return Err(open_err(path, e));
            }
        }
    }
    builder().open(path).map_err(|e| open_err(path, e))
}

/// Build an initialised store next to `path` and link it into place unless another process did
/// first.
fn create_aside(
    path: &Path,
    create: CreateFn<'_>,
    init: &dyn Fn(&Database) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    remove_stale_init_files(dir, &name);
    let tmp = dir.join(format!(".{name}.init-{}-{}", std::process::id(), nanos()));
    let result = (|| {
        let db = create(&tmp).map_err(|e| open_err(&tmp, e))?;
        crate::paths::restrict_file(&tmp)?;
        init(&db)?;
        drop(db);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // A file system without hard links: rename is atomic too, but replaces; only do it
            // while the target is still missing.
            Err(_) if !path.exists() => std::fs::rename(&tmp, path).map_err(io_err(path))?,
            Err(_) => {}
        }
        sync_dir(dir);
        Ok(())
    })();
    // The temp name is gone after a rename; otherwise it is a second link or an unused file.
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Does `path` exist as a file this process may read but not write? (`EACCES`, `EPERM` or a
/// read-only file system on an open for writing.)
pub(super) fn exists_read_only(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(_) => false,
        Err(e) => {
            matches!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) && std::fs::File::open(path).is_ok()
        }
    }
}

/// Is `path` a file redb started to initialise and never finished: not a redb database, with
/// the magic-number bytes all zero?
pub(super) fn never_initialised(path: &Path) -> Result<bool, StoreError> {
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    if !f.metadata().map_err(io_err(path))?.is_file() {
        return Ok(false);
    }
    let mut head = [0u8; MAGIC_LEN];
    let mut got = 0;
    while got < MAGIC_LEN {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(path)(e)),
        }
    }
    Ok(head.iter().all(|&b| b == 0))
}

/// Rename a never-initialised store aside; returns the new name.
fn set_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".uninitialised-{}", nanos()));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside).map_err(io_err(path))?;
    Ok(aside)
}

/// Init files of processes that died while creating the store (best effort: a leftover costs
/// only disk space).
fn remove_stale_init_files(dir: &Path, name: &str) {
    let prefix = format!(".{name}.init-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        if crate::paths::modified_longer_ago(&entry, STALE_INIT) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Make the new directory entry durable (best effort: not every file system supports it).
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod fault_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn init_ok(_: &Database) -> Result<(), StoreError> {
        Ok(())
    }

    /// What a process killed between redb's header write and its magic write leaves behind.
    #[test]
    fn store_creation_killed_before_magic_is_recreated() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("memctl.redb");
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap_or_else(|e| panic!("write: {e}"));
        let db = open_or_create(&path, init_ok).unwrap_or_else(|e| panic!("open: {e}"));
        drop(db);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("read_dir: {e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("memctl.redb.uninitialised-")),
            "the bricked file is kept aside: {names:?}"
        );
        assert!(
            !names.iter().any(|n| n.contains(".init-")),
            "no init file left: {names:?}"
        );
        // And it opens again, plainly.
        builder()
            .open(&path)
            .unwrap_or_else(|e| panic!("reopen: {e}"));
    }

    #[test]
    fn a_foreign_file_is_reported_not_replaced() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("memctl.redb");
        std::fs::write(&path, b"my notes, not a database").unwrap_or_else(|e| panic!("{e}"));
        let err = open_or_create(&path, init_ok)
            .map(drop)
            .expect_err("refused");
        assert!(err.to_string().contains("magic number"), "{err}");
        assert_eq!(
            std::fs::read(&path).unwrap_or_default(),
            b"my notes, not a database"
        );
    }

    #[test]
    fn a_failed_init_publishes_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("memctl.redb");
        let failing =
            |_: &Database| -> Result<(), StoreError> { Err(StoreError::Busy { waited_ms: 0 }) };
        assert!(open_or_create(&path, failing).is_err());
        assert!(!path.exists(), "no half-made store under the real name");
        let left = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("read_dir: {e}"))
            .count();
        assert_eq!(left, 0, "the init file is removed");
        open_or_create(&path, init_ok).unwrap_or_else(|e| panic!("then it is created: {e}"));
    }
}
