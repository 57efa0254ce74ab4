//! The kept vector counts (`vec_counts`) are the rows of `vectors` per space after every kind
//! of write: puts one at a time and in bulk, replaced turns, duplicates, re-embedding, dropped
//! vectors, removed chunks, failed and rolled-back transactions, reclaim and the file rewrite
//! (and, through the engine, imports and a forget). A random sequence of them (fixed seed, printed; `MEMCTL_VEC_COUNTS_SEED` replays another)
//! is compared with a scan of the table after each step.

use super::check::check_store;
use super::{ChunkId, ChunkRecord, ChunkToPut, Store, StoreError, StoreWriter};
use crate::chunk::Chunk;
use crate::embed::{Embedder, EmbedderId, HashEmbedder};

const SEED: u64 = 0x5eed_c0de_2026_0001;

/// splitmix64: enough randomness for a test, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A stand-in model space (no ONNX here).
fn model() -> EmbedderId {
    EmbedderId::new("test-model", "fp32", 384)
}

fn hash() -> EmbedderId {
    HashEmbedder::new().id().clone()
}

fn vector(text: &str) -> Vec<f32> {
    HashEmbedder::new().embed(text).expect("embed")
}

/// Turn `turn` of session `session`, with one of a few texts (so that turns are replaced by
/// other texts, and duplicates of other turns' texts occur).
fn chunk(session: u64, turn: u64, text: u64) -> Chunk {
    let text = format!(
        "turn text number {text} about the ledger shard {}",
        text % 7
    );
    Chunk {
        session_id: format!("s{session}"),
        project: format!("/p{}", session % 2),
        turn_index: turn as u32,
        part: 0,
        parts: 1,
        turn_uuid: format!("u{session}-{turn}-{text}"),
        line_uuids: vec![format!("u{session}-{turn}")],
        started_at: None,
        ended_at: None,
        sha256: Chunk::hash_text(&text),
        text,
        tools: Vec::new(),
        files: Vec::new(),
        summary: String::new(),
        is_compact_summary: false,
    }
}

/// The vectors a new chunk comes with: the hash space, the model's, or both.
fn vectors_for(rng: &mut Rng, c: &Chunk) -> Vec<(EmbedderId, Vec<f32>)> {
    let v = vector(&c.text);
    match rng.below(3) {
        0 => vec![(hash(), v)],
        1 => vec![(model(), v)],
        _ => vec![(hash(), v.clone()), (model(), v)],
    }
}

fn live_chunks(store: &Store) -> Vec<(ChunkId, ChunkRecord)> {
    let mut out = Vec::new();
    store
        .read()
        .expect("read")
        .for_each_chunk(|id, rec| {
            out.push((id, rec));
            Ok(())
        })
        .expect("chunks");
    out
}

/// Give chunk `id` a vector in `emb` as the background embedder does (the record lists it;
/// the hash vector goes when the model's comes, sometimes).
fn embed(
    w: &mut StoreWriter,
    id: ChunkId,
    emb: &EmbedderId,
    drop_hash: bool,
) -> Result<(), StoreError> {
    let Some(mut rec) = w.get_record(id)? else {
        return Ok(());
    };
    w.put_vector(rec.project_id, id, emb, &vector(&rec.chunk.text))?;
    if !rec.embedders.contains(&emb.key()) {
        rec.embedders.push(emb.key());
    }
    if *emb != hash() {
        w.clear_pending(id)?;
        if drop_hash {
            w.drop_vector(id, &hash())?;
            rec.embedders.retain(|k| *k != hash().key());
        }
    }
    w.update_record(id, &rec)
}

/// One random step; returns what it did.
fn step(store: &Store, rng: &mut Rng) -> String {
    let live = live_chunks(store);
    let pick = |rng: &mut Rng| live.get(rng.below(live.len() as u64) as usize).cloned();
    match rng.below(10) {
        0..=2 => {
            let c = chunk(rng.below(3), rng.below(12), rng.below(20));
            let vs = vectors_for(rng, &c);
            let put = store.write(|w| w.put_chunk(&c, &vs, 0)).expect("put");
            format!("put {put:?}")
        }
        3 => {
            let n = 1 + rng.below(6);
            let chunks: Vec<Chunk> = (0..n)
                .map(|_| chunk(rng.below(3), rng.below(40), rng.below(60)))
                .collect();
            let items: Vec<ChunkToPut<'_>> = chunks
                .iter()
                .map(|c| ChunkToPut {
                    chunk: c,
                    vectors: vectors_for(rng, c),
                    terms: None,
                    meta: None,
                })
                .collect();
            let puts = store
                .write(|w| w.put_chunks(items, 0, rng.below(2) == 0))
                .expect("put chunks");
            format!("put_chunks {puts:?}")
        }
        4 => {
            let Some((id, _)) = pick(rng) else {
                return "embed: nothing".into();
            };
            let emb = if rng.below(2) == 0 { model() } else { hash() };
            let drop_hash = rng.below(2) == 0;
            store
                .write(|w| embed(w, id, &emb, drop_hash))
                .expect("embed");
            format!("embed {id} in {} (drop hash: {drop_hash})", emb.key())
        }
        5 => {
            // A row that may or may not be there: only a removed row counts.
            let id = pick(rng).map_or(999_999, |(id, _)| id);
            let emb = if rng.below(2) == 0 { model() } else { hash() };
            store
                .write(|w| {
                    w.drop_vector(id, &emb)?;
                    if let Some(mut rec) = w.get_record(id)? {
                        rec.embedders.retain(|k| *k != emb.key());
                        w.update_record(id, &rec)?;
                    }
                    Ok(())
                })
                .expect("drop");
            format!("drop {id} in {}", emb.key())
        }
        6 => {
            let batch: Vec<(ChunkId, ChunkRecord)> =
                live.iter().filter(|_| rng.below(4) == 0).cloned().collect();
            let n = batch.len();
            store.write(|w| w.remove_chunks(&batch)).expect("remove");
            format!("remove {n} chunks")
        }
        7 => {
            let c = chunk(rng.below(3), rng.below(12), rng.below(20));
            let vs = vectors_for(rng, &c);
            let err = store
                .write(|w| {
                    w.put_chunk(&c, &vs, 0)?;
                    Err::<(), _>(StoreError::Encode("the caller gives up".into()))
                })
                .expect_err("failed write");
            let rolled = store
                .write_rolled_back(|w| w.put_chunk(&c, &vs, 0))
                .expect("rolled back");
            format!("failed put ({err}), rolled back {rolled:?}")
        }
        8 => {
            let rep = store.reclaim(&model(), &hash()).expect("reclaim");
            format!("reclaim {rep:?}")
        }
        _ => {
            if rng.below(3) == 0 {
                let rep = store.rewrite().expect("rewrite");
                format!("rewrite {} rows", rep.rows)
            } else {
                let id = pick(rng).map_or(0, |(id, _)| id);
                store
                    .write(|w| {
                        if let Some(rec) = w.get_record(id)? {
                            w.put_vector(rec.project_id, id, &hash(), &vector("again"))?;
                        }
                        Ok(())
                    })
                    .expect("replace");
                format!("replace the hash vector of {id}")
            }
        }
    }
}

#[test]
fn kept_counts_equal_the_rows_after_a_random_sequence_of_writes() {
    let seed = std::env::var("MEMCTL_VEC_COUNTS_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(SEED);
    println!("vector counts seed {seed:#x}");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("memctl.redb")).expect("open");
    let mut rng = Rng(seed);
    let mut spaces_seen = std::collections::BTreeSet::new();
    for i in 0..240 {
        let did = step(&store, &mut rng);
        println!("{i}: {did}");
        let r = store.read().expect("read");
        let (kept, rows) = (
            r.live_vector_counts().expect("kept"),
            r.scan_vector_counts().expect("scan"),
        );
        assert_eq!(kept, rows, "seed {seed:#x}, step {i}: {did}");
        spaces_seen.extend(rows.keys().cloned());
    }
    assert_eq!(spaces_seen.len(), 2, "both spaces were exercised");
    let c = check_store(&dir.path().join("memctl.redb")).expect("check");
    let counts: Vec<_> = c
        .violations
        .iter()
        .filter(|v| v.detail.contains("kept count"))
        .collect();
    assert!(counts.is_empty(), "seed {seed:#x}: {counts:#?}");
}

#[test]
fn a_replaced_vector_is_one_row_and_a_missing_one_drops_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("memctl.redb")).expect("open");
    let c = chunk(0, 0, 0);
    let id = store
        .write(|w| w.put_chunk(&c, &[(hash(), vector("a"))], 0))
        .expect("put")
        .id();
    let counts = |s: &Store| {
        s.read()
            .expect("read")
            .live_vector_counts()
            .expect("counts")
    };
    assert_eq!(counts(&store).get(&hash().key()), Some(&1));
    store
        .write(|w| {
            w.put_vector(1, id, &hash(), &vector("b"))?;
            w.put_vector(1, id, &hash(), &vector("c"))
        })
        .expect("replace");
    assert_eq!(
        counts(&store).get(&hash().key()),
        Some(&1),
        "replaced, not added"
    );
    store
        .write(|w| {
            w.drop_vector(id, &model())?;
            w.drop_vector(id + 1, &hash())
        })
        .expect("drop rows that are not there");
    assert_eq!(counts(&store).get(&hash().key()), Some(&1));
    assert_eq!(counts(&store).get(&model().key()), None);
    // Added and dropped in one transaction: no row, no count row either.
    store
        .write(|w| {
            w.put_vector(1, id, &model(), &vector("m"))?;
            w.drop_vector(id, &model())
        })
        .expect("add and drop");
    let raw = store.read().expect("read");
    let t = raw
        .raw_tx()
        .open_table(super::schema::VEC_COUNTS)
        .expect("table");
    assert_eq!(
        redb::ReadableTableMetadata::len(&t).expect("len"),
        1,
        "a space without rows has no count row"
    );
    drop(t);
    drop(raw);
    store.write(|w| w.drop_vector(id, &hash())).expect("drop");
    assert!(counts(&store).is_empty());
}

/// The kept counts of `e`'s store are its rows, and the checker agrees.
fn assert_exact(e: &crate::Engine, what: &str) {
    let r = e.store().read().expect("read");
    let (kept, rows) = (
        r.live_vector_counts().expect("kept"),
        r.scan_vector_counts().expect("scan"),
    );
    assert_eq!(kept, rows, "{what}");
    drop(r);
    let c = check_store(&e.store_path()).expect("check");
    assert!(c.violations.is_empty(), "{what}: {:#?}", c.violations);
}

/// An import into an empty store, the same file again (all duplicates), a dry run, and a
/// forget with its file rewrite.
#[test]
fn import_and_forget_keep_the_counts_exact() {
    use crate::export::ImportOptions;
    use crate::forget::fixture::{SA, engine_at, three_sessions};
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let file = dir.path().join("archive.jsonl");
    e.export_to_file(&file, false, &Default::default(), &mut |_| {})
        .expect("export");
    let other = engine_at(&dir.path().join("other"));
    for round in 0..2 {
        other
            .import_file(&file, &ImportOptions::default(), &mut |_| {})
            .expect("import");
        assert_exact(&other, &format!("import {round}"));
    }
    let imported = other
        .store()
        .read()
        .expect("read")
        .live_vector_counts()
        .expect("counts");
    assert_eq!(
        imported,
        e.store()
            .read()
            .expect("read")
            .live_vector_counts()
            .expect("counts"),
        "the same vectors as the exported store"
    );
    let dry = ImportOptions {
        dry_run: true,
        ..ImportOptions::default()
    };
    other
        .import_file(&file, &dry, &mut |_| {})
        .expect("dry run");
    assert_exact(&other, "dry run");
    let done = e
        .forget(
            &crate::forget::ForgetRequest {
                session: Some(SA[..4].to_string()),
                ..Default::default()
            },
            false,
        )
        .expect("forget");
    assert!(done.chunks > 0 && done.rewrite.is_some(), "{done:?}");
    assert_exact(&e, "forget");
    let after = e
        .store()
        .read()
        .expect("read")
        .live_vector_counts()
        .expect("counts");
    assert_eq!(
        after.values().sum::<u64>(),
        e.status().expect("status").chunks,
        "one hash vector per chunk left"
    );
}
