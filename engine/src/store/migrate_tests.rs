//! Migrations and backups on real redb files. The schema-1 stores here are made the way
//! schema 1 stored them (records without their version byte, schema version 1 in meta); the
//! committed fixture written by the schema-1 release itself is tested through the binaries
//! (`cli/tests/store_v1_fixture.rs`).

use super::*;
use crate::codec::{Record, decode_record, encode_record};
use crate::forget::fixture::{SA, audit, engine_at, lexical_hits, three_sessions};
use crate::store::{ChunkId, check};
use crate::summary::SummaryConfig;
use redb::{ReadableDatabase, ReadableTableMetadata};

/// Every record table, by name, with its key kind, for the downgrade below.
fn strip_version_bytes<K: redb::Key + 'static>(
    tx: &redb::WriteTransaction,
    def: redb::TableDefinition<K, &'static [u8]>,
) -> u64
where
    for<'a> K::SelfType<'a>: Clone,
{
    let mut t = match tx.open_table(def) {
        Ok(t) => t,
        Err(e) => panic!("open {}: {e}", def.name()),
    };
    let mut n = 0;
    let rows: Vec<(Vec<u8>, Vec<u8>)> = redb::ReadableTable::iter(&t)
        .expect("iter")
        .map(|r| {
            let (k, v) = r.expect("row");
            (
                K::as_bytes(&k.value()).as_ref().to_vec(),
                v.value().to_vec(),
            )
        })
        .collect();
    for (k, v) in rows {
        // Swap entries are format 2 now (`in_place`, a bool at the end of the positional
        // body): schema 1 wrote format 1, that body without the bool (never set in these
        // fixtures).
        // Chunk records are format 2 now (LZ4 of the format-1 body).
        let body: Vec<u8> = match v.first() {
            Some(1) => v[1..].to_vec(),
            Some(2) if def.name() == "swap_entries" && v.last() == Some(&0) => {
                v[1..v.len() - 1].to_vec()
            }
            // Session records are format 2 now (`agent` at the end; Claude Code is one 0 byte).
            Some(2) if def.name() == "sessions" && v.last() == Some(&0) => {
                v[1..v.len() - 1].to_vec()
            }
            Some(2) if def.name() == "chunks" => {
                let rec = ChunkRecord::decode_body(2, &v[1..]).expect("chunk record");
                crate::codec::encode(&rec).expect("body")
            }
            other => panic!("{}: a record of format {other:?}", def.name()),
        };
        let key = K::from_bytes(&k);
        t.insert(key, body.as_slice()).expect("insert");
        n += 1;
    }
    n
}

/// Run `f` in one committed write transaction on the file at `path`, below the store's own
/// checks (to make stores of other schemas and damaged rows).
fn raw_write<T>(path: &Path, f: impl FnOnce(&redb::WriteTransaction) -> T) -> T {
    let db = create::builder().open(path).expect("open raw");
    let tx = db.begin_write().expect("write");
    let out = f(&tx);
    tx.commit().expect("commit");
    out
}

/// Set the schema version in the meta table of `tx`.
fn put_schema(tx: &redb::WriteTransaction, v: u32) {
    tx.open_table(META)
        .expect("meta")
        .insert(META_SCHEMA, v.to_le_bytes().as_slice())
        .expect("schema");
}

/// Turn the (current) store at `path` into what the schema-5 release wrote: posting segments
/// of format 1 (the entries without the header), schema version 5. Returns the segments.
fn downgrade_to_schema_5(path: &Path) -> u64 {
    raw_write(path, |tx| {
        let mut t = tx.open_table(POSTING_LISTS).expect("posting lists");
        let rows: Vec<((u32, String, u64), Vec<u8>)> = redb::ReadableTable::iter(&t)
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("row");
                let (p, term, base) = k.value();
                ((p, term.to_string(), base), v.value().to_vec())
            })
            .collect();
        for ((p, term, base), v) in &rows {
            let (_, body) = crate::store::postings::segment_header(v).expect("header");
            let old = [&[1u8][..], &v[body..]].concat();
            t.insert((*p, term.as_str(), *base), old.as_slice())
                .expect("insert");
        }
        drop(t);
        put_schema(tx, 5);
        rows.len() as u64
    })
}

/// Turn the (current) store at `path` into what the schema-4 release wrote: no vector counts,
/// format-1 posting segments, schema version 4. Returns the counts it held.
fn downgrade_to_schema_4(path: &Path) -> std::collections::BTreeMap<String, u64> {
    downgrade_to_schema_5(path);
    raw_write(path, |tx| {
        let counts = redb::ReadableTable::iter(&tx.open_table(VEC_COUNTS).expect("counts"))
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("row");
                (k.value().to_string(), v.value())
            })
            .collect();
        assert!(tx.delete_table(VEC_COUNTS).expect("delete"));
        put_schema(tx, 4);
        counts
    })
}

/// Turn the (current) store at `path` into what the schema-3 release wrote: f32 re-scoring
/// vectors, schema version 3. Returns the vectors converted.
fn downgrade_to_schema_3(path: &Path) -> u64 {
    downgrade_to_schema_4(path);
    raw_write(path, |tx| {
        let mut t = tx.open_table(VECTORS).expect("vectors");
        let rows: Vec<((u64, String), Vec<u8>)> = redb::ReadableTable::iter(&t)
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("row");
                let (id, key) = k.value();
                ((id, key.to_string()), v.value().to_vec())
            })
            .collect();
        for ((id, key), v) in &rows {
            let f32s = crate::codec::f16_bytes_to_f32s(v).expect("f16 vector");
            let bytes = crate::codec::f32s_to_bytes(&f32s);
            t.insert((*id, key.as_str()), bytes.as_slice())
                .expect("insert");
        }
        drop(t);
        put_schema(tx, 3);
        rows.len() as u64
    })
}

/// Turn the (current) store at `path` into what the schema-2 release wrote: f32 vectors, one
/// row per posting in the `postings` multimap, no `posting_lists`, schema version 2. Returns
/// (postings moved, vectors converted).
fn downgrade_to_schema_2(path: &Path) -> (u64, u64) {
    let vectors = downgrade_to_schema_3(path);
    let postings = raw_write(path, |tx| {
        let mut n = 0;
        {
            let lists = tx.open_table(POSTING_LISTS).expect("posting lists");
            let mut legacy = tx.open_multimap_table(LEGACY_POSTINGS).expect("legacy");
            for row in redb::ReadableTable::iter(&lists).expect("iter") {
                let (k, v) = row.expect("row");
                let (p, term, base) = k.value();
                for e in crate::store::postings::decode_segment(base, v.value()).expect("decode") {
                    legacy.insert((p, term), e).expect("insert");
                    n += 1;
                }
            }
        }
        assert!(tx.delete_table(POSTING_LISTS).expect("delete"));
        put_schema(tx, 2);
        n
    });
    (postings, vectors)
}

/// Turn the (current) store at `path` into what the schema-1 release wrote: bare record
/// bodies, postings one row each, schema version 1. Returns the rows changed.
fn downgrade_to_schema_1(path: &Path) -> u64 {
    let (postings, vectors) = downgrade_to_schema_2(path);
    postings
        + vectors
        + raw_write(path, |tx| {
            let n = strip_version_bytes(tx, CHUNKS)
                + strip_version_bytes(tx, SESSIONS)
                + strip_version_bytes(tx, CURSORS)
                + strip_version_bytes(tx, SWAP_ENTRIES)
                + strip_version_bytes(tx, crate::summary::SUMMARIES);
            put_schema(tx, 1);
            n
        })
}

/// The schema version and a digest of every record row of the file at `path` (compared
/// instead of the file's bytes: opening a redb file for writing updates its header).
fn contents(path: &Path) -> (u32, String) {
    use sha2::Digest;
    let db = create::builder().open(path).expect("open raw");
    let tx = db.begin_read().expect("read");
    let schema = schema_of(&tx.open_table(META).expect("meta"))
        .expect("schema")
        .expect("a schema version");
    let mut h = sha2::Sha256::new();
    for row in redb::ReadableTable::iter(&tx.open_table(CHUNKS).expect("chunks")).expect("iter") {
        let (k, v) = row.expect("row");
        h.update(k.value().to_le_bytes());
        h.update(v.value());
    }
    for row in redb::ReadableTable::iter(&tx.open_table(SESSIONS).expect("sessions")).expect("iter")
    {
        let (k, v) = row.expect("row");
        h.update(k.value().as_bytes());
        h.update(v.value());
    }
    (schema, hex::encode(h.finalize()))
}

fn set_schema(path: &Path, v: u32) {
    raw_write(path, |tx| put_schema(tx, v));
}

/// Everything a user would see of the archive: every chunk record, every session record,
/// every swap entry, the stored summary, and a search.
fn snapshot(e: &crate::Engine) -> (Vec<(ChunkId, ChunkRecord)>, String) {
    let r = e.store().read().expect("read");
    let mut chunks = Vec::new();
    r.for_each_chunk(|id, rec| {
        chunks.push((id, rec));
        Ok(())
    })
    .expect("chunks");
    let sessions = r.sessions().expect("sessions");
    let summary = crate::summary::stored(&r, SA).expect("summary");
    let swaps = e.swap_list(None).expect("swap list");
    let hits = lexical_hits(e, "release tag ZebraFrost");
    (
        chunks,
        format!("{sessions:?}\n{summary:?}\n{swaps:?}\n{hits:?}"),
    )
}

#[test]
fn the_migrations_chain_from_schema_1_to_the_current_schema() {
    for (i, m) in MIGRATIONS.iter().enumerate() {
        assert_eq!(m.from as usize, i + 1, "{}", m.what);
    }
    assert_eq!(MIGRATIONS.last().map(|m| m.from + 1), Some(SCHEMA_VERSION));
}

#[test]
fn a_schema_1_store_is_refused_until_migrated_and_then_answers_exactly_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    e.summarize(SA, &SummaryConfig::default())
        .expect("summarize")
        .expect("a summary");
    let before = snapshot(&e);
    assert!(before.0.len() >= 7, "{} chunks", before.0.len());
    let path = e.store_path();
    drop(e);
    let changed = downgrade_to_schema_1(&path);
    let v1 = contents(&path);

    // Everything that opens it for use is told what to run.
    let err = Store::open(&path).expect_err("a schema-1 store must not open as current");
    let msg = err.to_string();
    assert!(
        matches!(err, StoreError::NeedsMigration { found: 1, .. })
            && msg.contains("memctl migrate"),
        "{msg}"
    );

    let backups = dir.path().join("data").join("backups");
    let rep = Store::migrate(&path, &backups).expect("migrate");
    assert_eq!((rep.from, rep.to), (1, SCHEMA_VERSION), "{rep:?}");
    assert_eq!(rep.rows_changed, changed, "{rep:?}");
    let backup = rep.backup.clone().expect("a backup");
    assert_eq!(
        contents(&backup),
        v1,
        "the backup is the schema-1 store as it was"
    );

    let e = engine_at(&dir.path().join("data"));
    let after = snapshot(&e);
    assert_eq!(after.0, before.0, "every chunk record comes back as it was");
    assert_eq!(
        after.1, before.1,
        "sessions, summary, swap entries and search"
    );
    audit(&e);
    let check = check::check_store(&path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
    // And it keeps working: a new write and a search.
    e.summarize(SA, &SummaryConfig::default())
        .expect("summarize again");

    // Migrating again does nothing.
    let again = Store::migrate(&path, &backups).expect("migrate again");
    assert_eq!(
        (again.from, again.to, again.backup),
        (SCHEMA_VERSION, SCHEMA_VERSION, None)
    );
}

/// Schema 2 → 3: the postings multimap becomes packed per-term lists; every chunk, session
/// and search answers as before, the checker finds nothing, and new writes and forgets work
/// on the packed lists.
#[test]
fn a_schema_2_store_migrates_to_packed_postings_and_answers_exactly_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let before = snapshot(&e);
    let path = e.store_path();
    drop(e);
    let (moved, vectors) = downgrade_to_schema_2(&path);
    assert!(moved > 50, "{moved} postings");
    let err = Store::open(&path).expect_err("a schema-2 store must not open as current");
    assert!(
        matches!(err, StoreError::NeedsMigration { found: 2, .. }),
        "{err}"
    );
    let backups = dir.path().join("data").join("backups");
    let rep = Store::migrate(&path, &backups).expect("migrate");
    assert_eq!((rep.from, rep.to), (2, SCHEMA_VERSION), "{rep:?}");
    assert_eq!(
        rep.rows_changed,
        moved + vectors,
        "every posting packed, every vector f16: {rep:?}"
    );
    assert_eq!(contents(&rep.backup.clone().expect("backup")).0, 2);
    {
        let db = create::builder().open(&path).expect("open raw");
        let tx = db.begin_read().expect("read");
        assert!(
            tx.open_multimap_table(LEGACY_POSTINGS).is_err(),
            "the old postings table is gone"
        );
        assert!(
            tx.open_table(POSTING_LISTS)
                .expect("lists")
                .len()
                .expect("len")
                > 0
        );
    }
    let e = engine_at(&dir.path().join("data"));
    assert_eq!(
        snapshot(&e),
        before,
        "chunks, sessions, summary, swaps, search"
    );
    audit(&e);
    let check = check::check_store(&path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
    assert!(check.counts.postings >= moved, "{:?}", check.counts);
}

/// Schema 3 → 4: f32 re-scoring vectors become f16 (half the bytes); every chunk, session
/// and search answers as before, each vector within f16 rounding of what it was, and the
/// checker finds nothing.
#[test]
fn a_schema_3_store_migrates_to_f16_vectors_and_answers_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let before = snapshot(&e);
    let path = e.store_path();
    let hash = crate::embed::HashEmbedder::new();
    let originals: Vec<(ChunkId, Vec<f32>)> = before
        .0
        .iter()
        .map(|(id, rec)| {
            let v = crate::embed::Embedder::embed(&hash, &rec.chunk.text).expect("embed");
            (*id, v)
        })
        .collect();
    drop(e);
    let converted = downgrade_to_schema_3(&path);
    assert_eq!(
        converted,
        before.0.len() as u64,
        "one hash vector per chunk"
    );
    {
        // What schema 3 stored: 4 bytes per dimension.
        let db = create::builder().open(&path).expect("open raw");
        let tx = db.begin_read().expect("read");
        let t = tx.open_table(VECTORS).expect("vectors");
        for row in redb::ReadableTable::iter(&t).expect("iter") {
            assert_eq!(row.expect("row").1.value().len(), 384 * 4);
        }
    }
    let err = Store::open(&path).expect_err("a schema-3 store must not open as current");
    assert!(
        matches!(err, StoreError::NeedsMigration { found: 3, .. }),
        "{err}"
    );
    let backups = dir.path().join("data").join("backups");
    let rep = Store::migrate(&path, &backups).expect("migrate");
    assert_eq!((rep.from, rep.to), (3, SCHEMA_VERSION), "{rep:?}");
    assert_eq!(rep.rows_changed, converted + raw_segments(&path), "{rep:?}");
    let e = engine_at(&dir.path().join("data"));
    assert_eq!(
        snapshot(&e),
        before,
        "chunks, sessions, summary, swaps, search"
    );
    let r = e.store().read().expect("read");
    for (id, want) in &originals {
        let got = r
            .vector(*id, crate::embed::Embedder::id(&hash))
            .expect("read")
            .expect("a vector");
        assert_eq!(got.len(), want.len());
        let worst = got
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-3, "chunk {id}: off by {worst}");
    }
    drop(r);
    audit(&e);
    let check = check::check_store(&path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
    assert!(
        std::fs::metadata(&path).expect("meta").len() <= rep.bytes_before,
        "{rep:?}"
    );
}

/// The posting segments of the file at `path`.
fn raw_segments(path: &Path) -> u64 {
    let db = create::builder().open(path).expect("open raw");
    let tx = db.begin_read().expect("read");
    let t = tx.open_table(POSTING_LISTS).expect("lists");
    t.len().expect("len")
}

/// Schema 5 → 6: every posting segment gains its header of bounds, its entries unchanged;
/// search answers exactly as before (same hits, same scores) and the checker finds nothing.
#[test]
fn a_schema_5_store_migrates_to_segments_with_score_bounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let before = snapshot(&e);
    let path = e.store_path();
    let entries = |path: &Path| {
        let db = create::builder().open(path).expect("open raw");
        let tx = db.begin_read().expect("read");
        let t = tx.open_table(POSTING_LISTS).expect("lists");
        redb::ReadableTable::iter(&t)
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("row");
                let (p, term, base) = k.value();
                let e = crate::store::postings::decode_segment(base, v.value()).expect("decode");
                (p, term.to_string(), base, e, v.value()[0])
            })
            .collect::<Vec<_>>()
    };
    drop(e);
    let current = entries(&path);
    let segments = downgrade_to_schema_5(&path);
    assert!(segments > 20, "{segments} segments");
    let old = entries(&path);
    assert!(old.iter().all(|r| r.4 == 1), "format 1 after the downgrade");
    let err = Store::open(&path).expect_err("a schema-5 store must not open as current");
    assert!(
        matches!(err, StoreError::NeedsMigration { found: 5, .. }),
        "{err}"
    );
    let backups = dir.path().join("data").join("backups");
    let rep = Store::migrate(&path, &backups).expect("migrate");
    assert_eq!((rep.from, rep.to), (5, SCHEMA_VERSION), "{rep:?}");
    assert_eq!(rep.rows_changed, segments, "{rep:?}");
    assert_eq!(
        entries(&path),
        current,
        "same entries, each behind its header"
    );
    assert_eq!(contents(&rep.backup.clone().expect("backup")).0, 5);
    let e = engine_at(&dir.path().join("data"));
    assert_eq!(
        snapshot(&e),
        before,
        "chunks, sessions, summary, swaps, search"
    );
    audit(&e);
    let check = check::check_store(&path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
}

/// The raw `vec_counts` rows of the file at `path` (None: no such table).
fn raw_counts(path: &Path) -> Option<std::collections::BTreeMap<String, u64>> {
    let db = create::builder().open(path).expect("open raw");
    let tx = db.begin_read().expect("read");
    let t = tx.open_table(VEC_COUNTS).ok()?;
    Some(
        redb::ReadableTable::iter(&t)
            .expect("iter")
            .map(|r| {
                let (k, v) = r.expect("row");
                (k.value().to_string(), v.value())
            })
            .collect(),
    )
}

/// Schema 4 → 5: the vectors are counted per space as they are copied; no row changes, the
/// counts are exactly the rows (two spaces here), the backup is the schema-4 file without
/// them, and everything answers as before.
#[test]
fn a_schema_4_store_migrates_with_exact_vector_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    // A second space on some chunks, as the model leaves it.
    let model = crate::embed::EmbedderId::new("test-model", "fp32", 384);
    let ids: Vec<ChunkId> = snapshot(&e)
        .0
        .iter()
        .map(|(id, _)| *id)
        .step_by(2)
        .collect();
    e.store()
        .write(|w| {
            for id in &ids {
                let mut rec = w.get_record(*id)?.expect("record");
                w.put_vector(rec.project_id, *id, &model, &vec![0.5; 384])?;
                rec.embedders.push(model.key());
                w.update_record(*id, &rec)?;
                w.clear_pending(*id)?;
            }
            Ok(())
        })
        .expect("model vectors");
    let before = snapshot(&e);
    let rows = e
        .store()
        .read()
        .expect("read")
        .scan_vector_counts()
        .expect("scan");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows.get(&model.key()), Some(&(ids.len() as u64)));
    let path = e.store_path();
    drop(e);
    assert_eq!(
        downgrade_to_schema_4(&path),
        rows,
        "exact before the downgrade"
    );
    assert_eq!(raw_counts(&path), None);
    let err = Store::open(&path).expect_err("a schema-4 store must not open as current");
    assert!(
        matches!(err, StoreError::NeedsMigration { found: 4, .. }),
        "{err}"
    );
    let backups = dir.path().join("data").join("backups");
    let rep = Store::migrate(&path, &backups).expect("migrate");
    assert_eq!((rep.from, rep.to), (4, SCHEMA_VERSION), "{rep:?}");
    assert_eq!(
        rep.rows_changed,
        raw_segments(&path),
        "only the posting segments change: {rep:?}"
    );
    let backup = rep.backup.clone().expect("backup");
    assert_eq!(contents(&backup).0, 4);
    assert_eq!(raw_counts(&backup), None, "the backup is the schema-4 file");
    assert_eq!(raw_counts(&path), Some(rows.clone()), "counted in the copy");
    let e = engine_at(&dir.path().join("data"));
    assert_eq!(
        snapshot(&e),
        before,
        "chunks, sessions, summary, swaps, search"
    );
    assert_eq!(
        e.store()
            .read()
            .expect("read")
            .live_vector_counts()
            .expect("counts"),
        rows
    );
    audit(&e);
    let check = check::check_store(&path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
}

/// A copy of a schema-4 store (a backup where no hard link can be made) stays a schema-4
/// file: no `vec_counts`, which the schema-4 release would refuse to rewrite. A copy of a
/// current store recounts, whatever the source's counts said.
#[test]
fn a_copy_holds_vector_counts_only_from_schema_5_and_recounts_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let path = e.store_path();
    let rows = e
        .store()
        .read()
        .expect("read")
        .scan_vector_counts()
        .expect("scan");
    drop(e);
    let copy_of = |src: &Path, to: &str| {
        let out = dir.path().join(to);
        let db = create::builder().open(src).expect("open raw");
        let tx = db.begin_read().expect("read");
        let dst = create::builder().create(&out).expect("create");
        super::super::rewrite::copy_all(&tx, &dst, super::super::rewrite::CopyRows::default())
            .expect("copy");
        out
    };
    // Damage the counts: a wrong one and one of a space without rows.
    raw_write(&path, |tx| {
        let mut t = tx.open_table(VEC_COUNTS).expect("counts");
        for k in rows.keys() {
            t.insert(k.as_str(), 999).expect("insert");
        }
        t.insert("ghost@v1/3", 7).expect("insert");
    });
    let copy = copy_of(&path, "current.redb");
    assert_eq!(raw_counts(&copy), Some(rows.clone()), "recounted");
    downgrade_to_schema_4(&path);
    let copy = copy_of(&path, "schema4.redb");
    assert_eq!(raw_counts(&copy), None);
    assert_eq!(contents(&copy).0, 4);
}

#[test]
fn a_newer_store_is_refused_by_open_and_by_migrate_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let path = e.store_path();
    drop(e);
    set_schema(&path, SCHEMA_VERSION + 1);
    let before = contents(&path);
    for err in [
        Store::open(&path).expect_err("newer"),
        Store::migrate(&path, &dir.path().join("b")).expect_err("newer"),
    ] {
        assert!(
            matches!(err, StoreError::SchemaVersion { .. })
                && err.to_string().contains("upgrade memctl"),
            "{err}"
        );
    }
    assert_eq!(contents(&path), before, "untouched");
}

#[test]
fn a_damaged_row_stops_the_migration_and_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let path = e.store_path();
    drop(e);
    downgrade_to_schema_1(&path);
    raw_write(&path, |tx| {
        tx.open_table(CHUNKS)
            .expect("chunks")
            .insert(3u64, [0xffu8, 0xff, 0xff].as_slice())
            .expect("damage");
    });
    let before = contents(&path);
    let err = Store::migrate(&path, &dir.path().join("b")).expect_err("damaged row");
    let msg = err.to_string();
    assert!(
        matches!(err, StoreError::Migrate { .. }) && msg.contains("chunks") && msg.contains('3'),
        "{msg}"
    );
    assert_eq!(contents(&path), before, "unchanged");
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".rewrite-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_backup_taken_while_another_handle_writes_is_one_consistent_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (e, _) = three_sessions(dir.path());
    let path = e.store_path();
    let writer = std::thread::spawn(move || {
        let s = Store::open(&path).expect("second handle");
        for i in 0..200u32 {
            s.write(|w| w.set_meta_value(&format!("bk.{i}"), &i.to_le_bytes()))
                .expect("write");
        }
    });
    let rep = e.backup(None).expect("backup");
    writer.join().expect("writer");
    assert!(rep.path.starts_with(data.join("backups")), "{rep:?}");
    assert!(rep.rows > 0 && rep.bytes > 0, "{rep:?}");
    // The copy is a store of the current schema, whole, and holds a prefix of the writes.
    let copy = Store::open(&rep.path).expect("the backup opens");
    let check = check::check_store(&rep.path).expect("check");
    assert!(check.violations.is_empty(), "{:#?}", check.violations);
    let r = copy.read().expect("read");
    let written: Vec<bool> = (0..200u32)
        .map(|i| r.meta_value(&format!("bk.{i}")).expect("meta").is_some())
        .collect();
    let n = written.iter().take_while(|w| **w).count();
    assert!(written[n..].iter().all(|w| !w), "not a prefix: {written:?}");
    // An existing file is never overwritten.
    let err = e.backup(Some(&rep.path)).expect_err("exists");
    assert!(err.to_string().contains("exists"), "{err}");
}

#[test]
fn records_carry_their_version_and_a_newer_or_damaged_one_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let r = e.store().read().expect("read");
    let (_, rec) = r
        .chunks_after(0, 1)
        .expect("page")
        .into_iter()
        .next()
        .expect("a chunk");
    let bytes = encode_record(&rec).expect("encode");
    assert_eq!(bytes[0], ChunkRecord::VERSION);
    assert_eq!(decode_record::<ChunkRecord>(&bytes).ok(), Some(rec.clone()));
    let mut newer = bytes.clone();
    newer[0] = ChunkRecord::VERSION + 1;
    let err = decode_record::<ChunkRecord>(&newer).expect_err("newer");
    assert!(err.to_string().contains("upgrade memctl"), "{err}");
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(
        decode_record::<ChunkRecord>(&longer).is_err(),
        "trailing bytes"
    );
    assert!(decode_record::<ChunkRecord>(&[]).is_err(), "empty");
    assert!(decode_record::<ChunkRecord>(&[0]).is_err(), "version 0");
    // The version byte, then the bare body LZ4-compressed (format 2), nothing else.
    assert_eq!(
        lz4_flex::decompress_size_prepended(&bytes[1..]).expect("lz4"),
        crate::codec::encode(&rec).expect("body")
    );
    // A format-1 row (the bare body) still decodes.
    let mut v1 = vec![1u8];
    v1.extend(crate::codec::encode(&rec).expect("body"));
    assert_eq!(decode_record::<ChunkRecord>(&v1).ok(), Some(rec.clone()));
    let n = r
        .raw_tx()
        .open_table(CHUNKS)
        .expect("chunks")
        .len()
        .expect("len");
    assert!(n > 0);
}
