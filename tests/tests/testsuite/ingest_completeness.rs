//! Every turn is kept: ingesting real harness transcripts and a 5000-turn synthetic transcript
//! stores one chunk set per turn (turns in = distinct turn ids out), with tool names and file
//! paths preserved, and a re-ingest after appended lines reads only the new bytes.

use memctl_engine::{Engine, EngineOptions, IngestOptions};
use memctl_tests::real_transcripts_dir;
use memctl_tests::transcript_gen::{GenConfig, Layout, append, generate};
use serde::Deserialize;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

fn engine(home: &Path) -> Engine {
    let mut opts = EngineOptions::from_settings(&memctl_engine::Settings::default());
    opts.data_dir = home.to_path_buf();
    opts.model_disabled = true; // completeness, not semantics: hash vectors keep this fast
    Engine::open(opts).expect("open engine")
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: bool,
    message: Option<Msg>,
}

#[derive(Deserialize)]
struct Msg {
    content: Option<serde_json::Value>,
}

/// Independent list of turn-opening user prompts (string content or text blocks; not tool
/// results, not meta, not compact summaries, not the "[Request interrupted by user]" marker,
/// which belongs to the turn it interrupts).
fn prompts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read transcript");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .filter(|l| l.kind.as_deref() == Some("user") && !l.is_meta && !l.is_compact_summary)
        .filter_map(|l| match l.message.and_then(|m| m.content) {
            Some(serde_json::Value::String(s)) if !s.is_empty() => Some(s),
            Some(serde_json::Value::Array(blocks))
                if !blocks
                    .iter()
                    .any(|b| b.get("type").and_then(|t| t.as_str()) == Some("tool_result")) =>
            {
                let t: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
                    .collect();
                (!t.is_empty()).then(|| t.join("\n"))
            }
            _ => None,
        })
        .filter(|p| !p.starts_with("[Request interrupted"))
        .collect()
}

fn count_prompts(path: &Path) -> usize {
    prompts(path).len()
}

/// Every prompt's first line is in some stored chunk's text (nothing silently dropped).
fn assert_prompts_stored(e: &Engine, session: &str, path: &Path) {
    let mut all = String::new();
    for (_, rec) in e.session_chunks(session).expect("turns") {
        all.push_str(&rec.chunk.text);
        all.push('\n');
    }
    let mut missing = Vec::new();
    for p in prompts(path) {
        let first: String = p
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        let first = first.trim();
        // Command wrappers are rendered as "/name args"; check the visible part only.
        if first.starts_with('<') || first.is_empty() {
            continue;
        }
        if !all.contains(first) {
            missing.push(first.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "{} prompts not found in stored chunks, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(3)]
    );
}

fn gen_transcript(out: &Path, turns: u64, seed: u64) {
    let cfg = GenConfig {
        turns,
        seed,
        layout: Layout::Split,
        ..GenConfig::default()
    };
    std::fs::write(out, generate(&cfg)).expect("write transcript");
}

/// New lines continuing `base` (like `--append-to`).
fn gen_append(base: &Path, turns: u64, seed: u64) -> Vec<u8> {
    let existing = std::fs::read(base).expect("read transcript");
    let cfg = GenConfig {
        turns,
        seed,
        ..GenConfig::default()
    };
    append(&existing, &cfg).expect("continue the transcript")
}

fn turn_ids(e: &Engine, session: &str) -> (BTreeSet<u32>, usize, HashSet<String>, HashSet<String>) {
    let mut turns = BTreeSet::new();
    let mut tools = HashSet::new();
    let mut files = HashSet::new();
    let list = e.session_chunks(session).expect("turns");
    for (((turn, _), _), rec) in &list {
        turns.insert(*turn);
        tools.extend(rec.chunk.tools.iter().cloned());
        files.extend(rec.chunk.files.iter().cloned());
    }
    (turns, list.len(), tools, files)
}

#[test]
fn five_thousand_turns_all_kept_and_incremental() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("t5000.jsonl");
    let seed = 5000;
    println!("transcript_gen seed {seed}");
    gen_transcript(&t, 5000, seed);
    let e = engine(&dir.path().join("home"));
    let report = e
        .ingest_transcript(&t, &IngestOptions::default())
        .expect("ingest");
    let session = report.sessions.first().cloned().expect("session id");
    let (turns, parts, tools, files) = turn_ids(&e, &session);
    let prompts = count_prompts(&t);
    // Turn ids count every turn kind (prompts, slash commands, compact summaries, preamble);
    // every prompt opens one, so distinct ids ≥ prompts, and ids are dense 0..n.
    assert!(
        turns.len() >= prompts,
        "turns out {} < prompts in {prompts}",
        turns.len()
    );
    assert_prompts_stored(&e, &session, &t);
    assert_eq!(
        turns.iter().copied().max().map(|m| m as usize + 1),
        Some(turns.len()),
        "dense turn ids"
    );
    assert!(parts >= turns.len());
    for tool in ["Bash", "Read", "Edit"] {
        assert!(tools.contains(tool), "tool {tool} preserved: {tools:?}");
    }
    assert!(
        files
            .iter()
            .any(|f| f.ends_with(".py") || f.ends_with(".rs") || f.ends_with(".ts")),
        "file paths preserved"
    );

    // Append two turns: only the new bytes (plus the open turn) are read.
    let before = std::fs::metadata(&t).expect("meta").len();
    let appended = gen_append(&t, 2, 7);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&t)
        .expect("open");
    std::io::Write::write_all(&mut f, &appended).expect("append");
    let r2 = e
        .ingest_transcript(&t, &IngestOptions::default())
        .expect("re-ingest");
    assert!(
        r2.bytes_read < (appended.len() as u64) + before / 100,
        "incremental ingest read {} bytes for {} new bytes",
        r2.bytes_read,
        appended.len()
    );
    let (turns2, _, _, _) = turn_ids(&e, &session);
    assert_eq!(turns2.len(), turns.len() + 2, "two new turns");
    assert_eq!(count_prompts(&t), prompts + 2);
}

#[test]
fn real_harness_transcripts_keep_every_turn() {
    let root = real_transcripts_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(&dir.path().join("home"));
    let mut n = 0;
    for scenario in std::fs::read_dir(&root).expect("harness transcripts") {
        let scenario = scenario.expect("entry").path();
        if !scenario.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&scenario).expect("dir") {
            let f = f.expect("entry").path();
            if f.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let rep = e
                .ingest_transcript(&f, &IngestOptions::default())
                .expect("ingest");
            assert_eq!(rep.malformed, 0, "{}", f.display());
            let session = rep.sessions.first().cloned().expect("session");
            let (turns, _, _, _) = turn_ids(&e, &session);
            assert!(
                turns.len() >= count_prompts(&f),
                "{}: turns lost",
                f.display()
            );
            assert_prompts_stored(&e, &session, &f);
            n += 1;
        }
    }
    assert!(n >= 5, "expected the harness transcripts, found {n}");
}

/// A copy of an archived transcript under another path (moved project, copied file) resumes
/// from the session's cursor: only the new bytes are read, and no turn is lost or doubled.
#[test]
fn moved_transcript_resumes_from_the_session_cursor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.jsonl");
    gen_transcript(&a, 300, 31);
    let e = engine(&dir.path().join("home"));
    let first = e
        .ingest_transcript(&a, &IngestOptions::default())
        .expect("ingest a");
    let session = first.sessions.first().cloned().expect("session");
    let (turns_a, _, _, _) = turn_ids(&e, &session);

    let b = dir.path().join("b.jsonl");
    std::fs::copy(&a, &b).expect("copy");
    let appended = gen_append(&a, 2, 9);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&b)
        .expect("open");
    std::io::Write::write_all(&mut f, &appended).expect("append");

    let second = e
        .ingest_transcript(&b, &IngestOptions::default())
        .expect("ingest b");
    let size_a = std::fs::metadata(&a).expect("meta").len();
    assert!(
        second.bytes_read < appended.len() as u64 + size_a / 20,
        "read {} bytes of a {}-byte file for {} new bytes",
        second.bytes_read,
        size_a,
        appended.len()
    );
    let (turns_b, _, _, _) = turn_ids(&e, &session);
    assert_eq!(turns_b.len(), turns_a.len() + 2);
    assert_prompts_stored(&e, &session, &b);
}

/// `memctl ingest` commits in bounded passes (so that hooks get the store between them): the
/// store ends exactly as after one pass — same turns, same parts, same texts — and the report
/// counts each turn once.
#[test]
fn ingest_in_bounded_passes_equals_one_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("t.jsonl");
    let seed = 808;
    println!("transcript_gen seed {seed}");
    gen_transcript(&t, 400, seed);
    let one = engine(&dir.path().join("one"));
    let r1 = one
        .ingest_transcript(&t, &IngestOptions::default())
        .expect("one pass");
    let many = engine(&dir.path().join("many"));
    let opts = IngestOptions {
        commit_bytes: Some(48 << 10),
        ..IngestOptions::default()
    };
    let r2 = many.ingest_transcript(&t, &opts).expect("passes");
    let session = r1.sessions.first().cloned().expect("session");
    assert_eq!(r2.sessions, r1.sessions);
    assert_eq!(r2.turns, r1.turns, "each turn counted once");
    assert!(
        r2.lines >= r1.lines,
        "an open turn is parsed again by the next pass"
    );
    assert_eq!(r2.transcripts, 1);
    let texts = |e: &Engine| {
        e.session_chunks(&session)
            .expect("turns")
            .into_iter()
            .map(|((k, _), rec)| (k, rec.chunk.text))
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&many), texts(&one));
    assert!(r2.bytes_read >= r1.bytes_read);
}
