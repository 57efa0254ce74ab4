//! Rewriting the store into a fresh file: how forgotten bytes leave the disk.
//!
//! Why not redb's `Database::compact`: measured here (redb 4.5, multi-writer mode, 10,000 rows
//! of which 1,000 held a marker in their value and in a key of a second table, as a forgotten
//! term is a postings key): after deleting them and compacting until it made no more progress,
//! 13 of the 2,041 copies of the marker were still in the file (the test below keeps checking
//! that). Compaction moves live pages down and truncates the tail; what it frees is not
//! overwritten. It also refuses to run while any other process holds a read transaction
//! (`TransactionInProgress`), and hooks and the MCP server read at any time.
//!
//! So: hold the store's write lock (no other process can commit), copy every row of every table
//! into a new file next to the store, make it durable, rename it over the store, then let the
//! lock go. A writer that waited on the old file's lock finds the file replaced once it holds
//! the lock and moves to the new one (`Store::begin_write`); every other handle reopens at its
//! next transaction (`store::handle`). No commit is lost: none can happen on the old file
//! between the copy and the rename.
//!
//! The copy knows every table by its type. A table it does not know (written by a newer memctl)
//! stops the rewrite before anything is replaced, rather than dropping the table's rows.
//!
//! What this cannot do: the old file's blocks, once freed by the file system, are not
//! overwritten (copy-on-write file systems and SSDs keep old blocks anyway); full-disk
//! encryption covers that.

use super::create;
use super::schema::*;
use super::vectors::VectorCounts;
use super::{Store, StoreError};
use redb::{
    Database, MultimapTableDefinition, MultimapTableHandle, ReadTransaction, TableDefinition,
    TableHandle, WriteTransaction,
};
use std::time::Instant;

/// Meta key: a forget removed rows but the file was not rewritten yet (the rewrite failed or
/// the process died): the next forget rewrites even when it matches nothing. The rewritten
/// file never holds it.
pub(crate) const META_REWRITE_PENDING: &str = "forget.rewrite_pending";

/// What [`Store::rewrite`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RewriteReport {
    /// Size of the store file before.
    pub bytes_before: u64,
    /// Size of the rewritten file.
    pub bytes_after: u64,
    /// Rows copied (every table).
    pub rows: u64,
    /// Wall time of the whole rewrite, lock wait included.
    pub millis: u64,
}

/// Where rows are copied from: a read transaction (a backup, while others write) or the
/// write transaction that holds the store's lock (a rewrite, a migration).
pub(super) trait Source {
    /// Open a table of the source.
    fn table<K: redb::Key + 'static, V: redb::Value + 'static>(
        &self,
        def: TableDefinition<K, V>,
    ) -> Result<impl redb::ReadableTable<K, V>, StoreError>;
    /// Open a multimap table of the source.
    fn multimap<K: redb::Key + 'static, V: redb::Key + 'static>(
        &self,
        def: MultimapTableDefinition<K, V>,
    ) -> Result<impl redb::ReadableMultimapTable<K, V>, StoreError>;
    /// Names of its tables and of its multimap tables.
    fn names(&self) -> Result<(Vec<String>, Vec<String>), StoreError>;
}

macro_rules! impl_source {
    ($t:ty) => {
        impl Source for $t {
            fn table<K: redb::Key + 'static, V: redb::Value + 'static>(
                &self,
                def: TableDefinition<K, V>,
            ) -> Result<impl redb::ReadableTable<K, V>, StoreError> {
                Ok(self.open_table(def)?)
            }
            fn multimap<K: redb::Key + 'static, V: redb::Key + 'static>(
                &self,
                def: MultimapTableDefinition<K, V>,
            ) -> Result<impl redb::ReadableMultimapTable<K, V>, StoreError> {
                Ok(self.open_multimap_table(def)?)
            }
            fn names(&self) -> Result<(Vec<String>, Vec<String>), StoreError> {
                Ok((
                    self.list_tables()?.map(|h| h.name().to_string()).collect(),
                    self.list_multimap_tables()?
                        .map(|h| h.name().to_string())
                        .collect(),
                ))
            }
        }
    };
}
impl_source!(WriteTransaction);
impl_source!(ReadTransaction);

/// The new value of a row of a byte-valued table (`None`: unchanged), see `super::migrate`.
pub(super) type RowUpgrade<'a> =
    dyn Fn(&str, &[u8]) -> Result<Option<Vec<u8>>, crate::codec::CodecError> + 'a;

/// How rows are copied: as they are (a rewrite, a backup) or through a migration's row
/// function with a new schema version.
#[derive(Default, Clone, Copy)]
pub(super) struct CopyRows<'a> {
    /// Applied to every row of the record tables, of `vectors` and of `posting_lists`.
    pub upgrade: Option<&'a RowUpgrade<'a>>,
    /// Schema version written into the copy's meta table.
    pub schema: Option<u32>,
    /// The schema 1–2 postings multimap becomes packed per-term lists (migration to 3).
    pub pack_postings: bool,
}

/// Copy one table (`dry`: only check that it resolves; nothing is opened). Returns (rows
/// copied, rows changed by `upgrade`).
fn copy_table<K: redb::Key + 'static, V: redb::Value + 'static>(
    src: &impl Source,
    dst: &WriteTransaction,
    def: TableDefinition<K, V>,
    dry: bool,
) -> Result<(u64, u64), StoreError> {
    if dry {
        return Ok((0, 0));
    }
    let from = src.table(def)?;
    let mut to = dst.open_table(def)?;
    let mut n = 0;
    for row in redb::ReadableTable::iter(&from)? {
        let (k, v) = row?;
        to.insert(k.value(), v.value())?;
        n += 1;
    }
    Ok((n, 0))
}

/// [`copy_table`] for a table of records, each row passed through `upgrade`.
fn copy_records<K: redb::Key + 'static>(
    src: &impl Source,
    dst: &WriteTransaction,
    def: TableDefinition<K, &'static [u8]>,
    upgrade: &RowUpgrade<'_>,
) -> Result<(u64, u64), StoreError> {
    let from = src.table(def)?;
    let mut to = dst.open_table(def)?;
    let (mut n, mut changed) = (0, 0);
    for row in redb::ReadableTable::iter(&from)? {
        let (k, v) = row?;
        let new = upgrade(def.name(), v.value()).map_err(|e| StoreError::Migrate {
            table: def.name().to_string(),
            row: format!("{:?}", k.value()),
            reason: e.to_string(),
        })?;
        match new {
            Some(b) => {
                to.insert(k.value(), b.as_slice())?;
                changed += 1;
            }
            None => {
                to.insert(k.value(), v.value())?;
            }
        }
        n += 1;
    }
    Ok((n, changed))
}

/// Copy `vectors` (each row through `upgrade`, when given) and count its rows per space into
/// `counts` (`vec_counts` of the copy is made from them, never copied). Returns (rows copied,
/// rows changed by `upgrade`).
fn copy_vectors(
    src: &impl Source,
    dst: &WriteTransaction,
    upgrade: Option<&RowUpgrade<'_>>,
    counts: &mut VectorCounts,
) -> Result<(u64, u64), StoreError> {
    let from = src.table(VECTORS)?;
    let mut to = dst.open_table(VECTORS)?;
    let (mut n, mut changed) = (0, 0);
    for row in redb::ReadableTable::iter(&from)? {
        let (k, v) = row?;
        let (id, space) = k.value();
        let new = match upgrade {
            Some(up) => up(VECTORS.name(), v.value()).map_err(|e| StoreError::Migrate {
                table: VECTORS.name().to_string(),
                row: format!("{:?}", k.value()),
                reason: e.to_string(),
            })?,
            None => None,
        };
        match new {
            Some(b) => {
                to.insert((id, space), b.as_slice())?;
                changed += 1;
            }
            None => {
                to.insert((id, space), v.value())?;
            }
        }
        match counts.get_mut(space) {
            Some(c) => *c += 1,
            None => {
                counts.insert(space.to_owned(), 1);
            }
        }
        n += 1;
    }
    Ok((n, changed))
}

/// [`copy_table`] for a multimap table.
fn copy_multimap<K: redb::Key + 'static, V: redb::Key + 'static>(
    src: &impl Source,
    dst: &WriteTransaction,
    def: MultimapTableDefinition<K, V>,
    dry: bool,
) -> Result<(u64, u64), StoreError> {
    if dry {
        return Ok((0, 0));
    }
    let from = src.multimap(def)?;
    let mut to = dst.open_multimap_table(def)?;
    let mut n = 0;
    for row in redb::ReadableMultimapTable::iter(&from)? {
        let (k, values) = row?;
        for v in values {
            to.insert(k.value(), v?.value())?;
            n += 1;
        }
    }
    Ok((n, 0))
}

/// Copy table `name` with the definition of that name among the `$def`s; an unknown name is
/// [`StoreError::UnknownTable`].
macro_rules! copy_named {
    ($copy:ident, $src:expr, $dst:expr, $name:expr, $dry:expr, [$($def:expr),* $(,)?]) => {
        match $name {
            $(n if n == $def.name() => $copy($src, $dst, $def, $dry),)*
            other => Err(StoreError::UnknownTable { name: other.to_string() }),
        }
    };
}

/// Every table of the store, by its definition; the record tables through `upgrade`.
/// `vectors` is counted into `counts`; `vec_counts` is not copied (it is made from them).
fn copy_one(
    src: &impl Source,
    dst: &WriteTransaction,
    name: &str,
    dry: bool,
    upgrade: Option<&RowUpgrade<'_>>,
    counts: &mut VectorCounts,
) -> Result<(u64, u64), StoreError> {
    if !dry {
        match name {
            n if n == VECTORS.name() => return copy_vectors(src, dst, upgrade, counts),
            n if n == VEC_COUNTS.name() => return Ok((0, 0)),
            _ => {}
        }
    }
    if let (Some(up), false) = (upgrade, dry) {
        match name {
            n if n == CHUNKS.name() => return copy_records(src, dst, CHUNKS, up),
            n if n == SESSIONS.name() => return copy_records(src, dst, SESSIONS, up),
            n if n == CURSORS.name() => return copy_records(src, dst, CURSORS, up),
            n if n == SWAP_ENTRIES.name() => return copy_records(src, dst, SWAP_ENTRIES, up),
            n if n == SUMMARIES.name() => {
                return copy_records(src, dst, SUMMARIES, up);
            }
            n if n == POSTING_LISTS.name() => {
                return copy_records(src, dst, POSTING_LISTS, up);
            }
            _ => {}
        }
    }
    copy_named!(
        copy_table,
        src,
        dst,
        name,
        dry,
        [
            META,
            PROJECTS,
            CHUNKS,
            TURNS,
            HASHES,
            SESSIONS,
            CURSORS,
            VECTORS,
            VEC_COUNTS,
            VEC_BLOCKS,
            VEC_TAILS,
            LEX_STATS,
            POSTING_LISTS,
            PENDING,
            SWAP_BLOBS,
            SWAP_ENTRIES,
            SWAP_REFS,
            SWAP_ORDER,
            SWAP_VECTORS,
            SWAP_STATS,
            FORGOTTEN,
            SUMMARIES,
        ]
    )
}

/// Every multimap table of the store.
fn copy_one_multimap(
    src: &impl Source,
    dst: &WriteTransaction,
    name: &str,
    dry: bool,
) -> Result<(u64, u64), StoreError> {
    copy_named!(
        copy_multimap,
        src,
        dst,
        name,
        dry,
        [LEGACY_POSTINGS, SESSION_CHUNKS]
    )
}

/// The schema 1–2 postings (one multimap row per (term, chunk)) as packed per-term lists
/// (`super::postings`). Returns the postings read.
fn pack_legacy_postings(src: &impl Source, dst: &WriteTransaction) -> Result<u64, StoreError> {
    let from = src.multimap(LEGACY_POSTINGS)?;
    let mut to = dst.open_table(POSTING_LISTS)?;
    let mut n = 0;
    let mut entries = Vec::new();
    for row in redb::ReadableMultimapTable::iter(&from)? {
        let (k, values) = row?;
        let (project, term) = k.value();
        entries.clear();
        for v in values {
            entries.push(v?.value());
        }
        // Multimap values are sorted by (id, tf, len): ids ascend. One id twice would be a
        // damaged store; the checker would have said so, the packed list keeps the first.
        entries.dedup_by_key(|e| e.0);
        n += entries.len() as u64;
        for (base, bytes) in super::postings::split(&entries, None) {
            to.insert((project, term, base), bytes.as_slice())?;
        }
    }
    Ok(n)
}

/// Copy every table `src` holds into the empty database `dst`, one commit per table (the new
/// file is nobody else's yet: its commits only bound the memory a big table needs). Every name
/// is resolved first, so an unknown table stops the copy before a row is copied. Returns
/// (rows copied, rows changed by `how.upgrade`).
///
/// The copy's `vec_counts` is the count of the `vectors` rows it copied (a copy whose schema
/// predates the table gets none), so every copied file has exact counts whatever the source's
/// were; those rows are not among the rows copied.
pub(super) fn copy_all(
    src: &impl Source,
    dst: &Database,
    how: CopyRows<'_>,
) -> Result<(u64, u64), StoreError> {
    let (tables, multimaps) = src.names()?;
    let mut counts = VectorCounts::new();
    // Resolve every name first (a dry copy opens nothing).
    let probe = dst.begin_write()?;
    for name in &tables {
        copy_one(src, &probe, name, true, None, &mut counts)?;
    }
    for name in &multimaps {
        copy_one_multimap(src, &probe, name, true)?;
    }
    probe.abort()?;
    let (mut rows, mut changed) = (0, 0);
    for name in &tables {
        let tx = dst.begin_write()?;
        let (n, c) = copy_one(src, &tx, name, false, how.upgrade, &mut counts)?;
        rows += n;
        changed += c;
        if name == META.name() {
            let mut meta = tx.open_table(META)?;
            meta.remove(META_REWRITE_PENDING)?;
            meta.remove(super::remove::META_FORGOTTEN_OUTPUTS)?;
            if let Some(v) = how.schema {
                meta.insert(META_SCHEMA, v.to_le_bytes().as_slice())?;
            }
        }
        tx.commit()?;
    }
    if copy_schema(src, &tables, how)?.is_some_and(|v| v >= VEC_COUNTS_SINCE) {
        let tx = dst.begin_write()?;
        {
            let mut t = tx.open_table(VEC_COUNTS)?;
            for (space, n) in &counts {
                t.insert(space.as_str(), *n)?;
            }
        }
        tx.commit()?;
    }
    for name in &multimaps {
        let tx = dst.begin_write()?;
        if how.pack_postings && name == LEGACY_POSTINGS.name() {
            let n = pack_legacy_postings(src, &tx)?;
            rows += n;
            changed += n;
        } else {
            rows += copy_one_multimap(src, &tx, name, false)?.0;
        }
        tx.commit()?;
    }
    Ok((rows, changed))
}

/// The schema version of the copy: the one `how` writes, else the source's (None: the source
/// has no schema version).
fn copy_schema(
    src: &impl Source,
    tables: &[String],
    how: CopyRows<'_>,
) -> Result<Option<u32>, StoreError> {
    match how.schema {
        Some(v) => Ok(Some(v)),
        None if tables.iter().any(|n| n == META.name()) => {
            super::migrate::schema_of(&src.table(META)?)
        }
        None => Ok(None),
    }
}

impl Store {
    /// Rewrite the store into a fresh file holding only its live rows and put it in place (see
    /// the module doc). Waits for the write lock like any write ([`Store::write`]'s timeout).
    /// On failure the store is left as it was and the temporary file is removed.
    pub fn rewrite(&self) -> Result<RewriteReport, StoreError> {
        let started = Instant::now();
        let (opened, src) = self.begin_write()?;
        let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let bytes_before = size(&self.path);
        let copied = self.replace_with_copy(&src, CopyRows::default(), |_| Ok(()));
        // Only now may other writers go on: on the new file, which they see is in place.
        src.abort()?;
        drop(opened);
        let (rows, _) = copied?;
        self.current()?;
        Ok(RewriteReport {
            bytes_before,
            bytes_after: size(&self.path),
            rows,
            millis: started.elapsed().as_millis() as u64,
        })
    }

    /// Copy every row `src` (the transaction holding the store's write lock) sees into a new
    /// file next to the store, run `before_replace` with the store's path, and rename the copy
    /// over the store. The caller lets the lock go afterwards (`src.abort()`), so no commit can
    /// land in the old file in between. On failure the store is left as it was and the
    /// temporary file is removed. Returns (rows copied, rows changed by `how.upgrade`).
    pub(super) fn replace_with_copy(
        &self,
        src: &WriteTransaction,
        how: CopyRows<'_>,
        before_replace: impl FnOnce(&std::path::Path) -> Result<(), StoreError>,
    ) -> Result<(u64, u64), StoreError> {
        let dir = self
            .path
            .parent()
            .unwrap_or_else(|| std::path::Path::new("."))
            .to_path_buf();
        let name = self
            .path
            .file_name()
            .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
        // Left by a rewrite that died (no other can run: we hold the lock). They hold no
        // forgotten bytes (a copy is of what is left), but a full copy of the store each.
        let prefix = format!(".{name}.rewrite-");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix)
                && let Err(e) = std::fs::remove_file(entry.path())
            {
                tracing::warn!(file = %entry.path().display(), error = %e, "could not remove an unfinished rewrite");
            }
        }
        let tmp = dir.join(format!(
            "{prefix}{}-{}",
            std::process::id(),
            create::nanos()
        ));
        let copied = (|| {
            let mut dst = create::builder()
                .create(&tmp)
                .map_err(|e| create::open_err(&tmp, e))?;
            crate::paths::restrict_file(&tmp)?;
            let rows = copy_all(src, &dst, how)?;
            // redb grows a file by doubling it (below its region size), so the copy of a 33 MB
            // store is a 64 MiB file, half of it free pages (measured at 5,000 turns). The copy
            // is nobody else's yet, so compacting it is safe (no reader can block it) and holds
            // no forgotten bytes (they were never copied); compaction trims the free tail.
            while dst.compact()? {}
            drop(dst); // closed: every commit above is durable
            #[cfg(test)]
            if let Some(f) = tests::BEFORE_RENAME.with(|h| h.borrow_mut().take()) {
                f();
            }
            before_replace(&self.path)?;
            std::fs::rename(&tmp, &self.path).map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })?;
            create::sync_dir(&dir);
            Ok::<(u64, u64), StoreError>(rows)
        })();
        if copied.is_err()
            && let Err(e) = std::fs::remove_file(&tmp)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(file = %tmp.display(), error = %e, "could not remove the unfinished rewrite");
        }
        copied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::sync::mpsc;
    use std::time::Duration;

    thread_local! {
        /// Runs in the rewriting thread once the copy is made, before the rename, while the
        /// old file's lock is held.
        pub(super) static BEFORE_RENAME: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    fn store_with_rows(dir: &std::path::Path) -> Store {
        let s = Store::open(dir.join("memctl.redb")).expect("open");
        s.write(|w| {
            for i in 0..50u32 {
                w.set_meta_value(&format!("row.{i}"), &i.to_le_bytes())?;
            }
            Ok(())
        })
        .expect("rows");
        s
    }

    /// A writer that waited on the old file's lock while the rewrite held it must commit into
    /// the new file, not into the unlinked old one.
    #[test]
    fn a_writer_waiting_during_the_rewrite_commits_into_the_new_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store_with_rows(dir.path());
        let path = store.path().to_path_buf();
        let other = Store::open(&path).expect("second handle");
        let (go, wait) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel::<()>();
        let finished = std::rc::Rc::new(finished);
        let held = std::rc::Rc::clone(&finished);
        let waiter = std::thread::spawn(move || {
            wait.recv().expect("signal");
            let res = other.write(|w| w.set_meta_value("from.waiter", b"yes"));
            done.send(()).expect("done");
            res
        });
        BEFORE_RENAME.with(|h| {
            *h.borrow_mut() = Some(Box::new(move || {
                go.send(()).expect("signal");
                std::thread::sleep(Duration::from_millis(300));
                assert!(
                    held.try_recv().is_err(),
                    "a write went through while the rewrite held the lock"
                );
            }));
        });
        let rep = store.rewrite().expect("rewrite");
        assert!(rep.rows >= 50, "{rep:?}");
        waiter.join().expect("join").expect("the waiter's write");
        finished.recv().expect("the waiter finished");
        let fresh = Store::open(&path).expect("fresh handle");
        let r = fresh.read().expect("read");
        assert_eq!(
            r.meta_value("from.waiter").expect("meta"),
            Some(b"yes".to_vec())
        );
        assert_eq!(
            r.meta_value("row.49").expect("meta"),
            Some(49u32.to_le_bytes().to_vec())
        );
    }

    /// Why the store is rewritten rather than compacted (the module doc's measurement, kept as
    /// a check of the assumption: if a redb release zeroes freed pages, this fails and the
    /// rewrite can be reconsidered).
    #[test]
    fn redb_compaction_leaves_deleted_bytes_and_refuses_beside_a_reader() {
        use redb::{ReadableDatabase, ReadableTableMetadata};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.redb");
        let mut db = create::builder().create(&path).expect("create");
        let t: TableDefinition<u64, &str> = TableDefinition::new("t");
        // Keys that say it too, like the postings' terms.
        let k: TableDefinition<&str, u64> = TableDefinition::new("k");
        let marker = "ZEBRAMARKER42";
        let count = |p: &std::path::Path| {
            let b = std::fs::read(p).expect("read");
            b.windows(marker.len())
                .filter(|w| *w == marker.as_bytes())
                .count()
        };
        for round in 0..5u64 {
            let w = db.begin_write().expect("write");
            {
                let mut table = w.open_table(t).expect("table");
                let mut keys = w.open_table(k).expect("table");
                for i in 0..2000u64 {
                    let id = round * 10_000 + i;
                    let said = i % 10 == 0;
                    let v = if said {
                        format!("{marker} row {id} {}", "x".repeat(300))
                    } else {
                        format!("plain row {id} {}", "y".repeat(300))
                    };
                    table.insert(id, v.as_str()).expect("insert");
                    let key = format!("key{id}{}", if said { marker } else { "" });
                    keys.insert(key.as_str(), id).expect("insert");
                }
            }
            w.commit().expect("commit");
        }
        let w = db.begin_write().expect("write");
        {
            let mut table = w.open_table(t).expect("table");
            let mut keys = w.open_table(k).expect("table");
            for round in 0..5u64 {
                for i in (0..2000u64).step_by(10) {
                    let id = round * 10_000 + i;
                    table.remove(id).expect("remove");
                    keys.remove(format!("key{id}{marker}").as_str())
                        .expect("remove");
                }
            }
        }
        w.commit().expect("commit");
        let peer = create::builder().open(&path).expect("a second handle");
        let reading = peer.begin_read().expect("read");
        assert!(
            db.compact().is_err(),
            "compaction refuses while another handle reads"
        );
        drop(reading);
        drop(peer);
        while db.compact().expect("compact") {}
        let left = db
            .begin_read()
            .expect("read")
            .open_table(t)
            .expect("table")
            .len()
            .expect("len");
        assert_eq!(left, 9000);
        drop(db);
        assert!(count(&path) > 0, "compaction left no deleted byte behind");
    }

    #[test]
    fn a_dead_rewrites_copy_is_removed_by_the_next_rewrite() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store_with_rows(dir.path());
        let dead = dir.path().join(".memctl.redb.rewrite-999999-1");
        std::fs::write(&dead, b"a copy left by a killed process").expect("write");
        store.rewrite().expect("rewrite");
        assert!(!dead.exists());
    }

    #[test]
    fn an_unknown_table_stops_the_rewrite_and_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store_with_rows(dir.path());
        store
            .write(|w| {
                w.raw_tx()
                    .open_table(TableDefinition::<u64, u64>::new("from_the_future"))?
                    .insert(1, 2)?;
                Ok(())
            })
            .expect("future table");
        let before = std::fs::read(store.path()).expect("read");
        let err = store.rewrite().expect_err("refused");
        assert!(err.to_string().contains("from_the_future"), "{err}");
        assert_eq!(std::fs::read(store.path()).expect("read"), before);
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            left,
            vec!["memctl.redb".to_string()],
            "no temporary file left"
        );
        store
            .write(|w| w.set_meta_value("still", b"writable"))
            .expect("the store still works");
    }
}
