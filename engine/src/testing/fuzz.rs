//! The fuzz harness: budget, seed, execution counts, hang guard; and the generators
//! (arbitrary text, JSON values, structure-aware mutations of real inputs). Shared by the
//! engine's fuzz targets and an adapter's (Claude Code's payload parsing in `memctl-hooks`).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A case slower than this is a hang (inputs are bounded; the slowest takes milliseconds).
const HANG: Duration = Duration::from_secs(5);

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Run `property` over `strategy`: `MEMCTL_FUZZ_CASES` cases (default 1000), or for
/// `MEMCTL_FUZZ_SECS` seconds when set, from seed `MEMCTL_FUZZ_SEED` (printed). A failure
/// (a panic included: proptest catches it) is shrunk to a minimal input and reported.
pub fn fuzz<S>(name: &str, strategy: S, property: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let seed = env_u64("MEMCTL_FUZZ_SEED").unwrap_or(0x0014_0005);
    let secs = env_u64("MEMCTL_FUZZ_SECS");
    let cases = env_u64("MEMCTL_FUZZ_CASES").unwrap_or(1000);
    let start = Instant::now();
    let runs = AtomicU64::new(0);
    let mut round = 0u64;
    loop {
        let batch = match secs {
            Some(_) => 500,
            None => cases.saturating_sub(round * 500).min(500),
        };
        if batch == 0 {
            break;
        }
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&round.to_le_bytes());
        let config = Config {
            cases: batch as u32,
            failure_persistence: None,
            max_shrink_iters: 20_000,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        let result = runner.run(&strategy, |v| {
            runs.fetch_add(1, Ordering::Relaxed);
            let t = Instant::now();
            let out = property(v);
            if t.elapsed() > HANG {
                return Err(TestCaseError::fail(format!(
                    "hang: {:?} on one input",
                    t.elapsed()
                )));
            }
            out
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(reason, value)) => panic!(
                "fuzz {name}: FINDING (seed {seed:#x}, round {round}): {reason}\nminimal input: {value:?}"
            ),
            Err(TestError::Abort(reason)) => {
                panic!("fuzz {name}: aborted (seed {seed:#x}, round {round}): {reason}")
            }
        }
        round += 1;
        if secs.is_some_and(|s| start.elapsed() >= Duration::from_secs(s)) {
            break;
        }
    }
    let n = runs.load(Ordering::Relaxed);
    let took = start.elapsed().as_secs_f64();
    println!(
        "fuzz target {name}: {n} executions in {took:.1} s ({:.0}/s), seed {seed:#x}, findings 0",
        n as f64 / took.max(1e-9)
    );
}

/// Any text: printable and control characters, any script, up to 64 characters.
pub fn text() -> impl Strategy<Value = String> + Clone {
    prop_oneof!["\\PC{0,64}", "(?s).{0,64}", "[ -~]{0,16}"]
}

/// Field names a transcript line or a payload has, and random ones.
fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => prop::sample::select(vec![
            "type", "message", "content", "role", "text", "tool_use_id", "name", "input", "id",
            "sessionId", "cwd", "uuid", "parentUuid", "timestamp", "isMeta", "toolUseResult",
            "is_error", "summary", "isCompactSummary", "usage", "hook_event_name", "tool_name",
            "tool_input", "tool_response", "prompt", "source", "trigger", "transcript_path",
            "session_id", "stdout", "stderr", "file", "filePath", "thinking", "subtype",
        ])
        .prop_map(str::to_string),
        1 => "[a-zA-Z_]{1,10}",
    ]
}

/// JSON values of every type, nested up to 3 levels.
pub fn json_value() -> impl Strategy<Value = serde_json::Value> + Clone {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        text().prop_map(Value::from),
        prop::sample::select(vec![
            "user",
            "assistant",
            "system",
            "tool_use",
            "tool_result",
            "text",
            "compact",
            "auto",
            "summary"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One structural change to a JSON document, at a place chosen by `at`.
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace(u64, serde_json::Value),
    Remove(u64),
    Insert(u64, String, serde_json::Value),
}

/// One byte-level change.
#[derive(Debug, Clone)]
enum ByteEdit {
    Flip(u64, u8),
    Truncate(u64),
    Insert(u64, Vec<u8>),
}

/// JSON pointers of every value in `v`.
fn pointers(v: &serde_json::Value, here: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{here}/{}", k.replace('~', "~0").replace('/', "~1"));
                pointers(x, p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(here);
}

fn apply_json(v: &mut serde_json::Value, edit: &JsonEdit) {
    let mut ps = Vec::new();
    pointers(v, String::new(), &mut ps);
    let pick = |at: u64| ps[(at % ps.len() as u64) as usize].clone();
    match edit {
        JsonEdit::Replace(at, x) => {
            if let Some(slot) = v.pointer_mut(&pick(*at)) {
                *slot = x.clone();
            }
        }
        JsonEdit::Remove(at) => {
            let p = pick(*at);
            if let Some((parent, last)) = p.rsplit_once('/')
                && let Some(parent) = v.pointer_mut(parent)
            {
                match parent {
                    serde_json::Value::Object(m) => {
                        m.remove(&last.replace("~1", "/").replace("~0", "~"));
                    }
                    serde_json::Value::Array(a) => {
                        if let Ok(i) = last.parse::<usize>()
                            && i < a.len()
                        {
                            a.remove(i);
                        }
                    }
                    _ => {}
                }
            }
        }
        JsonEdit::Insert(at, k, x) => {
            if let Some(serde_json::Value::Object(m)) = v.pointer_mut(&pick(*at)) {
                m.insert(k.clone(), x.clone());
            }
        }
    }
}

fn apply_bytes(b: &mut Vec<u8>, edit: &ByteEdit) {
    let at = |i: u64, len: usize| (i % (len as u64 + 1)) as usize;
    match edit {
        ByteEdit::Flip(i, x) if !b.is_empty() => {
            let n = b.len();
            b[at(*i, n - 1)] ^= x | 1;
        }
        ByteEdit::Flip(..) => {}
        ByteEdit::Truncate(i) => {
            let n = b.len();
            b.truncate(at(*i, n));
        }
        ByteEdit::Insert(i, x) => {
            let n = b.len();
            let p = at(*i, n);
            b.splice(p..p, x.iter().copied());
        }
    }
}

/// A document from `seeds` with 0–4 structural edits, then (one time in four) 1–2 byte edits.
pub fn mutated_json(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let json_edit = prop_oneof![
        3 => (any::<u64>(), json_value()).prop_map(|(a, v)| JsonEdit::Replace(a, v)),
        2 => any::<u64>().prop_map(JsonEdit::Remove),
        1 => (any::<u64>(), key(), json_value()).prop_map(|(a, k, v)| JsonEdit::Insert(a, k, v)),
    ];
    let byte_edit = prop_oneof![
        (any::<u64>(), any::<u8>()).prop_map(|(i, x)| ByteEdit::Flip(i, x)),
        any::<u64>().prop_map(ByteEdit::Truncate),
        (any::<u64>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, x)| ByteEdit::Insert(i, x)),
    ];
    let byte_edits = prop_oneof![
        3 => Just(Vec::new()),
        1 => prop::collection::vec(byte_edit, 1..3),
    ];
    (
        prop::sample::select(seeds),
        prop::collection::vec(json_edit, 0..5),
        byte_edits,
    )
        .prop_map(|(seed, jedits, bedits)| {
            let mut out = match serde_json::from_slice::<serde_json::Value>(&seed) {
                Ok(mut v) => {
                    for e in &jedits {
                        apply_json(&mut v, e);
                    }
                    serde_json::to_vec(&v).unwrap_or(seed)
                }
                Err(_) => seed,
            };
            for e in &bedits {
                apply_bytes(&mut out, e);
            }
            // One line: a newline inside would make two lines of the transcript.
            out.retain(|b| *b != b'\n');
            out
        })
}

/// The lines of the sample transcript (a real Claude Code session).
pub fn real_lines() -> Vec<Vec<u8>> {
    fixture_lines("sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
}

/// A real-shaped Claude Code hook payload of every event (one per line, compact JSON): the
/// seeds of payload and tool-output fuzzing.
pub fn hook_payloads() -> Vec<Vec<u8>> {
    fixture_lines("payloads/claude.jsonl")
}

/// The non-empty lines of `tests/fixtures/<name>`.
fn fixture_lines(name: &str) -> Vec<Vec<u8>> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name);
    let text = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}
