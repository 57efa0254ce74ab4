//! Time in a query: "what did we decide about the cache last week?", "the error in October",
//! "the first time we saw E0382". A pure parser ([`time_scope`]) finds the query's time phrase
//! relative to the query's own time and turns it into a window of turn start times or an
//! order; the search then ranks the relevant turns inside the window first
//! ([`crate::retrieve::Retriever::promote_in_time`]) and searches the query without the phrase
//! (its words, `last`, `week`, say when, not what).
//!
//! Soft, never a filter: a turn outside the window keeps its place after those inside it, so a
//! wrong reading of the phrase costs order, not answers. Days are UTC days, as `--since` and the
//! stored times are.

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use regex::{Captures, Regex};
use std::sync::LazyLock;

/// What a query says about time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TimeScope {
    /// The phrase as the query wrote it (`last week`).
    pub phrase: String,
    /// Turns that started at or after this (RFC 3339, the stored form).
    pub since: Option<String>,
    /// Turns that started before this.
    pub until: Option<String>,
    /// Which end of the archive the query asks for.
    pub order: Option<TimeOrder>,
    /// The query without the phrase: what the retrievers search.
    pub text: String,
}

/// "The first time" or "the last time".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeOrder {
    /// Oldest relevant turn first.
    Earliest,
    /// Newest relevant turn first.
    Latest,
}

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec";
const COUNT: &str = r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of";
const WEEKDAYS: &str = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";

/// One pattern per kind of phrase, tried in this order; the first that matches is the scope.
static PATTERNS: LazyLock<Vec<(Kind, Regex)>> = LazyLock::new(|| {
    let p = |k: Kind, re: String| {
        (
            k,
            Regex::new(&format!("(?i-u){re}")).unwrap_or_else(|_| unreachable!()),
        )
    };
    vec![
        p(Kind::DayBeforeYesterday, r"\b(?:the\s+)?day\s+before\s+yesterday\b".into()),
        p(Kind::Yesterday, r"\byesterday\b".into()),
        p(Kind::Today, r"\b(?:earlier\s+)?today\b|\bthis\s+(?:morning|afternoon|evening)\b|\btonight\b".into()),
        p(Kind::ThisWeek, r"\b(?:this|current)\s+week\b".into()),
        p(Kind::LastWeek, r"\blast\s+week\b|\bprevious\s+week\b".into()),
        p(Kind::ThisMonth, r"\bthis\s+month\b".into()),
        p(Kind::LastMonth, r"\blast\s+month\b|\bprevious\s+month\b".into()),
        p(Kind::Ago, format!(r"\b({COUNT})\s+(day|week|month)s?\s+ago\b")),
        p(Kind::Past, format!(r"\b(?:in\s+|over\s+|during\s+)?the\s+(?:last|past)\s+({COUNT})\s+(day|week|month)s?\b")),
        p(Kind::Month, format!(r"\b(in|during|since|back\s+in)\s+({MONTHS})\b(?:\s+(\d{{4}}))?")),
        p(Kind::Date, r"\b(?:on\s+|since\s+)?(\d{4}-\d{2}-\d{2})\b".into()),
        p(Kind::Weekday, format!(r"\b(?:(on|last)\s+)({WEEKDAYS})\b")),
        p(Kind::Recently, r"\brecently\b|\blately\b".into()),
        p(Kind::Earliest, r"\b(?:the\s+)?(?:very\s+)?first\s+time\b|\boriginally\b|\binitially\b|\bat\s+first\b|\bearliest\b".into()),
        p(Kind::Latest, r"\b(?:the\s+)?last\s+time\b|\bmost\s+recent(?:ly)?\b|\blatest\b|\bnewest\b".into()),
    ]
});

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    DayBeforeYesterday,
    Yesterday,
    Today,
    ThisWeek,
    LastWeek,
    ThisMonth,
    LastMonth,
    Ago,
    Past,
    Month,
    Date,
    Weekday,
    Recently,
    Earliest,
    Latest,
}

/// Lowercase words one of [`PATTERNS`] needs at least one of (a weekday ends in `day`, a month
/// name starts with its abbreviation). Most queries hold none: then no pattern is compiled,
/// which is ~5 ms of CPU a fresh search process would otherwise spend on every query.
const CUES: &[&str] = &[
    "day",
    "today",
    "morning",
    "afternoon",
    "evening",
    "tonight",
    "week",
    "month",
    "ago",
    "last",
    "past",
    "recent",
    "lately",
    "first",
    "originally",
    "initially",
    "earliest",
    "latest",
    "newest",
    "before",
    "after",
    "since",
    "until",
    "till",
    "prior",
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
];

/// Whether `query` may hold a phrase of [`PATTERNS`]: one of [`CUES`], or a digit and a dash
/// (an ISO date). False means [`time_scope`] is `None`.
fn may_hold_phrase(query: &str) -> bool {
    let q = query.to_ascii_lowercase();
    CUES.iter().any(|c| q.contains(c)) || (q.contains('-') && q.bytes().any(|b| b.is_ascii_digit()))
}

/// A window of turn start times, `[since, until)`; `None` = open.
type Window = (Option<Timestamp>, Option<Timestamp>);

/// The time phrase of `query` asked at `now` (the first one found), or `None`.
pub fn time_scope(query: &str, now: Timestamp) -> Option<TimeScope> {
    if !may_hold_phrase(query) {
        return None;
    }
    for (kind, re) in PATTERNS.iter() {
        let Some(c) = re.captures(query) else {
            continue;
        };
        let m = c.get(0)?;
        let (window, order) = match kind {
            Kind::Earliest => ((None, None), Some(TimeOrder::Earliest)),
            Kind::Latest => ((None, None), Some(TimeOrder::Latest)),
            _ => match window(*kind, &c, now) {
                Some(w) => (w, None),
                None => continue,
            },
        };
        let text = format!("{}{}", &query[..m.start()], &query[m.end()..]);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return Some(TimeScope {
            phrase: m.as_str().to_string(),
            since: window.0.map(stored_form),
            until: window.1.map(stored_form),
            order,
            text,
        });
    }
    None
}

/// How a window bound is stored and compared (as `--since`): RFC 3339 UTC, milliseconds.
fn stored_form(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn window(kind: Kind, c: &Captures, now: Timestamp) -> Option<Window> {
    let today = now.to_zoned(TimeZone::UTC).date();
    let day = |d: Date| d.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp());
    let days = |n: i64| SignedDuration::from_hours(24 * n);
    let monday = today
        .checked_sub(jiff::Span::new().days(i64::from(today.weekday().to_monday_zero_offset())))
        .ok()?;
    let first_of = |d: Date| Date::new(d.year(), d.month(), 1).ok();
    Some(match kind {
        Kind::DayBeforeYesterday => (
            day(today)?.checked_sub(days(2)).ok(),
            Some(day(today)?.checked_sub(days(1)).ok()?),
        ),
        Kind::Yesterday => (day(today)?.checked_sub(days(1)).ok(), day(today)),
        Kind::Today => (day(today), None),
        Kind::ThisWeek => (day(monday), None),
        Kind::LastWeek => (day(monday)?.checked_sub(days(7)).ok(), day(monday)),
        Kind::ThisMonth => (day(first_of(today)?), None),
        Kind::LastMonth => {
            let this = first_of(today)?;
            let prev = first_of(this.checked_sub(jiff::Span::new().days(1)).ok()?)?;
            (day(prev), day(this))
        }
        Kind::Ago => {
            let n = count(c.get(1)?.as_str())?;
            let unit = unit_days(c.get(2)?.as_str());
            if unit == 1 {
                let start = day(today)?.checked_sub(days(n)).ok()?;
                (Some(start), start.checked_add(days(1)).ok())
            } else {
                // "2 weeks ago": half a unit either side of that point.
                let at = now.checked_sub(days(n * unit)).ok()?;
                let half = SignedDuration::from_hours(12 * unit);
                (at.checked_sub(half).ok(), at.checked_add(half).ok())
            }
        }
        Kind::Past => {
            let n = count(c.get(1)?.as_str())?;
            (
                now.checked_sub(days(n * unit_days(c.get(2)?.as_str())))
                    .ok(),
                None,
            )
        }
        Kind::Month => month_window(c, today, &day)?,
        Kind::Date => {
            let d: Date = c.get(1)?.as_str().parse().ok()?;
            let since = c.get(0)?.as_str().to_ascii_lowercase().starts_with("since");
            (day(d), if since { None } else { day(d.tomorrow().ok()?) })
        }
        Kind::Weekday => {
            let want = weekday(c.get(2)?.as_str())?;
            let strictly_before = c
                .get(1)
                .is_some_and(|w| w.as_str().eq_ignore_ascii_case("last"));
            let mut d = today;
            if strictly_before {
                d = d.yesterday().ok()?;
            }
            while d.weekday() != want {
                d = d.yesterday().ok()?;
            }
            (day(d), day(d.tomorrow().ok()?))
        }
        Kind::Recently => (now.checked_sub(days(7)).ok(), None),
        Kind::Earliest | Kind::Latest => return None,
    })
}

/// "in October [2025]": that month, the latest one not after today; "since October": from it on.
fn month_window(
    c: &Captures,
    today: Date,
    day: &impl Fn(Date) -> Option<Timestamp>,
) -> Option<Window> {
    let lead = c.get(1)?.as_str().to_ascii_lowercase();
    let name = c.get(2)?.as_str().to_ascii_lowercase();
    let month = MONTHS
        .split('|')
        .take(12)
        .position(|m| m.starts_with(&name[..3]))? as i8
        + 1;
    let year = match c.get(3) {
        Some(y) => y.as_str().parse().ok()?,
        None if month > today.month() => today.year() - 1,
        None => today.year(),
    };
    let start = Date::new(year, month, 1).ok()?;
    let next = start.checked_add(jiff::Span::new().months(1)).ok()?;
    Some((day(start), if lead == "since" { None } else { day(next) }))
}

fn count(s: &str) -> Option<i64> {
    let s = s.to_ascii_lowercase();
    Some(match s.as_str() {
        "a" | "an" | "one" => 1,
        "two" | "couple of" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        n => n.parse().ok()?,
    })
}

fn unit_days(unit: &str) -> i64 {
    match unit.to_ascii_lowercase().as_str() {
        "week" => 7,
        "month" => 30,
        _ => 1,
    }
}

fn weekday(s: &str) -> Option<Weekday> {
    Some(match s.to_ascii_lowercase().get(..3)? {
        "mon" => Weekday::Monday,
        "tue" => Weekday::Tuesday,
        "wed" => Weekday::Wednesday,
        "thu" => Weekday::Thursday,
        "fri" => Weekday::Friday,
        "sat" => Weekday::Saturday,
        "sun" => Weekday::Sunday,
        _ => return None,
    })
}

/// How long before `now` a turn started, as a person says it: "just now", "5 min ago",
/// "3 h ago", "yesterday", "4 days ago", "3 weeks ago", "2 months ago", "1 year ago".
pub fn age(started_at: &str, now: Timestamp) -> Option<String> {
    let t: Timestamp = started_at.parse().ok()?;
    let secs = now.as_second() - t.as_second();
    Some(match secs {
        s if s < 60 => "just now".to_string(),
        s if s < 3_600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3_600),
        s if s < 2 * 86_400 => "yesterday".to_string(),
        s if s < 14 * 86_400 => format!("{} days ago", s / 86_400),
        s if s < 60 * 86_400 => format!("{} weeks ago", s / (7 * 86_400)),
        s if s < 365 * 86_400 => format!("{} months ago", s / (30 * 86_400)),
        s => {
            let y = s / (365 * 86_400);
            format!("{y} year{} ago", if y == 1 { "" } else { "s" })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Friday 2026-11-27, 15:00 UTC.
    fn now() -> Timestamp {
        "2026-11-27T15:00:00Z".parse().expect("now")
    }

    fn scope(q: &str) -> (Option<String>, Option<String>, Option<TimeOrder>, String) {
        let s = time_scope(q, now()).unwrap_or_else(|| panic!("{q}: no scope"));
        let cut = |t: Option<String>| t.map(|t| t[..10].to_string());
        (cut(s.since), cut(s.until), s.order, s.text)
    }

    #[test]
    fn phrases_become_windows_relative_to_the_query_time() {
        let d = |s: &str| Some(s.to_string());
        let cases = [
            (
                "what did we decide about the cache last week?",
                d("2026-11-16"),
                d("2026-11-23"),
                "what did we decide about the cache ?",
            ),
            (
                "the error yesterday",
                d("2026-11-26"),
                d("2026-11-27"),
                "the error",
            ),
            ("what broke today", d("2026-11-27"), None, "what broke"),
            (
                "the flaky test this week",
                d("2026-11-23"),
                None,
                "the flaky test",
            ),
            (
                "the migration in October",
                d("2026-10-01"),
                d("2026-11-01"),
                "the migration",
            ),
            (
                "the migration in December",
                d("2025-12-01"),
                d("2026-01-01"),
                "the migration",
            ),
            ("deploys since March 2026", d("2026-03-01"), None, "deploys"),
            (
                "what did I run 3 days ago",
                d("2026-11-24"),
                d("2026-11-25"),
                "what did I run",
            ),
            (
                "the bug two weeks ago",
                d("2026-11-10"),
                d("2026-11-17"),
                "the bug",
            ),
            (
                "lint errors in the last 10 days",
                d("2026-11-17"),
                None,
                "lint errors",
            ),
            (
                "what happened on 2026-11-02",
                d("2026-11-02"),
                d("2026-11-03"),
                "what happened",
            ),
            (
                "what did we ship last Monday",
                d("2026-11-23"),
                d("2026-11-24"),
                "what did we ship",
            ),
            (
                "what did we ship on Friday",
                d("2026-11-27"),
                d("2026-11-28"),
                "what did we ship",
            ),
            (
                "the benchmark last month",
                d("2026-10-01"),
                d("2026-11-01"),
                "the benchmark",
            ),
        ];
        for (q, since, until, text) in cases {
            assert_eq!(scope(q), (since, until, None, text.to_string()), "{q}");
        }
    }

    #[test]
    fn first_and_last_time_are_orders() {
        assert_eq!(
            scope("the first time we saw E0382").2,
            Some(TimeOrder::Earliest)
        );
        assert_eq!(scope("the first time we saw E0382").3, "we saw E0382");
        assert_eq!(
            scope("what was the latest benchmark").2,
            Some(TimeOrder::Latest)
        );
        assert!(time_scope("how does the cache work", now()).is_none());
        assert!(time_scope("the weekly report format", now()).is_none());
    }

    #[test]
    fn ages_read_like_a_person_says_them() {
        for (t, want) in [
            ("2026-11-27T14:58:00Z", "2 min ago"),
            ("2026-11-27T10:00:00Z", "5 h ago"),
            ("2026-11-26T10:00:00Z", "yesterday"),
            ("2026-11-23T10:00:00Z", "4 days ago"),
            ("2026-10-20T10:00:00Z", "5 weeks ago"),
            ("2026-06-01T10:00:00Z", "5 months ago"),
            ("2024-11-01T10:00:00Z", "2 years ago"),
        ] {
            assert_eq!(age(t, now()).as_deref(), Some(want), "{t}");
        }
        assert_eq!(age("not a time", now()), None);
    }

    proptest! {
        /// Any query: no panic; a window is never empty or reversed; the text is the query
        /// minus the phrase.
        #[test]
        fn any_query_gives_a_sane_scope(q in "\\PC{0,120}", secs in 0i64..4_000_000_000) {
            let now = Timestamp::from_second(secs).expect("ts");
            if let Some(s) = time_scope(&q, now) {
                if let (Some(a), Some(b)) = (&s.since, &s.until) {
                    prop_assert!(a < b, "{a} !< {b} for {q:?}");
                }
                prop_assert!(q.contains(&s.phrase));
                prop_assert!(s.text.len() <= q.len());
            }
        }

        /// The cue check never hides a phrase: whenever a pattern matches, a cue is there.
        #[test]
        fn cues_cover_every_pattern(words in proptest::collection::vec(prop_oneof![
            Just("yesterday"), Just("Today"), Just("this"), Just("MORNING"), Just("tonight"),
            Just("last"), Just("Week"), Just("month"), Just("3"), Just("two"), Just("days"),
            Just("ago"), Just("past"), Just("in"), Just("October"), Just("sept"), Just("2026"),
            Just("2026-11-03"), Just("on"), Just("Monday"), Just("the"), Just("first"),
            Just("time"), Just("very"), Just("at"), Just("before"), Just("after"), Just("prior"),
            Just("to"), Just("migration"), Just("recently"), Just("most"), Just("recent"),
            Just("latest"), Just("earliest"), Just("originally"), Just("cache"), Just("error"),
        ], 0..8)) {
            let q = words.join(" ");
            let matched = PATTERNS.iter().any(|(_, re)| re.is_match(&q));
            prop_assert!(!matched || may_hold_phrase(&q), "{q:?}");
        }
    }
}
