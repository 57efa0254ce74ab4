//! A small archive for the forget tests: three sessions in two projects, written as Claude
//! Code transcripts and ingested with hash vectors, plus stored tool outputs.

use crate::engine::Engine;
use crate::search::SearchMode;
use crate::swap::{SwapConfig, ToolCall};
use crate::{EngineOptions, IngestOptions, SearchRequest};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The two projects' directories: under the temp dir, so that no path of a real machine is
/// written into the code (they are never created: a project is a namespace in the store).
static PROJECTS: std::sync::LazyLock<[String; 2]> = std::sync::LazyLock::new(|| {
    let root = std::env::temp_dir().join("memctl-forget-fixture");
    ["app", "other"].map(|p| root.join(p).to_string_lossy().into_owned())
});

/// Project A's directory (two sessions).
pub(crate) fn project_a() -> &'static str {
    &PROJECTS[0]
}

/// Project B's directory (one session).
pub(crate) fn project_b() -> &'static str {
    &PROJECTS[1]
}

pub(crate) fn engine_at(data_dir: &Path) -> Engine {
    Engine::open(EngineOptions {
        onnx: crate::embed::OnnxConfig::discover(Some(data_dir)),
        data_dir: data_dir.to_path_buf(),
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open")
}

/// One turn of a generated session: a prompt, an answer, optionally a Bash call.
pub(crate) struct Turn<'a> {
    pub prompt: &'a str,
    pub answer: &'a str,
    pub bash: Option<&'a str>,
}

pub(crate) fn turn<'a>(prompt: &'a str, answer: &'a str) -> Turn<'a> {
    Turn {
        prompt,
        answer,
        bash: None,
    }
}

/// `2026-01-02T10:MM:SS.000Z` for turn `i` (one turn a minute).
pub(crate) fn ts(i: usize, sec: u32) -> String {
    format!("2026-01-02T10:{:02}:{sec:02}.000Z", i)
}

pub(crate) fn unix(t: &str) -> i64 {
    t.parse::<jiff::Timestamp>().expect("ts").as_second()
}

/// A Claude Code transcript of `turns` in `project` (uuids unique per session and turn).
pub(crate) fn transcript(dir: &Path, sid: &str, project: &str, turns: &[Turn<'_>]) -> PathBuf {
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    let mut push = |uuid: String, ty: &str, message: serde_json::Value, at: String| {
        lines.push(
            json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
                   "cwd": project, "sessionId": sid, "version": "2.0.37", "type": ty,
                   "message": message, "uuid": uuid, "timestamp": at})
            .to_string(),
        );
        parent = Some(uuid);
    };
    for (i, t) in turns.iter().enumerate() {
        push(
            format!("{sid}-u{i}"),
            "user",
            json!({"role": "user", "content": t.prompt}),
            ts(i, 0),
        );
        if let Some(cmd) = t.bash {
            push(
                format!("{sid}-c{i}"),
                "assistant",
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("tu{i}"), "name": "Bash", "input": {"command": cmd}}]}),
                ts(i, 2),
            );
            push(
                format!("{sid}-r{i}"),
                "user",
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("tu{i}"), "content": "ok"}]}),
                ts(i, 4),
            );
        }
        push(
            format!("{sid}-a{i}"),
            "assistant",
            json!({"role": "assistant", "content": [{"type": "text", "text": t.answer}]}),
            ts(i, 8),
        );
    }
    let path = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

pub(crate) fn ingest(e: &Engine, path: &Path) -> crate::IngestReport {
    e.ingest_transcript(
        path,
        &IngestOptions {
            embed_with_model: false,
            ..IngestOptions::default()
        },
    )
    .expect("ingest")
}

/// A big Bash output of `sid` stored by the PostToolUse hook at `at`.
pub(crate) fn swap(e: &Engine, sid: &str, project: &str, body: &str, at: i64) {
    let stdout = format!("{body}\n{}", "line of build output\n".repeat(400));
    let response = json!({"stdout": stdout, "stderr": ""}).to_string();
    let call = ToolCall {
        session_id: sid,
        project,
        tool_name: "Bash",
        tool_input: r#"{"command":"make all"}"#,
        tool_response: &response,
        tool_use_id: Some("tu"),
        failed: false,
    };
    let out = e
        .swap_tool_output(&call, &SwapConfig::default(), at)
        .expect("swap");
    assert!(
        matches!(out, crate::swap::SwapOutcome::Stored(_)),
        "{out:?}"
    );
}

pub(crate) const SA: &str = "aaaa1111-0000-4000-8000-000000000001";
pub(crate) const SB: &str = "bbbb2222-0000-4000-8000-000000000002";
pub(crate) const SC: &str = "cccc3333-0000-4000-8000-000000000003";

/// Three sessions: A (project A, four turns, one says ZEBRAFROST), B (project A), C (project
/// B), and a stored output in A and in C.
pub(crate) fn three_sessions(dir: &Path) -> (Engine, Vec<PathBuf>) {
    let e = engine_at(&dir.join("data"));
    let tdir = dir.join("transcripts");
    std::fs::create_dir_all(&tdir).expect("mkdir");
    let a = transcript(
        &tdir,
        SA,
        project_a(),
        &[
            turn(
                "How do we deploy the scheduler?",
                "Run make deploy from the ops box.",
            ),
            Turn {
                prompt: "Build it and tell me the release tag",
                answer: "The release tag is ZebraFrost-77, built from main.",
                bash: Some("make all"),
            },
            turn(
                "Which database backs the queue?",
                "Postgres 16 with the pgq extension.",
            ),
            turn(
                "Thanks, that is all for the deploy.",
                "Good luck with the rollout.",
            ),
        ],
    );
    let b = transcript(
        &tdir,
        SB,
        project_a(),
        &[
            turn(
                "Why is the cache cold after restart?",
                "The warmup job runs only at 03:00 (OrchidLantern).",
            ),
            turn(
                "Move it to startup.",
                "Done: the warmup now runs at startup.",
            ),
        ],
    );
    let c = transcript(
        &tdir,
        SC,
        project_b(),
        &[turn(
            "Rename the CLI flag --fast to --quick",
            "Renamed in args.rs (TangerineComet).",
        )],
    );
    for p in [&a, &b, &c] {
        ingest(&e, p);
    }
    swap(
        &e,
        SA,
        project_a(),
        "release ZEBRAFROST-77 built",
        unix(&ts(1, 3)),
    );
    swap(&e, SC, project_b(), "quick flag output", unix(&ts(0, 3)));
    (e, vec![a, b, c])
}

pub(crate) fn lexical_hits(e: &Engine, q: &str) -> Vec<(String, u32)> {
    let mut req = SearchRequest::new(q, 10);
    req.mode = SearchMode::Lexical;
    e.search(&req)
        .expect("search")
        .results
        .iter()
        .map(|r| (r.record.chunk.session_id.clone(), r.record.chunk.turn_index))
        .collect()
}

pub(crate) fn audit(e: &Engine) {
    let bad = e.store().read().expect("read").audit().expect("audit");
    assert!(bad.is_empty(), "inconsistent store after forget: {bad:#?}");
}
