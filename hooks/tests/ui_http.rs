//! `memctl ui` at the HTTP level: the real binary on a real store (sample + hostile session),
//! requests over a TCP socket. The token and `Host` gate, escaping of transcript markup, bad
//! input (unknown ids → 404 pages, huge queries → 413, paths in ids and file names → 400), and
//! the fixes (pin, memory files) checked with the CLI.

#[path = "common/ui.rs"]
mod ui;

use ui::{EVIL_SID, EVIL_WORD, Server, build_store, cli, hook, request};

struct Fixture {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    proj: String,
    server: Server,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = build_store(dir.path());
    let proj = dir.path().join("proj").display().to_string();
    let server = Server::start(&home);
    Fixture {
        _dir: dir,
        home,
        proj,
        server,
    }
}

fn enc(v: &str) -> String {
    serde_urlencoded::to_string([("v", v)])
        .expect("encode")
        .trim_start_matches("v=")
        .to_string()
}

#[test]
fn the_token_and_the_host_are_required_on_every_page() {
    let f = fixture();
    let s = &f.server;
    let host = s.host();
    let no_token = request(s.port, "GET", "/", &host, &[], "");
    assert_eq!(no_token.status, 403, "{no_token:?}");
    assert!(
        no_token.body.contains("token"),
        "says why: {}",
        no_token.body
    );
    let wrong = request(
        s.port,
        "GET",
        &format!("/?t={}", "0".repeat(32)),
        &host,
        &[],
        "",
    );
    assert_eq!(wrong.status, 403);
    let wrong_cookie = format!("Cookie: memctl_ui_{}=nope", s.port);
    assert_eq!(
        request(s.port, "GET", "/health", &host, &[&wrong_cookie], "").status,
        403
    );
    for path in ["/static/app.js", "/session?id=x", "/swap/download?id=abcd"] {
        assert_eq!(
            request(s.port, "GET", path, &host, &[], "").status,
            403,
            "{path}"
        );
    }

    let ok = s.get("/");
    assert_eq!(ok.status, 200, "{ok:?}");
    let head = ok.head.to_ascii_lowercase();
    assert!(
        head.contains(&format!("set-cookie: memctl_ui_{}=", s.port)),
        "{head}"
    );
    assert!(
        head.contains("httponly") && head.contains("samesite=strict"),
        "{head}"
    );
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("referrer-policy: no-referrer"), "{head}");
    // The cookie alone is enough afterwards.
    let cookie = format!("Cookie: memctl_ui_{}={}", s.port, s.token);
    assert_eq!(
        request(s.port, "GET", "/search", &host, &[&cookie], "").status,
        200
    );

    // DNS rebinding: the right token under another host name is refused.
    let path = format!("/?t={}", s.token);
    for bad in [
        format!("evil.example:{}", s.port),
        "127.0.0.1:1".into(),
        "".into(),
    ] {
        assert_eq!(
            request(s.port, "GET", &path, &bad, &[], "").status,
            403,
            "{bad}"
        );
    }
    assert_eq!(
        request(
            s.port,
            "GET",
            &path,
            &format!("localhost:{}", s.port),
            &[],
            ""
        )
        .status,
        200
    );

    // A form posted from another page has no token: refused, nothing forgotten.
    let post = request(
        s.port,
        "POST",
        "/forget",
        &host,
        &[],
        &format!("session={EVIL_SID}"),
    );
    assert_eq!(post.status, 403);
    assert!(cli(&f.home, &["sessions", "--json"]).contains(EVIL_SID));
}

#[test]
fn transcript_markup_is_shown_as_text_never_as_markup() {
    let f = fixture();
    let s = &f.server;
    let index = s.get("/");
    assert_eq!(index.status, 200);
    assert!(index.body.contains(&EVIL_SID[..8]), "both sessions listed");
    assert!(index.body.contains("db5b5fab"), "both sessions listed");
    for page in [
        s.get(&format!("/session?id={EVIL_SID}")),
        s.get(&format!("/search?q={EVIL_WORD}&mode=lexical")),
        s.get("/"),
    ] {
        assert_eq!(page.status, 200, "{page:?}");
        assert!(!page.body.contains("<script>document"), "{}", page.body);
        assert!(!page.body.contains("<img src=x"), "{}", page.body);
        assert!(!page.body.contains("<b>bold?</b>"), "{}", page.body);
    }
    let session = s.get(&format!("/session?id={EVIL_SID}"));
    assert!(
        session.body.contains("&lt;script&gt;document.title"),
        "escaped, shown"
    );
    assert!(session.body.contains("id=\"t0\""), "turn anchors");
}

#[test]
fn search_shows_why_hits_matched_and_links_to_the_turn() {
    let f = fixture();
    let s = &f.server;
    let page = s.get(&format!("/search?q={EVIL_WORD}+caching"));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains(&format!("<mark>{EVIL_WORD}</mark>")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("matched words: zanzibarquux, caching"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("dense cosine 0."),
        "dense score shown: {}",
        page.body
    );
    assert!(
        page.body
            .contains(&format!("/session?id={EVIL_SID}&amp;from=0#t0")),
        "{}",
        page.body
    );
    // The CLI's filters, with the CLI's errors.
    let bad = s.get(&format!("/search?q={EVIL_WORD}&since=not-a-time"));
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(bad.body.contains("since"), "{}", bad.body);
    let none = s.get(&format!("/search?q={EVIL_WORD}&session=db5b5fab"));
    assert_eq!(none.status, 200);
    assert!(
        !none.body.contains("<mark>"),
        "filtered to the other session"
    );
}

#[test]
fn bad_input_gets_a_clear_error_page_and_the_server_keeps_answering() {
    let f = fixture();
    let s = &f.server;
    let cases: Vec<(String, u16)> = vec![
        ("/session?id=no-such-session".into(), 404),
        ("/session".into(), 400),
        ("/session?id=x&from=-1".into(), 400),
        ("/swap/view?id=deadbeef".into(), 404),
        ("/swap/view?id=../../etc/passwd".into(), 400),
        ("/swap/download?id=%2Fetc%2Fpasswd".into(), 400),
        ("/forget?chunk=987654321".into(), 404),
        ("/forget?session=zzzz".into(), 404),
        ("/forget".into(), 400),
        ("/forget?chunk=1&session=x".into(), 400),
        ("/no/such/page".into(), 404),
        (format!("/search?q={}", "a".repeat(5000)), 413),
        (format!("/memory?project={}", enc("/no/such/project")), 404),
        (
            format!(
                "/memory/edit?project={}&file=..%2F..%2F.bashrc",
                enc(&f.proj)
            ),
            400,
        ),
        ("/search?q=x&mode=psychic".into(), 400),
    ];
    for (path, want) in &cases {
        let a = s.get(path);
        assert_eq!(a.status, *want, "{path}: {}", a.body);
        assert!(
            a.body.contains("<h1>"),
            "{path}: an error page, not a bare status"
        );
    }
    // A 1 MB query in the URL: refused by the HTTP layer, and the server lives on.
    let huge = s.get(&format!("/search?q={}", "b".repeat(1 << 20)));
    assert!((400..500).contains(&huge.status), "{}", huge.status);
    assert_eq!(s.get("/").status, 200);

    let too_big = s.post(
        "/memory/edit",
        &format!(
            "project={}&file=decisions.md&text={}",
            enc(&f.proj),
            "x".repeat(300_000)
        ),
    );
    assert_eq!(too_big.status, 413, "{}", too_big.body);
    let traversal = s.post(
        "/memory/edit",
        &format!("project={}&file=..%2Fevil.md&text=x", enc(&f.proj)),
    );
    assert_eq!(traversal.status, 400);
    assert!(
        !std::path::Path::new(&f.proj)
            .join(".memctl/evil.md")
            .exists()
    );
    assert_eq!(
        s.post("/pin", "chunk=987654321&pinned=1&back=/").status,
        404
    );
    assert_eq!(s.post("/pin", "chunk=abc&pinned=1").status, 400);
}

#[test]
fn pin_and_memory_files_go_through_the_engine_and_show_in_the_cli() {
    let f = fixture();
    let s = &f.server;
    let shown: serde_json::Value =
        serde_json::from_str(&cli(&f.home, &["show", EVIL_SID, "--json"])).expect("json");
    let id = shown["chunks"][0]["id"].as_u64().expect("a chunk id");
    let pin = s.post(
        "/pin",
        &format!("chunk={id}&pinned=1&back=%2Fsession%3Fid%3Dx"),
    );
    assert_eq!(pin.status, 303, "{pin:?}");
    assert!(pin.head.contains("location: /session?id=x"), "{}", pin.head);
    let rec: serde_json::Value =
        serde_json::from_str(&cli(&f.home, &["show", &id.to_string(), "--json"])).expect("json");
    assert_eq!(rec["pinned"], true);
    assert_eq!(
        s.post("/pin", &format!("chunk={id}&pinned=0&back=//evil"))
            .status,
        303
    );
    let rec: serde_json::Value =
        serde_json::from_str(&cli(&f.home, &["show", &id.to_string(), "--json"])).expect("json");
    assert_eq!(rec["pinned"], false);

    let p = enc(&f.proj);
    assert!(
        s.get(&format!("/memory?project={p}"))
            .body
            .contains("Create it")
    );
    assert_eq!(s.post("/memory/init", &format!("project={p}")).status, 303);
    let edit = s.get(&format!("/memory/edit?project={p}&file=decisions.md"));
    assert_eq!(edit.status, 200, "{}", edit.body);
    let saved = s.post(
        "/memory/edit",
        &format!(
            "project={p}&file=decisions.md&text={}",
            enc("# Decisions\n- use <b>redb</b>\n")
        ),
    );
    assert_eq!(saved.status, 303, "{}", saved.body);
    let path = std::path::Path::new(&f.proj).join(".memctl/memory/decisions.md");
    assert_eq!(
        std::fs::read_to_string(&path).expect("saved"),
        "# Decisions\n- use <b>redb</b>\n"
    );
    let shown = cli(&f.home, &["memory", "show", "--dir", &f.proj]);
    assert!(shown.contains("use <b>redb</b>"), "{shown}");
    let page = s.get(&format!("/memory?project={p}"));
    assert!(
        page.body.contains("use &lt;b&gt;redb&lt;/b&gt;"),
        "{}",
        page.body
    );
    let bad_json = s.post(
        "/memory/edit",
        &format!("project={p}&file=session-state.json&text=%7Bnot"),
    );
    assert_eq!(bad_json.status, 400);

    let health = s.get("/health");
    assert_eq!(health.status, 200);
    assert!(health.body.contains("id=\"doctor\"") && health.body.contains("chart-growth"));
}

#[test]
fn a_session_shows_what_each_hook_injected() {
    let f = fixture();
    let sid = "db5b5fab-8f4d-4e27-9da1-494c73cf256d";
    let t = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/fixtures/sample/{sid}.jsonl"));
    // A compaction as Claude Code runs it: PreCompact, then SessionStart(compact) restores.
    let base = |event: &str| {
        serde_json::json!({"session_id": sid, "transcript_path": t.display().to_string(),
            "cwd": "/home/dev/src/quill-notes", "hook_event_name": event})
    };
    let mut pre = base("PreCompact");
    pre["trigger"] = "auto".into();
    hook(&f.home, "PreCompact", &pre);
    let mut start = base("SessionStart");
    start["source"] = "compact".into();
    assert!(hook(&f.home, "SessionStart", &start).contains("additionalContext"));

    let page = f.server.get(&format!("/session?id={sid}"));
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("What hooks injected (2"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<strong>SessionStart</strong>"),
        "shown between turns"
    );
    assert!(page.body.contains("injected ~"), "{}", page.body);
    assert!(page.body.contains("gave the summariser ~"), "{}", page.body);
    let health = f.server.get("/health");
    assert!(health.body.contains("chart-injected"), "{}", health.body);
    assert!(
        !health.body.contains("No data yet."),
        "both charts have data"
    );
}
