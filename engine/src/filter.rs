//! Strict parsing of search filters (`--since`, `--until`, `--session`, `--project`, `--tool`).
//!
//! Why: filters used to be compared as given, so `--since 7d`, `--since garbage`, `--tool bash`,
//! the 8-character session prefix that `search` itself prints, or a project path with a trailing
//! slash all gave an empty result with exit 0 — a silent wrong answer. Every filter now either
//! parses to what the store compares against or fails with a message that says what it takes;
//! an empty result names the filters that emptied it ([`crate::SearchOutcome::excluded_by`]).

use jiff::{SignedDuration, Timestamp};

/// A filter value that does not say anything the store can compare against.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// Not a time in any accepted form.
    #[error(
        "--{flag} {value:?} is not a time: use RFC 3339 (2025-10-24T11:41:50Z), a date \
         (2025-10-24), an age (30m, 12h, 7d, 2w) or today / yesterday"
    )]
    Time { flag: &'static str, value: String },
    /// No archived session id starts with the prefix.
    #[error("--session {prefix:?}: no archived session starts with it (see `memctl sessions`)")]
    NoSession { prefix: String },
    /// Several archived session ids start with the prefix.
    #[error("--session {prefix:?} matches {count} sessions ({examples}…): give more characters")]
    AmbiguousSession {
        prefix: String,
        count: usize,
        examples: String,
    },
    /// No archived project has that path.
    #[error("--project {value:?}: no archived project has that path (known: {known})")]
    NoProject { value: String, known: String },
}

/// Parse a `--since` / `--until` value into the form chunk times are stored in
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`, compared as strings), relative to `now`.
pub fn parse_time(flag: &'static str, value: &str, now: Timestamp) -> Result<String, FilterError> {
    let v = value.trim();
    let bad = || FilterError::Time {
        flag,
        value: value.to_string(),
    };
    let midnight = |ts: Timestamp| -> Result<Timestamp, FilterError> {
        let date = ts.to_zoned(jiff::tz::TimeZone::UTC).date();
        date.to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(|_| bad())
    };
    let ts = match v.to_ascii_lowercase().as_str() {
        "now" => now,
        "today" => midnight(now)?,
        "yesterday" => midnight(now)?
            .checked_sub(SignedDuration::from_hours(24))
            .map_err(|_| bad())?,
        lower => {
            if let Ok(ts) = v.parse::<Timestamp>() {
                ts
            } else if let Ok(date) = v.parse::<jiff::civil::Date>() {
                date.to_zoned(jiff::tz::TimeZone::UTC)
                    .map_err(|_| bad())?
                    .timestamp()
            } else {
                let age = parse_age(lower).ok_or_else(bad)?;
                now.checked_sub(age).map_err(|_| bad())?
            }
        }
    };
    // An age reaching before year 0 (`18000000h`) or a date written with an extended year
    // (`-000005-01-01T00:00:00Z`) printed as `-084-07-28T...`: no stored form, and no value
    // this parser reads back (found by fuzzing). Year 0 compares the same against
    // every stored time: a `--since` before it takes everything, an `--until` nothing.
    let earliest = jiff::civil::date(0, 1, 1)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(|_| bad())?
        .timestamp();
    Ok(ts
        .max(earliest)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string())
}

/// `30m`, `12h`, `7d`, `2w` (also `90s`): an age; None for anything else.
fn parse_age(s: &str) -> Option<SignedDuration> {
    let unit = s.chars().last()?;
    let n: i64 = s[..s.len() - unit.len_utf8()].trim().parse().ok()?;
    if n < 0 {
        return None;
    }
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3_600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return None,
    };
    Some(SignedDuration::from_secs(n.checked_mul(secs)?))
}

/// The one archived session id that starts with `prefix` (an exact id is a prefix of itself).
pub fn resolve_session<'a>(
    prefix: &str,
    ids: impl IntoIterator<Item = &'a str>,
) -> Result<String, FilterError> {
    let p = prefix.trim();
    let mut found: Vec<&str> = ids.into_iter().filter(|id| id.starts_with(p)).collect();
    if p.is_empty() || found.is_empty() {
        return Err(FilterError::NoSession {
            prefix: prefix.to_string(),
        });
    }
    if let Some(exact) = found.iter().find(|id| **id == p) {
        return Ok((*exact).to_string());
    }
    found.sort_unstable();
    match found.as_slice() {
        [one] => Ok((*one).to_string()),
        many => Err(FilterError::AmbiguousSession {
            prefix: prefix.to_string(),
            count: many.len(),
            examples: many
                .iter()
                .take(3)
                .map(|id| id.chars().take(p.len() + 4).collect::<String>())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A project path as projects are stored (the directory Claude Code ran in): no trailing
/// slash (the root stays `/`), no `.` components, no surrounding whitespace.
///
/// A fixed point (normalizing twice changes nothing): forget compares normalized stored paths
/// with a normalized argument. One pass was not one: `"฿ /"` became `"฿ "` (the slash gone,
/// the space exposed), which the next pass trimmed (found by fuzzing).
pub fn normalize_project(path: &str) -> String {
    let mut cur = path.to_string();
    // Each pass only removes characters, so this ends.
    loop {
        let next = normalize_once(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

fn normalize_once(path: &str) -> String {
    let p = std::path::Path::new(path.trim());
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        if c != std::path::Component::CurDir {
            out.push(c);
        }
    }
    let s = out.display().to_string();
    if s.is_empty() { path.to_string() } else { s }
}

/// The archived project `value` names, after [`normalize_project`]; an error lists the known
/// ones (a few) when there is none.
pub fn resolve_project<'a>(
    value: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Result<String, FilterError> {
    let want = normalize_project(value);
    let mut all: Vec<&str> = known.into_iter().collect();
    if all.contains(&want.as_str()) {
        return Ok(want);
    }
    all.sort_unstable();
    let shown: Vec<&str> = all.iter().take(5).copied().collect();
    Err(FilterError::NoProject {
        value: value.to_string(),
        known: if shown.is_empty() {
            "none archived yet".into()
        } else if all.len() > shown.len() {
            format!("{}, … {} in all", shown.join(", "), all.len())
        } else {
            shown.join(", ")
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-25T10:30:00Z"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Fuzzing found it (`scripts/fuzz.sh --secs 75 --seed 20261125`, target filters:
    /// --session prefix, --project path, minimal input `"฿ /"`): normalizing twice differed.
    #[test]
    fn normalizing_a_project_twice_changes_nothing() {
        for input in ["฿ /", "/a/b /", " /a/./b/ ", "./", " ", "", "/x/ ./"] {
            let once = normalize_project(input);
            assert_eq!(normalize_project(&once), once, "{input:?}");
        }
        assert_eq!(normalize_project("฿ /"), "฿");
        assert_eq!(
            normalize_project(" /home/dev/src/quill-notes/ "),
            "/home/dev/src/quill-notes"
        );
    }

    /// Fuzzing found it (`scripts/fuzz.sh`, target filters: --since/--until, minimal input
    /// `("18000000h", now = 0)`): a time before year 0 was printed as `-084-07-28T...`.
    #[test]
    fn a_time_before_year_zero_is_year_zero_and_reads_back() {
        let epoch = Timestamp::UNIX_EPOCH;
        for input in ["18000000h", "-000005-01-01T00:00:00Z"] {
            let got = parse_time("since", input, epoch);
            assert_eq!(got, Ok("0000-01-01T00:00:00.000Z".into()), "{input}");
            let back = parse_time("since", "0000-01-01T00:00:00.000Z", epoch);
            assert_eq!(back, got, "{input}: the stored form reads back as itself");
        }
    }

    #[test]
    fn times_in_every_accepted_form() {
        for (input, want) in [
            ("2025-10-24T11:41:50Z", "2025-10-24T11:41:50.000Z"),
            ("2025-10-24T13:41:50+02:00", "2025-10-24T11:41:50.000Z"),
            ("2025-10-24", "2025-10-24T00:00:00.000Z"),
            ("7d", "2026-11-18T10:30:00.000Z"),
            ("12h", "2026-11-24T22:30:00.000Z"),
            ("30m", "2026-11-25T10:00:00.000Z"),
            ("2w", "2026-11-11T10:30:00.000Z"),
            ("today", "2026-11-25T00:00:00.000Z"),
            ("Yesterday", "2026-11-24T00:00:00.000Z"),
        ] {
            assert_eq!(
                parse_time("since", input, now()),
                Ok(want.into()),
                "{input}"
            );
        }
        for bad in [
            "garbage",
            "",
            "7",
            "d",
            "-3d",
            "7y",
            "2025-13-01",
            "99999999999999999d",
        ] {
            assert!(
                matches!(
                    parse_time("since", bad, now()),
                    Err(FilterError::Time { .. })
                ),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn parsed_times_compare_like_stored_chunk_times() {
        // Chunk times are Claude Code's `2025-10-24T11:41:50.695Z`; string order must be time order.
        let since = parse_time("since", "2025-10-24T11:41:50Z", now()).unwrap_or_default();
        assert!("2025-10-24T11:41:50.695Z" >= since.as_str());
        assert!("2025-10-24T11:41:49.999Z" < since.as_str());
    }

    #[test]
    fn sessions_by_unique_prefix() {
        let ids = ["db5b5fab-8f4d", "db5b5fab-9aaa", "0123abcd-1111"];
        assert_eq!(resolve_session("0123", ids), Ok("0123abcd-1111".into()));
        assert_eq!(
            resolve_session("db5b5fab-8f4d", ids),
            Ok("db5b5fab-8f4d".into())
        );
        assert!(matches!(
            resolve_session("db5b5fab", ids),
            Err(FilterError::AmbiguousSession { count: 2, .. })
        ));
        assert!(matches!(
            resolve_session("ffff", ids),
            Err(FilterError::NoSession { .. })
        ));
        assert!(matches!(
            resolve_session("", ids),
            Err(FilterError::NoSession { .. })
        ));
    }

    #[test]
    fn projects_normalised_and_checked() {
        let base = std::env::temp_dir().join("memctl-filter-test");
        let app = base.join("app").display().to_string();
        let other = base.join("x").display().to_string();
        let known = [app.as_str(), other.as_str()];
        assert_eq!(resolve_project(&format!("{app}/"), known), Ok(app.clone()));
        let dotted = base.join(".").join("app").display().to_string();
        assert_eq!(resolve_project(&dotted, known), Ok(app.clone()));
        assert_eq!(normalize_project("/"), "/");
        let err = resolve_project("nope", known).unwrap_err().to_string();
        assert!(err.contains(&other), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn ages_never_panic_and_go_back_in_time(n in 0i64..100_000, unit in "[smhdw]") {
            let t = parse_time("since", &format!("{n}{unit}"), now());
            let t = t.unwrap_or_default();
            proptest::prop_assert!(t.as_str() <= "2026-11-25T10:30:00.000Z");
        }

        #[test]
        fn any_input_parses_or_errors_without_panic(s in "\\PC{0,24}") {
            // What parses is in the stored form; what resolves is one of the known values.
            if let Ok(t) = parse_time("until", &s, now()) {
                proptest::prop_assert!(t.len() == 24 && t.ends_with('Z'), "{t}");
            }
            if let Ok(id) = resolve_session(&s, ["a", "ab"]) {
                proptest::prop_assert!(id == "a" || id == "ab", "{id}");
            }
            if let Ok(p) = resolve_project(&s, ["/a"]) {
                proptest::prop_assert_eq!(p, "/a");
            }
        }
    }
}
