//! Real transcripts (Claude Code CLI 2.1.330, harness runs), a generated fixture, and the
//! incremental-equals-one-pass property. Long generated transcripts (500 turns, both layouts)
//! are checked in the tests crate (`tests/tests/testsuite/generated_turns_kept.rs`), where the
//! generator lives.
//!
//! The oracles here read the JSONL with `serde_json::Value` on purpose: they must be an
//! independent path from the typed parser they check.

use super::turns::TurnStatus;
use super::*;
use crate::Chunk;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

const REAL: [&str; 5] = [
    "auto-compact/b4b17f6c-97d3-44ef-baf4-b4d827749551.jsonl",
    "basic-compact-resume/16bf7cf7-6ebd-46f5-ac2c-6025ff9b684d.jsonl",
    "one-process-clear-compact/020818dc-f472-40a0-95a8-345994eaca72.jsonl",
    "one-process-clear-compact/d8ff6372-79d4-41b4-bedc-fd5508391474.jsonl",
    "tools-gallery/c7296d9d-ce6f-4b6e-8d52-77c8b5cc1483.jsonl",
];
const GENERATED: &str = "generated/gen-seed185-turns24-split.jsonl";

/// Stands for a compaction-summary turn in the expected lists.
const CS: &str = "§compaction summary";

fn fixture(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn stem(rel: &str) -> &str {
    rel.rsplit('/')
        .next()
        .and_then(|f| f.strip_suffix(".jsonl"))
        .unwrap_or(rel)
}

/// The opening of each turn (part 0), in turn-index order: the prompt, or [`CS`].
fn openers(b: &Batch) -> Vec<String> {
    let mut firsts: Vec<&Chunk> = b
        .chunks
        .iter()
        .map(|c| &c.chunk)
        .filter(|c| c.part == 0)
        .collect();
    firsts.sort_by_key(|c| c.turn_index);
    firsts
        .iter()
        .map(|c| {
            if c.is_compact_summary {
                CS.to_owned()
            } else {
                c.text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("User: ")
                    .to_owned()
            }
        })
        .collect()
}

fn distinct_indexes(b: &Batch) -> BTreeSet<u32> {
    b.chunks.iter().map(|c| c.chunk.turn_index).collect()
}

#[test]
fn real_transcripts_parse_cleanly_into_the_expected_turns() {
    let expected: [&[&str]; 5] = [
        &[
            "Turn one: run echo one.",
            "Turn two: run echo two.",
            "Turn three.",
            "Turn four; the context is now huge.",
            "Turn five after a big context.",
            CS,
        ],
        &[
            "Please run echo hi for me.",
            "Now read notes.txt",
            CS,
            "/compact keep the notes details",
            "What did we do so far?",
            "One more question.",
        ],
        &[
            "/clear",
            "after clear prompt",
            CS,
            "/compact",
            "after compact prompt",
        ],
        &["first prompt"],
        &["Exercise the tools."],
    ];
    for (rel, want) in REAL.iter().zip(expected) {
        let b = chunk_transcript(&fixture(rel), stem(rel), &ChunkerConfig::default());
        assert_eq!(b.stats.malformed, 0, "{rel}");
        assert_eq!(openers(&b), want, "{rel}");
        let n = u32::try_from(want.len()).unwrap_or(u32::MAX);
        assert_eq!(distinct_indexes(&b), (0..n).collect(), "{rel}");
        for c in &b.chunks {
            assert_eq!(
                c.chunk.session_id,
                stem(rel),
                "{rel}: sessionId is the file stem here"
            );
            assert!(
                c.chunk.project.starts_with("/home/user/"),
                "{rel}: {}",
                c.chunk.project
            );
        }
        // exactly one turn is open: the last prompt-like one
        let open: BTreeSet<u32> = b
            .chunks
            .iter()
            .filter(|c| c.status == TurnStatus::Open)
            .map(|c| c.chunk.turn_index)
            .collect();
        assert_eq!(open.len(), 1, "{rel}");
    }
}

#[test]
fn real_answers_after_auto_compaction_stay_with_their_prompt() {
    let b = chunk_transcript(&fixture(REAL[0]), "s", &ChunkerConfig::default());
    let turn_five = b
        .chunks
        .iter()
        .find(|c| c.chunk.turn_index == 4)
        .map(|c| c.chunk.text.clone());
    assert_eq!(
        turn_five.as_deref(),
        Some("User: Turn five after a big context.\nAssistant: Reply after auto-compact.")
    );
}

#[test]
fn real_tools_gallery_keeps_every_tool_and_path() {
    let b = chunk_transcript(&fixture(REAL[4]), "s", &ChunkerConfig::default());
    let c = &b.chunks[0].chunk;
    assert_eq!(
        c.tools,
        vec!["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
    );
    assert_eq!(
        c.files,
        vec![
            "/home/user/tools-gallery/work/missing.txt",
            "/home/user/tools-gallery/work/new.txt",
            "/home/user/tools-gallery/work/src/app.txt",
            "/home/user/tools-gallery/work",
        ]
    );
    assert!(c.text.contains("[error: Bash] Exit code 3"), "{}", c.text);
    assert!(
        c.text.contains("[result: Glob] new.txt\nsrc/app.txt"),
        "{}",
        c.text
    );
    assert_eq!(b.turns[0].tool_results().count(), 7);
    assert_eq!(c.summary, "Exercise the tools. → All tools exercised.");
}

/// Every string that Claude Code put into a `hook_additional_context` attachment.
fn hook_context_strings(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v["type"] == "attachment"
            && v["attachment"]["type"] == "hook_additional_context"
            && let Some(items) = v["attachment"]["content"].as_array()
        {
            out.extend(items.iter().filter_map(|s| s.as_str()).map(str::to_owned));
        }
    }
    out
}

#[test]
fn real_hook_additional_context_never_reaches_chunks() {
    let mut checked = 0;
    for rel in REAL {
        let bytes = fixture(rel);
        let b = chunk_transcript(&bytes, "s", &ChunkerConfig::default());
        for needle in hook_context_strings(&bytes) {
            checked += 1;
            for c in &b.chunks {
                assert!(
                    !c.chunk.text.contains(&needle),
                    "{rel}: {needle:?} leaked into {:?}",
                    c.chunk.text
                );
            }
        }
        assert!(
            b.chunks
                .iter()
                .all(|c| !c.chunk.text.contains("CCH_MARKER")),
            "{rel}"
        );
    }
    assert!(checked >= 40, "only {checked} hook contexts found");
}

/// What an independent reading of a generated transcript says must come out.
#[derive(Debug, Default)]
struct Oracle {
    prompts: Vec<String>,
    commands: usize,
    compact_summaries: usize,
    tools: BTreeSet<String>,
    files: BTreeSet<String>,
    tool_results: usize,
}

fn oracle(bytes: &[u8]) -> Oracle {
    let mut o = Oracle::default();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let content = &v["message"]["content"];
        if v["type"] == "assistant" {
            for b in content
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_use")
            {
                o.tools
                    .insert(b["name"].as_str().unwrap_or_default().to_owned());
                for key in ["file_path", "path", "notebook_path"] {
                    if let Some(p) = b["input"][key].as_str() {
                        o.files.insert(p.to_owned());
                    }
                }
            }
        }
        if v["type"] != "user" || v["isMeta"] == true {
            continue;
        }
        if v["isCompactSummary"] == true {
            o.compact_summaries += 1;
            continue;
        }
        let blocks = content.as_array().cloned().unwrap_or_default();
        o.tool_results += blocks.iter().filter(|b| b["type"] == "tool_result").count();
        let text = match content {
            Value::String(s) => s.clone(),
            _ if blocks.iter().any(|b| b["type"] == "tool_result") => continue,
            _ => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if text.starts_with("<command-name>") {
            o.commands += 1;
        } else if !text.starts_with("[Request interrupted") && !text.starts_with("<local-command") {
            o.prompts.push(text);
        }
    }
    o
}

/// "Turns in = distinct turn ids out", plus tools, paths and tool results preserved.
fn assert_every_turn_kept(bytes: &[u8], expected_prompts: usize, label: &str) -> Batch {
    let o = oracle(bytes);
    assert_eq!(
        o.prompts.len(),
        expected_prompts,
        "{label}: the generator's prompt count"
    );
    let b = chunk_transcript(bytes, "s", &ChunkerConfig::default());
    assert_eq!(b.stats.malformed, 0, "{label}");
    let turns_in = o.prompts.len() + o.commands + o.compact_summaries;
    let n = u32::try_from(turns_in).unwrap_or(u32::MAX);
    assert_eq!(
        distinct_indexes(&b),
        (0..n).collect(),
        "{label}: turns in = distinct turn ids out"
    );
    let distinct_uuids: BTreeSet<&str> = b
        .chunks
        .iter()
        .map(|c| c.chunk.turn_uuid.as_str())
        .collect();
    assert_eq!(distinct_uuids.len(), turns_in, "{label}");
    let flagged: BTreeSet<u32> = b
        .chunks
        .iter()
        .filter(|c| c.chunk.is_compact_summary)
        .map(|c| c.chunk.turn_index)
        .collect();
    assert_eq!(flagged.len(), o.compact_summaries, "{label}");
    let tools: BTreeSet<String> = b
        .chunks
        .iter()
        .flat_map(|c| c.chunk.tools.iter().cloned())
        .collect();
    assert_eq!(tools, o.tools, "{label}: tool names");
    let files: BTreeSet<String> = b
        .chunks
        .iter()
        .flat_map(|c| c.chunk.files.iter().cloned())
        .collect();
    assert_eq!(files, o.files, "{label}: file paths");
    let results: usize = b.turns.iter().map(|t| t.tool_results().count()).sum();
    assert_eq!(results, o.tool_results, "{label}: tool results");
    // every prompt opens a turn, in order
    let opened: Vec<String> = openers(&b)
        .into_iter()
        .filter(|s| s != CS && !s.starts_with('/'))
        .collect();
    let want: Vec<String> = o
        .prompts
        .iter()
        .map(|p| p.lines().next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(opened, want, "{label}");
    b
}

#[test]
fn generated_fixture_keeps_every_turn() {
    let bytes = fixture(GENERATED);
    let b = assert_every_turn_kept(&bytes, 24, GENERATED);
    let o = oracle(&bytes);
    assert_eq!(
        (o.commands, o.compact_summaries),
        (1, 1),
        "the fixture exercises both"
    );
    assert!(
        b.chunks
            .iter()
            .any(|c| c.chunk.text.contains("[Request interrupted by user]"))
    );
    assert!(
        b.chunks
            .iter()
            .all(|c| c.chunk.text.chars().count() <= 4000)
    );
}

/// A tiny deterministic PRNG (xorshift64*), so the piece sizes are reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Stored chunks keyed as the store keeps them: a turn's parts are replaced as a whole.
type Stored = BTreeMap<String, Vec<Chunk>>;

fn one_pass(bytes: &[u8]) -> Stored {
    let mut out = Stored::new();
    for c in chunk_transcript(bytes, "s", &ChunkerConfig::default()).into_chunks() {
        out.entry(c.turn_uuid.clone()).or_default().push(c);
    }
    out
}

/// Grow the file by random pieces and ingest after each, as UserPromptSubmit hooks would.
fn incremental(bytes: &[u8], seed: u64) -> Stored {
    let mut rng = Rng(seed);
    let mut stored = Stored::new();
    let mut chunker = Chunker::new(ChunkerConfig::default(), "s");
    let mut end = 0;
    while end < bytes.len() {
        let piece = if rng.below(2) == 0 {
            1 + rng.below(64)
        } else {
            1 + rng.below(16_384)
        };
        end = (end + piece).min(bytes.len());
        // the state travels through serde, as it will between hook processes
        let state: ChunkerState =
            serde_json::from_str(&serde_json::to_string(chunker.state()).unwrap_or_default())
                .unwrap_or_default();
        chunker = Chunker::new(ChunkerConfig::default(), "s").with_state(state);
        let from = usize::try_from(chunker.state().resume_offset).unwrap_or(usize::MAX);
        let batch = chunker.feed(&bytes[from..end]);
        let mut fresh = Stored::new();
        for c in batch.into_chunks() {
            fresh.entry(c.turn_uuid.clone()).or_default().push(c);
        }
        stored.extend(fresh);
    }
    stored
}

#[test]
fn incremental_random_pieces_equal_one_pass() {
    let seed = 0x5EED_2026_u64;
    eprintln!("incremental_random_pieces_equal_one_pass seed = {seed:#x}");
    let mut files: Vec<&str> = REAL.to_vec();
    files.push(GENERATED);
    for (i, rel) in files.iter().enumerate() {
        let bytes = fixture(rel);
        let want = one_pass(&bytes);
        for round in 0..3u64 {
            let s = seed ^ ((i as u64) << 8) ^ round;
            let got = incremental(&bytes, s);
            assert_eq!(got.len(), want.len(), "{rel} seed {s:#x}: turn count");
            for (uuid, parts) in &want {
                assert_eq!(got.get(uuid), Some(parts), "{rel} seed {s:#x}: turn {uuid}");
            }
        }
    }
}

/// The parallel parse/render path (used from 256 KiB of input on) gives exactly the batch of
/// the serial one: same chunks in the same order, same turns, counters and redactions. Run
/// on every real fixture, the generated one, and all of them concatenated (many blocks of
/// lines, turns spanning block edges), with a line split mid-way so `feed` leaves a tail.
#[test]
fn parallel_feed_equals_serial_feed() {
    let mut files: Vec<&str> = REAL.to_vec();
    files.push(GENERATED);
    let mut all = Vec::new();
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in &files {
        let bytes = fixture(rel);
        all.extend_from_slice(&bytes);
        inputs.push(((*rel).to_owned(), bytes));
    }
    // Repeated so the concatenation spans several parse blocks of lines.
    let mut big = Vec::new();
    while big.len() < 3 * 1024 * 1024 {
        big.extend_from_slice(&all);
    }
    let half = big.len() / 2;
    inputs.push((
        "all, repeated, cut mid-line".to_owned(),
        big[..half].to_vec(),
    ));
    for (name, bytes) in &inputs {
        let config = ChunkerConfig::default();
        let mut serial = Chunker::new(config.clone(), "s").with_parallel_min_bytes(usize::MAX);
        let mut parallel = Chunker::new(config, "s").with_parallel_min_bytes(0);
        let a = serial.feed(bytes);
        let b = parallel.feed(bytes);
        assert!(!a.chunks.is_empty(), "{name}: no chunks");
        assert_eq!(a, b, "{name}: batches differ");
        assert_eq!(serial.state(), parallel.state(), "{name}: states differ");
    }
}
