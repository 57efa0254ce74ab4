//! Fuzzing on stable Rust: proptest drives every parser that reads what memctl does
//! not control — transcript lines (and the chunker behind them), the tool responses inside hook
//! payloads (the payloads themselves are an adapter's: Claude Code's are fuzzed in
//! `memctl-hooks`, with this harness), search filters (`--since`/`--until`, `--session`, `--project`), the
//! settings (environment and config files) — with arbitrary bytes and with structure-aware
//! mutations of real inputs (the sample transcript's lines, a payload per event).
//!
//! Properties: never panics; never hangs (bounded inputs, every case timed); errors are typed
//! values with a message; round trips where they exist (a parsed time parses back to itself;
//! a normalized project is stable; an incremental chunker run resumed at any line stores what
//! one pass stores).
//!
//! Why proptest and not cargo-fuzz: cargo-fuzz needs nightly, which this toolchain lacks;
//! proptest is stable, already a dev-dependency, seeds its RNG from a value we print, and
//! shrinks a failing input to a small one for the regression test. (bolero's stable mode
//! would have added a crate for the same random testing.) `scripts/fuzz.sh` runs long;
//! CI runs `MEMCTL_FUZZ_CASES` (default 1000) cases per target with a fixed seed.

use crate::testing::fuzz::{fuzz, hook_payloads, json_value, mutated_json, real_lines, text};
use crate::transcript::line::parse_line;
use crate::transcript::{ChunkerConfig, chunk_transcript};
use crate::{Settings, filter};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[test]
fn fuzz_transcript_line_arbitrary_bytes() {
    fuzz(
        "transcript line: arbitrary bytes",
        prop::collection::vec(any::<u8>(), 0..1024),
        |bytes| {
            if let Err(e) = parse_line(&bytes) {
                prop_assert!(!e.to_string().is_empty());
            }
            Ok(())
        },
    );
}

/// Chunks of a batch by (turn, part), the way the store keeps them: a later batch replaces
/// every part of the turns it emits.
fn stored(map: &mut BTreeMap<(u32, u16), String>, batch: crate::transcript::Batch) {
    let turns: std::collections::BTreeSet<u32> =
        batch.chunks.iter().map(|c| c.chunk.turn_index).collect();
    map.retain(|(t, _), _| !turns.contains(t));
    for c in batch.chunks {
        map.insert((c.chunk.turn_index, c.chunk.part), c.chunk.text);
    }
}

#[test]
fn fuzz_transcript_mutated_real_lines_and_chunker() {
    let lines = real_lines();
    let strategy = prop::collection::vec(mutated_json(lines.clone()), 1..12).prop_flat_map(|ls| {
        let n = ls.len();
        (Just(ls), 0..=n)
    });
    fuzz(
        "transcript: mutated real lines + chunker",
        strategy,
        |(ls, split)| {
            for l in &ls {
                if let Err(e) = parse_line(l) {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
            let mut bytes = Vec::new();
            for l in &ls {
                bytes.extend_from_slice(l);
                bytes.push(b'\n');
            }
            let cfg = ChunkerConfig::default();
            let whole = chunk_transcript(&bytes, "fuzz-session", &cfg);
            for c in &whole.chunks {
                prop_assert!(
                    c.chunk.part < c.chunk.parts,
                    "part {} of {}",
                    c.chunk.part,
                    c.chunk.parts
                );
            }
            let mut one = BTreeMap::new();
            stored(&mut one, whole);
            // Resumed: the lines before `split` in one call, the rest (from the resume point
            // the state names) in a second.
            let cut: usize = ls[..split].iter().map(|l| l.len() + 1).sum();
            let mut ch = crate::transcript::Chunker::new(cfg, "fuzz-session");
            let mut two = BTreeMap::new();
            stored(&mut two, ch.feed(&bytes[..cut]));
            let from = usize::try_from(ch.state().resume_offset).unwrap_or(usize::MAX);
            prop_assert!(
                from <= cut,
                "resume offset {from} past the bytes fed ({cut})"
            );
            stored(&mut two, ch.feed_final(&bytes[from..]));
            prop_assert_eq!(one, two, "resumed at line {} differs from one pass", split);
            Ok(())
        },
    );
}

/// The parts of a PostToolUse payload the swap reads (any JSON type: the input is fuzzed).
#[derive(Debug, Default, serde::Deserialize)]
struct ToolParts {
    tool_name: Option<serde_json::Value>,
    tool_input: Option<serde_json::Value>,
    tool_response: Option<serde_json::Value>,
}

#[test]
fn fuzz_tool_output_parts_of_mutated_payloads() {
    fuzz(
        "tool outputs: mutated real payloads",
        mutated_json(hook_payloads()),
        |raw| {
            // What the tool-output handler does with a tool call's parts.
            let parts: ToolParts = serde_json::from_slice(&raw).unwrap_or_default();
            let tool = parts
                .tool_name
                .as_ref()
                .and_then(|t| t.as_str())
                .unwrap_or("Bash");
            let response = parts
                .tool_response
                .map(|r| r.to_string())
                .unwrap_or_default();
            let input = parts.tool_input.map(|r| r.to_string()).unwrap_or_default();
            let out = crate::swap::output_text(tool, &response);
            prop_assert!(
                out.len() <= response.len() * 4 + 64,
                "output text grew: {}",
                out.len()
            );
            let _summary = crate::swap::input_summary(tool, &input);
            Ok(())
        },
    );
}

/// Strings shaped like time values (ages, dates, RFC 3339, words), plus any text.
fn time_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[-+ ]?[0-9]{0,25}", "[smhdwy ]?[smhdw]?").prop_map(|(n, u)| format!("{n}{u}")),
        "[0-9]{1,6}-[0-9]{1,3}-[0-9]{1,3}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,12})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?",
        prop::sample::select(vec![
            "now",
            "today",
            "yesterday",
            "TODAY",
            " 7d ",
            "7D",
            "0s",
            "",
            "d"
        ])
        .prop_map(str::to_string),
        text(),
    ]
}

#[test]
fn fuzz_filter_times() {
    fuzz(
        "filters: --since/--until",
        (time_text(), -2_000_000_000_i64..4_000_000_000_i64),
        |(value, now)| {
            let now = jiff::Timestamp::from_second(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            match filter::parse_time("since", &value, now) {
                Ok(stored) => {
                    // Round trip: the stored form is a time this parser reads back as itself.
                    let again = filter::parse_time("since", &stored, now);
                    prop_assert_eq!(
                        again.as_ref().ok(),
                        Some(&stored),
                        "{:?} → {:?}",
                        value,
                        stored
                    );
                }
                Err(e) => prop_assert!(e.to_string().contains("--since")),
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_filter_session_and_project() {
    let ids = prop::collection::vec(
        prop_oneof![
            "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
            text()
        ],
        0..8,
    );
    let paths = prop::collection::vec(
        prop_oneof!["(/[a-zA-Z0-9._ -]{0,8}){0,5}/?", "[./]{0,6}", text()],
        0..6,
    );
    fuzz(
        "filters: --session prefix, --project path, --tool",
        (text(), ids, text(), paths, text()),
        |(prefix, ids, project, known, tool)| {
            match filter::resolve_session(&prefix, ids.iter().map(String::as_str)) {
                Ok(id) => {
                    prop_assert!(ids.contains(&id), "{id:?} is not a known id");
                    prop_assert!(id.starts_with(prefix.trim()));
                }
                Err(e) => prop_assert!(e.to_string().contains("--session")),
            }
            let n = filter::normalize_project(&project);
            prop_assert_eq!(
                filter::normalize_project(&n),
                n.clone(),
                "normalize is stable"
            );
            match filter::resolve_project(&project, known.iter().map(String::as_str)) {
                Ok(p) => prop_assert!(known.contains(&p)),
                Err(e) => prop_assert!(e.to_string().contains("--project")),
            }
            // `--tool` is compared trimmed, any case; the swap id shortener takes any string.
            std::hint::black_box(crate::swap::short_id(&tool));
            Ok(())
        },
    );
}

#[test]
fn fuzz_settings_from_the_environment_and_config_files() {
    let keys: Vec<&'static str> = crate::settings::keys::KNOWN_VARS.to_vec();
    let var = (
        prop::sample::select(keys.clone()),
        prop_oneof![text(), "[0-9]{0,12}", "-?[0-9]{1,30}(\\.[0-9]*)?[kKmM]?"],
    );
    let toml_key = prop::sample::select(
        keys.iter()
            .map(|k| k.trim_start_matches("MEMCTL_").to_ascii_lowercase())
            .collect::<Vec<_>>(),
    );
    let file = prop::collection::vec((toml_key, json_value()), 0..6);
    fuzz(
        "settings: environment and config files",
        (
            prop::collection::vec(var, 0..8),
            file,
            prop::collection::vec(any::<u8>(), 0..200),
        ),
        |(vars, file_pairs, raw)| {
            if let Err(e) = Settings::from_vars(vars.clone()) {
                prop_assert!(!e.to_string().is_empty());
            }
            // A config file of typed-but-wrong values, then one of arbitrary bytes.
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let f = dir.path().join("config.toml");
            let mut toml_text = String::new();
            for (k, v) in &file_pairs {
                if let Ok(t) = toml::Value::try_from(v) {
                    toml_text.push_str(&format!("{k} = {t}\n"));
                }
            }
            for body in [toml_text.into_bytes(), raw] {
                std::fs::write(&f, &body).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let env = vec![
                    ("MEMCTL_CONFIG".to_string(), f.display().to_string()),
                    ("MEMCTL_HOME".to_string(), dir.path().display().to_string()),
                ];
                let loaded = Settings::load_layered(env, None);
                for e in &loaded.errors {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
            Ok(())
        },
    );
}
