//! Injected storage faults at store creation and during commits: a backend that
//! fails its n-th `sync_data` (an fsync failing with EIO, a full disk, or the last thing a killed
//! process did), wrapped around redb's own file backend.

use super::*;
use redb::backends::FileBackend;
use redb::{BackendError, ReadableDatabase, StorageBackend};
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug)]
struct FailingSync {
    inner: FileBackend,
    syncs: AtomicUsize,
    fail_at: usize,
}

impl FailingSync {
    fn create(path: &Path, fail_at: usize) -> Result<Database, redb::DatabaseError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        builder().create_with_backend(Self {
            inner: FileBackend::new(file)?,
            syncs: AtomicUsize::new(0),
            fail_at,
        })
    }
}

type Lock = Result<bool, BackendError>;

impl StorageBackend for FailingSync {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> Result<(), std::io::Error> {
        if self.syncs.fetch_add(1, Ordering::SeqCst) == self.fail_at {
            return Err(std::io::Error::other("injected: fdatasync failed (EIO)"));
        }
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.inner.write(offset, data)
    }
    fn close(&self) -> Result<(), std::io::Error> {
        self.inner.close()
    }
    fn try_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.try_lock_range(s, e)
    }
    fn try_lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.try_lock_shared_range(s, e)
    }
    fn lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(s, e)
    }
    fn lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(s, e)
    }
    fn unlock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(s, e)
    }
    fn query_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.query_lock_range(s, e)
    }
}

fn init_tables(db: &Database) -> Result<(), StoreError> {
    let tx = db.begin_write()?;
    {
        let mut t = tx.open_table(redb::TableDefinition::<u64, u64>::new("t"))?;
        t.insert(1, 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// The hazard itself: redb creating the file in place and failing at its first fsync leaves a
/// file that never opens again — and that we recognise as never initialised.
#[test]
fn in_place_creation_failing_at_first_sync_leaves_an_unopenable_file_we_recognise() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let path = dir.path().join("memctl.redb");
    assert!(
        FailingSync::create(&path, 0).is_err(),
        "the fault is injected"
    );
    let err = builder().open(&path).map(drop).expect_err("bricked");
    assert!(err.to_string().contains("magic number"), "{err}");
    assert!(never_initialised(&path).unwrap_or(false));
}

/// A fault at every sync of store creation (and of the first commit): nothing half-made is
/// ever published, and the next open creates a working store.
#[test]
fn injected_fault_at_each_sync_of_store_creation_leaves_a_store_that_opens() {
    for fail_at in 0..8 {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("memctl.redb");
        let faulty = move |p: &Path| FailingSync::create(p, fail_at);
        let first = open_or_create_with(&path, &faulty, &init_tables);
        if first.is_err() {
            assert!(
                !path.exists(),
                "sync {fail_at}: a failed creation publishes nothing"
            );
        }
        drop(first);
        let db = open_or_create(&path, init_tables)
            .unwrap_or_else(|e| panic!("sync {fail_at}: the next open works: {e}"));
        let rtx = db.begin_read().unwrap_or_else(|e| panic!("read: {e}"));
        let t = rtx
            .open_table(redb::TableDefinition::<u64, u64>::new("t"))
            .unwrap_or_else(|e| panic!("sync {fail_at}: initialised tables: {e}"));
        assert_eq!(t.get(1).ok().flatten().map(|v| v.value()), Some(1));
    }
}

/// A fault during a later commit: the commit fails, the store opens again and keeps what
/// earlier commits wrote.
#[test]
fn injected_fault_during_commit_keeps_earlier_commits() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let path = dir.path().join("memctl.redb");
    drop(open_or_create(&path, init_tables).unwrap_or_else(|e| panic!("create: {e}")));
    for fail_at in 0..3 {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("open: {e}"));
        let backend = FailingSync {
            inner: FileBackend::new(file).unwrap_or_else(|e| panic!("backend: {e}")),
            syncs: AtomicUsize::new(0),
            fail_at,
        };
        // Whatever step fails (open, begin, insert or commit), the store must survive it.
        let attempt = || -> Result<(), StoreError> {
            let db = builder()
                .create_with_backend(backend)
                .map_err(|e| open_err(&path, e))?;
            let tx = db.begin_write()?;
            tx.open_table(redb::TableDefinition::<u64, u64>::new("t"))?
                .insert(2, 2)?;
            tx.commit()?;
            Ok(())
        };
        let outcome = attempt();
        println!("sync {fail_at}: commit attempt {outcome:?}");
        let db = open_or_create(&path, init_tables)
            .unwrap_or_else(|e| panic!("sync {fail_at}: reopen after a failed commit: {e}"));
        let rtx = db.begin_read().unwrap_or_else(|e| panic!("read: {e}"));
        let t = rtx
            .open_table(redb::TableDefinition::<u64, u64>::new("t"))
            .unwrap_or_else(|e| panic!("table: {e}"));
        assert_eq!(
            t.get(1).ok().flatten().map(|v| v.value()),
            Some(1),
            "sync {fail_at}"
        );
    }
}
