use super::estimate::estimate_tail;
use super::*;
use serde_json::json;

fn cfg() -> AutopilotConfig {
    AutopilotConfig::default()
}

fn assistant(input: u64, read: u64, create: u64) -> String {
    json!({"type": "assistant", "message": {"role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": input, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": create, "output_tokens": 99}}})
    .to_string()
}

fn user(text: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
}

fn jsonl(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn usage_of_the_last_assistant_message_wins() {
    let t = jsonl(&[
        user("hi"),
        assistant(10, 1000, 5),
        user("more"),
        assistant(4, 30_000, 200),
        user("a prompt without an answer yet"),
    ]);
    let e = estimate_tail(&t, true, t.len() as u64, &cfg()).expect("estimate");
    assert_eq!(e.tokens, 4 + 30_000 + 200);
    assert_eq!(e.source, TokenSource::Usage);
}

#[test]
fn sidechain_usage_is_ignored() {
    let mut side: serde_json::Value = serde_json::from_str(&assistant(1, 90_000, 0)).unwrap();
    side["isSidechain"] = json!(true);
    let t = jsonl(&[assistant(1, 5000, 0), side.to_string()]);
    let e = estimate_tail(&t, true, t.len() as u64, &cfg()).unwrap();
    assert_eq!(e.tokens, 5001);
}

#[test]
fn fallback_counts_chars_since_the_compact_boundary() {
    let boundary = json!({"type": "system", "subtype": "compact_boundary"}).to_string();
    let long = "x".repeat(7000);
    let t = jsonl(&[
        assistant(1, 150_000, 0),
        boundary,
        user(&long),
        json!({"type": "garbage"}).to_string(),
        "not json at all".to_string(),
    ]);
    let e = estimate_tail(&t, true, t.len() as u64, &cfg()).unwrap();
    assert_eq!(e.source, TokenSource::Estimate);
    // 7000 chars + 2 quotes of the JSON string, / 3.5.
    assert_eq!(e.tokens, (7002.0f64 / 3.5).round() as u64);
}

#[test]
fn fallback_without_boundary_extrapolates_a_partial_tail() {
    let line = user(&"y".repeat(350));
    let t = jsonl(&[line.clone(), line.clone()]);
    // Whole file: both lines count.
    let whole = estimate_tail(&t, true, t.len() as u64, &cfg()).unwrap();
    assert_eq!(whole.tokens, (2.0 * 352.0f64 / 3.5).round() as u64);
    // A tail that starts mid-line drops the partial line and scales up by file length.
    let tail = &t[10..];
    let part = estimate_tail(tail, false, 10 * t.len() as u64, &cfg()).unwrap();
    assert_eq!(part.source, TokenSource::Estimate);
    assert!(part.tokens > whole.tokens * 4, "{part:?} vs {whole:?}");
    // Nothing usable.
    assert_eq!(estimate_tail(b"", true, 0, &cfg()), None);
    assert_eq!(estimate_tail(b"no newline", false, 100, &cfg()), None);
}

#[test]
fn transcript_reads_only_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let mut lines = Vec::new();
    // ~200 kB of old history before the last answer: the tail must suffice.
    for _ in 0..200 {
        lines.push(user(&"z".repeat(1000)));
    }
    lines.push(assistant(3, 42_000, 7));
    std::fs::write(&p, jsonl(&lines)).unwrap();
    let c = AutopilotConfig {
        tail_bytes: 4096,
        ..cfg()
    };
    let e = estimate_transcript(&p, &c).unwrap().unwrap();
    assert_eq!((e.tokens, e.source), (42_010, TokenSource::Usage));
    assert!(estimate_transcript(&dir.path().join("missing"), &c).is_err());
}

#[test]
fn thresholds() {
    let c = cfg();
    assert_eq!(level(0.0, &c), Level::Ok);
    assert_eq!(level(69.9, &c), Level::Ok);
    assert_eq!(level(70.0, &c), Level::Warn);
    assert_eq!(level(84.9, &c), Level::Warn);
    assert_eq!(level(85.0, &c), Level::Critical);
    assert_eq!(level(140.0, &c), Level::Critical);
    let est = Estimate {
        tokens: 150_000,
        source: TokenSource::Usage,
    };
    let r = report(&est, 200_000, &[], &c);
    assert_eq!(r.level, Level::Warn);
    assert!((r.percent - 75.0).abs() < 1e-4);
    assert!(note(&r).unwrap().contains("75% full"));
    let low = report(
        &Estimate {
            tokens: 1000,
            ..est
        },
        200_000,
        &[],
        &c,
    );
    assert_eq!(note(&low), None);
}

fn s(tokens: u64) -> Sample {
    Sample { at: 0, tokens }
}

#[test]
fn trend_over_recent_prompts_resets_after_a_drop() {
    assert_eq!(trend(&[], 5), None);
    assert_eq!(trend(&[s(10)], 5), None);
    assert_eq!(trend(&[s(10), s(30)], 5), Some(20.0));
    // Only the last 5 samples count.
    let v = [s(0), s(1000), s(1100), s(1200), s(1300), s(1400)];
    assert_eq!(trend(&v, 5), Some(100.0));
    // A drop (compaction) starts a new series.
    let v = [s(100_000), s(150_000), s(20_000), s(23_000), s(26_000)];
    assert_eq!(trend(&v, 5), Some(3000.0));
    let v = [s(100_000), s(150_000), s(20_000)];
    assert_eq!(trend(&v, 5), None);
    let est = Estimate {
        tokens: 160_000,
        source: TokenSource::Usage,
    };
    let r = report(&est, 200_000, &[s(150_000), s(155_000), s(160_000)], &cfg());
    assert_eq!(r.per_prompt, Some(5000.0));
    assert_eq!(r.prompts_to_critical, Some(2)); // 170k critical: 10k / 5k
}

#[test]
fn state_round_trip_bounded_and_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let sid = "../../etc/passwd";
    let p = state_path(dir.path(), sid);
    assert!(p.starts_with(dir.path().join("autopilot")));
    let mut st = AutopilotState::default();
    for i in 0..40 {
        st.push(s(i));
    }
    assert_eq!(st.samples.len(), MAX_SAMPLES);
    assert_eq!(st.samples[0].tokens, 40 - MAX_SAMPLES as u64);
    save_state(dir.path(), sid, &st).unwrap();
    assert_eq!(load_state(dir.path(), sid), st);
    assert_eq!(load_state(dir.path(), "other"), AutopilotState::default());
    std::fs::write(&p, b"{broken").unwrap();
    assert_eq!(load_state(dir.path(), sid), AutopilotState::default());
}

#[test]
fn on_prompt_records_samples_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let c = cfg();
    assert_eq!(on_prompt(dir.path(), "s1", &t, &c, 1).unwrap(), None);
    for (i, tokens) in [100_000u64, 110_000, 145_000].into_iter().enumerate() {
        std::fs::write(&t, jsonl(&[user("q"), assistant(0, tokens, 0)])).unwrap();
        let r = on_prompt(dir.path(), "s1", &t, &c, i as i64)
            .unwrap()
            .unwrap();
        assert_eq!(r.tokens, tokens);
    }
    let st = load_state(dir.path(), "s1");
    assert_eq!(st.samples.len(), 3);
    let r = report(
        &Estimate {
            tokens: 145_000,
            source: TokenSource::Usage,
        },
        c.window_tokens,
        &st.samples,
        &c,
    );
    assert_eq!(r.per_prompt, Some(22_500.0));
    assert_eq!(r.level, Level::Warn);
}

#[test]
fn statusline_formats() {
    assert_eq!(format_tokens(850), "850");
    assert_eq!(format_tokens(8_400), "8.4k");
    assert_eq!(format_tokens(84_400), "84k");
    assert_eq!(format_tokens(1_200_000), "1.2M");
    assert_eq!(format_count(1234), "1,234");
    assert_eq!(format_count(999), "999");
    assert_eq!(format_count(1_234_567), "1,234,567");
    let r = report(
        &Estimate {
            tokens: 84_000,
            source: TokenSource::Usage,
        },
        200_000,
        &[s(80_900), s(84_000)],
        &cfg(),
    );
    assert_eq!(
        format_statusline(Some(&r), Some(1234), None, false),
        "memctl ● 42% ctx (84k/200k) ↑3.1k/prompt · 1,234 turns archived"
    );
    assert_eq!(
        format_statusline(None, None, None, false),
        "memctl ○ ctx n/a"
    );
    let mem = MemTokens {
        injected: 1_200,
        removed: 5_000,
    };
    assert_eq!(
        format_statusline(Some(&r), Some(1234), Some(mem), false),
        "memctl ● 42% ctx (84k/200k) ↑3.1k/prompt · 1,234 turns archived · mem +1.2k/\u{2212}5.0k tok"
    );
    assert_eq!(
        format_statusline(None, None, Some(MemTokens::default()), false),
        "memctl ○ ctx n/a · mem +0/\u{2212}0 tok"
    );
    let colored = format_statusline(Some(&r), None, None, true);
    assert!(colored.contains("\x1b[32m"));
    let input: StatusInput = serde_json::from_str(
        r#"{"session_id":"s","model":null,"context_window":{"context_window_size":1000000,
            "current_usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":10,"output_tokens":3}},
            "workspace":{"current_dir":"/a/b","project_dir":"/a"},"unknown":{"x":1}}"#,
    )
    .unwrap();
    assert_eq!(input.window(), Some(1_000_000));
    assert_eq!(input.current_tokens(), Some(115));
    assert_eq!(input.project(), Some("/a"));
    let bare: StatusInput = serde_json::from_str("{}").unwrap();
    assert_eq!(
        (bare.window(), bare.current_tokens(), bare.project()),
        (None, None, None)
    );
}
