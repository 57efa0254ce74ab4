//! Team memory against a real PostgreSQL 18 + pgvector (scripts/pg.sh starts it from the pinned
//! wheel; scripts/test.sh exports `MEMCTL_TEST_PG_URL`, a superuser connection). Each test
//! works in its own database, with its own member roles, through the real `memctl` binary;
//! RLS is checked with direct SQL as the member.

use crate::common;

use common::{PROJECT, SID, fixture, hook, memctl};
use memctl_test_support::copy_dir;
use postgres::{Client, NoTls};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The superuser URL of the test server, or a failure that says how to get one.
pub(crate) fn admin_url() -> String {
    std::env::var("MEMCTL_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "MEMCTL_TEST_PG_URL is not set: these tests need the real PostgreSQL + pgvector that \
             scripts/test.sh starts. By hand: R=$(bash scripts/pg.sh start); \
             MEMCTL_TEST_PG_URL=$(cat $R/url) cargo test --workspace --test testsuite -- team::; \
             bash scripts/pg.sh stop $R"
        )
    })
}

/// `host:port` of the test server.
fn host_port() -> String {
    let url = admin_url();
    let after_at = url.rsplit_once('@').expect("user@ in the URL").1;
    after_at.split('/').next().expect("host").to_string()
}

/// A fresh database for one test; returns its superuser URL.
pub(crate) fn fresh_db(name: &str) -> String {
    let mut c = Client::connect(&admin_url(), NoTls).expect("connect as the test superuser");
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .expect("drop db");
    c.batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create db");
    let url = admin_url();
    let base = url.rsplit_once('/').expect("a /db in the URL").0;
    format!("{base}/{name}")
}

/// A member's URL (password = name + "-pw").
pub(crate) fn member_url(db: &str, name: &str) -> String {
    format!("postgresql://{name}:{name}-pw@{}/{db}", host_port())
}

pub(crate) fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn as_url(home: &Path, url: &str, args: &[&str]) -> Output {
    memctl(home, args, b"", &[("MEMCTL_TEAM_URL", url)])
}

/// Init the schema in `db` and create `members` (their passwords: name + "-pw").
pub(crate) fn setup_team(dir: &Path, db: &str, members: &[&str]) -> String {
    let admin = fresh_db(db);
    let home = dir.join("admin");
    ok(&as_url(&home, &admin, &["team", "init"]), "team init");
    // Idempotent.
    let again = ok(&as_url(&home, &admin, &["team", "init"]), "team init again");
    assert!(again.contains("up to date"), "{again}");
    for m in members {
        let pw = dir.join(format!("{m}.pw"));
        std::fs::write(&pw, format!("{m}-pw\n")).unwrap();
        ok(
            &as_url(
                &home,
                &admin,
                &[
                    "team",
                    "add-member",
                    m,
                    "--password-file",
                    pw.to_str().unwrap(),
                ],
            ),
            "add-member",
        );
    }
    admin
}

/// A data dir holding the sample transcript (50 chunks, real model vectors) and a second,
/// small project that is never shared; built once per test binary and copied per use.
fn template() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        // Under target/tmp (cargo's scratch dir for tests), replaced by the next run.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memctl-team-template");
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("removing the previous template {}: {e}", dir.display()),
        }
        std::fs::create_dir_all(&dir).unwrap();
        let home = dir.join("home");
        ok(
            &memctl(&home, &["ingest", fixture().to_str().unwrap()], b"", &[]),
            "ingest the sample",
        );
        // The secret project: the first turns of the sample, another session and cwd, and
        // prompts changed so that their chunks are not duplicates of the sample's.
        let text = std::fs::read_to_string(fixture()).unwrap();
        let secret: String = text
            .lines()
            .take(60)
            .map(|l| {
                l.replace(PROJECT, "/home/dev/src/secret-project")
                    .replace(SID, "5ec12e75-0000-4000-8000-000000000001")
                    .replace(r#""content":""#, r#""content":"zebracorn "#)
                    + "\n"
            })
            .collect();
        let t = dir.join("5ec12e75-0000-4000-8000-000000000001.jsonl");
        std::fs::write(&t, secret).unwrap();
        ok(
            &memctl(&home, &["ingest", t.to_str().unwrap()], b"", &[]),
            "ingest the secret project",
        );
        home
    })
}

/// A copy of the template data dir.
fn data_dir(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    copy_dir(template(), &to);
    to
}

/// Local chunks of the sample project (what a full sync of it must leave on the server).
fn local_chunks(home: &Path, project: &str) -> usize {
    let out = ok(
        &memctl(
            home,
            &["export", "--out", "-", "--project", project],
            b"",
            &[],
        ),
        "export",
    );
    out.lines()
        .filter(|l| l.contains(r#""kind":"chunk""#))
        .count()
}

pub(crate) fn count(c: &mut Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).expect(sql).get(0)
}

#[test]
fn round_trip_resync_and_rls() {
    let dir = tempfile::tempdir().unwrap();
    let admin = setup_team(dir.path(), "team_rt", &["alice_rt", "bob_rt", "carol_rt"]);
    let (alice, bob, carol) = (
        member_url("team_rt", "alice_rt"),
        member_url("team_rt", "bob_rt"),
        member_url("team_rt", "carol_rt"),
    );
    let a_home = data_dir(dir.path(), "alice");
    let b_home = dir.path().join("bob");
    let want = local_chunks(&a_home, PROJECT);
    assert!(want >= 40, "the sample has {want} chunks");

    // Nothing is shared yet: a sync pushes nothing.
    let out = ok(&as_url(&a_home, &alice, &["sync", "--json"]), "sync");
    assert!(out.contains(r#""sent":0"#), "{out}");

    // Alice shares the sample project with Carol only.
    ok(
        &as_url(
            &a_home,
            &alice,
            &["team", "share", PROJECT, "--with", "carol_rt"],
        ),
        "share",
    );
    let out = ok(&as_url(&a_home, &alice, &["sync", "--json"]), "sync");
    assert!(out.contains(&format!(r#""inserted":{want}"#)), "{out}");
    // Idempotent and resumable: the cursor has moved past everything.
    let out = ok(&as_url(&a_home, &alice, &["sync", "--json"]), "re-sync");
    assert!(out.contains(r#""sent":0"#), "{out}");
    let mut su = Client::connect(&admin, NoTls).unwrap();
    assert_eq!(
        count(&mut su, "SELECT count(*) FROM memctl.chunks"),
        want as i64
    );
    // The unshared project never left the machine.
    assert_eq!(
        count(
            &mut su,
            "SELECT count(*) FROM memctl.chunks WHERE text LIKE '%zebracorn%'"
        ),
        0
    );

    // RLS, as Bob, with plain SQL: nothing of Alice's project (shared with Carol only).
    let mut b = Client::connect(&bob, NoTls).expect("bob connects");
    assert_eq!(count(&mut b, "SELECT count(*) FROM memctl.chunks"), 0);
    assert_eq!(count(&mut b, "SELECT count(*) FROM memctl.projects"), 0);
    // Bob can neither delete nor forge Alice's rows.
    assert_eq!(b.execute("DELETE FROM memctl.chunks", &[]).unwrap(), 0);
    let forged = b.execute(
        "INSERT INTO memctl.chunks (key, project_id, session_id, author, turn, part, text) \
         SELECT 'x', id, 's', 'alice_rt', 0, 0, 'forged' FROM memctl.projects",
        &[],
    );
    assert_eq!(forged.unwrap(), 0, "bob sees no project to insert into");
    let su_pid = su
        .query_one("SELECT id FROM memctl.projects", &[])
        .unwrap()
        .get::<_, i64>(0);
    let forged = b.execute(
        "INSERT INTO memctl.chunks (key, project_id, session_id, author, turn, part, text) \
         VALUES ('x', $1, 's', 'alice_rt', 0, 0, 'forged')",
        &[&su_pid],
    );
    let e = forged.unwrap_err();
    let msg = e.as_db_error().map(|d| d.message().to_string());
    assert!(
        msg.as_deref()
            .is_some_and(|m| m.contains("row-level security")),
        "RLS refuses a row in someone else's project: {e:?}"
    );
    let hits = ok(
        &as_url(
            &b_home,
            &bob,
            &["search", "--team", "scheduler tests slow on CI"],
        ),
        "bob's team search",
    );
    assert!(hits.contains("no team results"), "{hits}");

    // Carol reads it, and the hit says whose it is.
    let mut c = Client::connect(&carol, NoTls).expect("carol connects");
    assert_eq!(
        count(&mut c, "SELECT count(*) FROM memctl.chunks"),
        want as i64
    );
    let hits = ok(
        &as_url(
            &dir.path().join("carol"),
            &carol,
            &[
                "search",
                "--team",
                "pytest scheduler 88 seconds on CI",
                "--json",
            ],
        ),
        "carol's team search",
    );
    let v: serde_json::Value = serde_json::from_str(hits.trim()).unwrap();
    let first = &v["results"][0];
    assert_eq!(first["author"], "alice_rt", "{hits}");
    assert_eq!(first["project"], PROJECT);
    assert_eq!(first["session"], SID);
    assert!(
        first["dense_rank"].is_number() && first["lexical_rank"].is_number(),
        "both lists found it: {first}"
    );

    // The MCP search tool's team scope, as Carol.
    let hit = mcp_team_search(
        &dir.path().join("carol"),
        &carol,
        "pytest scheduler 88 seconds",
    );
    assert_eq!(hit["teammate"], "alice_rt", "{hit}");
    assert_eq!(hit["project"], PROJECT, "{hit}");
    assert_eq!(hit["session"], &SID[..8], "{hit}");

    // Shared with the whole team: Bob reads it now; unshared: nobody, and the rows are gone.
    ok(
        &as_url(&a_home, &alice, &["team", "share", PROJECT]),
        "share all",
    );
    assert_eq!(
        count(&mut b, "SELECT count(*) FROM memctl.chunks"),
        want as i64
    );
    ok(
        &as_url(&a_home, &alice, &["team", "unshare", PROJECT]),
        "unshare",
    );
    assert_eq!(count(&mut b, "SELECT count(*) FROM memctl.chunks"), 0);
    assert_eq!(count(&mut su, "SELECT count(*) FROM memctl.chunks"), 0);
    // Re-shared: the cursor starts over (a new project id), everything goes again.
    ok(
        &as_url(&a_home, &alice, &["team", "share", PROJECT]),
        "re-share",
    );
    let out = ok(&as_url(&a_home, &alice, &["sync", "--json"]), "sync");
    assert!(out.contains(&format!(r#""inserted":{want}"#)), "{out}");

    // Forgetting locally removes the synced copy too.
    let before = count(&mut su, "SELECT count(*) FROM memctl.chunks");
    let f = ok(
        &as_url(
            &a_home,
            &alice,
            &["forget", "--session", SID, "--text", "88 seconds", "--yes"],
        ),
        "forget",
    );
    assert!(f.contains("turn"), "{f}");
    let after = count(&mut su, "SELECT count(*) FROM memctl.chunks");
    assert!(
        after < before,
        "forgotten rows deleted ({before} → {after})"
    );
    assert_eq!(
        count(
            &mut su,
            "SELECT count(*) FROM memctl.chunks WHERE text LIKE '%88 seconds%'"
        ),
        0
    );
    // Forgetting the whole session removes its session row (id, author, project) too: every
    // member the project is shared with could read it.
    let session_rows = format!("SELECT count(*) FROM memctl.sessions WHERE id = '{SID}'");
    assert_eq!(
        count(&mut su, &session_rows),
        1,
        "the session row was synced"
    );
    ok(
        &as_url(&a_home, &alice, &["forget", "--session", SID, "--yes"]),
        "forget the session",
    );
    assert_eq!(
        count(
            &mut su,
            &format!("SELECT count(*) FROM memctl.chunks WHERE session_id = '{SID}'")
        ),
        0
    );
    assert_eq!(count(&mut su, &session_rows), 0, "the session row is gone");
}

#[test]
fn eight_concurrent_syncs_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let admin = setup_team(dir.path(), "team_cc", &["alice_cc"]);
    let alice = member_url("team_cc", "alice_cc");
    // Four syncs share one data dir, four run from copies (other machines of the same member):
    // the same turns reach the server eight times over.
    let homes: Vec<PathBuf> = (0..5)
        .map(|i| data_dir(dir.path(), &format!("m{i}")))
        .collect();
    let want = local_chunks(&homes[0], PROJECT);
    ok(
        &as_url(&homes[0], &alice, &["team", "share", PROJECT]),
        "share",
    );
    let bin = env!("CARGO_BIN_EXE_memctl");
    let children: Vec<_> = (0..8)
        .map(|i| {
            let home = if i < 4 { &homes[0] } else { &homes[i - 3] };
            std::process::Command::new(bin)
                .args(["sync", "--json", "--no-embed"])
                .env("MEMCTL_HOME", home)
                .env("MEMCTL_TEAM_URL", &alice)
                .env("XDG_CONFIG_HOME", home.join("no-config"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn memctl sync")
        })
        .collect();
    let mut inserted = 0u64;
    for ch in children {
        let o = ch.wait_with_output().unwrap();
        let out = ok(&o, "concurrent sync");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        inserted += v["inserted"].as_u64().unwrap();
    }
    let mut su = Client::connect(&admin, NoTls).unwrap();
    assert_eq!(inserted, want as u64, "each row inserted exactly once");
    assert_eq!(
        count(&mut su, "SELECT count(*) FROM memctl.chunks"),
        want as i64
    );
    assert_eq!(
        count(&mut su, "SELECT count(DISTINCT key) FROM memctl.chunks"),
        want as i64
    );
    assert_eq!(
        count(
            &mut su,
            "SELECT count(*) FROM memctl.chunks WHERE embedding IS NULL"
        ),
        0
    );
    // Every data dir's cursor ended past everything: one more sync sends nothing.
    for h in &homes {
        let out = ok(&as_url(h, &alice, &["sync", "--json"]), "sync after");
        assert!(out.contains(r#""sent":0"#), "{out}");
    }
}

#[test]
fn server_down_leaves_hooks_alone_and_sync_catches_up_later() {
    let dir = tempfile::tempdir().unwrap();
    let _admin = setup_team(dir.path(), "team_down", &["alice_dn"]);
    let alice = member_url("team_down", "alice_dn");
    let home = data_dir(dir.path(), "alice");
    ok(&as_url(&home, &alice, &["team", "share", PROJECT]), "share");

    // The team store is unreachable: a port nothing listens on.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        format!("postgresql://alice_dn:alice_dn-pw@127.0.0.1:{port}/team_down")
    };
    // The credentials file is the configuration this time (0600).
    let url_file = home.join("team.url");
    std::fs::write(&url_file, format!("{dead}\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&url_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let o = memctl(&home, &["sync"], b"", &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1));
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&url_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // A hook: exits 0 with the same output as without a team store.
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).unwrap();
    let payload = format!(
        r#"{{"session_id":"{SID}","transcript_path":"{}","cwd":"{PROJECT}","hook_event_name":"UserPromptSubmit","prompt":"why is the scheduler slow"}}"#,
        t.display()
    );
    let with_team = hook(&home, "UserPromptSubmit", payload.as_bytes(), &[]);
    let plain_home = data_dir(dir.path(), "plain");
    let plain = hook(&plain_home, "UserPromptSubmit", payload.as_bytes(), &[]);
    assert_eq!(
        String::from_utf8_lossy(&with_team.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "the hook's output does not depend on the team store"
    );

    // A sync by hand says the server is unreachable (exit 1); nothing is lost.
    let o = memctl(&home, &["sync"], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("connecting to the team store"), "{err}");
    // A forget while it is down is queued.
    ok(
        &memctl(
            &home,
            &["forget", "--session", SID, "--text", "88 seconds", "--yes"],
            b"",
            &[],
        ),
        "forget while down",
    );
    // Back up: the next sync pushes everything and deletes nothing it should keep.
    std::fs::write(&url_file, format!("{alice}\n")).unwrap();
    let out = ok(
        &memctl(&home, &["sync", "--json"], b"", &[]),
        "sync when up",
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let want = local_chunks(&home, PROJECT) as u64;
    assert_eq!(v["inserted"].as_u64(), Some(want), "{out}");
    let mut a = Client::connect(&alice, NoTls).unwrap();
    assert_eq!(
        count(&mut a, "SELECT count(*) FROM memctl.chunks"),
        want as i64
    );
    assert_eq!(
        count(
            &mut a,
            "SELECT count(*) FROM memctl.chunks WHERE text LIKE '%88 seconds%'"
        ),
        0,
        "the turn forgotten while the server was down never reached it"
    );
}

/// `memctl mcp` as the member of `url`: initialize, then `search` with `scope: "team"`;
/// returns the first hit of the structured answer.
fn mcp_team_search(home: &Path, url: &str, query: &str) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memctl"))
        .arg("mcp")
        .env("MEMCTL_HOME", home)
        .env("MEMCTL_TEAM_URL", url)
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("spawn memctl mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let answer = |id: u64| -> serde_json::Value {
        loop {
            let line = rx
                .recv_timeout(std::time::Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("no answer to request {id} from memctl mcp: {e}"));
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
            if v["id"] == id {
                return v;
            }
        }
    };
    let mut send = |v: serde_json::Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "team-test", "version": "0"}}}),
    );
    answer(1);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": query, "scope": "team"}}}),
    );
    let a = answer(2);
    let _ = child.kill();
    let _ = child.wait();
    let r = &a["result"];
    assert_ne!(r["isError"], true, "search scope=team failed: {a}");
    r["structuredContent"]["hits"][0].clone()
}
