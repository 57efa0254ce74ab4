//! Tool outputs the PostToolUse hook stored whole (swap): list, view with line numbers,
//! download. Viewing reads only (`Engine::swap_content`: no access is recorded, unlike
//! `memctl swap show`).

use super::page::{self, PAGE, clip, link, short, unix_minute};
use super::{Q, Shared, UiError, blocking};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use memctl_engine::SwapContent;
use memctl_engine::human_bytes;
use serde::Deserialize;

/// `/swap?session=&page=`.
#[derive(Debug, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    session: String,
    #[serde(default)]
    page: usize,
}

pub(super) async fn list(State(ctx): State<Shared>, Q(q): Q<ListQuery>) -> Result<Markup, UiError> {
    page::bounded("session", &q.session)?;
    blocking(&ctx, move |c| {
        let session = (!q.session.is_empty()).then_some(q.session.as_str());
        let all = c.engine.swap_list(session)?;
        let stats = c.engine.swap_stats()?;
        let total = all.len();
        let start = q.page.saturating_mul(PAGE).min(total);
        let more = start + PAGE < total;
        Ok(page::layout(
            "Tool outputs",
            "swap",
            html! {
                h1 { "Tool outputs" @if let Some(s) = session { " of session " (short(s)) } }
                p.muted { "Outputs the PostToolUse hook stored whole, so the context could hold a digest: "
                    (total) " listed · " (stats.blobs) " distinct, " (human_bytes(stats.bytes)) "." }
                @if all.is_empty() { p.muted { "No tool output stored." } }
                @else {
                    table #swap {
                        tr { th { "Id" } th { "When (UTC)" } th { "Tool" } th { "Input" } th { "Size" } th { "Session" } }
                        @for e in all.iter().skip(start).take(PAGE) {
                            tr {
                                td { a href=(link("/swap/view", &[("id", &e.id)])) { code { (short(&e.id)) } } }
                                td { (unix_minute(e.created_at)) }
                                td { (e.tool) @if e.failed { " " span.badge.err { "failed" } } }
                                td { (clip(&e.input_summary, 80)) }
                                td { (human_bytes(e.bytes)) ", " (e.lines) " lines" }
                                td { a href=(link("/session", &[("id", &e.session_id)])) { (short(&e.session_id)) } }
                            }
                        }
                    }
                }
                (page::pager("/swap", &[("session", &q.session)], q.page, more))
            },
        ))
    })
    .await
}

/// `/swap/view?id=` and `/swap/download?id=`.
#[derive(Debug, Deserialize)]
pub(super) struct IdQuery {
    #[serde(default)]
    id: String,
}

/// A swap id as the CLI prints it: hex, 4..=64 characters. Anything else (a path, a long
/// string) is refused before the store is asked.
fn checked(id: &str) -> Result<&str, UiError> {
    let id = id.trim();
    if !(4..=64).contains(&id.len()) || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(UiError::bad(format!(
            "not a tool-output id: {:?} (ids are hex, as the list shows them)",
            clip(id, 80)
        )));
    }
    Ok(id)
}

fn content(c: &super::Ctx, id: &str) -> Result<SwapContent, UiError> {
    c.engine.swap_content(id).map_err(|e| match e {
        memctl_engine::EngineError::Invalid(m) => UiError::not_found(m),
        e => e.into(),
    })
}

pub(super) async fn view(State(ctx): State<Shared>, Q(q): Q<IdQuery>) -> Result<Markup, UiError> {
    let id = checked(&q.id)?.to_string();
    blocking(&ctx, move |c| {
        let SwapContent { entries, text } = content(c, &id)?;
        let lines: Vec<&str> = text.lines().collect();
        Ok(page::layout(
            &format!("Tool output {}", short(&id)),
            "swap",
            html! {
                h1 { "Tool output " code { (short(&id)) } }
                @for e in &entries {
                    p.muted { (e.tool) " · " (e.input_summary) " · " (unix_minute(e.created_at)) " UTC · session "
                        a href=(link("/session", &[("id", &e.session_id)])) { (short(&e.session_id)) } }
                }
                p { (lines.len()) " lines, " (human_bytes(text.len() as u64)) " · "
                    a #download href=(link("/swap/download", &[("id", &id)])) { "Download" } }
                table.lines #lines {
                    @for (n, l) in lines.iter().enumerate() {
                        tr { td.n { (n + 1) } td.l { (l) } }
                    }
                }
            },
        ))
    })
    .await
}

pub(super) async fn download(
    State(ctx): State<Shared>,
    Q(q): Q<IdQuery>,
) -> Result<Response, UiError> {
    let id = checked(&q.id)?.to_string();
    blocking(&ctx, move |c| {
        let text = content(c, &id)?.text;
        let name = format!(
            "attachment; filename=\"memctl-tool-output-{}.txt\"",
            short(&id)
        );
        Ok((
            [
                (
                    header::CONTENT_TYPE,
                    "text/plain; charset=utf-8".to_string(),
                ),
                (header::CONTENT_DISPOSITION, name),
            ],
            text,
        )
            .into_response())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::checked;

    #[test]
    fn only_hex_ids_pass() {
        assert!(checked("abcd1234").is_ok());
        for bad in ["../../etc/passwd", "ab", "zzzz", &"a".repeat(65)] {
            assert!(checked(bad).is_err(), "{bad}");
        }
    }
}
