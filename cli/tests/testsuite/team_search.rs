//! Team search quality with bounded lexical candidates, row-level security of the lexical
//! function, and a version 1 store (before the function) searched and then migrated. Rows are
//! written directly as the superuser (thousands of them: more than the candidate cap), with no
//! vectors, so that the lexical list alone orders the results.

use super::team::{as_url, count, member_url, ok, setup_team};
use memctl_cli::team::search::LEXICAL_CAP;
use postgres::{Client, NoTls};
use std::path::Path;

/// Rows sharing the common words, per project: several times the cap.
fn filler() -> i32 {
    LEXICAL_CAP * 3
}

/// A project of `owner` named `name` holding `filler()` rows of common words, then `extra`
/// (last: the highest ids, the last ones a scan in physical order reaches).
fn seed(su: &mut Client, owner: &str, name: &str, extra: &[&str]) -> i64 {
    let id: i64 = su
        .query_one(
            "INSERT INTO memctl.projects (owner, name) VALUES ($1, $2) RETURNING id",
            &[&owner, &name],
        )
        .unwrap()
        .get(0);
    su.execute(
        "INSERT INTO memctl.chunks (key, project_id, session_id, author, turn, part, text) \
         SELECT $1 || '-' || i, $2, 's', $1, i, 0, \
                'the scheduler test is slow on ci again, retry the flaky worker ' || i \
         FROM generate_series(1, $3) i",
        &[&owner, &id, &filler()],
    )
    .unwrap();
    for (i, t) in extra.iter().enumerate() {
        su.execute(
            "INSERT INTO memctl.chunks (key, project_id, session_id, author, turn, part, text) \
             VALUES ($1 || '-x' || $4::integer, $2, 's', $1, 100000 + $4::integer, 0, $3)",
            &[&owner, &id, t, &(i as i32)],
        )
        .unwrap();
    }
    su.batch_execute("ANALYZE memctl.chunks").unwrap();
    id
}

/// `memctl search --team <query> --json` as the member of `url`: the results.
fn search(home: &Path, url: &str, query: &str) -> Vec<serde_json::Value> {
    let out = ok(
        &as_url(
            home,
            url,
            &["search", "--team", query, "--json", "-k", "10"],
        ),
        "team search",
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    v["results"].as_array().cloned().unwrap_or_default()
}

/// The first result's text, checking that the lexical list put it first.
fn first_text(hits: &[serde_json::Value]) -> String {
    let first = hits.first().expect("a result");
    assert_eq!(first["lexical_rank"], 1, "{first}");
    first["text"].as_str().unwrap().to_string()
}

const WITH_EVERY_WORD: &str =
    "the scheduler test is slow on ci: panic ERRSCHED4711 in the flaky worker";
const WITH_ONE_WORD: &str = "ERRSCHED4712 raised while starting";
const BOBS: &str = "the scheduler is slow on ci: ERRSCHED4711 ERRSCHED4712 bob's secret";

#[test]
fn an_exact_identifier_ranks_first_among_many_rows_of_common_words() {
    let dir = tempfile::tempdir().unwrap();
    let admin = setup_team(dir.path(), "team_bq", &["alice_bq", "bob_bq"]);
    let (alice, bob) = (
        member_url("team_bq", "alice_bq"),
        member_url("team_bq", "bob_bq"),
    );
    let mut su = Client::connect(&admin, NoTls).unwrap();
    let a_project = seed(
        &mut su,
        "alice_bq",
        "/src/app",
        &[WITH_EVERY_WORD, WITH_ONE_WORD],
    );
    // Bob's project, not shared: it holds both identifiers too.
    seed(&mut su, "bob_bq", "/src/bob", &[BOBS]);
    let home = dir.path().join("alice");

    // The identifier's row holds every word: the first tier, ranked first.
    let hits = search(&home, &alice, "scheduler slow ci ERRSCHED4711");
    assert_eq!(first_text(&hits), WITH_EVERY_WORD);
    // It holds none of the common words: every row of the rare word is a candidate, and the
    // rare word outweighs all the common ones.
    let hits = search(&home, &alice, "slow ci flaky scheduler ERRSCHED4712");
    assert_eq!(first_text(&hits), WITH_ONE_WORD);
    assert!(
        hits.iter().all(|h| h["author"] == "alice_bq"),
        "nothing of Bob's"
    );
    // Common words alone still fill the list, with rows holding every word.
    let hits = search(&home, &alice, "flaky worker retry");
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| {
        h["text"]
            .as_str()
            .unwrap()
            .contains("retry the flaky worker")
    }));

    // The function, called by hand (the first tier only), returns only the caller's readable
    // rows.
    let lexical = "SELECT count(*) FROM memctl.lexical(to_tsquery('english', 'errsched4711'), \
                   ARRAY['errsched4711', 'errsched4712'], NULL, 100, 0)";
    let mut a = Client::connect(&alice, NoTls).unwrap();
    assert_eq!(
        count(&mut a, lexical),
        1,
        "alice: her one row of every word"
    );
    let mut b = Client::connect(&bob, NoTls).unwrap();
    assert_eq!(count(&mut b, lexical), 1, "bob: his one row");
    // Bob names Alice's project as the scope: still nothing of hers.
    let scoped = format!(
        "SELECT count(*) FROM memctl.lexical(to_tsquery('english', 'slow'), ARRAY['slow'], \
         ARRAY[{a_project}]::bigint[], 100, 40)"
    );
    assert_eq!(count(&mut b, &scoped), 0);
    // Shared with Bob: now he reads her rows through it.
    su.execute(
        "INSERT INTO memctl.shares (project_id, member) VALUES ($1, 'bob_bq')",
        &[&a_project],
    )
    .unwrap();
    assert_eq!(count(&mut b, lexical), 2);
    assert_eq!(count(&mut b, &scoped), 100);
    // Nobody logs in as, or is granted, the function's owner.
    let e = Client::connect(&member_url("team_bq", "memctl_search"), NoTls);
    assert!(e.is_err());
    assert!(b.batch_execute("SET ROLE memctl_search").is_err());
}

#[test]
fn a_version_1_store_is_searched_then_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let admin = setup_team(dir.path(), "team_v1", &["alice_v1"]);
    let alice = member_url("team_v1", "alice_v1");
    let mut su = Client::connect(&admin, NoTls).unwrap();
    seed(&mut su, "alice_v1", "/src/app", &[WITH_EVERY_WORD]);
    // Back to version 1: what a store initialised by an earlier memctl holds.
    su.batch_execute(
        "DROP FUNCTION memctl.lexical(tsquery, text[], bigint[], integer, integer);
         DROP POLICY search ON memctl.chunks;
         DELETE FROM memctl.schema_version WHERE version > 1;",
    )
    .unwrap();
    let home = dir.path().join("alice");
    let query = "scheduler slow ci ERRSCHED4711";
    assert_eq!(first_text(&search(&home, &alice, query)), WITH_EVERY_WORD);
    let out = ok(
        &as_url(&dir.path().join("admin"), &admin, &["team", "init"]),
        "migrate",
    );
    assert!(out.contains("version 1 → 2"), "{out}");
    assert_eq!(first_text(&search(&home, &alice, query)), WITH_EVERY_WORD);
    assert_eq!(
        count(
            &mut su,
            "SELECT max(version)::bigint FROM memctl.schema_version"
        ) as i32,
        memctl_cli::team::schema::VERSION
    );
}
