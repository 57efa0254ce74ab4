//! `<private>…</private>` spans are never stored: not from prompts, not from replies, not from
//! tool outputs (the swap). Real binaries, a real redb file, and a byte scan of it.

use crate::common;

use common::{PROJECT, SID, fixture};
use std::path::Path;

const SECRET_PROMPT: &str = "Kq7violetHarbor";
const SECRET_REPLY: &str = "Zt4amberLantern";
const SECRET_TOOL: &str = "Wp2copperFinch";

fn line(kind: &str, uuid: &str, content: serde_json::Value) -> String {
    let msg = if kind == "user" {
        serde_json::json!({"role": "user", "content": content})
    } else {
        serde_json::json!({"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": content,
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": PROJECT,
        "sessionId": SID, "version": "2.0.37", "type": kind, "message": msg, "uuid": uuid,
        "timestamp": "2025-10-24T12:59:00.000Z"
    })
    .to_string()
}

fn scan(path: &Path, needle: &str) -> bool {
    let bytes = std::fs::read(path).expect("read store file");
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn private_spans_never_reach_the_store_or_the_swap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    let mut text = std::fs::read_to_string(fixture()).expect("fixture");
    text.push_str(&line(
        "user",
        "priv-user-1",
        serde_json::json!(format!(
            "Deploy the hotfix. <private>The staging root password is {SECRET_PROMPT}.</private> Then tail the log."
        )),
    ));
    text.push('\n');
    text.push_str(&line(
        "assistant",
        "priv-asst-1",
        serde_json::json!([{"type": "text", "text": format!(
            "Deployed. <PRIVATE>I used {SECRET_REPLY} for the login</PRIVATE> and the log is clean."
        )}]),
    ));
    text.push('\n');
    std::fs::write(&t, text).expect("write transcript");

    let env = [("MEMCTL_EMBEDDER", "hash")];
    let out = common::memctl(
        &home,
        &["ingest", "--quiet", &t.display().to_string()],
        b"",
        &env,
    );
    assert!(out.status.success(), "{out:?}");

    // A big Bash output with a private span in the middle: swapped whole, minus the span.
    let mut stdout = "build step ok\n".repeat(3000);
    stdout.insert_str(
        stdout.len() / 2,
        &format!("<private>token {SECRET_TOOL}</private>\n"),
    );
    let payload = serde_json::json!({
        "session_id": SID, "transcript_path": t.display().to_string(), "cwd": PROJECT,
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "make deploy"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
        "tool_use_id": "toolu_private_1",
    });
    common::hook(
        &home,
        "PostToolUse",
        &serde_json::to_vec(&payload).expect("json"),
        &env,
    );
    let swapped = common::memctl(&home, &["swap", "list", "--json"], b"", &env);
    assert!(swapped.status.success(), "{swapped:?}");
    let listed = String::from_utf8_lossy(&swapped.stdout).into_owned();
    assert!(
        listed.contains("make deploy"),
        "the output was swapped: {listed}"
    );

    let store = home.join("memctl.redb");
    for secret in [SECRET_PROMPT, SECRET_REPLY, SECRET_TOOL] {
        assert!(!scan(&store, secret), "{secret} is in the store file");
        let found = common::memctl(
            &home,
            &["search", secret, "--mode", "lexical", "--all-projects"],
            b"",
            &env,
        );
        assert!(
            !String::from_utf8_lossy(&found.stdout).contains(secret),
            "{found:?}"
        );
        let swap = common::memctl(&home, &["swap", "search", secret], b"", &env);
        assert!(
            !String::from_utf8_lossy(&swap.stdout).contains(secret),
            "{swap:?}"
        );
    }
    // What was around the spans is kept, with a marker where they were.
    let around = common::memctl(
        &home,
        &[
            "search",
            "tail the log",
            "--mode",
            "lexical",
            "--all-projects",
            "--json",
        ],
        b"",
        &env,
    );
    let around = String::from_utf8_lossy(&around.stdout).into_owned();
    assert!(around.contains("Then tail the log"), "{around}");
    assert!(around.contains("[REDACTED:private]"), "{around}");
}

// ---------------------------------------------------------------------------------------------
// The secret corpus through every way in and out.
// ---------------------------------------------------------------------------------------------

use memctl_engine::testing::{RedactionSample, redaction_samples};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Session of the corpus transcript.
const CSID: &str = "5ec2e7c0-aaaa-4bbb-8ccc-000000000010";

/// One transcript line of `kind` in project `cwd`.
fn line_in(cwd: &str, kind: &str, uuid: &str, content: serde_json::Value) -> String {
    let msg = if kind == "user" {
        serde_json::json!({"role": "user", "content": content})
    } else {
        serde_json::json!({"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": content,
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": CSID, "version": "2.0.37", "type": kind, "message": msg, "uuid": uuid,
        "timestamp": "2025-10-24T12:59:00.000Z"
    })
    .to_string()
}

/// The channels a secret can come in by, each with its own secrets (a seed per channel and
/// form, so a find names the way it came in).
const CHANNELS: [&str; 8] = [
    "prompt",
    "bash_output",
    "grep_output",
    "in_place_swap",
    "grep_swap",
    "remember",
    "memory_file_export",
    "import",
];

/// The samples of `channel` in `form` (0 plain, 1 escaped JSON), with the text to send.
fn channel_samples(channel: &str, form: u64) -> Vec<(RedactionSample, String)> {
    let i = CHANNELS.iter().position(|c| *c == channel).unwrap_or(99) as u64;
    redaction_samples(100 + i * 2 + form)
        .into_iter()
        .map(|s| {
            let text = if form == 0 {
                s.text.clone()
            } else {
                s.escaped()
            };
            (s, text)
        })
        .collect()
}

/// Every (channel, form) sample: the secrets to look for.
fn every_secret() -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for ch in CHANNELS {
        for form in 0..2 {
            for (s, _) in channel_samples(ch, form) {
                let label = format!("{ch}/{}", ["plain", "escaped"][form as usize]);
                out.push((label, s.name, s.secret));
            }
        }
    }
    out
}

/// The transcript: a prompt per sample, then a Bash and a Grep call whose outputs hold the
/// samples, then a closing prompt (every sample turn is closed).
fn corpus_transcript(cwd: &str) -> String {
    let mut lines = Vec::new();
    let mut n = 0;
    let mut uuid = || {
        n += 1;
        format!("c0rpus00-0000-4000-8000-{n:012}")
    };
    for form in 0..2 {
        for (s, text) in channel_samples("prompt", form) {
            lines.push(line_in(
                cwd,
                "user",
                &uuid(),
                serde_json::json!(format!("check this: {text}")),
            ));
            let reply = format!("Noted the {} sample.", s.name);
            lines.push(line_in(
                cwd,
                "assistant",
                &uuid(),
                serde_json::json!([{"type": "text", "text": reply}]),
            ));
        }
        for (tool, channel) in [("Bash", "bash_output"), ("Grep", "grep_output")] {
            for (s, text) in channel_samples(channel, form) {
                let id = format!("toolu_{}_{}_{form}", tool, s.name);
                lines.push(line_in(
                    cwd,
                    "user",
                    &uuid(),
                    serde_json::json!(format!("run {tool} for {}", s.name)),
                ));
                let input = if tool == "Bash" {
                    serde_json::json!({"command": "cat app.log"})
                } else {
                    serde_json::json!({"pattern": "password", "output_mode": "content"})
                };
                lines.push(line_in(
                    cwd,
                    "assistant",
                    &uuid(),
                    serde_json::json!([
                    {"type": "tool_use", "id": id, "name": tool, "input": input}]),
                ));
                lines.push(line_in(cwd, "user", &uuid(), serde_json::json!([
                    {"type": "tool_result", "tool_use_id": id, "content": format!("out: {text}\n"), "is_error": false}])));
                lines.push(line_in(
                    cwd,
                    "assistant",
                    &uuid(),
                    serde_json::json!([{"type": "text", "text": "Done."}]),
                ));
            }
        }
    }
    lines.push(line_in(
        cwd,
        "user",
        &uuid(),
        serde_json::json!("and now the release notes"),
    ));
    let mut t = lines.join("\n");
    t.push('\n');
    t
}

/// Every file under `dir`, read whole.
fn files_under(dir: &Path, out: &mut Vec<(std::path::PathBuf, Vec<u8>)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if let Ok(b) = std::fs::read(&p) {
            out.push((p, b));
        }
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A PostToolUse payload for `tool` with `response`.
fn post_tool_use(
    t: &Path,
    cwd: &str,
    tool: &str,
    input: serde_json::Value,
    response: serde_json::Value,
    id: &str,
) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": CSID, "transcript_path": t.display().to_string(), "cwd": cwd,
        "hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": input,
        "tool_response": response, "tool_use_id": id,
    }))
    .expect("json")
}

/// A big output holding every sample of `channel` in `form` (above the swap thresholds).
fn big_output(channel: &str, form: u64) -> String {
    let mut out = String::new();
    for (i, (_, text)) in channel_samples(channel, form).into_iter().enumerate() {
        out.push_str(&format!("step {i} ok\n").repeat(40));
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// A minimal MCP client on `memctl mcp` (line-delimited JSON-RPC), answers awaited ≤ 60 s.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: Receiver<String>,
    id: u64,
}

impl Mcp {
    fn start(home: &Path, project: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_memctl"))
            .arg("mcp")
            .current_dir(project)
            .env("MEMCTL_HOME", home)
            .env("MEMCTL_EMBEDDER", "hash")
            .env("MEMCTL_RESIDENT", "0")
            .env("XDG_CONFIG_HOME", home.join("no-config"))
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("MEMCTL_MEMORY_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn memctl mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut m = Self {
            child,
            stdin,
            lines,
            id: 0,
        };
        m.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "corpus-test", "version": "0"}}),
        );
        m.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: &serde_json::Value) {
        let mut s = v.to_string();
        s.push('\n');
        self.stdin
            .write_all(s.as_bytes())
            .expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.id += 1;
        let id = self.id;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let l = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let v: serde_json::Value = serde_json::from_str(&l).expect("JSON-RPC line");
            if v["id"] == serde_json::json!(id) {
                return v;
            }
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Put the import channel's samples into every field of an export that can carry user text
/// (what is left over goes into the first chunk's `tools`).
fn poison_export(export: &str) -> String {
    let mut pool: Vec<String> = (0..2)
        .flat_map(|f| channel_samples("import", f).into_iter().map(|(_, t)| t))
        .collect();
    let mut recs: Vec<serde_json::Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).expect("export line"))
        .collect();
    for v in &mut recs {
        let mut next = || pool.pop().unwrap_or_default();
        let rec = v.as_object_mut().expect("record object");
        let kind = rec
            .get("kind")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string();
        match kind.as_str() {
            "chunk" => {
                let s = format!("{} {}", rec["text"].as_str().unwrap_or(""), next());
                rec.insert("text".into(), s.into());
                rec.insert("summary".into(), next().into());
                rec.insert("tools".into(), serde_json::json!(["Bash", next()]));
                rec.insert("files".into(), serde_json::json!([next()]));
                rec.insert("line_uuids".into(), serde_json::json!([next()]));
            }
            "session" => {
                rec.insert("transcript_path".into(), next().into());
                rec.insert("summary".into(), next().into());
                rec.insert("compact_summary".into(), next().into());
            }
            "swap_output" => {
                let c = format!("{} {}", rec["content"].as_str().unwrap_or(""), next());
                // An output's id is its content's sha256: the poisoned content gets its own.
                let id = memctl_engine::content_id(&c);
                rec.insert("content".into(), c.into());
                if rec.contains_key("id") {
                    rec.insert("id".into(), id.clone().into());
                }
                if let Some(e) = rec.get_mut("entry").and_then(|e| e.as_object_mut()) {
                    if e.contains_key("id") {
                        e.insert("id".into(), id.into());
                    }
                    // Not tool / tool_use_id: a field redaction empties is refused by import's
                    // check (nothing stored), which says nothing about what is stored.
                    e.insert("input_summary".into(), next().into());
                }
            }
            "memory_file" => {
                let t = format!("{}\n{}\n", rec["text"].as_str().unwrap_or(""), next());
                rec.insert("text".into(), t.into());
            }
            _ => {}
        }
    }
    let first = recs
        .iter_mut()
        .find(|v| v["kind"] == "chunk")
        .expect("the export has a chunk");
    if let Some(tools) = first["tools"].as_array_mut() {
        tools.extend(pool.drain(..).map(serde_json::Value::from));
    }
    let mut out = String::new();
    for v in recs {
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn secret_corpus_is_stored_nowhere_on_any_channel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let proj = dir.path().join("proj");
    let mem = proj.join(".memctl/memory");
    std::fs::create_dir_all(&mem).expect("memory dir");
    let cwd = proj.display().to_string();
    let (home, home_ingest, home_import) = (
        dir.path().join("home"),
        dir.path().join("home-ingest"),
        dir.path().join("home-import"),
    );
    let env = [("MEMCTL_EMBEDDER", "hash")];
    // Memory files as a person writes them (export must redact them).
    let mut notes = String::from("# Notes\n");
    for form in 0..2 {
        for (_, text) in channel_samples("memory_file_export", form) {
            notes.push_str(&format!("- {text}\n"));
        }
    }
    std::fs::write(mem.join("notes.md"), notes).expect("notes.md");

    // prompt, bash_output, grep_output: the transcript, archived by UserPromptSubmit.
    let t = dir.path().join(format!("{CSID}.jsonl"));
    std::fs::write(&t, corpus_transcript(&cwd)).expect("transcript");
    let ups = serde_json::json!({"session_id": CSID, "transcript_path": t.display().to_string(),
        "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "and now the release notes"});
    let mut hook_out = Vec::new();
    hook_out.push(
        common::hook(
            &home,
            "UserPromptSubmit",
            &serde_json::to_vec(&ups).expect("json"),
            &env,
        )
        .stdout,
    );

    // in_place_swap (Bash, over the in-place size) and grep_swap (Grep, swapped whole).
    for form in 0..2 {
        let bash = post_tool_use(
            &t,
            &cwd,
            "Bash",
            serde_json::json!({"command": "cat app.log"}),
            serde_json::json!({"stdout": big_output("in_place_swap", form), "stderr": "", "interrupted": false, "isImage": false}),
            &format!("toolu_corpus_bash_{form}"),
        );
        hook_out.push(common::hook(&home, "PostToolUse", &bash, &env).stdout);
        let content = big_output("grep_swap", form);
        let grep = post_tool_use(
            &t,
            &cwd,
            "Grep",
            serde_json::json!({"pattern": "password", "output_mode": "content"}),
            serde_json::json!({"mode": "content", "content": content, "filenames": ["app.log"],
                "numFiles": 1, "numLines": content.lines().count()}),
            &format!("toolu_corpus_grep_{form}"),
        );
        hook_out.push(common::hook(&home, "PostToolUse", &grep, &env).stdout);
    }
    let listed = common::memctl(&home, &["swap", "list", "--json"], b"", &env);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    // Both Grep outputs are stored whole; the Bash ones go through PostToolUse's in-place
    // path, whose output (and anything it stored) the byte scan below covers either way.
    assert!(
        listed.matches("\"tool\":\"Grep\"").count() >= 2,
        "the Grep outputs were swapped: {listed}"
    );

    // remember: the MCP tool writes a memory line per sample.
    {
        let mut m = Mcp::start(&home, &proj);
        for form in 0..2 {
            for (s, text) in channel_samples("remember", form) {
                let a = m.request(
                    "tools/call",
                    serde_json::json!({"name": "remember",
                    "arguments": {"text": format!("remember {text}"), "kind": "decision"}}),
                );
                assert!(
                    a["error"].is_null() && a["result"]["isError"] != true,
                    "{}: {a}",
                    s.name
                );
            }
        }
    }

    // ingest: the same transcript into a fresh store.
    let out = common::memctl(
        &home_ingest,
        &["ingest", "--quiet", &t.display().to_string()],
        b"",
        &env,
    );
    assert!(out.status.success(), "{out:?}");

    // import: an export of the first store with the import samples in every field.
    let exported = common::memctl(
        &home,
        &["export", "--out", "-", "--all-projects"],
        b"",
        &env,
    );
    assert!(exported.status.success(), "{exported:?}");
    let export_a = String::from_utf8_lossy(&exported.stdout).into_owned();
    let poisoned = dir.path().join("poisoned.jsonl");
    std::fs::write(&poisoned, poison_export(&export_a)).expect("poisoned export");
    let out = common::memctl(
        &home_import,
        &["import", &poisoned.display().to_string()],
        b"",
        &env,
    );
    assert!(out.status.success(), "{out:?}");

    // Every byte memctl wrote: the three data dirs, the memory files it wrote, every export,
    // and what the hooks printed.
    let mut found: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
    for h in [&home, &home_ingest, &home_import] {
        files_under(h, &mut found);
        let e = common::memctl(h, &["export", "--out", "-", "--all-projects"], b"", &env);
        assert!(e.status.success(), "{e:?}");
        found.push((h.join("<export>"), e.stdout));
    }
    let written: Vec<_> = std::fs::read_dir(&mem)
        .expect("memory dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.ends_with("notes.md"))
        .collect();
    assert!(
        !written.is_empty(),
        "remember and import wrote memory files"
    );
    for p in written {
        let b = std::fs::read(&p).expect("memory file");
        found.push((p, b));
    }
    for (i, o) in hook_out.into_iter().enumerate() {
        found.push((format!("<hook output {i}>").into(), o));
    }

    let secrets = every_secret();
    let mut tried: BTreeMap<String, usize> = BTreeMap::new();
    let mut stored = Vec::new();
    for (label, name, secret) in &secrets {
        *tried.entry(label.clone()).or_default() += 1;
        for (path, bytes) in &found {
            if contains(bytes, secret) {
                stored.push(format!("{label} {name} in {}", path.display()));
            }
        }
    }
    let kinds = redaction_samples(0).len();
    eprintln!(
        "secret corpus: {kinds} kinds x {} channels x 2 forms = {} tried, {} stored",
        CHANNELS.len(),
        secrets.len(),
        stored.len()
    );
    assert!(kinds >= 40 && CHANNELS.len() >= 6, "{tried:?}");
    assert!(
        stored.is_empty(),
        "{} stored:\n{}",
        stored.len(),
        stored.join("\n")
    );
}
