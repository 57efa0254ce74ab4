//! Swap unit tests: thresholds, extraction, limits, retention (injected clock), ids,
//! redaction, exact round trips, search.

use super::digest::definitions;
use super::*;
use crate::embed::OnnxConfig;
use crate::engine::Engine;
use crate::engine::EngineOptions;

const H: i64 = 3600;
const T0: i64 = 1_800_000_000;

pub(super) fn engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(EngineOptions {
        data_dir: dir.path().join("data"),
        onnx: OnnxConfig::discover(None),
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open engine");
    (dir, e)
}

/// Deterministic, incompressible-ish text (xorshift letters and newlines).
fn noise(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut s = String::with_capacity(n);
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let c = (x % 40) as u8;
        s.push(match c {
            0..=25 => (b'a' + c) as char,
            26..=35 => (b'0' + c - 26) as char,
            36 | 37 => ' ',
            _ => '\n',
        });
    }
    s
}

fn read_response(path: &str, content: &str) -> String {
    serde_json::json!({"type": "text", "file": {"filePath": path, "content": content,
        "numLines": content.lines().count(), "startLine": 1, "totalLines": content.lines().count()}})
    .to_string()
}

fn read_input(path: &str) -> String {
    serde_json::json!({ "file_path": path }).to_string()
}

struct Call {
    session: String,
    tool: String,
    input: String,
    response: String,
}

impl Call {
    fn read(session: &str, path: &str, content: &str) -> Self {
        Self {
            session: session.into(),
            tool: "Read".into(),
            input: read_input(path),
            response: read_response(path, content),
        }
    }

    fn as_call(&self) -> ToolCall<'_> {
        ToolCall {
            session_id: &self.session,
            project: "/w",
            tool_name: &self.tool,
            tool_input: &self.input,
            tool_response: &self.response,
            tool_use_id: Some("toolu_1"),
            failed: false,
        }
    }
}

fn stored(o: SwapOutcome) -> StoreReport {
    match o {
        SwapOutcome::Stored(r) => r,
        SwapOutcome::Skipped(s) => panic!("expected stored, got skipped: {s:?}"),
    }
}

#[test]
fn thresholds_per_tool_in_characters() {
    let cfg = SwapConfig::default();
    assert_eq!(cfg.threshold("Read"), Some(8192));
    assert_eq!(cfg.threshold("Grep"), Some(4096));
    assert_eq!(cfg.threshold("Glob"), Some(2048));
    assert_eq!(cfg.threshold("Bash"), Some(6144));
    assert_eq!(cfg.threshold("WebFetch"), Some(4096));
    assert_eq!(cfg.threshold("Edit"), None);

    let at = Call::read("s", "/w/a.txt", &"x".repeat(8192));
    assert!(prepare(&at.as_call(), &cfg, T0).is_ok());
    let below = Call::read("s", "/w/a.txt", &"x".repeat(8191));
    assert_eq!(
        prepare(&below.as_call(), &cfg, T0).unwrap_err(),
        SkipReason::BelowThreshold {
            chars: 8191,
            threshold: 8192
        }
    );
    // Characters, not bytes: 5000 × '€' is 15 000 bytes but below 8192 characters.
    let euros = Call::read("s", "/w/e.txt", &"€".repeat(5000));
    assert!(matches!(
        prepare(&euros.as_call(), &cfg, T0),
        Err(SkipReason::BelowThreshold { chars: 5000, .. })
    ));
    let mut edit = Call::read("s", "/w/a.txt", &"x".repeat(100_000));
    edit.tool = "Edit".into();
    assert_eq!(
        prepare(&edit.as_call(), &cfg, T0).unwrap_err(),
        SkipReason::ToolNotSwapped
    );
    let off = SwapConfig {
        enabled: false,
        ..SwapConfig::default()
    };
    assert_eq!(
        prepare(&at.as_call(), &off, T0).unwrap_err(),
        SkipReason::Disabled
    );

    // Glob (2048) swaps a file list that Grep (4096) would not.
    let files: Vec<String> = (0..150).map(|i| format!("src/mod_{i:03}.rs")).collect();
    let resp = serde_json::json!({"filenames": files, "numFiles": 150}).to_string();
    let glob = Call {
        session: "s".into(),
        tool: "Glob".into(),
        input: r#"{"pattern":"**/*.rs"}"#.into(),
        response: resp.clone(),
    };
    let p = prepare(&glob.as_call(), &cfg, T0).expect("glob swapped");
    assert!(p.entry.summary.contains("150 files"), "{}", p.entry.summary);
    assert!(p.entry.patterns.iter().any(|x| x == ".rs ×150"));
    let grep = Call {
        tool: "Grep".into(),
        ..glob
    };
    assert!(prepare(&grep.as_call(), &cfg, T0).is_err());
}

#[test]
fn output_extraction_per_tool_shape() {
    let big = "line\n".repeat(3);
    assert_eq!(output_text("Read", &read_response("/a", &big)), big);
    assert_eq!(
        output_text(
            "Bash",
            r#"{"stdout":"out\n","stderr":"err\n","interrupted":false,"isImage":false}"#
        ),
        "out\nerr\n"
    );
    assert_eq!(
        output_text("Bash", r#"{"stdout":"out","stderr":""}"#),
        "out"
    );
    assert_eq!(
        output_text(
            "Grep",
            r#"{"mode":"content","content":"a.rs:1:fn x","numLines":1,"filenames":[]}"#
        ),
        "a.rs:1:fn x"
    );
    assert_eq!(
        output_text(
            "Grep",
            r#"{"mode":"files_with_matches","filenames":["a.rs","b.rs"],"numFiles":2}"#
        ),
        "a.rs\nb.rs"
    );
    assert_eq!(
        output_text("Glob", r#"{"filenames":["x","y"],"numFiles":2}"#),
        "x\ny"
    );
    assert_eq!(
        output_text(
            "WebFetch",
            r##"{"bytes":5,"code":200,"codeText":"OK","result":"# Title","url":"u"}"##
        ),
        "# Title"
    );
    // Failures and string results: the string; unknown shapes: the raw JSON, never lost.
    assert_eq!(
        output_text("Bash", r#""Error: Exit code 3\nout\nerr""#),
        "Error: Exit code 3\nout\nerr"
    );
    assert_eq!(output_text("Read", r#"{"odd":1}"#), r#"{"odd":1}"#);
    assert_eq!(
        input_summary(
            "Bash",
            r#"{"command":"cargo test\n  --all","description":"d"}"#
        ),
        "cargo test   --all"
    );
    assert_eq!(
        input_summary("Grep", r#"{"pattern":"fn main","path":"/w","glob":"*.rs"}"#),
        "fn main --glob *.rs in /w"
    );
    assert_eq!(
        input_summary("Read", r#"{"file_path":"/w/a.rs","offset":10,"limit":5}"#),
        "/w/a.rs (lines 10..15)"
    );
}

#[test]
fn digest_finds_definitions_errors_and_counts() {
    let src = "use x;\npub struct Store {\n}\nimpl Store {\n    pub fn open() {}\n    async fn run_it() {}\n}\nclass Parser:\n    def parse(self):\nexport function renderPage() {}\nfunc (s *Server) Serve() {}\ninterface Shape {}\n";
    let defs = definitions(src);
    for name in [
        "Store",
        "open",
        "run_it",
        "Parser",
        "parse",
        "renderPage",
        "Serve",
        "Shape",
    ] {
        assert!(
            defs.iter().any(|d| d == name),
            "{name} missing from {defs:?}"
        );
    }
    // `cat -n` style prefixes (the Read tool's display) are tolerated.
    assert_eq!(definitions("     3\tfn numbered() {}"), vec!["numbered"]);
    let d = digest(
        "Bash",
        "cargo test",
        "Compiling x\nerror[E0433]: failed to resolve: use of undeclared crate\nmore\n",
    );
    assert_eq!(d.lines, 3);
    assert_eq!(
        d.first_error.as_deref(),
        Some("error[E0433]: failed to resolve: use of undeclared crate")
    );
    assert!(
        d.summary.starts_with("`cargo test`: 3 lines of output"),
        "{}",
        d.summary
    );
    // Module paths and type names that contain "error" are not error lines.
    let d = digest(
        "Read",
        "/w/a.rs",
        "use crate::error::StoreError;\nfn ok() {}\n",
    );
    assert_eq!(d.first_error, None);
    let d = digest("Bash", "x", "12:00 INFO up\n12:01 ERROR disk full\n");
    assert_eq!(d.first_error.as_deref(), Some("12:01 ERROR disk full"));
    let d = digest("Read", "/w/src/lib.rs", src);
    assert!(d.summary.contains("of rust"), "{}", d.summary);
    assert!(d.summary.contains("defines Store"), "{}", d.summary);
}

#[test]
fn ids_are_stable_content_addresses_and_shared_content_is_stored_once() {
    let (_d, e) = engine();
    let cfg = SwapConfig::default();
    let content = noise(1, 20_000);
    let a = Call::read("s1", "/w/a.txt", &content);
    let mut b = Call::read("s2", "/w/copy.txt", &content);
    b.tool = "Read".into();
    let ra = stored(e.swap_tool_output(&a.as_call(), &cfg, T0).unwrap());
    let rb = stored(e.swap_tool_output(&b.as_call(), &cfg, T0 + 5).unwrap());
    assert_eq!(ra.id, content_id(&content));
    assert_eq!(ra.id, rb.id, "same content, same id");
    assert_eq!(ra.id.len(), 64);
    assert!(ra.new_blob && !rb.new_blob);
    let st = e.swap_stats().unwrap();
    assert_eq!((st.blobs, st.bytes), (1, content.len() as u64));
    // Same id in a fresh store (no state in the id).
    let (_d2, e2) = engine();
    let r2 = stored(e2.swap_tool_output(&a.as_call(), &cfg, T0 + 99).unwrap());
    assert_eq!(r2.id, ra.id);
    // Swapping the same output again in a session refreshes it (no second entry).
    let again = stored(e.swap_tool_output(&a.as_call(), &cfg, T0 + 10).unwrap());
    assert!(again.refreshed);
    assert_eq!(e.swap_list(Some("s1")).unwrap().len(), 1);
    assert_eq!(e.swap_list(None).unwrap().len(), 2);
    // Short ids resolve; bad ids are clear errors.
    let short = &ra.id[..SHORT_ID_LEN];
    assert_eq!(e.core().swap_resolve(short).unwrap(), ra.id);
    assert_eq!(e.core().swap_resolve(&short.to_uppercase()).unwrap(), ra.id);
    assert!(e.core().swap_resolve("zz").is_err());
    assert!(e.core().swap_resolve("../../etc").is_err());
    assert!(e.core().swap_resolve("0000000000").is_err());
}

#[test]
fn exact_round_trip_compressed_and_raw() {
    let (_d, e) = engine();
    let cfg = SwapConfig::default();
    let code = "pub fn handler(req: Request) -> Response {\n    route(req)\n}\n".repeat(400);
    let rand = noise(7, 30_000);
    for (i, content) in [code, rand].iter().enumerate() {
        let c = Call::read("s", &format!("/w/f{i}.rs"), content);
        let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0).unwrap());
        let SwapContent { entries, text } = e.core().swap_content(&r.id[..SHORT_ID_LEN]).unwrap();
        assert_eq!(&text, content, "exact bytes back");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].access_count, 0, "swap_content is not an access");
        if i == 0 {
            assert!(r.stored_bytes * 5 < r.bytes, "repetitive code compresses");
        } else {
            assert_eq!(
                r.stored_bytes,
                r.bytes + 1,
                "incompressible: raw + codec byte"
            );
        }
        let SwapContent {
            entries: shown,
            text: text2,
        } = e.swap_show(&r.id, T0 + 60).unwrap();
        assert_eq!(&text2, content);
        assert_eq!(shown[0].access_count, 1);
        assert_eq!(shown[0].last_access, Some(T0 + 60));
    }
}

#[test]
fn secrets_are_redacted_before_storing() {
    let (_d, e) = engine();
    let cfg = SwapConfig::default();
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let content = format!(
        "{}\nexport GITHUB_TOKEN={secret}\n{}",
        noise(3, 5000),
        noise(4, 5000)
    );
    let mut c = Call::read("s", "/w/.env", &content);
    c.tool = "Bash".into();
    c.input = format!(r#"{{"command":"curl -H 'Authorization: Bearer {secret}' x"}}"#);
    c.response = serde_json::json!({"stdout": content, "stderr": ""}).to_string();
    let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0).unwrap());
    let SwapContent { entries, text } = e.core().swap_content(&r.id).unwrap();
    assert!(!text.contains(secret), "secret stored");
    assert!(text.contains("[REDACTED:"));
    assert_eq!(r.id, content_id(&text), "id is the hash of what is stored");
    assert!(!entries[0].input_summary.contains(secret));
    assert!(!entries[0].summary.contains(secret));
    let list = serde_json::to_string(&e.swap_list(None).unwrap()).unwrap();
    assert!(!list.contains(secret));
}

#[test]
fn too_large_outputs_are_refused() {
    let cfg = SwapConfig {
        max_entry_bytes: 50_000,
        ..SwapConfig::default()
    };
    let c = Call::read("s", "/w/big.log", &noise(5, 60_000));
    assert_eq!(
        prepare(&c.as_call(), &cfg, T0).unwrap_err(),
        SkipReason::TooLarge {
            bytes: 60_000,
            max: 50_000
        }
    );
}

#[test]
fn session_limit_evicts_oldest_never_accessed_first() {
    let (_d, e) = engine();
    let cfg = SwapConfig {
        max_entries_per_session: 3,
        ..SwapConfig::default()
    };
    let mut ids = Vec::new();
    for i in 0..3 {
        let c = Call::read("s", &format!("/w/{i}.txt"), &noise(10 + i, 9000));
        ids.push(
            stored(
                e.swap_tool_output(&c.as_call(), &cfg, T0 + i as i64)
                    .unwrap(),
            )
            .id,
        );
    }
    // The oldest one is used: it outlives the never-accessed ones.
    e.swap_show(&ids[0], T0 + 10).unwrap();
    let other = Call::read("other", "/w/o.txt", &noise(99, 9000));
    stored(e.swap_tool_output(&other.as_call(), &cfg, T0 + 11).unwrap());
    let c = Call::read("s", "/w/3.txt", &noise(13, 9000));
    let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0 + 20).unwrap());
    assert_eq!(r.evicted.len(), 1);
    assert_eq!(r.evicted[0].id, ids[1], "oldest never-accessed entry goes");
    assert_eq!(r.evicted[0].reason, RemoveReason::SessionLimit);
    let left: Vec<String> = e
        .swap_list(Some("s"))
        .unwrap()
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(left.len(), 3);
    assert!(left.contains(&ids[0]) && left.contains(&ids[2]) && left.contains(&r.id));
    assert_eq!(
        e.swap_list(Some("other")).unwrap().len(),
        1,
        "other sessions untouched"
    );
    assert!(
        e.core().swap_content(&ids[1]).is_err(),
        "evicted blob is gone"
    );
    // When every other entry was accessed, the least recently accessed goes.
    e.swap_show(&ids[2], T0 + 30).unwrap();
    e.swap_show(&r.id, T0 + 31).unwrap();
    let c = Call::read("s", "/w/4.txt", &noise(14, 9000));
    let r2 = stored(e.swap_tool_output(&c.as_call(), &cfg, T0 + 40).unwrap());
    assert_eq!(r2.evicted.len(), 1);
    assert_eq!(r2.evicted[0].id, ids[0], "accessed at T0+10: least recent");
}

#[test]
fn total_bytes_limit_evicts_globally_and_keeps_the_new_entry() {
    let (_d, e) = engine();
    let cfg = SwapConfig {
        max_total_bytes: 30_000,
        ..SwapConfig::default()
    };
    let mut ids = Vec::new();
    for i in 0..3 {
        let c = Call::read(&format!("s{i}"), "/w/x.txt", &noise(20 + i, 10_000));
        let r = stored(
            e.swap_tool_output(&c.as_call(), &cfg, T0 + i as i64)
                .unwrap(),
        );
        assert!(r.evicted.is_empty());
        ids.push(r.id);
    }
    assert_eq!(e.swap_stats().unwrap().bytes, 30_000);
    let c = Call::read("s9", "/w/y.txt", &noise(29, 15_000));
    let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0 + 10).unwrap());
    let gone: Vec<&str> = r.evicted.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(gone, vec![ids[0].as_str(), ids[1].as_str()], "oldest first");
    assert!(
        r.evicted
            .iter()
            .all(|x| x.reason == RemoveReason::TotalBytes)
    );
    let st = e.swap_stats().unwrap();
    assert_eq!((st.blobs, st.bytes), (2, 25_000));
    assert!(e.core().swap_content(&r.id).is_ok());
    // A single output larger than the whole budget is kept alone rather than dropped.
    let c = Call::read("s9", "/w/z.txt", &noise(30, 40_000));
    let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0 + 20).unwrap());
    assert_eq!(e.swap_list(None).unwrap().len(), 1);
    assert!(e.core().swap_content(&r.id).is_ok());
}

#[test]
fn shared_blob_survives_until_its_last_entry_goes() {
    let (_d, e) = engine();
    let cfg = SwapConfig {
        max_entries_per_session: 1,
        ..SwapConfig::default()
    };
    let content = noise(40, 9000);
    let a = Call::read("a", "/w/x", &content);
    let b = Call::read("b", "/w/x", &content);
    let id = stored(e.swap_tool_output(&a.as_call(), &cfg, T0).unwrap()).id;
    stored(e.swap_tool_output(&b.as_call(), &cfg, T0 + 1).unwrap());
    // Session a overflows: its entry goes, the blob stays for b.
    let a2 = Call::read("a", "/w/y", &noise(41, 9000));
    let r = stored(e.swap_tool_output(&a2.as_call(), &cfg, T0 + 2).unwrap());
    assert_eq!(r.evicted[0].id, id);
    let SwapContent { entries, text } = e.core().swap_content(&id).unwrap();
    assert_eq!(text, content);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].session_id, "b");
    assert_eq!(e.swap_stats().unwrap().blobs, 2);
}

#[test]
fn retention_with_an_injected_clock() {
    let cfg = SwapConfig::default();
    let base = SwapEntry {
        id: "ab".repeat(32),
        session_id: "s".into(),
        project: "/w".into(),
        tool: "Read".into(),
        tool_use_id: None,
        input_summary: "/w/a".into(),
        failed: false,
        bytes: 1,
        stored_bytes: 2,
        lines: 1,
        created_at: T0,
        last_access: None,
        access_count: 0,
        summary: String::new(),
        patterns: Vec::new(),
        first_error: None,
        in_place: false,
    };
    // Never accessed, idle session: 6 h after the last activity.
    assert_eq!(cfg.expires_at(&base, T0), T0 + 6 * H);
    // Never accessed, session still active: at most 24 h after creation.
    assert_eq!(cfg.expires_at(&base, T0 + 20 * H), T0 + 24 * H);
    assert_eq!(cfg.expires_at(&base, T0 + 10 * H), T0 + 16 * H);
    // Accessed: 48 h after the last access.
    let used = SwapEntry {
        access_count: 2,
        last_access: Some(T0 + 5 * H),
        ..base.clone()
    };
    assert_eq!(cfg.expires_at(&used, T0), T0 + 53 * H);

    let (_d, e) = engine();
    let old = Call::read("idle", "/w/old", &noise(50, 9000));
    let kept = Call::read("idle", "/w/kept", &noise(51, 9000));
    let id_old = stored(e.swap_tool_output(&old.as_call(), &cfg, T0).unwrap()).id;
    let id_kept = stored(e.swap_tool_output(&kept.as_call(), &cfg, T0 + 1).unwrap()).id;
    e.swap_show(&id_kept, T0 + 2).unwrap();
    // 5 h later nothing has expired.
    assert!(
        e.swap_prune(&cfg, T0 + 5 * H, false)
            .unwrap()
            .removed
            .is_empty()
    );
    // 7 h: the never-accessed entry of the idle session expires; dry run first.
    let dry = e.swap_prune(&cfg, T0 + 7 * H, true).unwrap();
    assert_eq!(dry.removed.len(), 1);
    assert_eq!(dry.removed[0].id, id_old);
    assert_eq!(
        e.swap_list(None).unwrap().len(),
        2,
        "dry run removes nothing"
    );
    let done = e.swap_prune(&cfg, T0 + 7 * H, false).unwrap();
    assert_eq!(done.removed[0].reason, RemoveReason::Expired);
    assert_eq!(e.swap_list(None).unwrap().len(), 1);
    // The accessed one lives 48 h past its access, then goes.
    assert!(
        e.swap_prune(&cfg, T0 + 47 * H, false)
            .unwrap()
            .removed
            .is_empty()
    );
    assert_eq!(
        e.swap_prune(&cfg, T0 + 49 * H, false).unwrap().removed[0].id,
        id_kept
    );
    assert_eq!(e.swap_stats().unwrap(), SwapStats::default());
}

#[test]
fn storing_runs_a_bounded_expiry_pass() {
    let (_d, e) = engine();
    let cfg = SwapConfig {
        auto_prune_batch: 2,
        ..SwapConfig::default()
    };
    for i in 0..5 {
        let c = Call::read("old", &format!("/w/{i}"), &noise(60 + i, 9000));
        stored(e.swap_tool_output(&c.as_call(), &cfg, T0).unwrap());
    }
    let c = Call::read("new", "/w/n", &noise(70, 9000));
    let r = stored(e.swap_tool_output(&c.as_call(), &cfg, T0 + 30 * H).unwrap());
    assert_eq!(r.expired.len(), 2, "bounded by auto_prune_batch");
    assert_eq!(e.swap_list(Some("old")).unwrap().len(), 3);
    assert_eq!(e.swap_list(Some("new")).unwrap().len(), 1);
}

#[test]
fn search_finds_outputs_by_meaning_without_the_model() {
    let (_d, e) = engine();
    let cfg = SwapConfig::default();
    let tokenizer = "pub struct TokenizerConfig {\n    pub truncation: usize,\n    pub padding: Padding,\n}\nimpl TokenizerConfig {\n    pub fn load_tokenizer_json(path: &Path) -> Self { todo() }\n}\n".repeat(60);
    let db_log =
        "INFO postgres connection pool started\nWARN slow query on table users\n".repeat(150);
    let mut log = Call::read("s", "/w/x", &db_log);
    log.tool = "Bash".into();
    log.input = r#"{"command":"docker logs db"}"#.into();
    log.response = serde_json::json!({"stdout": db_log, "stderr": ""}).to_string();
    let t = Call::read("s", "/w/src/tokenizer.rs", &tokenizer);
    let n = Call::read("s", "/w/noise.txt", &noise(80, 9000));
    let id_t = stored(e.swap_tool_output(&t.as_call(), &cfg, T0).unwrap()).id;
    let id_l = stored(e.swap_tool_output(&log.as_call(), &cfg, T0).unwrap()).id;
    stored(e.swap_tool_output(&n.as_call(), &cfg, T0).unwrap());
    let hits = e
        .swap_search("tokenizer truncation padding config", 3, None, None)
        .unwrap();
    assert_eq!(hits[0].entry.id, id_t, "{hits:?}");
    let hits = e
        .swap_search("slow database queries in the postgres logs", 3, None, None)
        .unwrap();
    assert_eq!(hits[0].entry.id, id_l, "{hits:?}");
    assert!(
        e.swap_search("tokenizer", 3, None, Some("/elsewhere"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        e.swap_search("tokenizer", 3, Some("s"), None).unwrap()[0]
            .entry
            .id,
        id_t
    );
}

#[test]
fn inventory_lines_and_missing_tables_read_empty() {
    let (_d, e) = engine();
    // A fresh store: nothing swapped yet, every read is empty, not an error.
    assert!(e.swap_list(None).unwrap().is_empty());
    assert!(e.swap_search("x", 3, None, None).unwrap().is_empty());
    assert_eq!(e.swap_stats().unwrap(), SwapStats::default());
    let c = Call::read("s", "/w/src/lib.rs", &"pub fn alpha() {}\n".repeat(600));
    let r = stored(
        e.swap_tool_output(&c.as_call(), &SwapConfig::default(), T0)
            .unwrap(),
    );
    let inv = inventory(&e.store().read().unwrap(), "s").unwrap();
    assert_eq!(inv.len(), 1);
    let line = inv[0].inventory_line();
    assert!(
        line.starts_with(&format!(
            "{} · Read · /w/src/lib.rs · 10.8 kB · ",
            &r.id[..12]
        )),
        "{line}"
    );
    assert!(line.contains("defines alpha"), "{line}");
    let mut bash = Call::read("s", "/w/x", "");
    bash.tool = "Bash".into();
    bash.input = r#"{"command":"cargo test"}"#.into();
    bash.response = serde_json::json!({"stdout": "ok\n".repeat(4000), "stderr": ""}).to_string();
    stored(
        e.swap_tool_output(&bash.as_call(), &SwapConfig::default(), T0 + 1)
            .unwrap(),
    );
    let inv = inventory(&e.store().read().unwrap(), "s").unwrap();
    let line = inv[0].inventory_line();
    assert!(
        line.contains(" · Bash · cargo test · 12.0 kB · 4000 lines of output; last line: ok"),
        "{line}"
    );
    assert!(
        inventory(&e.store().read().unwrap(), "none")
            .unwrap()
            .is_empty()
    );
}

/// Regression: a tool response of a shape we do not know (a Read of a notebook) was redacted as
/// escaped JSON text, and these secrets survived into the store and `memctl swap show`.
#[test]
fn secrets_in_escaped_json_of_an_unknown_response_shape_are_redacted() {
    let (_d, e) = engine();
    let secrets = [
        (
            "password = \"hunter2-Correct-Horse\"",
            "hunter2-Correct-Horse",
        ),
        (
            "aws_secret_access_key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("DB_PASSWORD=\"s3cr3t-db-pass-9911\"", "s3cr3t-db-pass-9911"),
        (
            "API_TOKEN=tok_live_7d1f9a2b3c4d5e6f",
            "tok_live_7d1f9a2b3c4d5e6f",
        ),
    ];
    let mut source = String::from("import os\n");
    for (line, _) in &secrets {
        source.push_str(line);
        source.push('\n');
    }
    source.push_str(&noise(7, 9000));
    // The notebook shape of Claude Code's Read: not the typed text-file shape.
    let response = serde_json::json!({"type": "notebook", "file": {"filePath": "/w/n.ipynb",
        "cells": [{"cellType": "code", "source": source, "cell_id": "c1"}]}})
    .to_string();
    let call = Call {
        session: "s".into(),
        tool: "Read".into(),
        input: read_input("/w/n.ipynb"),
        response,
    };
    let r = stored(
        e.swap_tool_output(&call.as_call(), &SwapConfig::default(), T0)
            .unwrap(),
    );
    let text = e.swap_show(&r.id, T0 + 1).unwrap().text;
    for (line, secret) in &secrets {
        assert!(
            !text.contains(secret),
            "{line} survived in the swap:\n{}",
            &text[..600]
        );
    }
    assert!(text.contains("import os"), "the rest is kept");
}

/// The module documentation's example.
#[test]
fn a_read_above_its_threshold_is_prepared_for_swap() {
    use crate::swap::{SwapConfig, ToolCall, prepare};
    let content = "fn main() {}\n".repeat(1000);
    let response = serde_json::json!({"type": "text", "file": {"filePath": "/w/src/main.rs", "content": content}}).to_string();
    let call = ToolCall {
        session_id: "s1",
        project: "/w",
        tool_name: "Read",
        tool_input: r#"{"file_path":"/w/src/main.rs"}"#,
        tool_response: &response,
        tool_use_id: Some("toolu_1"),
        failed: false,
    };
    let p = prepare(&call, &SwapConfig::default(), 0).expect("above the Read threshold");
    assert_eq!(p.entry.input_summary, "/w/src/main.rs");
    assert_eq!(p.entry.short_id().len(), 12);
    assert!(p.entry.patterns.contains(&"main".to_string()));
}
