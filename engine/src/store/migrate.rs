//! Schema migrations: how a store written by an earlier memctl is carried forward, and
//! consistent backups.
//!
//! Two kinds of change, two mechanisms:
//! - **A record gains or changes a field**: no migration. Every record value starts with its
//!   own format version byte ([`crate::codec::Record`]); the new code decodes every older
//!   version it knows and writes the newest. Old and new rows live side by side.
//! - **A table's layout changes** (a key or a fixed-width value type, a table split or
//!   renamed): [`SCHEMA_VERSION`] goes up and one [`Migration`] is added to [`MIGRATIONS`]. A
//!   store of an older schema is refused by everything that opens it for use
//!   ([`StoreError::NeedsMigration`], which says to run `memctl migrate`); the CLI migrates on
//!   its own, hooks start `memctl migrate` in the background and fail open (a migration of a
//!   big store takes seconds: never on the prompt path). Nothing is lost meanwhile: the
//!   transcripts stay on disk and the cursors did not move, so the next hook archives the rest.
//!
//! How a migration runs: it holds the store's write lock (no other process can commit), copies
//! every row of every table into a new file next to the store, passing the rows of the tables
//! a migration names through its row function, writes the new schema version, makes the file
//! durable and renames it over the store (the same machinery as forget's rewrite,
//! [`super::rewrite`]; every other handle notices the new file at its next transaction). The
//! backup is the old file itself: hard-linked into `backups/` before the rename, so it is
//! every row as the earlier release wrote it (going back = copying it into place). Where a
//! hard link cannot be made, a consistent copy is written instead.
//!
//! Schema versions:
//! - 1: records were bare positional bincode (no version byte).
//! - 2: every record value (chunks, sessions, cursors, swap entries, session summaries) starts
//!   with its format version byte.
//! - 3: the `postings` multimap (one row per (term, chunk)) became `posting_lists`, packed
//!   per-term segments (`super::postings`): rows are unchanged, the table is converted as it
//!   is copied (`rewrite::CopyRows::pack_postings`).
//! - 4: re-scoring vectors (`vectors`) are f16 instead of f32 (half the bytes);
//!   each row is converted as it is copied ([`v3_to_v4`]).
//! - 5: `vec_counts` holds the rows of `vectors` per space (`status` reads it instead of
//!   scanning every vector); no row changes, the copy counts the vectors it copies
//!   (`rewrite::copy_all`, which does so for every copy of a schema-5 store).
//! - 6: every posting segment (`posting_lists`) starts with a header of its entry count, max
//!   term frequency and min document length, which bound the BM25 score of its entries so
//!   search skips segments that cannot reach the top k; each row gains it as it is copied
//!   ([`v5_to_v6`], the entries' bytes unchanged).

use super::rewrite::{CopyRows, RowUpgrade, copy_all};
use super::schema::*;
use super::sessions::decode_session;
use super::{ChunkRecord, CursorRecord};
use super::{Store, StoreError, create};
use crate::codec::{self, CodecError, Record};
use redb::{ReadableTable, TableHandle};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One step from schema `from` to `from + 1`.
pub(crate) struct Migration {
    /// The schema version it starts from.
    pub from: u32,
    /// What it changes, for `memctl migrate`'s report.
    pub what: &'static str,
    /// The new value of one row of a table.
    pub row: RowFn,
    /// The step also converts the postings table (see `CopyRows::pack_postings`).
    pub pack_postings: bool,
}

/// A migration's row function: the new value of one row of `table`, `None` when unchanged.
pub(crate) type RowFn = fn(table: &str, value: &[u8]) -> Result<Option<Vec<u8>>, CodecError>;

/// Every migration, oldest first: `MIGRATIONS[i].from == i + 1`, the last one ends at
/// [`SCHEMA_VERSION`] (a test checks both).
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        from: 1,
        what: "every record starts with its format version byte",
        row: v1_to_v2,
        pack_postings: false,
    },
    Migration {
        from: 2,
        what: "BM25 postings packed per term (one value per term segment, not one row per posting)",
        row: |_, _| Ok(None),
        pack_postings: true,
    },
    Migration {
        from: 3,
        what: "re-scoring vectors stored as f16 (half the bytes of f32)",
        row: v3_to_v4,
        pack_postings: false,
    },
    Migration {
        from: 4,
        what: "re-scoring vectors counted per space (status reads the counts, not every vector)",
        row: |_, _| Ok(None),
        pack_postings: false,
    },
    Migration {
        from: 5,
        what: "BM25 posting segments carry score bounds (search skips what cannot rank)",
        row: v5_to_v6,
        pack_postings: false,
    },
];

/// Schema 5 → 6: a posting segment gains its header (`postings::upgrade_segment`); a segment
/// that does not decode is reported, never carried over unread.
fn v5_to_v6(table: &str, v: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    if table != POSTING_LISTS.name() {
        return Ok(None);
    }
    super::postings::upgrade_segment(v)
}

/// Schema 3 → 4: a row of `vectors` (f32 little-endian) becomes f16; a row whose length is
/// not a whole number of f32 values is reported, never carried over unread.
fn v3_to_v4(table: &str, v: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    if table != VECTORS.name() {
        return Ok(None);
    }
    Ok(Some(codec::f32s_to_f16_bytes(&codec::bytes_to_f32s(v)?)))
}

/// Schema 1 → 2: the schema-1 value of a record is exactly the body of record version 1, so
/// the row becomes `[1] + value` once it is known to decode (a row that does not is reported,
/// never carried over unread). Sessions also had an older layout within schema 1 (before
/// `compactions`); those are decoded and written in the current layout.
fn v1_to_v2(table: &str, v: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    fn prefixed<T: Record>(v: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
        T::decode_body(1, v)?;
        let mut out = Vec::with_capacity(v.len() + 1);
        out.push(1);
        out.extend_from_slice(v);
        Ok(Some(out))
    }
    match table {
        t if t == CHUNKS.name() => prefixed::<ChunkRecord>(v),
        t if t == CURSORS.name() => prefixed::<CursorRecord>(v),
        t if t == SWAP_ENTRIES.name() => prefixed::<super::SwapEntry>(v),
        t if t == SUMMARIES.name() => {
            // A session summary's body is JSON (`crate::summary`): checked as JSON here, so
            // that the store does not depend on the summary module.
            serde_json::from_slice::<serde::de::IgnoredAny>(v)
                .map_err(|e| CodecError::Decode(format!("session summary: {e}")))?;
            Ok(Some([&[1u8][..], v].concat()))
        }
        t if t == SESSIONS.name() => {
            let rec = decode_session(v)?;
            Ok(Some(codec::encode_record(&rec)?))
        }
        _ => Ok(None),
    }
}

/// What [`Store::migrate`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MigrateReport {
    /// The schema version the store had.
    pub from: u32,
    /// The schema version it has now.
    pub to: u32,
    /// What each step changed.
    pub steps: Vec<String>,
    /// The backup of the store as it was (None when nothing had to be done).
    pub backup: Option<PathBuf>,
    /// Rows copied.
    pub rows: u64,
    /// Rows rewritten by a step.
    pub rows_changed: u64,
    /// Size of the store file before and after.
    pub bytes_before: u64,
    /// Size of the migrated file.
    pub bytes_after: u64,
    /// Wall time, lock wait included.
    pub millis: u64,
}

/// What [`Store::backup`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BackupReport {
    /// The backup file.
    pub path: PathBuf,
    /// Rows copied.
    pub rows: u64,
    /// Size of the backup.
    pub bytes: u64,
    /// Wall time.
    pub millis: u64,
}

/// The schema version a transaction sees (None: a store whose tables were never created).
pub(super) fn schema_of(
    meta: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<Option<u32>, StoreError> {
    meta.get(META_SCHEMA)?
        .map(|v| {
            codec::le_bytes::<4>(v.value(), "schema version")
                .map(u32::from_le_bytes)
                .map_err(|source| StoreError::Corrupt {
                    what: "meta table",
                    source,
                })
        })
        .transpose()
}

/// The steps from `found` to [`SCHEMA_VERSION`].
fn plan(found: u32) -> Result<&'static [Migration], StoreError> {
    let first = MIGRATIONS.iter().position(|m| m.from == found);
    match first {
        Some(i) => Ok(&MIGRATIONS[i..]),
        None => Err(StoreError::SchemaVersion {
            found,
            supported: SCHEMA_VERSION,
        }),
    }
}

/// `dir/<stem>-<what>-<UTC time>.redb`, never an existing name.
pub(crate) fn backup_name(dir: &Path, what: &str) -> PathBuf {
    let now = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let mut n = 0;
    loop {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let p = dir.join(format!("memctl-{what}-{now}{suffix}.redb"));
        if !p.exists() {
            return p;
        }
        n += 1;
    }
}

impl Store {
    /// Migrate the store at `path` to [`SCHEMA_VERSION`] (see the module doc); the old file is
    /// kept in `backup_dir`. A store already current is left alone (`from == to`).
    pub fn migrate(path: &Path, backup_dir: &Path) -> Result<MigrateReport, StoreError> {
        let started = Instant::now();
        if !path.exists() {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                reason: "no store here yet (nothing to migrate)".into(),
            });
        }
        let mut store = Self::open_unchecked(path)?;
        store.set_write_timeout(std::time::Duration::from_secs(120));
        let (opened, src) = store.begin_write()?;
        let found = match src.open_table(META) {
            Ok(meta) => schema_of(&meta)?,
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(e.into()),
        };
        let Some(found) = found.filter(|&v| v != SCHEMA_VERSION) else {
            src.abort()?;
            return Ok(MigrateReport {
                from: SCHEMA_VERSION,
                to: SCHEMA_VERSION,
                millis: started.elapsed().as_millis() as u64,
                ..MigrateReport::default()
            });
        };
        if found > SCHEMA_VERSION {
            src.abort()?;
            return Err(StoreError::SchemaVersion {
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let steps = plan(found)?;
        let upgrade = |table: &str, v: &[u8]| -> Result<Option<Vec<u8>>, CodecError> {
            let mut cur: Option<Vec<u8>> = None;
            for m in steps {
                if let Some(next) = (m.row)(table, cur.as_deref().unwrap_or(v))? {
                    cur = Some(next);
                }
            }
            Ok(cur)
        };
        crate::paths::ensure_private_dir(backup_dir)?;
        let backup = backup_name(backup_dir, &format!("schema{found}"));
        let bytes_before = std::fs::metadata(path).map_or(0, |m| m.len());
        let rows = store.replace_with_copy(
            &src,
            CopyRows {
                upgrade: Some(&upgrade as &RowUpgrade),
                schema: Some(SCHEMA_VERSION),
                pack_postings: steps.iter().any(|m| m.pack_postings),
            },
            |store_path| keep_as_backup(store_path, &backup, &src),
        );
        src.abort()?;
        drop(opened);
        let (rows, rows_changed) = rows?;
        store.current()?;
        let report = MigrateReport {
            from: found,
            to: SCHEMA_VERSION,
            steps: steps.iter().map(|m| m.what.to_string()).collect(),
            backup: Some(backup),
            rows,
            rows_changed,
            bytes_before,
            bytes_after: std::fs::metadata(path).map_or(0, |m| m.len()),
            millis: started.elapsed().as_millis() as u64,
        };
        tracing::info!(
            from = found,
            to = SCHEMA_VERSION,
            rows,
            ms = report.millis,
            "store migrated"
        );
        Ok(report)
    }

    /// A consistent copy of the store at `out` (a new file; an existing one is an error), made
    /// from one read transaction: hooks and other writers keep committing meanwhile, and the
    /// copy is the store as of one commit. The copy opens like any store.
    pub fn backup(&self, out: &Path) -> Result<BackupReport, StoreError> {
        let started = Instant::now();
        if out.exists() {
            return Err(StoreError::Io {
                path: out.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "the backup file exists already",
                ),
            });
        }
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        let tmp = dir.join(format!(
            ".{}.partial-{}-{}",
            out.file_name()
                .map_or_else(|| "backup".into(), |n| n.to_string_lossy()),
            std::process::id(),
            create::nanos()
        ));
        let opened = self.current()?;
        let rtx = opened.db.begin_read()?;
        let made = (|| {
            let dst = create::builder()
                .create(&tmp)
                .map_err(|e| create::open_err(&tmp, e))?;
            crate::paths::restrict_file(&tmp)?;
            let (rows, _) = copy_all(&rtx, &dst, CopyRows::default())?;
            drop(dst);
            // link(2) fails when `out` appeared meanwhile: never overwrite.
            std::fs::hard_link(&tmp, out).map_err(|source| StoreError::Io {
                path: out.to_path_buf(),
                source,
            })?;
            create::sync_dir(dir);
            Ok::<u64, StoreError>(rows)
        })();
        if let Err(e) = std::fs::remove_file(&tmp)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(file = %tmp.display(), error = %e, "could not remove a partial backup");
        }
        let rows = made?;
        Ok(BackupReport {
            path: out.to_path_buf(),
            rows,
            bytes: std::fs::metadata(out).map_or(0, |m| m.len()),
            millis: started.elapsed().as_millis() as u64,
        })
    }
}

/// Keep the store file as it is now (the write lock is held: it is at a commit) under
/// `backup`: a hard link (instant, every row as the earlier release wrote it); where links
/// are not possible, a copy of every row from the lock holder's view.
fn keep_as_backup(
    store_path: &Path,
    backup: &Path,
    src: &redb::WriteTransaction,
) -> Result<(), StoreError> {
    match std::fs::hard_link(store_path, backup) {
        Ok(()) => Ok(()),
        Err(e) => {
            tracing::info!(error = %e, "no hard link for the backup; copying the store instead");
            let dst = create::builder()
                .create(backup)
                .map_err(|e| create::open_err(backup, e))?;
            crate::paths::restrict_file(backup)?;
            copy_all(src, &dst, CopyRows::default())?;
            Ok(())
        }
    }
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
