//! `memctl import` of a file longer than one write transaction, on real redb files: what a
//! chunk becomes does not depend on where the batches and transactions are cut. Duplicates within a batch and
//! across batches (same turn part, or the same text in another session), a conflict, a
//! tombstoned chunk, postings of every batch, `check` after the import (which compacted the
//! file), an import cut short and run again, and a second import that adds nothing.

use memctl_engine::{
    Engine, EngineOptions, FileCompaction, ImportOptions, ImportReport, SearchRequest,
};
use std::path::Path;

/// Chunk lines of the file: more than two batches of the importer (8192 lines each), and of
/// the transactions `import` asks for.
const CHUNKS: usize = 17_000;
/// Records per write transaction here (the default holds all of `CHUNKS` in one).
const TX: usize = 8192;
const PROJECT: &str = "/srv/app";

fn engine(dir: &Path) -> Engine {
    let mut opts = EngineOptions::from_settings(&memctl_engine::Settings::default());
    opts.data_dir = dir.to_path_buf();
    opts.model_disabled = true;
    Engine::open(opts).expect("open engine")
}

fn import(e: &Engine, file: &Path) -> ImportReport {
    let opts = ImportOptions {
        transaction_records: TX,
        ..ImportOptions::default()
    };
    e.import_file(file, &opts, &mut |_| {}).expect("import")
}

/// A word of letters only that names `i` (the tokenizer splits letters from digits).
fn word(i: usize) -> String {
    let mut n = i;
    let mut w = String::from("qz");
    loop {
        w.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            return w;
        }
    }
}

fn chunk(session: usize, turn: usize, text: &str) -> serde_json::Value {
    serde_json::json!({
        "kind": "chunk", "session": format!("session-{session}"), "project": PROJECT,
        "turn": turn, "part": 0, "parts": 1,
        "turn_uuid": format!("uuid-{session}-{turn}"), "line_uuids": [],
        "started_at": null, "ended_at": null, "text": text, "tools": [], "files": [],
        "summary": format!("turn {turn}"), "is_compact_summary": false,
        "ingested_at": 1_790_000_000 + turn as i64, "access_count": turn % 3,
        "last_access": null, "confidence": 0.75, "pinned": turn.is_multiple_of(50),
    })
}

/// What the file holds beyond its unique chunks, by chunk line.
const DUP_SAME_BATCH: usize = 10; // repeated at once: the same turn part and text
const CONFLICT: usize = 20; // repeated at once with another text
const DUP_ACROSS: usize = 8_184; // repeated two chunks later: in the next batch
const SHARED_TEXT: usize = 3; // its text again in another session, batches later
const FORGOTTEN: usize = 12_000; // its turn has a tombstone

/// The file's lines (header first, trailer last): `limit` chunk lines at most.
fn file_lines(limit: usize) -> Vec<serde_json::Value> {
    let text = |i: usize| {
        format!(
            "User: explain {} and {}\nAssistant: done",
            word(i),
            word(i % 97)
        )
    };
    let mut chunks = Vec::new();
    for i in 0..CHUNKS {
        chunks.push(chunk(i / 200, i % 200, &text(i)));
        match i {
            DUP_SAME_BATCH => chunks.push(chunk(i / 200, i % 200, &text(i))),
            CONFLICT => chunks.push(chunk(i / 200, i % 200, "User: other\nAssistant: text")),
            _ if i == DUP_ACROSS + 2 => {
                chunks.push(chunk(DUP_ACROSS / 200, DUP_ACROSS % 200, &text(DUP_ACROSS)));
            }
            10_000 => chunks.push(chunk(9_999, 0, &text(SHARED_TEXT))),
            _ => {}
        }
    }
    chunks.truncate(limit);
    let mut lines = vec![
        serde_json::json!({"kind": "header", "format": "memctl-export", "version": 1,
            "memctl": "0.1.0", "created": "2026-11-28T00:00:00Z", "embedder": null, "scope": []}),
        serde_json::json!({"kind": "project", "path": PROJECT}),
        serde_json::json!({"kind": "tombstone", "what": "turn",
            "key": format!("uuid-{}-{}", FORGOTTEN / 200, FORGOTTEN % 200),
            "forgotten_at": 1_790_000_000}),
    ];
    let n = chunks.len();
    lines.extend(chunks);
    lines.push(serde_json::json!({"kind": "trailer",
        "counts": {"projects": 1, "tombstones": 1, "chunks": n}}));
    lines
}

fn write(path: &Path, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, text).expect("write");
}

/// Every turn part with its chunk's text and ranking metadata, and the chunk it shares.
fn turns(e: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for (s, _) in e.sessions().expect("sessions") {
        for (((turn, part), id), rec) in e.session_chunks(&s).expect("chunks") {
            out.push(format!(
                "{s} {turn} {part} {id:?} {} {} {} {} {} {:?}",
                rec.chunk.sha256,
                rec.ingested_at,
                rec.access_count,
                rec.confidence,
                rec.pinned,
                rec.shared_with
            ));
        }
    }
    out.sort();
    out
}

fn assert_consistent(e: &Engine) {
    let c = memctl_engine::check_store(&e.store_path()).expect("check");
    assert!(c.is_consistent(), "{:?}", c.violations);
}

fn finds(e: &Engine, i: usize, session: &str) -> bool {
    e.search(&SearchRequest::new(word(i), 5))
        .expect("search")
        .results
        .iter()
        .any(|r| r.record.chunk.session_id == session)
}

#[test]
fn batches_do_not_change_what_is_stored() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let full = root.join("full.jsonl");
    write(&full, &file_lines(usize::MAX));

    let a = engine(&root.join("a"));
    let rep = import(&a, &full);
    let c = rep.chunks;
    assert_eq!(c.forgotten, 1, "{rep:?}");
    assert_eq!(c.conflicts, 1, "{rep:?}");
    // Same turn part in one batch and across two; the same text in another session.
    assert_eq!(c.duplicates, 3, "{rep:?}");
    assert_eq!(c.imported, CHUNKS as u64 - 1, "{rep:?}");
    assert_eq!(rep.vectors_queued, c.imported);
    // The import ends by compacting the file it grew (what it reports is the file's size).
    let FileCompaction::Done { bytes_after, .. } = rep.store_file else {
        panic!("not compacted: {:?}", rep.store_file);
    };
    let len = std::fs::metadata(a.store_path()).expect("store").len();
    assert_eq!(bytes_after, len);
    assert_consistent(&a);
    // The shared text resolves to the first chunk, the forgotten turn is absent.
    let shared = a.session_chunks("session-9999").expect("chunks");
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].1.chunk.session_id, "session-0");
    assert_eq!(shared[0].1.shared_with, vec!["session-9999".to_string()]);
    let s = format!("session-{}", FORGOTTEN / 200);
    assert!(
        a.session_chunks(&s)
            .expect("chunks")
            .iter()
            .all(|(((t, _), _), _)| *t as usize != FORGOTTEN % 200)
    );
    // Postings of the first, a middle and the last batch.
    for i in [1, 9_000, CHUNKS - 1] {
        assert!(finds(&a, i, &format!("session-{}", i / 200)), "chunk {i}");
    }

    // Cut short after some batches (as a kill leaves it: whole batches committed), then
    // run again: the same store as one import.
    let b = engine(&root.join("b"));
    let head = root.join("head.jsonl");
    write(&head, &file_lines(10_000));
    let first = import(&b, &head);
    assert_eq!(first.chunks.imported, 10_000 - 3, "{first:?}");
    let rest = import(&b, &full);
    assert_eq!(
        first.chunks.imported + rest.chunks.imported,
        c.imported,
        "{rest:?}"
    );
    assert_consistent(&b);
    assert_eq!(turns(&a), turns(&b));
    assert_eq!(a.status().expect("a").chunks, b.status().expect("b").chunks);

    // Importing again adds nothing.
    let again = import(&a, &full);
    assert_eq!(again.chunks.imported, 0, "{again:?}");
    assert_eq!(again.vectors_queued, 0);
    assert_eq!(again.chunks.forgotten, 1);
    assert_consistent(&a);
    assert_eq!(turns(&a), turns(&b));
}
