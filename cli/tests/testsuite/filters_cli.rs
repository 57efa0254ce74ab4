//! Search filters as a person types them: every value either parses to something the store can
//! match or is a clear error (exit 1); an empty result names the filter that emptied it. These
//! were silent empty answers with exit 0 (`--since 7d`, `--since garbage`, `--tool bash`, the
//! 8-character session prefix search prints, a project path with a trailing slash,
//! `sessions --project nope`).

use crate::common;

use common::{PROJECT, SID, fixture, memctl_hash as memctl};
use std::process::Output;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn archived() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let out = memctl(
        &home,
        &["ingest", "--quiet", &fixture().display().to_string()],
    );
    assert!(out.status.success(), "{out:?}");
    (dir, home)
}

#[test]
fn filters_that_mean_something_find_what_they_mean() {
    let (_dir, home) = archived();
    let q = "pytest slow on CI";
    let base = ["search", q, "--all-projects", "-k", "3"];
    let plain = memctl(&home, &base);
    assert!(
        plain.status.success() && text(&plain).contains("chunk "),
        "{plain:?}"
    );
    let short = &SID[..8];
    let project_slash = format!("{PROJECT}/");
    for extra in [
        vec!["--tool", "bash"],
        vec!["--tool", "BASH"],
        vec!["--session", short],
        vec!["--since", "2025-10-24"],
        vec!["--since", "2025-10-24T11:00:00Z", "--until", "2030-01-01"],
    ] {
        let mut args = base.to_vec();
        args.extend(extra.iter().copied());
        let out = memctl(&home, &args);
        assert!(out.status.success(), "{extra:?}: {out:?}");
        assert!(
            text(&out).contains("chunk "),
            "{extra:?} found nothing: {}",
            text(&out)
        );
    }
    let out = memctl(
        &home,
        &["search", q, "--project", &project_slash, "-k", "1"],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out).contains("chunk "), "{}", text(&out));
    let out = memctl(&home, &["sessions", "--project", &project_slash]);
    assert!(text(&out).contains(SID), "{}", text(&out));
}

#[test]
fn filters_that_cannot_match_are_errors_that_say_what_they_take() {
    let (_dir, home) = archived();
    for (args, says) in [
        (vec!["--since", "garbage"], "is not a time"),
        (vec!["--until", "7y"], "is not a time"),
        (
            vec!["--session", "ffffffff"],
            "no archived session starts with it",
        ),
    ] {
        let mut all = vec!["search", "pytest", "--all-projects"];
        all.extend(args.iter().copied());
        let out = memctl(&home, &all);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
    let out = memctl(&home, &["search", "pytest", "--project", "nope"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        text(&out).contains(PROJECT),
        "lists the known projects: {}",
        text(&out)
    );
    let out = memctl(&home, &["sessions", "--project", "nope"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        !text(&out).contains("no sessions archived yet"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_empty_result_names_the_filter_that_emptied_it() {
    let (_dir, home) = archived();
    let out = memctl(
        &home,
        &[
            "search",
            "pytest slow on CI",
            "--all-projects",
            "--since",
            "7d",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let t = text(&out);
    assert!(t.contains("no results"), "{t}");
    assert!(t.contains("--since:"), "names the filter: {t}");
    let out = memctl(
        &home,
        &[
            "search",
            "pytest slow on CI",
            "--all-projects",
            "--since",
            "7d",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["excluded_by"].as_array().is_some_and(|a| a
            .iter()
            .any(|x| x.as_str().is_some_and(|s| s.starts_with("--since")))),
        "{v}"
    );
}
