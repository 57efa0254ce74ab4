//! TLS to the team store against a real PostgreSQL with `ssl=on` (`scripts/pg.sh start-tls`:
//! the distribution's server, built with OpenSSL, and a throw-away CA). scripts/test.sh
//! exports `MEMCTL_TEST_PG_TLS_URL` (its superuser) and `MEMCTL_TEST_PG_TLS_DIR` (`ca.crt`
//! signed the server's certificate, `other-ca.crt` did not). Connections go through
//! memctl's own `team::connect`, the one `memctl sync` and `search --team` use.

use memctl_engine::Settings;
use std::path::PathBuf;

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: these tests need the TLS PostgreSQL that scripts/test.sh starts. \
             By hand: R=$(bash scripts/pg.sh start-tls); MEMCTL_TEST_PG_TLS_URL=$(cat $R/url) \
             MEMCTL_TEST_PG_TLS_DIR=$R/tls cargo test --workspace --test testsuite -- team_tls::; \
             bash scripts/pg.sh stop $R"
        )
    })
}

fn ca(name: &str) -> PathBuf {
    let f = PathBuf::from(var("MEMCTL_TEST_PG_TLS_DIR")).join(name);
    assert!(f.is_file(), "{} is missing", f.display());
    f
}

/// The superuser URL with extra query options.
fn url(options: &str) -> String {
    format!("{}?{options}", var("MEMCTL_TEST_PG_TLS_URL"))
}

fn settings(url: String, ca_file: Option<PathBuf>) -> Settings {
    let mut s = Settings::default();
    s.team.url = Some(url);
    s.team.ca_file = ca_file;
    s
}

/// Connect as memctl does; Ok(whether the session is encrypted) or the error's full chain.
fn connect(s: &Settings) -> Result<bool, String> {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = memctl_cli::team::connect(s, dir.path()).map_err(|e| format!("{e:#}"))?;
    let row = c
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .expect("pg_stat_ssl");
    Ok(row.get(0))
}

#[test]
fn verify_full_with_the_private_ca_connects_encrypted() {
    let s = settings(url("sslmode=verify-full"), Some(ca("ca.crt")));
    assert_eq!(connect(&s), Ok(true));
    // The CA as libpq's sslrootcert in the connection string (percent-encoded) works too.
    let path = ca("ca.crt").display().to_string().replace('/', "%2F");
    let s = settings(
        url(&format!("sslmode=verify-full&sslrootcert={path}")),
        None,
    );
    assert_eq!(connect(&s), Ok(true));
    // verify-ca and require with the CA file: encrypted as well.
    for mode in ["verify-ca", "require", "prefer"] {
        let s = settings(url(&format!("sslmode={mode}")), Some(ca("ca.crt")));
        assert_eq!(connect(&s), Ok(true), "sslmode={mode}");
    }
    // Plain when asked for plain.
    let s = settings(url("sslmode=disable"), None);
    assert_eq!(connect(&s), Ok(false));
}

#[test]
fn require_encrypts_and_a_tls_only_role_is_refused_in_plain() {
    let admin = settings(url("sslmode=require"), None);
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = memctl_cli::team::connect(&admin, dir.path()).expect("admin connects");
    c.batch_execute(
        "DROP ROLE IF EXISTS memctl_tls_only; \
         CREATE ROLE memctl_tls_only LOGIN PASSWORD 'tls-pw'",
    )
    .expect("create the TLS-only role");
    let base = var("MEMCTL_TEST_PG_TLS_URL");
    let host = base.rsplit_once('@').expect("user@host").1;
    let member = |opts: &str| {
        settings(
            format!("postgresql://memctl_tls_only:tls-pw@{host}?{opts}"),
            None,
        )
    };
    // pg_hba rejects this role without TLS: `require` (encrypt, no CA) gets in encrypted.
    assert_eq!(connect(&member("sslmode=require")), Ok(true));
    let e = connect(&member("sslmode=disable")).unwrap_err();
    assert!(e.contains("no encryption"), "{e}");
}

#[test]
fn a_certificate_not_signed_by_the_configured_ca_is_refused() {
    let other = ca("other-ca.crt");
    for mode in ["verify-full", "verify-ca", "require"] {
        let s = settings(url(&format!("sslmode={mode}")), Some(other.clone()));
        let e = connect(&s).unwrap_err();
        assert!(
            e.contains("the team server's TLS certificate is not trusted")
                && e.contains(&format!("sslmode={mode}"))
                && e.contains("other-ca.crt")
                && e.contains("UnknownIssuer"),
            "sslmode={mode}: {e}"
        );
    }
    // verify-full with no CA file checks against Mozilla's roots: a private CA is not one.
    let e = connect(&settings(url("sslmode=verify-full"), None)).unwrap_err();
    assert!(e.contains("not trusted"), "{e}");
    // A CA file that is not one: a clear error before any connection.
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("ca.pem");
    std::fs::write(&bogus, "hello\n").unwrap();
    let e = connect(&settings(url("sslmode=verify-full"), Some(bogus))).unwrap_err();
    assert!(e.contains("holds no certificate"), "{e}");
}

/// The `memctl` binary itself: the right CA gets through TLS to the server (which answers that
/// no team schema is installed there: that server has no pgvector), the wrong one is refused
/// with a clear message and a non-zero exit.
#[test]
fn the_cli_reports_an_untrusted_certificate_clearly() {
    let home = tempfile::tempdir().unwrap();
    let run = |ca_file: &PathBuf| {
        std::process::Command::new(env!("CARGO_BIN_EXE_memctl"))
            .args(["team", "status"])
            .env("MEMCTL_HOME", home.path())
            .env("MEMCTL_TEAM_URL", url("sslmode=verify-full"))
            .env("MEMCTL_TEAM_CA_FILE", ca_file)
            .output()
            .expect("run memctl")
    };
    let good = run(&ca("ca.crt"));
    let err = String::from_utf8_lossy(&good.stderr);
    assert!(!good.status.success());
    assert!(err.contains("has no memctl schema"), "{err}");
    let bad = run(&ca("other-ca.crt"));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the team server's TLS certificate is not trusted (sslmode=verify-full")
            && err.contains("UnknownIssuer"),
        "{err}"
    );
}
