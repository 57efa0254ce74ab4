//! Transcripts the real Codex CLI and Gemini CLI wrote (tests/fixtures/agents/) go into the one
//! archive like Claude Code's: their sessions keep their agent and project, their prompts are
//! found (also through the `--agent` filter), hook-injected context is never archived, a
//! re-ingest stores nothing new, and an ingest in two passes equals one.

use memctl_engine::{Agent, Engine, EngineOptions, IngestOptions, SearchMode, SearchRequest};
use std::path::{Path, PathBuf};

const CODEX: &str = "codex-0.171.0-resume-hooks-agentsmd-compact.jsonl";
const GEMINI: &str = "gemini-0.61.0-resume-hooks-compress-toolerror.jsonl";
const CODEX_PROJECT: &str = "/tmp/memctl-codex-rec.e3_p8y6m/project";

fn engine(home: &Path) -> Engine {
    let mut opts = EngineOptions::from_settings(&memctl_engine::Settings::default());
    opts.data_dir = home.to_path_buf();
    opts.model_disabled = true; // what is archived, not semantics: hash vectors
    Engine::open(opts).expect("open engine")
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fixture where its CLI would have written it: a Codex rollout under `sessions/`, a
/// Gemini chat under `tmp/<name>/chats/` beside the `.project_root` Gemini CLI writes.
fn place(dir: &Path, name: &str, project: &str) -> PathBuf {
    let path = if name.starts_with("gemini") {
        let tmp = dir.join(".gemini/tmp/project");
        std::fs::create_dir_all(tmp.join("chats")).expect("mkdir");
        std::fs::write(tmp.join(".project_root"), format!("{project}\n")).expect("root");
        tmp.join("chats/session-2026-11-28T07-10-abcdef01.jsonl")
    } else {
        let sessions = dir.join(".codex/sessions/2026/11/28");
        std::fs::create_dir_all(&sessions).expect("mkdir");
        sessions.join("rollout-2026-11-28T07-10-50-x.jsonl")
    };
    std::fs::write(&path, fixture(name)).expect("write fixture");
    path
}

fn lexical(e: &Engine, query: &str, agent: Option<Agent>) -> Vec<String> {
    let mut req = SearchRequest::new(query, 5);
    req.mode = SearchMode::Lexical;
    req.agent = agent;
    let found = e.search(&req).expect("search");
    found
        .results
        .iter()
        .map(|r| {
            assert_eq!(
                Some(r.agent),
                agent.or(Some(r.agent)),
                "a hit names its agent"
            );
            r.record.chunk.text.clone()
        })
        .collect()
}

#[test]
fn codex_and_gemini_sessions_are_archived_with_their_agent_and_project() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(&dir.path().join("home"));
    let gemini_project = dir.path().join("work/app").display().to_string();
    for (name, agent, project) in [
        (CODEX, Agent::Codex, CODEX_PROJECT.to_string()),
        (GEMINI, Agent::Gemini, gemini_project.clone()),
    ] {
        let path = place(dir.path(), name, &project);
        let first = e
            .ingest_transcript(&path, &IngestOptions::default())
            .expect("ingest");
        assert!(first.inserted > 0, "{name}: {first:?}");
        let again = e
            .ingest_transcript(&path, &IngestOptions::default())
            .expect("re-ingest");
        assert_eq!(
            (again.inserted, again.replaced),
            (0, 0),
            "{name}: {again:?}"
        );
        let sessions: Vec<_> = e
            .sessions()
            .expect("sessions")
            .into_iter()
            .filter(|(_, s)| s.agent == agent)
            .collect();
        assert_eq!(sessions.len(), 1, "{name}: one session of {agent}");
        assert_eq!(sessions[0].1.project, project, "{name}: its project");
        let id = &sessions[0].0;
        let texts: Vec<String> = e
            .session_chunks(id)
            .expect("chunks")
            .into_iter()
            .map(|(_, rec)| rec.chunk.text)
            .collect();
        let all = texts.join("\n");
        assert!(
            all.contains("remember the flag FOO_BAR=42"),
            "{name}: {all}"
        );
        assert!(
            all.contains("tool-output"),
            "{name}: the shell output is archived"
        );
        for injected in [
            "RESTORED_SECRET_CONTEXT",
            "memctl-context",
            "environment_context",
            "session_context",
            "AGENTS_MD_MARKER",
        ] {
            assert!(
                !all.contains(injected),
                "{name}: {injected} archived:\n{all}"
            );
        }
    }
    // One archive: both agents' prompts are found, and the filter keeps each to its own.
    assert_eq!(lexical(&e, "FOO_BAR", None).len(), 2);
    for agent in [Agent::Codex, Agent::Gemini] {
        assert_eq!(lexical(&e, "FOO_BAR", Some(agent)).len(), 1, "{agent}");
    }
    assert!(lexical(&e, "FOO_BAR", Some(Agent::ClaudeCode)).is_empty());
}

#[test]
fn a_codex_rollout_ingested_in_two_passes_equals_one_pass() {
    let bytes = fixture(CODEX);
    let cut = bytes[..bytes.len() / 2]
        .iter()
        .rposition(|b| *b == b'\n')
        .expect("a line break")
        + 1;
    let texts = |passes: &[&[u8]]| {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = engine(&dir.path().join("home"));
        let path = dir.path().join("rollout-x.jsonl");
        let mut written = Vec::new();
        for p in passes {
            written.extend_from_slice(p);
            std::fs::write(&path, &written).expect("write");
            e.ingest_transcript(&path, &IngestOptions::default())
                .expect("ingest");
        }
        let (id, s) = e.sessions().expect("sessions").remove(0);
        assert_eq!(s.agent, Agent::Codex);
        let mut t: Vec<(u32, u16, String)> = e
            .session_chunks(&id)
            .expect("chunks")
            .into_iter()
            .map(|(_, r)| (r.chunk.turn_index, r.chunk.part, r.chunk.text))
            .collect();
        t.sort();
        t
    };
    assert_eq!(texts(&[&bytes]), texts(&[&bytes[..cut], &bytes[cut..]]));
}
