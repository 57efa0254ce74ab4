//! The transcript generator the tests and benches use (`memctl_tests::transcript_gen`, in the
//! repository, no Python): deterministic by seed, every line type the real CLI writes, a chain
//! without gaps, appends that continue it, and the engine's chunker reads all of it.

use memctl_engine::{ChunkerConfig, chunk_transcript};
use memctl_tests::transcript_gen::{GenConfig, Generator, Layout, append, generate};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn cfg(turns: u64, seed: u64, layout: Layout) -> GenConfig {
    GenConfig {
        turns,
        seed,
        layout,
        ..GenConfig::default()
    }
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every line is JSON"))
        .collect()
}

/// A name for the kind of each line, fine enough to tell every shape the generator promises.
fn kind(v: &Value) -> Vec<String> {
    let t = v["type"].as_str().unwrap_or("?").to_owned();
    let content = &v["message"]["content"];
    match t.as_str() {
        "attachment" => vec![format!(
            "attachment:{}",
            v["attachment"]["type"].as_str().unwrap_or("?")
        )],
        "system" => vec![format!("system:{}", v["subtype"].as_str().unwrap_or("?"))],
        "assistant" => content
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| format!("assistant:{}", b["type"].as_str().unwrap_or("?")))
            .collect(),
        "user" if v["isCompactSummary"] == true => vec!["user:compact-summary".into()],
        "user" if v["isMeta"] == true => vec!["user:meta".into()],
        "user" => match content {
            Value::String(s) if s.starts_with("<command-name>") => vec!["user:command".into()],
            Value::String(_) => vec!["user:prompt-string".into()],
            Value::Array(b) if b[0]["type"] == "tool_result" => {
                assert!(v["toolUseResult"].is_object() || v["toolUseResult"].is_string());
                vec!["user:tool-result".into()]
            }
            Value::Array(b) if b[0]["text"] == "[Request interrupted by user]" => {
                vec!["user:interrupted".into()]
            }
            _ => vec!["user:prompt-blocks".into()],
        },
        _ => vec![t],
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    for layout in [Layout::Combined, Layout::Split] {
        let a = generate(&cfg(120, 11, layout));
        assert_eq!(a, generate(&cfg(120, 11, layout)), "{layout:?}");
        assert_ne!(a, generate(&cfg(120, 12, layout)), "{layout:?}");
    }
}

#[test]
fn every_line_type_appears_in_300_turns() {
    for layout in [Layout::Combined, Layout::Split] {
        let mut kinds = BTreeMap::<String, usize>::new();
        for v in lines(&generate(&cfg(300, 7, layout))) {
            for k in kind(&v) {
                *kinds.entry(k).or_default() += 1;
            }
        }
        for want in [
            "file-history-snapshot",
            "user:prompt-string",
            "user:prompt-blocks",
            "assistant:thinking",
            "assistant:text",
            "assistant:tool_use",
            "user:tool-result",
            "system:compact_boundary",
            "user:compact-summary",
            "user:command",
            "user:meta",
            "user:interrupted",
            "attachment:hook_success",
            "attachment:hook_additional_context",
            "queue-operation",
            "last-prompt",
            "future-line-kind",
        ] {
            assert!(
                kinds.contains_key(want),
                "{layout:?}: no {want} line in {kinds:?}"
            );
        }
    }
}

/// Chained lines form one parent chain; only a compact boundary restarts it (null
/// `parentUuid`, `logicalParentUuid` = the line before).
fn assert_one_chain(all: &[Value], mut prev: Option<String>, label: &str) {
    let mut session = None;
    for v in all.iter().filter(|v| v["uuid"].is_string()) {
        let parent = v["parentUuid"].as_str().map(str::to_owned);
        if v["subtype"] == "compact_boundary" {
            assert_eq!(parent, None, "{label}");
            assert_eq!(
                v["logicalParentUuid"].as_str().map(str::to_owned),
                prev,
                "{label}"
            );
        } else {
            assert_eq!(parent, prev, "{label}: chain broken at {v}");
        }
        let s = v["sessionId"].as_str().map(str::to_owned);
        assert!(
            s.is_some() && (session.is_none() || session == s),
            "{label}: one session"
        );
        session = s;
        prev = v["uuid"].as_str().map(str::to_owned);
    }
}

#[test]
fn both_layouts_parse_with_no_malformed_line_and_one_turn_per_prompt() {
    for layout in [Layout::Combined, Layout::Split] {
        let mut g = Generator::new(&cfg(300, 7, layout));
        g.turns(300);
        let bytes = g.take_output();
        let stats = g.stats().clone();
        assert_eq!(stats.prompts, 300);
        assert!(stats.commands > 0 && stats.compact_summaries > 0 && stats.interrupts > 0);
        let all = lines(&bytes);
        assert_eq!(all.len() as u64, stats.lines);
        assert_one_chain(&all, None, &format!("{layout:?}"));
        if layout == Layout::Split {
            let per_id = all.iter().filter(|v| v["type"] == "assistant").fold(
                BTreeMap::<&str, usize>::new(),
                |mut m, v| {
                    assert_eq!(v["message"]["content"].as_array().map(Vec::len), Some(1));
                    *m.entry(v["message"]["id"].as_str().unwrap_or(""))
                        .or_default() += 1;
                    m
                },
            );
            assert!(
                per_id.values().any(|n| *n > 1),
                "split messages share message.id"
            );
        }

        let b = chunk_transcript(&bytes, "s", &ChunkerConfig::default());
        assert_eq!(b.stats.malformed, 0, "{layout:?}");
        let turns: BTreeSet<u32> = b.chunks.iter().map(|c| c.chunk.turn_index).collect();
        let opened = stats.prompts + stats.commands + stats.compact_summaries;
        assert_eq!(
            turns,
            (0..opened as u32).collect(),
            "{layout:?}: one turn per opener"
        );
        let flagged = b
            .chunks
            .iter()
            .filter(|c| c.chunk.is_compact_summary && c.chunk.part == 0);
        assert_eq!(
            flagged.count() as u64,
            stats.compact_summaries,
            "{layout:?}"
        );
        for skipped in ["attachment", "future-line-kind"] {
            assert!(
                b.stats.skipped_by_type.get(skipped).copied().unwrap_or(0) > 0,
                "{layout:?}: {skipped} lines are skipped and counted, not fatal: {:?}",
                b.stats.skipped_by_type
            );
        }
        assert!(
            b.chunks
                .iter()
                .all(|c| !c.chunk.text.contains("memctl restored context")),
            "{layout:?}: a hook's additionalContext never becomes conversation"
        );
    }
}

#[test]
fn append_continues_the_chain() {
    let base = generate(&cfg(40, 21, Layout::Split));
    let base_lines = lines(&base);
    let last = base_lines
        .iter()
        .rev()
        .find(|v| v["uuid"].is_string())
        .expect("chained line");
    let more = append(&base, &cfg(3, 5, Layout::Split)).expect("append");
    let new_lines = lines(&more);
    assert_one_chain(
        &new_lines,
        last["uuid"].as_str().map(str::to_owned),
        "appended",
    );
    for v in new_lines.iter().filter(|v| v["uuid"].is_string()) {
        assert_eq!(v["sessionId"], last["sessionId"]);
        assert_eq!(v["cwd"], last["cwd"]);
        assert_eq!(v["version"], last["version"]);
        assert_eq!(v["gitBranch"], last["gitBranch"]);
        assert!(
            v["timestamp"].as_str() > last["timestamp"].as_str(),
            "the clock moves on"
        );
    }
    let ctx = |v: &Value| v["message"]["usage"]["cache_read_input_tokens"].as_u64();
    let last_ctx = base_lines.iter().rev().find_map(ctx).expect("usage");
    let first_ctx = new_lines.iter().find_map(ctx).expect("usage");
    assert!(
        first_ctx >= last_ctx,
        "the context size carries over: {first_ctx} < {last_ctx}"
    );

    let chunked = |b: &[u8]| {
        let batch = chunk_transcript(b, "s", &ChunkerConfig::default());
        assert_eq!(batch.stats.malformed, 0);
        batch
            .chunks
            .iter()
            .map(|c| c.chunk.turn_index)
            .collect::<BTreeSet<_>>()
            .len()
    };
    let whole = [base.as_slice(), more.as_slice()].concat();
    assert_eq!(chunked(&whole), chunked(&base) + 3, "three more turns");
    assert_eq!(
        more,
        append(&base, &cfg(3, 5, Layout::Split)).expect("again"),
        "deterministic"
    );
    assert_ne!(
        more,
        append(&whole, &cfg(3, 5, Layout::Split)).expect("longer file")
    );
    assert!(append(b"{\"type\":\"mode\"}\n", &cfg(1, 1, Layout::Split)).is_err());
}

/// Extras come from their own stream: turning them off removes exactly those lines.
#[test]
fn no_extras_removes_only_the_extras() {
    let with = lines(&generate(&cfg(150, 3, Layout::Combined)));
    let without = generate(&GenConfig {
        extras: false,
        ..cfg(150, 3, Layout::Combined)
    });
    let extra = |v: &Value| {
        matches!(
            v["type"].as_str(),
            Some("attachment" | "queue-operation" | "last-prompt" | "future-line-kind")
        )
    };
    let mut kept: Vec<Value> = with.into_iter().filter(|v| !extra(v)).collect();
    let without = lines(&without);
    // the line after an attachment chains onto it; otherwise the lines are the same
    for v in &mut kept {
        v["parentUuid"] = Value::Null;
    }
    let mut without = without;
    for v in &mut without {
        v["parentUuid"] = Value::Null;
    }
    assert_eq!(kept, without);
}

/// The binary prints what the library generates, and appends like `--append-to`.
#[test]
fn the_binary_matches_the_library() {
    let bin = env!("CARGO_BIN_EXE_memctl-gen-transcript");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin)
            .args(args)
            .output()
            .expect("run the binary");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let printed = run(&[
        "--turns",
        "60",
        "--seed",
        "9",
        "--layout",
        "split",
        "--compact-at",
        "40000",
    ]);
    let want = GenConfig {
        compact_at: Some(40_000),
        ..cfg(60, 9, Layout::Split)
    };
    assert_eq!(printed, generate(&want));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, &printed).expect("write");
    let more = run(&[
        "--append-to",
        path.to_str().expect("utf-8 path"),
        "--turns",
        "2",
        "--seed",
        "4",
    ]);
    assert_eq!(
        more,
        append(&printed, &cfg(2, 4, Layout::Combined)).expect("append")
    );
    let plain = run(&["--turns", "20", "--no-compact", "--no-extras"]);
    assert_eq!(
        plain,
        generate(&GenConfig {
            compact_at: None,
            extras: false,
            ..cfg(20, 1, Layout::Combined)
        })
    );
    let bad = std::process::Command::new(bin)
        .args(["--layout", "diagonal"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
}
