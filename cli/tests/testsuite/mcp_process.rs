//! `memctl mcp` as Claude Code runs it: a child process speaking JSON-RPC (MCP) over stdio,
//! over a real store built from the sample transcript (real model when the runtime is set up).
//!
//! Checks the handshake, the tool list and its schemas, every tool's answer, tool errors (a
//! clear text, the process goes on), that a session archived by another process *while the
//! server runs* is found by its next search (the held store handle sees other writers'
//! commits), and the size of a hit (the index-first budget: ≤ 100 tokens at chars/4).

use crate::common;

use memctl_cli::mcp::types::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A JSON-RPC answer (a result or an error).
#[derive(Debug, Deserialize)]
struct Answer {
    id: Option<u64>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// `tools/call`'s result.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallResult {
    #[serde(default)]
    content: Vec<TextBlock>,
    #[serde(default)]
    structured_content: Option<Value>,
    #[serde(default)]
    is_error: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TextBlock {
    #[serde(default)]
    text: String,
}

#[derive(Debug, Deserialize)]
struct ToolList {
    tools: Vec<ToolInfo>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolInfo {
    name: String,
    description: Option<String>,
    input_schema: Value,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitResult {
    server_info: ServerInfo,
    instructions: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ServerInfo {
    name: String,
}

/// The server child and its line-delimited JSON-RPC.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start(home: &Path, project: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_memctl"))
            .arg("mcp")
            .current_dir(project)
            .env("MEMCTL_HOME", home)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("MEMCTL_MEMORY_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn memctl mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let mut text = serde_json::to_string(msg).expect("json");
        text.push('\n');
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).expect("write");
        stdin.flush().expect("flush");
    }

    /// Send a request; wait (≤ 120 s: the first search may load the model) for its answer.
    fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method} (id {id}): {e}"));
            let a: Answer = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC on stdout: {line:?}: {e}"));
            if a.id == Some(id) {
                return a;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> CallResult {
        let a = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(a.error.is_none(), "{tool}: protocol error {:?}", a.error);
        serde_json::from_value(a.result.expect("result")).expect("a tools/call result")
    }

    /// A successful call's structured answer, typed.
    fn ok<T: for<'de> Deserialize<'de>>(&mut self, tool: &str, args: Value) -> T {
        let r = self.call(tool, args);
        assert_ne!(r.is_error, Some(true), "{tool} failed: {:?}", r.content);
        // The model reads `content`: it must carry the same answer as `structuredContent`.
        let text = &r.content.first().expect("a text block").text;
        let from_text: Value = serde_json::from_str(text).expect("content is the JSON answer");
        assert_eq!(Some(&from_text), r.structured_content.as_ref());
        serde_json::from_value(from_text).expect("typed answer")
    }

    /// A call that must fail as a tool error; returns its text.
    fn err(&mut self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args);
        assert_eq!(r.is_error, Some(true), "{tool} should fail: {r:?}");
        r.content.into_iter().map(|c| c.text).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().expect("kill the server");
            self.child.wait().expect("reap the server");
        }
    }
}

/// The sample transcript moved into `project` (its cwd rewritten), written under `dir`.
fn sample_in(project: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(common::fixture()).expect("fixture");
    let p = project.display().to_string();
    assert!(!p.contains('"') && !p.contains('\\'), "a plain temp path");
    let path = dir.join(format!("{}.jsonl", common::SID));
    std::fs::write(&path, text.replace(common::PROJECT, &p)).expect("write transcript");
    path
}

/// A two-turn session in `project` that says `fact` once.
fn new_session(project: &Path, dir: &Path, sid: &str, fact: &str) -> PathBuf {
    let cwd = project.display().to_string();
    let line = |uuid: &str, parent: Option<&str>, ty: &str, message: Value, ts: &str| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
               "sessionId": sid, "version": "2.0.37", "type": ty, "message": message,
               "uuid": uuid, "timestamp": ts})
        .to_string()
    };
    let lines = [
        line(
            "u1",
            None,
            "user",
            json!({"role": "user", "content": "Which port does the staging proxy listen on?"}),
            "2026-01-02T10:00:00.000Z",
        ),
        line(
            "a1",
            Some("u1"),
            "assistant",
            json!({"role": "assistant", "content": [{"type": "text", "text": fact}]}),
            "2026-01-02T10:00:05.000Z",
        ),
        line(
            "u2",
            Some("a1"),
            "user",
            json!({"role": "user", "content": "Thanks, noted."}),
            "2026-01-02T10:01:00.000Z",
        ),
        line(
            "a2",
            Some("u2"),
            "assistant",
            json!({"role": "assistant", "content": [{"type": "text", "text": "You're welcome."}]}),
            "2026-01-02T10:01:02.000Z",
        ),
    ];
    let path = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write session");
    path
}

fn ingest(home: &Path, transcript: &Path) {
    let out = common::memctl(
        home,
        &["ingest", &transcript.display().to_string()],
        b"",
        &[],
    );
    assert!(out.status.success(), "ingest: {out:?}");
}

#[test]
fn the_agent_reaches_its_memory_over_mcp() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let project = tmp.path().join("proj");
    let transcripts = tmp.path().join("transcripts");
    for d in [&home, &project, &transcripts] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    ingest(&home, &sample_in(&project, &transcripts));

    let t0 = Instant::now();
    let mut s = Server::start(&home, &project);
    let init = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp_process", "version": "0"}}),
    );
    let init: InitResult = serde_json::from_value(init.result.expect("initialize result"))
        .expect("an initialize result");
    assert_eq!(init.server_info.name, "memctl");
    assert!(init.instructions.is_some_and(|i| i.contains("search")));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list: ToolList =
        serde_json::from_value(s.request("tools/list", json!({})).result.expect("tools"))
            .expect("a tool list");
    eprintln!("cold start (spawn → tools/list answer): {:?}", t0.elapsed());
    let mut names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "forget",
            "get",
            "remember",
            "search",
            "session_summary",
            "sessions",
            "timeline",
            "tool_output"
        ]
    );
    for t in &list.tools {
        assert!(
            t.description.as_deref().is_some_and(|d| d.len() > 20),
            "{t:?}"
        );
        assert_eq!(t.input_schema["type"], "object", "{t:?}");
    }
    let search_schema = &list
        .tools
        .iter()
        .find(|t| t.name == "search")
        .expect("search")
        .input_schema;
    assert!(
        search_schema["properties"]["query"].is_object(),
        "{search_schema}"
    );

    // search → compact hits; the planted decision is among them.
    let t1 = Instant::now();
    let found: SearchOutput = s.ok(
        "search",
        json!({"query": "SQLite WAL mode instead of a JSON file", "k": 5}),
    );
    eprintln!(
        "first search (opens the store, may load the model): {:?}",
        t1.elapsed()
    );
    assert!(!found.hits.is_empty(), "{found:?}");
    for h in &found.hits {
        assert_eq!(h.session, &common::SID[..8]);
        let chars = serde_json::to_string(h).expect("json").chars().count();
        assert!(
            chars / 4 <= 100,
            "a hit costs ≤ 100 tokens: {chars} chars: {h:?}"
        );
        assert!(
            h.confidence.is_some_and(|c| (0.0..=1.0).contains(&c)) && h.confident.is_some(),
            "a local hit has an absolute confidence: {h:?}"
        );
    }
    let t2 = Instant::now();
    let again: SearchOutput = s.ok(
        "search",
        json!({"query": "why was the pool rebuilt on every call", "k": 5}),
    );
    eprintln!("warm search: {:?}", t2.elapsed());
    assert!(!again.hits.is_empty());

    // get → the full text of the best hit that holds the decision.
    let ids: Vec<u64> = found.hits.iter().map(|h| h.id).collect();
    let got: GetOutput = s.ok("get", json!({"ids": ids}));
    let wal = got
        .chunks
        .iter()
        .find(|c| c.text.contains("SQLite WAL mode"))
        .unwrap_or_else(|| panic!("no hit holds the decision: {got:?}"));
    assert_eq!(wal.session, common::SID);
    assert!(got.missing.is_empty());

    // timeline → the hit's turn, marked, with its neighbours.
    let tl: TimelineOutput = s.ok("timeline", json!({"id": wal.id, "before": 2, "after": 2}));
    assert_eq!(tl.session, common::SID);
    let marked: Vec<&TurnLine> = tl.turns.iter().filter(|t| t.hit).collect();
    assert_eq!(marked.len(), 1, "{tl:?}");
    assert_eq!(marked[0].turn, wal.turn);
    assert!(tl.turns.len() >= 2 && tl.turns.len() <= 5, "{tl:?}");
    assert!(tl.turns.windows(2).all(|w| w[0].turn < w[1].turn), "{tl:?}");

    // sessions and session_summary (by 8-char prefix).
    let ss: SessionsOutput = s.ok("sessions", json!({}));
    assert_eq!(ss.sessions.len(), 1, "{ss:?}");
    assert_eq!(ss.sessions[0].id, common::SID);
    let sum: SessionSummaryOutput = s.ok(
        "session_summary",
        json!({"session": &common::SID[..8], "turns": 5}),
    );
    assert_eq!(sum.id, common::SID);
    assert_eq!(sum.project, project.display().to_string());
    assert!(
        !sum.recent_turns.is_empty() && sum.recent_turns.len() <= 5,
        "{sum:?}"
    );
    assert!(sum.turns >= sum.recent_turns.len() as u32);

    // remember → a redacted line in the project's memory files.
    let noted: RememberOutput = s.ok(
        "remember",
        json!({"text": "CI runs pytest with -p no:cacheprovider; token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
               "kind": "gotcha"}),
    );
    assert_eq!(noted.file, ".memctl/memory/gotchas.md");
    assert!(noted.redacted >= 1, "{noted:?}");
    let file = std::fs::read_to_string(project.join(&noted.file)).expect("memory file");
    assert!(
        file.contains("CI runs pytest with -p no:cacheprovider"),
        "{file}"
    );
    assert!(!file.contains("AAAAAAAAAAAAAAAA"), "{file}");

    // Tool errors: a clear text, and the server goes on.
    assert!(s.err("get", json!({"ids": []})).contains("no ids"));
    assert!(
        s.err("session_summary", json!({"session": "zzzzzzzz"}))
            .contains("no archived session")
    );
    assert!(
        s.err("search", json!({"query": "  "}))
            .contains("empty query")
    );
    assert!(s.err("tool_output", json!({"id": "ffffffff"})).len() > 10);
    let bad = s.request(
        "tools/call",
        json!({"name": "search", "arguments": {"k": 3}}),
    );
    assert!(bad.error.is_some() || bad.result.is_some_and(|r| r["isError"] == true));

    // A session archived by another process while the server runs is found by the next search.
    let sid2 = "5e55a0e2-0000-4000-8000-000000000002";
    let fact = "The staging proxy listens on port 48213 (ticket OPS-5521).";
    ingest(&home, &new_session(&project, &transcripts, sid2, fact));
    let later: SearchOutput = s.ok("search", json!({"query": "OPS-5521 staging proxy port"}));
    let top = later.hits.first().unwrap_or_else(|| panic!("{later:?}"));
    assert_eq!(top.session, &sid2[..8], "{later:?}");
    let in_session: SearchOutput = s.ok(
        "search",
        json!({"query": "staging proxy port", "scope": "session", "session": &sid2[..8]}),
    );
    assert!(
        in_session.hits.iter().all(|h| h.session == sid2[..8]),
        "{in_session:?}"
    );
    assert!(!in_session.hits.is_empty());
    let other: SearchOutput = s.ok(
        "search",
        json!({"query": "staging proxy port", "scope": "session", "session": &common::SID[..8]}),
    );
    assert!(
        other.hits.iter().all(|h| h.session == common::SID[..8]),
        "{other:?}"
    );

    // forget: the user asked to forget the proxy port; its turn goes, the other session stays.
    let port_hit = later.hits.first().expect("the port hit").id;
    let gone: ForgetOutput = s.ok("forget", json!({"ids": [port_hit]}));
    assert_eq!(gone.turns.len(), 1, "{gone:?}");
    assert_eq!(gone.turns[0].session, &sid2[..8]);
    assert!(gone.removed_ids.contains(&port_hit));
    let after: SearchOutput = s.ok(
        "search",
        json!({"query": "OPS-5521 staging proxy port 48213"}),
    );
    assert!(
        after.hits.iter().all(|h| !gone.removed_ids.contains(&h.id)),
        "{after:?}"
    );
    let got: GetOutput = s.ok("get", json!({"ids": [port_hit]}));
    assert_eq!(got.missing, vec![port_hit]);
    assert!(
        s.err("forget", json!({"ids": [port_hit]}))
            .contains("no chunk with id")
    );
    assert!(s.err("forget", json!({"ids": []})).contains("no ids"));
    // A forget by another process (the CLI rewrites the store file under the server's open
    // handle): the server's next search reads the new file.
    let wal_before: SearchOutput = s.ok(
        "search",
        json!({"query": "SQLite WAL mode instead of a JSON file", "k": 5}),
    );
    assert!(!wal_before.hits.is_empty());
    let cli = common::memctl(
        &home,
        &["forget", "--text", "SQLite WAL mode", "--yes"],
        b"",
        &[],
    );
    assert!(cli.status.success(), "{cli:?}");
    let got: GetOutput = s.ok(
        "get",
        json!({"ids": wal_before.hits.iter().map(|h| h.id).collect::<Vec<_>>()}),
    );
    assert!(
        got.chunks
            .iter()
            .all(|c| !c.text.contains("SQLite WAL mode")),
        "the server still serves a forgotten turn: {got:?}"
    );

    // Closing stdin ends the server cleanly.
    drop(s.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            assert!(st.success(), "exit status {st:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every string argument is bounded: one over its bound is a tool error naming the bound,
/// answered without tokenizing or scoring it (a 1 MB query took 1.7 s, an 8 MB one 22 s), and
/// the server goes on. A message over the transport's bound is dropped unanswered while it is
/// read (never buffered whole) and the server still answers the next call.
#[test]
fn oversized_arguments_are_refused_naming_the_bound() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let project = tmp.path().join("proj");
    for d in [&home, &project] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let mut s = Server::start(&home, &project);
    s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp_process", "version": "0"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list: ToolList =
        serde_json::from_value(s.request("tools/list", json!({})).result.expect("tools"))
            .expect("a tool list");
    let search = &list
        .tools
        .iter()
        .find(|t| t.name == "search")
        .expect("search");
    assert_eq!(
        search.input_schema["properties"]["query"]["maxLength"],
        4096
    );

    for mb in [1, 8] {
        let query = "needle ".repeat((mb << 20) / 7 + 1);
        let t0 = Instant::now();
        let e = s.err("search", json!({ "query": query }));
        eprintln!("{mb} MB query refused in {:?}", t0.elapsed());
        assert!(
            e.contains("`query`") && e.contains("limit is 4096 bytes"),
            "{e}"
        );
    }
    let long = |n: usize| "x".repeat(n);
    for (tool, args, bound) in [
        ("search", json!({"query": "q", "session": long(257)}), 256),
        ("search", json!({"query": "q", "tool": long(257)}), 256),
        ("search", json!({"query": "q", "since": long(257)}), 256),
        ("search", json!({"query": "q", "file": long(4097)}), 4096),
        ("session_summary", json!({"session": long(257)}), 256),
        ("tool_output", json!({"id": long(257)}), 256),
        ("remember", json!({"text": long(65537)}), 65536),
    ] {
        let e = s.err(tool, args);
        assert!(
            e.contains(&format!("limit is {bound} bytes")),
            "{tool}: {e}"
        );
    }
    assert!(
        s.err("get", json!({"ids": (0..11).collect::<Vec<u64>>()}))
            .contains("at most 10")
    );
    assert!(
        s.err("forget", json!({"ids": (0..21).collect::<Vec<u64>>()}))
            .contains("at most 20")
    );

    // Over the message bound (16 MiB): no answer to that id, the next call is answered.
    let huge = "y".repeat(memctl_cli::mcp::MAX_MESSAGE_BYTES + 1);
    s.send(
        &json!({"jsonrpc": "2.0", "id": 9_999, "method": "tools/call",
                   "params": {"name": "search", "arguments": {"query": huge}}}),
    );
    let listed: SessionsOutput = s.ok("sessions", json!({}));
    assert!(listed.sessions.is_empty(), "{listed:?}");
}
