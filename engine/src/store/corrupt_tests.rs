//! Regression tests: a damaged stored value is an error, never a default that writes over data.

use super::*;
use crate::{EngineError, IngestOptions};

/// A small transcript of one session (one user turn, one answer).
fn transcript(dir: &Path, session: &str, words: &str) -> PathBuf {
    let p = dir.join(format!("{session}.jsonl"));
    // The project is the folder the transcript lives in, as a session's cwd would be.
    let cwd = dir.display().to_string();
    let user = serde_json::json!({"type": "user", "sessionId": session, "cwd": cwd,
        "message": {"role": "user", "content": format!("Why does {words} fail on CI?")}});
    let asst = serde_json::json!({"type": "assistant", "sessionId": session, "cwd": cwd,
        "message": {"role": "assistant", "content": [
            {"type": "text", "text": format!("Because {words} needs the cache warmed first.")}]}});
    std::fs::write(&p, format!("{user}\n{asst}\n")).unwrap_or_else(|e| panic!("{e}"));
    p
}

/// The stored next chunk id was read with `try_into().unwrap_or([0; 8])`: a value of the wrong
/// length restarted the ids at 0 and the next ingest wrote over chunk 0, 1, ...
#[test]
fn next_chunk_id_of_wrong_length_is_corruption_not_id_zero() {
    let (dir, engine) = crate::prune::tests::engine_with_fixture();
    let opts = IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    };
    let before: Vec<(ChunkId, ChunkRecord)> = engine
        .store()
        .read()
        .and_then(|r| r.chunks_after(0, usize::MAX))
        .unwrap_or_else(|e| panic!("read: {e}"));
    assert!(!before.is_empty(), "the fixture stored chunks");
    engine
        .store()
        .write(|w| {
            w.tx.open_table(META)?
                .insert(META_NEXT_CHUNK, [7u8, 0, 0].as_slice())?;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("corrupt the meta table: {e}"));

    let t = transcript(
        dir.path(),
        "0c6a55e4-cd31-4b7d-9f3e-2f1e0c1d2b3a",
        "cargo nextest",
    );
    let err = engine
        .ingest_transcript(&t, &opts)
        .expect_err("a damaged next id must stop the ingest");
    assert!(
        matches!(
            err,
            EngineError::Store(StoreError::Corrupt {
                what: "meta table",
                ..
            })
        ),
        "{err}"
    );
    let after = engine
        .store()
        .read()
        .and_then(|r| r.chunks_after(0, usize::MAX))
        .unwrap_or_else(|e| panic!("read: {e}"));
    assert_eq!(after.len(), before.len(), "no chunk added or removed");
    for ((a, ra), (b, rb)) in before.iter().zip(&after) {
        assert_eq!(a, b);
        assert_eq!(ra.chunk.text, rb.chunk.text, "chunk {a} intact");
    }
}

/// The schema version of the wrong length read as version 0; it is reported as corruption.
#[test]
fn schema_version_of_wrong_length_is_corruption() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("memctl.redb");
    let store = Store::open(&path).unwrap_or_else(|e| panic!("create: {e}"));
    store
        .write(|w| {
            w.tx.open_table(META)?
                .insert(META_SCHEMA, [1u8, 0].as_slice())?;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("corrupt: {e}"));
    drop(store);
    let err = Store::open(&path)
        .err()
        .unwrap_or_else(|| panic!("must not open"));
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
}
