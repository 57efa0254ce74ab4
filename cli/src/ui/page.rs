//! The frame every page shares (navigation, styles, the confirmation script) and small helpers
//! for links and numbers. Everything is rendered through `maud`, which escapes each value.

use maud::{DOCTYPE, Markup, html};
use std::sync::OnceLock;

/// What every page of this process's viewer embeds: the path prefix its URLs live under and
/// the form token each of its posts carries ([`super::gate`]). A process runs one viewer, so
/// `ui::run` sets it once before serving; unset (unit tests), both are empty.
#[derive(Debug)]
pub struct Site {
    pub base: String,
    pub csrf: String,
}

static SITE: OnceLock<Site> = OnceLock::new();
static UNSET: Site = Site {
    base: String::new(),
    csrf: String::new(),
};

/// Set [`Site`] once; `Err` when it was set already.
pub fn set_site(site: Site) -> Result<(), Site> {
    SITE.set(site)
}

fn site() -> &'static Site {
    SITE.get().unwrap_or(&UNSET)
}

/// The hidden field with the form token: every `method="post"` form holds it.
pub fn csrf_field() -> Markup {
    html! { input type="hidden" name=(super::gate::CSRF_FIELD) value=(site().csrf); }
}

/// Longest free-text input accepted (a search query, a filter, an id): a 1 MB query is a
/// mistake or an attack, not a search.
pub const MAX_INPUT: usize = 2000;

/// Items per page of a list (sessions, turns, tool outputs).
pub const PAGE: usize = 50;

/// A whole HTML page.
pub fn layout(title: &str, active: &str, body: Markup) -> Markup {
    let nav = [
        ("timeline", "/", "Timeline"),
        ("search", "/search", "Search"),
        ("swap", "/swap", "Tool outputs"),
        ("memory", "/memory", "Memory files"),
        ("health", "/health", "Health"),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · memctl" }
                link rel="stylesheet" href=(link("/static/app.css", &[]));
                script src=(link("/static/app.js", &[])) defer {}
            }
            body {
                header {
                    span.brand { "memctl" }
                    nav {
                        @for (key, href, label) in nav {
                            a href=(link(href, &[])) class=[(key == active).then_some("active")] { (label) }
                        }
                    }
                    form.quick action=(link("/search", &[])) method="get" {
                        input type="search" name="q" placeholder="Search memory" maxlength=(MAX_INPUT);
                    }
                }
                main { (body) }
            }
        }
    }
}

/// `path?k=v&...` under the viewer's prefix, values URL-encoded; empty values left out.
pub fn link(path: &str, pairs: &[(&str, &str)]) -> String {
    let path = format!("{}{path}", site().base);
    let kept: Vec<(&str, &str)> = pairs
        .iter()
        .copied()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    match serde_urlencoded::to_string(&kept) {
        Ok(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path,
    }
}

/// The first 8 characters of an id (as the CLI's lists print it).
pub fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// An RFC 3339 time to the minute, UTC (`2026-11-25 21:37`); unparsable text as is.
pub fn minute(ts: Option<&str>) -> String {
    match ts {
        None => "-".into(),
        Some(t) => match t.parse::<jiff::Timestamp>() {
            Ok(ts) => ts.strftime("%Y-%m-%d %H:%M").to_string(),
            Err(_) => t.to_string(),
        },
    }
}

/// Unix seconds as [`minute`] does.
pub fn unix_minute(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| secs.to_string())
}

/// A text cut to `n` characters (with an ellipsis when cut).
pub fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// "Previous / next" links of a paged list (`page` is 0-based).
pub fn pager(base: &str, pairs: &[(&str, &str)], page: usize, more: bool) -> Markup {
    let prev = page.checked_sub(1).map(|p| p.to_string());
    let next = (page + 1).to_string();
    let with = |p: &str| {
        let mut v: Vec<(&str, &str)> = pairs.to_vec();
        v.push(("page", p));
        link(base, &v)
    };
    html! {
        p.pager {
            @if let Some(p) = &prev { a href=(with(p)) { "← newer" } " " }
            "page " (page + 1)
            @if more { " " a href=(with(&next)) { "older →" } }
        }
    }
}

/// An input that must stay short: `Err` names the field.
pub fn bounded<'a>(field: &str, v: &'a str) -> Result<&'a str, super::UiError> {
    if v.len() > MAX_INPUT {
        return Err(super::UiError::too_large(format!(
            "{field} is {} bytes long: at most {MAX_INPUT} are accepted",
            v.len()
        )));
    }
    Ok(v)
}

/// A form that asks before it posts (the script turns `data-confirm` into a dialog) to the
/// viewer's `action`.
pub fn confirm_form(action: &str, question: &str, fields: &[(&str, &str)], label: &str) -> Markup {
    html! {
        form.inline method="post" action=(link(action, &[])) data-confirm=(question) {
            (csrf_field())
            @for (k, v) in fields { input type="hidden" name=(k) value=(v); }
            button type="submit" { (label) }
        }
    }
}

/// Every project with an archived session, sorted, once each (the project pickers of the
/// search and memory pages; one row per session is read, never the chunks).
pub fn projects(engine: &memctl_engine::Engine) -> Result<Vec<String>, memctl_engine::EngineError> {
    let mut projects: Vec<String> = engine
        .sessions()?
        .into_iter()
        .map(|(_, s)| s.project)
        .collect();
    projects.sort_unstable();
    projects.dedup();
    Ok(projects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_values_and_drop_empty_ones() {
        assert_eq!(
            link("/session", &[("id", "a&b c"), ("page", "")]),
            "/session?id=a%26b+c"
        );
        assert_eq!(link("/", &[]), "/");
    }

    #[test]
    fn clip_cuts_on_characters() {
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(clip("ab", 5), "ab");
    }

    #[test]
    fn layout_escapes_titles() {
        let s = layout("<script>x</script>", "", html! {}).into_string();
        assert!(!s.contains("<script>x"), "{s}");
    }
}
