//! The effect of usage-aware reinforcement on the held-in restore session:
//! the 500 generated turns of `restore_quality` (same seed), driven through the hook handlers.
//!
//! 1. SessionStart(compact) restores block R1; its chunks wait for a usage verdict.
//! 2. The agent works four more turns: it reads or greps one distinctive identifier of every
//!    other restored chunk (the "used" ones) and never mentions the rest.
//! 3. PreCompact archives those turns and judges: used chunks get an access, the others (after
//!    three agent turns) the unused decay, both in `access.log`.
//! 4. Three copies of the store restore block R2 after that second compaction: with the
//!    verdicts (this change), with nothing (no reinforcement), and with every R1 chunk boosted
//!    for having been injected (the behaviour before this change).
//!
//! Measured, per policy: the factor the verdicts put on each R1 chunk's restore value (a
//! retrieved line's value is `retrieval score × importance × confidence`, importance holding
//! `frequency(access_count)`), and how many used and unused R1 chunks R2 shows again at eight
//! budgets. Used chunks must be worth more and come back at least as often as without
//! reinforcement, unused ones worth less and come back no more often.
//!
//! What the value decides: which retrieved lines survive the budget cut (lowest value first).
//! Which candidates are retrieved, and in what order the per-section caps take them, is the
//! retrieval's (seeded by the latest turns): reinforcement reorders within that, it does not
//! bring back a chunk the new latest turns do not retrieve.
//!
//! Run: `cargo test --workspace --test testsuite -- restore_reinforcement:: --nocapture`.

use memctl_engine::{
    AgentEvent, Engine, EngineOptions, EventKind, HookConfig, IngestOptions, OnnxConfig,
    RankParams, Reply, StartKind, handle_event, importance, is_strong,
};
use memctl_test_support::copy_dir;
use memctl_tests::transcript_gen::{GenConfig, generate_string};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The held-in session: `restore_quality`'s seed and length.
const SEED: u64 = 4242;
const TURNS: u64 = 500;
const BUDGETS: [usize; 8] = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000];

fn open(data: &Path) -> Engine {
    let none = data.join("no-model");
    Engine::open(EngineOptions {
        data_dir: data.join("store"),
        onnx: OnnxConfig::new(none.join("lib.so"), &none),
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open engine")
}

fn config(claude_dir: &Path, chars: usize) -> HookConfig {
    let mut cfg = HookConfig::default();
    cfg.restore.budget.max_chars = chars;
    cfg.restore.claude_dir = Some(claude_dir.to_path_buf());
    // Each restored chunk is judged on its own here: near-identical turns folded into one line
    // hold the same identifiers, so one use would mark the whole group used, and the generated
    // session repeats its test runs.
    cfg.restore.fold = false;
    cfg
}

/// Run one event of the session (`common`, of kind `kind`) in-process: the reply's text.
fn hook(e: &Engine, kind: EventKind, common: &AgentEvent, cfg: &HookConfig) -> String {
    let event = AgentEvent {
        kind,
        ..common.clone()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    match handle_event(e, &event, deadline, cfg).expect("hook").reply {
        Reply::Context(text) | Reply::CompactInstructions(text) => text,
        _ => String::new(),
    }
}

/// One JSONL line of the appended turns.
fn line(session: &str, cwd: &str, n: u32, kind: &str, content: Value) -> String {
    let role = if kind == "assistant" {
        "assistant"
    } else {
        "user"
    };
    json!({
        "type": kind, "uuid": format!("later-{n}"), "parentUuid": format!("later-{}", n.saturating_sub(1)),
        "sessionId": session, "cwd": cwd, "timestamp": format!("2099-02-01T10:{:02}:00Z", n % 60),
        "message": {"role": role, "content": content}
    })
    .to_string()
}

/// Four later turns: the agent reads or greps each identifier in `uses` (spread over the first
/// three turns), then answers a last prompt without tools.
fn later_turns(session: &str, cwd: &str, uses: &[String]) -> String {
    let mut n = 0;
    let mut out = String::new();
    let mut push = |kind: &str, content: Value| {
        n += 1;
        out.push_str(&line(session, cwd, n, kind, content));
        out.push('\n');
    };
    for t in 0..3 {
        push("user", json!("continue with the next step"));
        let mine: Vec<&String> = uses.iter().skip(t).step_by(3).collect();
        for (i, id) in mine.iter().enumerate() {
            let tid = format!("later-tool-{t}-{i}");
            let (name, input) = if id.contains('/') {
                ("Read", json!({"file_path": id}))
            } else {
                ("Bash", json!({"command": format!("grep -rn '{id}' .")}))
            };
            push(
                "assistant",
                json!([{"type": "tool_use", "id": tid, "name": name, "input": input}]),
            );
            push(
                "user",
                json!([{"type": "tool_result", "tool_use_id": tid, "content": "ok", "is_error": false}]),
            );
        }
        push(
            "assistant",
            json!([{"type": "text", "text": "Done with this step."}]),
        );
    }
    push("user", json!("thanks, that is all for now"));
    push(
        "assistant",
        json!([{"type": "text", "text": "You're welcome."}]),
    );
    out
}

/// The verdicts in an access log: (used, unused) chunk ids.
fn verdicts(log: &Path) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let (mut used, mut unused) = (BTreeSet::new(), BTreeSet::new());
    for l in text.lines() {
        let id: u64 = l
            .split(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .expect("id");
        if l.ends_with(" unused") {
            unused.insert(id);
        } else {
            used.insert(id);
        }
    }
    (used, unused)
}

/// How a policy's second restore treated the first restore's chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Outcome {
    used_back: usize,
    unused_back: usize,
}

#[test]
fn used_chunks_come_back_and_unused_ones_give_way() {
    println!("restore_reinforcement: generator seed {SEED}, {TURNS} turns");
    let [data, proj, home] = [(); 3].map(|_| tempfile::tempdir().expect("tempdir"));
    let project = proj.path().to_str().expect("utf-8").to_string();
    let generated = generate_string(&GenConfig {
        turns: TURNS,
        seed: SEED,
        ..GenConfig::default()
    });
    let first: Value = generated
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["cwd"].is_string())
        .expect("a line with cwd");
    let old_cwd = first["cwd"].as_str().unwrap_or_default().to_string();
    let session = first["sessionId"].as_str().unwrap_or_default().to_string();
    let jsonl = generated.replace(&old_cwd, &project);
    let base = data.path().join("base");
    let transcript = data.path().join(format!("{session}.jsonl"));
    std::fs::write(&transcript, &jsonl).expect("write transcript");
    let claude_dir = home.path().join(".claude");
    let common = AgentEvent {
        session_id: session.clone(),
        transcript_path: Some(transcript.clone()),
        cwd: Some(project.clone()),
        kind: EventKind::Other,
    };
    let p = RankParams::default();

    let mut rows = Vec::new();
    let mut totals = [(0i64, 0i64); 3];
    // (used?, chunk, restore multiplier) per policy.
    let mut factors: [Vec<(bool, u64, f32)>; 3] = Default::default();
    for chars in BUDGETS {
        let cfg = config(&claude_dir, chars);
        if base.exists() {
            std::fs::remove_dir_all(&base).expect("clear the previous budget's store");
        }
        std::fs::write(&transcript, &jsonl).expect("reset transcript");
        let e = open(&base);
        e.ingest_transcript(
            &transcript,
            &IngestOptions {
                embed_with_model: false,
                ..IngestOptions::default()
            },
        )
        .expect("ingest");

        // 1. The first restore: nothing is boosted for being injected.
        let compact = EventKind::SessionStart(StartKind::Compact);
        let r1 = hook(&e, compact.clone(), &common, &cfg);
        assert!(!r1.is_empty(), "a restore block at {chars} chars");
        let state = memctl_engine::load_recall_state(e.data_dir(), &session);
        let injected: Vec<u64> = state.pending.iter().map(|w| w.id).collect();
        assert_eq!(
            injected, state.injected,
            "every restored chunk awaits a verdict"
        );
        assert!(injected.len() >= 2, "{chars}: {injected:?}");
        assert!(
            !e.data_dir().join("access.log").exists(),
            "a restore alone records no access"
        );

        // 2. The agent uses every other restored chunk (one strong identifier of each that no
        // other restored chunk holds: a shared one would make the others used too, and which
        // chunks a budget restores varies with near-ties between runs).
        let idents: Vec<BTreeSet<String>> = injected
            .iter()
            .map(|id| {
                let rec = e.chunk(*id).expect("read").expect("chunk");
                memctl_engine::chunk_identifiers(&rec.chunk.text)
            })
            .collect();
        let mut uses = Vec::new();
        for (i, ids) in idents.iter().enumerate().step_by(2) {
            let own = ids.iter().find(|x| {
                is_strong(x, &p)
                    && idents
                        .iter()
                        .enumerate()
                        .all(|(j, other)| j == i || !other.contains(*x))
            });
            if let Some(strong) = own {
                uses.push(strong.clone());
            }
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .expect("open transcript");
        std::io::Write::write_all(&mut f, later_turns(&session, &project, &uses).as_bytes())
            .expect("append");
        drop(f);

        // 3. PreCompact archives the later turns and judges.
        let before = EventKind::BeforeCompact { instructions: None };
        hook(&e, before, &common, &cfg);
        let (used, unused) = verdicts(&e.data_dir().join("access.log"));
        let left = memctl_engine::load_recall_state(e.data_dir(), &session).pending;
        assert!(left.is_empty(), "every chunk judged: {left:?}");
        assert_eq!(
            used.union(&unused).copied().collect::<BTreeSet<_>>(),
            injected.iter().copied().collect(),
            "one verdict per injected chunk"
        );
        assert!(
            !used.is_empty() && !unused.is_empty(),
            "{used:?} {unused:?}"
        );
        drop(e);

        // 4. The second restore under three policies.
        let mut outcomes = Vec::new();
        for (k, policy) in ["usage-aware", "none", "boost-on-injection"]
            .iter()
            .enumerate()
        {
            let dir = data.path().join(format!("{chars}-{policy}"));
            copy_dir(&base, &dir);
            let log = dir.join("store").join("access.log");
            match *policy {
                "none" => std::fs::remove_file(&log).expect("rm log"),
                "boost-on-injection" => {
                    // What a restore recorded before this change: one access per injected chunk.
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .expect("clock")
                        .as_secs();
                    let lines: String = injected.iter().map(|id| format!("{id} {now}\n")).collect();
                    std::fs::write(&log, lines).expect("log");
                }
                _ => {}
            }
            let e = open(&dir);
            e.flush_access_log().expect("flush");
            // The restore's multiplier of a retrieved line, as `restore/assemble.rs` computes
            // it (age 0: the same in every policy).
            let factor = |id: &u64| {
                let rec = e.chunk(*id).expect("read").expect("chunk");
                importance(
                    0.0,
                    rec.access_count,
                    !rec.chunk.tools.is_empty(),
                    !rec.chunk.files.is_empty(),
                    &p,
                ) * rec.confidence.max(0.1)
            };
            factors[k].extend(used.iter().map(|id| (true, *id, factor(id))));
            factors[k].extend(unused.iter().map(|id| (false, *id, factor(id))));
            hook(&e, compact.clone(), &common, &cfg);
            let r2: BTreeSet<u64> = memctl_engine::load_recall_state(e.data_dir(), &session)
                .injected
                .into_iter()
                .collect();
            let o = Outcome {
                used_back: used.intersection(&r2).count(),
                unused_back: unused.intersection(&r2).count(),
            };
            totals[k].0 += o.used_back as i64;
            totals[k].1 += o.unused_back as i64;
            rows.push(format!(
                "| {chars} | {policy} | {}/{} | {}/{} |",
                o.used_back,
                used.len(),
                o.unused_back,
                unused.len()
            ));
            outcomes.push(o);
        }
        let (new, none) = (outcomes[0], outcomes[1]);
        assert!(new.used_back >= none.used_back, "{chars}: {outcomes:?}");
        assert!(new.unused_back <= none.unused_back, "{chars}: {outcomes:?}");
    }
    println!("| budget | policy | used R1 chunks back in R2 | unused R1 chunks back in R2 |");
    println!("|---|---|---|---|");
    for r in &rows {
        println!("{r}");
    }
    let names = ["usage-aware", "none", "boost-on-injection"];
    for (k, name) in names.iter().enumerate() {
        println!(
            "{name}: used back {} , unused back {} (summed over {} budgets)",
            totals[k].0,
            totals[k].1,
            BUDGETS.len()
        );
    }
    // The value factor relative to no reinforcement, per verdict.
    let ratio = |k: usize, want: bool| -> (f32, f32) {
        let rs: Vec<f32> = factors[k]
            .iter()
            .zip(&factors[1])
            .filter(|((u, _, _), _)| *u == want)
            .map(|((_, a, x), (_, b, y))| {
                assert_eq!(a, b, "same chunks in the same order");
                x / y
            })
            .collect();
        let min = rs.iter().copied().fold(f32::INFINITY, f32::min);
        let max = rs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        (min, max)
    };
    for (k, name) in names.iter().enumerate() {
        let (u, n) = (ratio(k, true), ratio(k, false));
        println!(
            "{name}: restore value vs none: used chunks x{:.2}..x{:.2}, unused chunks x{:.2}..x{:.2}",
            u.0, u.1, n.0, n.1
        );
    }
    let (used_ratio, unused_ratio) = (ratio(0, true), ratio(0, false));
    assert!(used_ratio.0 >= 1.9, "used: {used_ratio:?}");
    assert!(
        unused_ratio.1 <= 0.95 && unused_ratio.0 >= 0.85,
        "unused: {unused_ratio:?}"
    );
    // Boosting on injection raised the unused chunks as much as the used ones.
    let old_unused = ratio(2, false);
    assert!(old_unused.0 >= 1.9, "before: {old_unused:?}");
    assert!(
        totals[0].0 >= totals[1].0 && totals[0].1 <= totals[1].1,
        "{totals:?}"
    );
}
