//! 500 generated turns through the engine's chunker, combined and split layouts: turns in =
//! distinct turn ids out, with tool names, file paths and tool results preserved. Moved here
//! from `engine/src/transcript/tests_real.rs` when the generator became Rust: it used to run
//! a Python script, and now needs nothing outside the repository (it never skips).
//!
//! The oracle reads the JSONL with `serde_json::Value` on purpose: it must be an independent
//! path from the typed parser it checks (and from the generator's own counts, checked too).

use memctl_engine::{ChunkerConfig, TranscriptBatch, chunk_transcript};
use memctl_tests::transcript_gen::{GenConfig, Generator, Layout};
use serde_json::Value;
use std::collections::BTreeSet;

/// Stands for a compaction-summary turn in the openers.
const CS: &str = "§compaction summary";

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

/// The opening of each turn (part 0), in turn-index order: the prompt, or [`CS`].
fn openers(b: &TranscriptBatch) -> Vec<String> {
    let mut firsts: Vec<_> = b
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

/// "Turns in = distinct turn ids out", plus tools, paths and tool results preserved.
fn assert_every_turn_kept(bytes: &[u8], expected_prompts: usize, label: &str) -> Oracle {
    let o = oracle(bytes);
    assert_eq!(
        o.prompts.len(),
        expected_prompts,
        "{label}: the generator's prompt count"
    );
    let b = chunk_transcript(bytes, "s", &ChunkerConfig::default());
    assert_eq!(b.stats.malformed, 0, "{label}");
    let turns_in = o.prompts.len() + o.commands + o.compact_summaries;
    let n = u32::try_from(turns_in).expect("turn count fits u32");
    let indexes: BTreeSet<u32> = b.chunks.iter().map(|c| c.chunk.turn_index).collect();
    assert_eq!(
        indexes,
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
    o
}

/// 500 turns from the repository's generator (with the CLI's bookkeeping lines), both layouts.
#[test]
fn generator_500_turns_keeps_every_turn() {
    for layout in [Layout::Combined, Layout::Split] {
        let cfg = GenConfig {
            turns: 500,
            seed: 4242,
            layout,
            ..GenConfig::default()
        };
        let mut g = Generator::new(&cfg);
        g.turns(cfg.turns);
        let bytes = g.take_output();
        let label = format!("{layout:?}");
        let o = assert_every_turn_kept(&bytes, 500, &label);
        let stats = g.stats();
        assert_eq!(
            (o.commands as u64, o.compact_summaries as u64),
            (stats.commands, stats.compact_summaries),
            "{label}: the oracle agrees with the generator's own counts"
        );
        assert!(
            stats.compact_summaries > 0 && stats.commands > 0 && stats.interrupts > 0,
            "{label}: seed 4242 exercises compactions, commands and interruptions: {stats:?}"
        );
        for tool in ["Read", "Edit", "Write", "Grep", "Glob", "Bash", "TodoWrite"] {
            assert!(o.tools.contains(tool), "{label}: {tool} in {:?}", o.tools);
        }
    }
}
