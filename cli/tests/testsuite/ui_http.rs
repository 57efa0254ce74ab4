//! `memctl ui` at the HTTP level: the real binary on a real store (sample + hostile session),
//! requests over a TCP socket. The token and `Host` gate, escaping of transcript markup, bad
//! input (unknown ids → 404 pages, huge queries → 413, paths in ids and file names → 400), and
//! the fixes (pin, memory files) checked with the CLI.

use crate::common::ui;

use ui::{COPIES_SID, COPY_WORD, EVIL_SID, EVIL_WORD, Server, build_store, cli, hook, request};

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
    let home = format!("{}/", s.base);
    let no_token = request(s.port, "GET", &home, &host, &[], "");
    assert_eq!(no_token.status, 403, "{no_token:?}");
    assert!(
        no_token.body.contains("token"),
        "says why: {}",
        no_token.body
    );
    let wrong = request(
        s.port,
        "GET",
        &format!("{home}?t={}", "0".repeat(32)),
        &host,
        &[],
        "",
    );
    assert_eq!(wrong.status, 403);
    let health = format!("{}/health", s.base);
    // Neither a wrong value nor the printed token is the session cookie.
    for value in ["nope", &s.token] {
        let wrong_cookie = format!("Cookie: memctl_ui_{}={value}", s.port);
        assert_eq!(
            request(s.port, "GET", &health, &host, &[&wrong_cookie], "").status,
            403
        );
    }
    for path in ["/static/app.js", "/session?id=x", "/swap/download?id=abcd"] {
        let path = format!("{}{path}", s.base);
        assert_eq!(
            request(s.port, "GET", &path, &host, &[], "").status,
            403,
            "{path}"
        );
    }
    // Outside the prefix nothing is served, even with the token.
    let outside = request(s.port, "GET", &format!("/?t={}", s.token), &host, &[], "");
    assert_eq!(outside.status, 404, "{outside:?}");

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
    // The cookie: scoped to the viewer's random prefix (so other local servers, which share
    // the site, are never sent it), its value not the printed token.
    let attrs: Vec<&str> = s.set_cookie.split(';').map(str::trim).collect();
    assert_eq!(
        attrs[1..],
        [
            format!("Path={}", s.base).as_str(),
            "HttpOnly",
            "SameSite=Strict"
        ],
        "{}",
        s.set_cookie
    );
    assert!(s.base.len() == 33 && s.base[1..].bytes().all(|b| b.is_ascii_hexdigit()));
    let value = s.cookie.split_once('=').expect("name=value").1;
    assert!(value.len() == 32 && value != s.token, "{}", s.cookie);
    assert!(
        !s.url.contains(value),
        "the cookie is not in the printed URL"
    );
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("referrer-policy: same-origin"), "{head}");
    // The cookie alone is enough afterwards.
    let cookie = format!("Cookie: {}", s.cookie);
    let search = format!("{}/search", s.base);
    assert_eq!(
        request(s.port, "GET", &search, &host, &[&cookie], "").status,
        200
    );

    // DNS rebinding: the right token under another host name is refused.
    let path = format!("{home}?t={}", s.token);
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
        &format!("{}/forget", s.base),
        &host,
        &[],
        &format!("session={EVIL_SID}&csrf={}", s.csrf),
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
        page.body.contains("confidence 1.00 · score ") || page.body.contains("confidence 0."),
        "the absolute confidence leads the scores: {}",
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
fn search_folds_copies_into_one_hit_with_the_count_dates_and_links() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = build_store(dir.path());
    ui::add_copies(&home, dir.path());
    let s = Server::start(&home);
    let page = s.get(&format!("/search?q={COPY_WORD}&mode=lexical"));
    assert_eq!(page.status, 200, "{page:?}");
    let body = &page.body;
    assert_eq!(
        body.matches("<div class=\"hit\">").count(),
        1,
        "one hit: {body}"
    );
    assert!(
        body.contains(
            "<span class=\"badge fold\">×3</span> first 2026-11-20 09:00 · last 2026-11-22 09:00"
        ),
        "the count and the dates: {body}"
    );
    assert_eq!(
        body.matches("<li class=\"copy\">").count(),
        2,
        "the two copies listed"
    );
    for turn in ["#t0", "#t1", "#t2"] {
        assert!(
            body.contains(&format!("/session?id={COPIES_SID}&amp;from=0{turn}")),
            "every run linked ({turn}): {body}"
        );
    }
    assert!(
        !body.contains("<script>document") && !body.contains("<i>again"),
        "{body}"
    );
    assert!(
        body.contains("&lt;i&gt;again"),
        "copies' text escaped: {body}"
    );
    // `list each`: every run its own hit, no count.
    let each = s.get(&format!("/search?q={COPY_WORD}&mode=lexical&fold=no"));
    assert_eq!(each.status, 200);
    assert_eq!(
        each.body.matches("<div class=\"hit\">").count(),
        3,
        "{}",
        each.body
    );
    assert!(!each.body.contains("badge fold"));
    assert!(
        each.body
            .contains("<option value=\"no\" selected>list each</option>")
    );
    assert_eq!(
        s.get(&format!("/search?q={COPY_WORD}&fold=maybe")).status,
        400
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
    let back = format!("{}/session?id=x", s.base);
    let pin = s.post("/pin", &format!("chunk={id}&pinned=1&back={}", enc(&back)));
    assert_eq!(pin.status, 303, "{pin:?}");
    assert!(
        pin.head.contains(&format!("location: {back}")),
        "{}",
        pin.head
    );
    let rec: serde_json::Value =
        serde_json::from_str(&cli(&f.home, &["show", &id.to_string(), "--json"])).expect("json");
    assert_eq!(rec["pinned"], true);
    let unpin = s.post("/pin", &format!("chunk={id}&pinned=0&back=//evil"));
    assert_eq!(unpin.status, 303);
    let home = format!("location: {}/", s.base);
    assert!(unpin.head.lines().any(|l| l == home), "{}", unpin.head);
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
    let t = memctl_test_support::sample_transcript();
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

/// A page on another local port shares the site (the cookie goes with its requests): a
/// change must carry this viewer's `Origin`, same-origin fetch metadata and the form token.
#[test]
fn changes_need_this_pages_origin_and_its_form_token() {
    let f = fixture();
    let s = &f.server;
    let p = enc(&f.proj);
    assert_eq!(s.post("/memory/init", &format!("project={p}")).status, 303);
    let decisions = std::path::Path::new(&f.proj).join(".memctl/memory/decisions.md");
    let before = std::fs::read_to_string(&decisions).expect("template");
    let csrf = format!("csrf={}", s.csrf);
    let changes = [
        ("/forget", format!("session={EVIL_SID}&{csrf}")),
        ("/pin", format!("chunk=1&pinned=1&{csrf}")),
        (
            "/memory/edit",
            format!("project={p}&file=decisions.md&text=pwned&{csrf}"),
        ),
        ("/memory/init", format!("project={p}&{csrf}")),
    ];
    let foreign: [&[&str]; 6] = [
        &["Origin: http://evil.example"],
        &["Origin: http://127.0.0.1:1", "Sec-Fetch-Site: same-site"],
        &["Origin: http://localhost:1"],
        &["Origin: null"],
        &["Sec-Fetch-Site: cross-site"],
        &["Sec-Fetch-Site: same-site"],
    ];
    for (path, form) in &changes {
        for headers in foreign {
            let a = s.post_raw(path, form, headers);
            assert_eq!(a.status, 403, "{path} {headers:?}: {a:?}");
            assert!(a.body.contains("another page"), "{path}: {}", a.body);
        }
    }
    // The right origin without the form token, or with a wrong one.
    let origin = s.origin();
    let same = [origin.as_str(), "Sec-Fetch-Site: same-origin"];
    for form in [
        format!("session={EVIL_SID}"),
        format!("session={EVIL_SID}&csrf="),
        format!("session={EVIL_SID}&csrf={}", "0".repeat(32)),
        format!("session={EVIL_SID}&csrf={}", s.token),
    ] {
        let a = s.post_raw("/forget", &form, &same);
        assert_eq!(a.status, 403, "{form}: {a:?}");
        assert!(a.body.contains("form token"), "{}", a.body);
    }
    // The form token in the query does not count: only the posted form.
    let in_query = s.post_raw(
        &format!("/forget?{csrf}"),
        &format!("session={EVIL_SID}"),
        &same,
    );
    assert_eq!(in_query.status, 403);
    // Nothing changed.
    assert!(cli(&f.home, &["sessions", "--json"]).contains(EVIL_SID));
    assert_eq!(std::fs::read_to_string(&decisions).expect("kept"), before);

    // A client that is not a browser (no Origin, no fetch metadata) with the session and the
    // form token may post; so may the page itself.
    let cli_client = s.post_raw(
        "/memory/edit",
        &format!("project={p}&file=decisions.md&text=from+a+script&{csrf}"),
        &[],
    );
    assert_eq!(cli_client.status, 303, "{cli_client:?}");
    assert_eq!(
        std::fs::read_to_string(&decisions).expect("saved"),
        "from a script"
    );
    let forgotten = s.post("/forget", &format!("session={EVIL_SID}"));
    assert_eq!(forgotten.status, 200, "{forgotten:?}");
    assert!(forgotten.body.contains("id=\"forgotten\""));
    assert!(!cli(&f.home, &["sessions", "--json"]).contains(EVIL_SID));
}

/// Another local page may link to the viewer (a navigation) but not load it as a
/// subresource (`<img>`, `<script>`, `fetch`).
#[test]
fn other_pages_cannot_load_the_viewer_as_a_subresource() {
    let f = fixture();
    let s = &f.server;
    let cookie = format!("Cookie: {}", s.cookie);
    let js = format!("{}/static/app.js", s.base);
    let host = s.host();
    let load = |site: &str, mode: &str| {
        let (site, mode) = (
            format!("Sec-Fetch-Site: {site}"),
            format!("Sec-Fetch-Mode: {mode}"),
        );
        request(s.port, "GET", &js, &host, &[&cookie, &site, &mode], "").status
    };
    assert_eq!(load("same-site", "no-cors"), 403);
    assert_eq!(load("cross-site", "cors"), 403);
    assert_eq!(load("same-origin", "no-cors"), 200);
    assert_eq!(load("same-site", "navigate"), 200);
    assert_eq!(load("none", "navigate"), 200);
}

/// Read until the server closes the connection; `Err` when it is still open after `wait`.
fn closed_within(c: &mut std::net::TcpStream, wait: std::time::Duration) -> Result<(), String> {
    use std::io::Read;
    c.set_read_timeout(Some(wait)).expect("timeout");
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(()),
            Err(e) => return Err(format!("still open after {wait:?}: {e}")),
        }
    }
}

/// Half-sent requests and idle kept-alive connections are closed after the read timeout;
/// past the connection cap further connections wait for a slot (a normal request is
/// answered once the idle ones are closed), and a body that never arrives gets a 408.
#[test]
fn idle_connections_are_closed_and_capped() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().expect("tempdir");
    let home = build_store(dir.path());
    let timeout = Duration::from_millis(1500);
    let s = Server::start_with(
        &home,
        &["--read-timeout-ms", "1500", "--max-connections", "4"],
    );
    let connect = || std::net::TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    let t0 = Instant::now();
    // Twelve half-sent heads: three times the cap.
    let mut idle: Vec<_> = (0..12)
        .map(|_| {
            let mut c = connect();
            let head = format!("GET {}/ HTTP/1.1\r\nHost: {}\r\n", s.base, s.host());
            c.write_all(head.as_bytes()).expect("half a head");
            c
        })
        .collect();
    // A normal request behind them waits for a slot, then is answered.
    let ok = s.get("/health");
    let waited = t0.elapsed();
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(
        waited >= timeout,
        "answered after {waited:?}: the cap of 4 did not hold it back"
    );
    for (i, c) in idle.iter_mut().enumerate() {
        closed_within(c, Duration::from_secs(30)).unwrap_or_else(|e| panic!("half-sent #{i}: {e}"));
    }

    // A kept-alive connection that asked once and then idles is closed too.
    let mut kept = connect();
    let head = format!(
        "HEAD {}/?t={} HTTP/1.1\r\nHost: {}\r\n\r\n",
        s.base,
        s.token,
        s.host()
    );
    kept.write_all(head.as_bytes()).expect("a request");
    closed_within(&mut kept, Duration::from_secs(30)).expect("idle keep-alive");

    // A body that never arrives: 408, and the server answers on.
    let mut slow = connect();
    let head = format!(
        "POST {}/forget HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\n{}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nsession=",
        s.base,
        s.host(),
        s.cookie,
        s.origin()
    );
    slow.write_all(head.as_bytes()).expect("half a post");
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut slow, &mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(s.get("/").status, 200);
}
