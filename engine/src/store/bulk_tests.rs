//! `put_chunks` (the lane) leaves every table exactly as the one-at-a-time path does, with the
//! same outcomes, on batches that mix new chunks with every case that leaves the lane.

use super::bulk::{ChunkToPut, Put};
use super::schema::*;
use super::*;
use crate::chunk::Chunk;
use crate::embed::{Embedder, HashEmbedder};
use redb::{ReadableMultimapTable, ReadableTable};

fn chunk(session: &str, project: &str, turn: u32, part: u16, parts: u16, text: &str) -> Chunk {
    Chunk {
        session_id: session.into(),
        project: project.into(),
        turn_index: turn,
        part,
        parts,
        turn_uuid: format!("{session}-u{turn}"),
        line_uuids: vec![format!("{session}-l{turn}")],
        started_at: Some(format!("2026-11-26T00:00:{:02}Z", turn % 60)),
        ended_at: (!turn.is_multiple_of(3)).then(|| format!("2026-11-26T00:01:{:02}Z", turn % 60)),
        text: text.into(),
        tools: vec!["Bash".into()],
        files: vec![],
        summary: text.chars().take(20).collect(),
        is_compact_summary: turn == 4 && part == 0,
        sha256: Chunk::hash_text(text),
    }
}

/// The batches: new turns in two sessions and two projects; then a batch that re-emits an
/// unchanged turn, replaces one, repeats another session's text (a duplicate), re-chunks a turn
/// into fewer parts, carries a forgotten turn, and has new turns between all of them.
fn batches() -> Vec<Vec<Chunk>> {
    let (a, b) = ("sess-a", "sess-b");
    let first: Vec<Chunk> = (0..12)
        .flat_map(|t| {
            let parts = if t == 5 { 3 } else { 1 };
            (0..parts).map(move |p| {
                chunk(
                    if t % 4 == 3 { b } else { a },
                    if t % 4 == 3 { "/p2" } else { "/p1" },
                    t,
                    p,
                    parts,
                    &format!("turn {t} part {p}: cargo test ledger_{t} failed in src/shard{t}.rs"),
                )
            })
        })
        .collect();
    let mut second = vec![
        first[0].clone(),
        chunk(
            a,
            "/p1",
            1,
            0,
            1,
            "turn 1 rewritten: the fix is in src/fix.rs",
        ),
        chunk("sess-c", "/p1", 0, 0, 1, &first[2].text),
        chunk(a, "/p1", 5, 0, 1, "turn 5 now one part"),
        chunk(
            a,
            "/p1",
            12,
            0,
            1,
            "turn 12 is forgotten before it is stored",
        ),
    ];
    for t in 13..20 {
        second.insert(
            (t as usize) % 5,
            chunk(
                a,
                "/p1",
                t,
                0,
                1,
                &format!("new turn {t} about HnswIndex::load"),
            ),
        );
    }
    vec![first, second]
}

/// Everything the put path writes, as text, table by table.
fn dump(store: &Store) -> Vec<String> {
    let r = store.read().expect("read");
    let tx = &r.tx;
    let mut out = Vec::new();
    for row in tx.open_table(CHUNKS).expect("chunks").iter().expect("iter") {
        let (k, v) = row.expect("row");
        let rec: ChunkRecord = crate::codec::decode_record(v.value()).expect("record");
        out.push(format!("chunk {} {rec:?}", k.value()));
    }
    for row in tx.open_table(TURNS).expect("turns").iter().expect("iter") {
        let (k, v) = row.expect("row");
        out.push(format!("turn {:?} {}", k.value(), v.value()));
    }
    for row in tx.open_table(HASHES).expect("hashes").iter().expect("iter") {
        let (k, v) = row.expect("row");
        out.push(format!("hash {:?} {}", k.value(), v.value()));
    }
    for row in tx
        .open_table(SESSIONS)
        .expect("sessions")
        .iter()
        .expect("iter")
    {
        let (k, v) = row.expect("row");
        let rec = session_from(v.value()).expect("session");
        out.push(format!("session {} {rec:?}", k.value()));
    }
    let sc = tx.open_multimap_table(SESSION_CHUNKS).expect("sc");
    for row in sc.iter().expect("iter") {
        let (k, vs) = row.expect("row");
        let ids: Vec<u64> = vs.map(|v| v.expect("v").value()).collect();
        out.push(format!("session chunks {} {ids:?}", k.value()));
    }
    for row in tx
        .open_table(PROJECTS)
        .expect("projects")
        .iter()
        .expect("iter")
    {
        let (k, v) = row.expect("row");
        out.push(format!("project {} {}", k.value(), v.value()));
    }
    for row in tx.open_table(LEX_STATS).expect("lex").iter().expect("iter") {
        let (k, v) = row.expect("row");
        out.push(format!("lex {} {:?}", k.value(), v.value()));
    }
    for row in tx
        .open_table(PENDING)
        .expect("pending")
        .iter()
        .expect("iter")
    {
        out.push(format!("pending {}", row.expect("row").0.value()));
    }
    for row in tx
        .open_table(VECTORS)
        .expect("vectors")
        .iter()
        .expect("iter")
    {
        let (k, v) = row.expect("row");
        out.push(format!("vector {:?} {:?}", k.value(), v.value()));
    }
    let postings = tx.open_table(POSTING_LISTS).expect("postings");
    for row in postings.iter().expect("iter") {
        let (k, v) = row.expect("row");
        out.push(format!("postings {:?} {:?}", k.value(), v.value()));
    }
    for row in tx
        .open_table(VEC_TAILS)
        .expect("tails")
        .iter()
        .expect("iter")
    {
        let (k, v) = row.expect("row");
        out.push(format!("tail {:?} {:?}", k.value(), v.value()));
    }
    let meta = tx.open_table(META).expect("meta");
    out.push(format!(
        "next id {:?}",
        meta.get(META_NEXT_CHUNK)
            .expect("get")
            .map(|v| v.value().to_vec())
    ));
    out
}

fn forget_turn_12(store: &Store) {
    store
        .write(|w| {
            w.tx.open_table(FORGOTTEN)?
                .insert((TOMBSTONE_TURN, "sess-a-u12"), 1)?;
            Ok(())
        })
        .expect("tombstone");
}

#[test]
fn put_chunks_writes_what_one_at_a_time_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let one = Store::open(dir.path().join("one.redb")).expect("open");
    let bulk = Store::open(dir.path().join("bulk.redb")).expect("open");
    forget_turn_12(&one);
    forget_turn_12(&bulk);
    let hash = HashEmbedder::new();
    let mut seen = Vec::new();
    for (n, batch) in batches().iter().enumerate() {
        let pending = n == 0;
        let vectors = |c: &Chunk| vec![(hash.id().clone(), hash.embed_one(&c.text))];
        let want: Vec<Put> = one
            .write(|w| {
                let mut out = Vec::new();
                for c in batch {
                    if w.is_forgotten(c)? {
                        out.push(Put::Forgotten);
                        continue;
                    }
                    let put = w.put_chunk(c, &vectors(c), 1_000 + n as i64)?;
                    if let PutOutcome::Inserted(id) | PutOutcome::Replaced(id) = put
                        && pending
                    {
                        w.mark_pending(id)?;
                    }
                    if c.part + 1 == c.parts {
                        w.drop_parts_from(&c.session_id, c.turn_index, c.parts)?;
                    }
                    out.push(Put::Stored(put));
                }
                Ok(out)
            })
            .expect("one at a time");
        let got = bulk
            .write(|w| {
                let items = batch
                    .iter()
                    .map(|c| ChunkToPut {
                        chunk: c,
                        vectors: vectors(c),
                        // Half counted beforehand (as ingest does), half left to the store.
                        terms: c
                            .turn_index
                            .is_multiple_of(2)
                            .then(|| crate::index::lexical::term_frequencies(&c.text)),
                        meta: None,
                    })
                    .collect();
                w.put_chunks(items, 1_000 + n as i64, pending)
            })
            .expect("bulk");
        assert_eq!(got, want, "outcomes of batch {n}");
        assert_eq!(dump(&bulk), dump(&one), "tables after batch {n}");
        seen.push(got);
    }
    // The second batch met every case that leaves the lane.
    let last = seen.last().expect("two batches");
    for kind in [
        "Unchanged",
        "Replaced",
        "Duplicate",
        "Forgotten",
        "Inserted",
    ] {
        assert!(
            last.iter().any(|p| format!("{p:?}").contains(kind)),
            "{kind} in {last:?}"
        );
    }
}

/// A session that says the same thing in two turns names one chunk from both: replacing the
/// first turn must leave the chunk the second still names, and the store consistent.
#[test]
fn replacing_a_repeated_turn_keeps_the_chunk_the_other_turn_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memctl.redb");
    let store = Store::open(&path).expect("open");
    let same = "run the migration again: cargo run --bin migrate";
    let (first, second) = (
        chunk("s", "/p", 0, 0, 1, same),
        chunk("s", "/p", 1, 0, 1, same),
    );
    let changed = chunk("s", "/p", 0, 0, 1, "turn 0 rewritten: nothing to migrate");
    let hash = HashEmbedder::new();
    let vectors = |c: &Chunk| vec![(hash.id().clone(), hash.embed_one(&c.text))];
    let shared = store
        .write(|w| {
            let id = w.put_chunk(&first, &vectors(&first), 1)?.id();
            w.mark_pending(id)?;
            let dup = w.put_chunk(&second, &vectors(&second), 2)?;
            assert!(
                matches!(dup, PutOutcome::Duplicate(d) if d == id),
                "{dup:?}"
            );
            match w.put_chunk(&changed, &vectors(&changed), 3)? {
                PutOutcome::Replaced(new) => w.mark_pending(new)?,
                other => panic!("{other:?}"),
            }
            Ok(id)
        })
        .expect("write");
    let rec = store
        .read()
        .and_then(|r| r.chunk(shared))
        .expect("read")
        .expect("the repeated turn's chunk stays");
    assert_eq!(rec.chunk.text, same);
    drop(store);
    let report = super::check::check_store(&path).expect("check");
    assert!(report.is_consistent(), "{:?}", report.violations);
}
