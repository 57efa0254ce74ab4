//! What `memctl ingest` and `memctl status` count, through the real binary: lines read is the
//! file's line count, a first ingest reports new chunks only (a turn still open across the
//! 1 MiB commits of one run counts once), the vectors line names the space this run wrote, and
//! status's vectors match its chunks. Real model (`scripts/setup.sh`), temp data dirs.

use crate::common;

use common::{fixture, memctl};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn ok(home: &Path, args: &[&str]) -> String {
    let out = memctl(home, args, b"", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `turns` distinct turns of about 1 KiB each, a blank line among them, and a last line that
/// is still being written (no newline).
fn long_transcript(dir: &Path, turns: usize) -> PathBuf {
    let sid = "5e551011-0000-4000-8000-000000000001";
    let mut text = String::new();
    for i in 0..turns {
        let prompt = format!("Explain step {i} of the migration plan");
        let answer = format!(
            "Step {i}: {}",
            "move one table, check its rows. ".repeat(30)
        );
        for (ty, kind, message) in [
            (
                "user",
                "u",
                serde_json::json!({"role": "user", "content": prompt}),
            ),
            (
                "assistant",
                "a",
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": answer}]}),
            ),
        ] {
            let line = serde_json::json!({"type": ty, "sessionId": sid, "cwd": "/p/long",
                "uuid": format!("{kind}{i}"), "message": message,
                "timestamp": format!("2026-03-04T08:{:02}:{:02}.000Z", i / 60 % 60, i % 60)});
            text.push_str(&line.to_string());
            text.push('\n');
        }
        if i == turns / 2 {
            text.push('\n');
        }
    }
    text.push_str(r#"{"type":"user","sessionId":"5e551011"#);
    let path = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&path, text).expect("write transcript");
    path
}

fn status(home: &Path) -> Value {
    serde_json::from_str(&ok(home, &["status", "--json"])).expect("status json")
}

#[test]
fn a_first_ingest_of_a_long_file_counts_its_lines_and_new_chunks_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let file = long_transcript(dir.path(), 1300);
    let bytes = std::fs::read(&file).expect("read");
    assert!(bytes.len() > 1 << 20, "more than one 1 MiB commit");
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    let f = file.to_str().expect("utf8");

    let said = ok(&home, &["ingest", "--no-embed", f]);
    let st = status(&home);
    let chunks = st["chunks"].as_u64().expect("chunks");
    assert_eq!(
        said.trim(),
        format!(
            "ingested 1 transcript: {newlines} lines read, 1300 turns, {chunks} chunks new; \
             vectors: hash-ngram@v1/384, {chunks} chunks pending a model vector (memctl embed-pending)"
        )
    );
    assert_eq!(
        common::status_vectors(&st).hash,
        chunks,
        "one hash vector per pending chunk"
    );

    // Nothing new: no line read, the open last turn seen again and unchanged, no vectors.
    let said = ok(&home, &["ingest", "--no-embed", f]);
    assert_eq!(
        said.trim(),
        "ingested 1 transcript: 0 lines read, 1 turns, 0 chunks new, 1 unchanged; no new vectors"
    );

    // The half-written line ends and one more turn starts: exactly those lines are read.
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("append");
    use std::io::Write;
    writeln!(
        more,
        r#"-0000-4000-8000-000000000001","cwd":"/p/long","uuid":"u-last","message":{{"role":"user","content":"One more question"}},"timestamp":"2026-03-04T09:00:00.000Z"}}"#
    )
    .expect("write");
    drop(more);
    let said = ok(&home, &["ingest", "--no-embed", f]);
    assert!(
        said.starts_with("ingested 1 transcript: 1 lines read, 2 turns, 1 chunks new"),
        "{said}"
    );
}

#[test]
fn the_model_embedder_is_named_and_status_vectors_match_the_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let fx = fixture();
    let f = fx.to_str().expect("utf8");
    let lines = std::fs::read(&fx)
        .expect("read")
        .iter()
        .filter(|b| **b == b'\n')
        .count();

    let said = ok(&home, &["ingest", f]);
    assert!(
        said.contains(&format!(": {lines} lines read, "))
            && said
                .trim_end()
                .ends_with("; vectors: all-MiniLM-L6-v2@fp32/384"),
        "{said}"
    );
    for word in ["replaced", "unchanged", "pending"] {
        assert!(!said.contains(word), "a first ingest: {said}");
    }
    let st = status(&home);
    let chunks = st["chunks"].as_u64().expect("chunks");
    let v = common::status_vectors(&st);
    assert_eq!(
        (v.model, v.hash, v.stale),
        (chunks, 0, 0),
        "one model vector per chunk"
    );

    // A re-run writes no vectors, so it names none (not the hash embedder).
    let said = ok(&home, &["ingest", f]);
    assert!(said.trim_end().ends_with("; no new vectors"), "{said}");
    assert!(!said.contains("hash-ngram"), "{said}");
    let human = ok(&home, &["status"]);
    assert!(
        human.contains(&format!(
            "vectors:    {chunks} × all-MiniLM-L6-v2@fp32/384 (int8 blocks + f16)\n"
        )),
        "{human}"
    );
}
