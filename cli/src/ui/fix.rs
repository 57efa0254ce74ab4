//! Fixes that write: forget a turn, a session or a project (`Engine::forget`, as `memctl
//! forget`), pin / unpin a chunk (`Engine::set_pinned`, as `memctl pin`). A forget is shown
//! first as the engine's dry run (the confirmation page, what `memctl forget` without `--yes`
//! prints); only its button posts the real one.

use super::page::{self, link, short};
use super::{F, Q, Shared, UiError, blocking};
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use memctl_engine::{ForgetReport, ForgetRequest};
use serde::Deserialize;

/// What to forget: exactly one of a chunk (its whole turn), a session, a project.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Target {
    #[serde(default)]
    chunk: String,
    #[serde(default)]
    session: String,
    #[serde(default)]
    project: String,
}

impl Target {
    fn request(&self) -> Result<ForgetRequest, UiError> {
        for (k, v) in [
            ("chunk", &self.chunk),
            ("session", &self.session),
            ("project", &self.project),
        ] {
            page::bounded(k, v)?;
        }
        let given = [&self.chunk, &self.session, &self.project]
            .iter()
            .filter(|v| !v.is_empty())
            .count();
        if given != 1 {
            return Err(UiError::bad(
                "name exactly one thing to forget: a chunk, a session or a project",
            ));
        }
        let mut req = ForgetRequest::default();
        if !self.chunk.is_empty() {
            let id = self.chunk.trim().parse::<u64>().map_err(|_| {
                UiError::bad(format!("not a chunk id: {:?}", page::clip(&self.chunk, 40)))
            })?;
            req.chunk_ids = vec![id];
        }
        if !self.session.is_empty() {
            req.session = Some(self.session.clone());
        }
        if !self.project.is_empty() {
            req.project = Some(self.project.clone());
        }
        Ok(req)
    }

    fn fields(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("chunk", self.chunk.as_str()),
            ("session", self.session.as_str()),
            ("project", self.project.as_str()),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect()
    }
}

/// An unknown id is a missing page, not a malformed request.
fn forget_error(e: memctl_engine::EngineError) -> UiError {
    use memctl_engine::EngineError;
    use memctl_engine::ForgetError;
    match &e {
        EngineError::Forget(ForgetError::UnknownChunks { .. })
        | EngineError::Forget(ForgetError::Filter(_)) => UiError::not_found(e.to_string()),
        _ => e.into(),
    }
}

pub(super) async fn forget_preview(
    State(ctx): State<Shared>,
    Q(t): Q<Target>,
) -> Result<Markup, UiError> {
    let req = t.request()?;
    blocking(&ctx, move |c| {
        let rep = c.engine.forget(&req, true).map_err(forget_error)?;
        Ok(page::layout(
            "Forget",
            "timeline",
            html! {
                h1 { "Forget?" }
                (report(&rep))
                @if rep.is_empty() { p { a href=(link("/", &[])) { "Back to the timeline" } } }
                @else {
                    p.warn { "This cannot be undone: the turns leave the archive, the index, the stored tool outputs and the store file's free pages (the file is rewritten)." }
                    form #confirm-forget method="post" action=(link("/forget", &[])) {
                        (page::csrf_field())
                        @for (k, v) in t.fields() { input type="hidden" name=(k) value=(v); }
                        button.danger #forget-yes type="submit" { "Forget for good" }
                        " " a href=(link("/", &[])) { "Cancel" }
                    }
                }
            },
        ))
    })
    .await
}

pub(super) async fn forget(State(ctx): State<Shared>, F(t): F<Target>) -> Result<Markup, UiError> {
    let req = t.request()?;
    blocking(&ctx, move |c| {
        let rep = c.engine.forget(&req, false).map_err(forget_error)?;
        tracing::info!(criteria = ?rep.criteria, chunks = rep.chunks, "forgotten from the viewer");
        Ok(page::layout(
            "Forgotten",
            "timeline",
            html! {
                h1 #forgotten { "Forgotten" }
                (report(&rep))
                p { a href=(link("/", &[])) { "Back to the timeline" } }
            },
        ))
    })
    .await
}

fn report(rep: &ForgetReport) -> Markup {
    let verb = if rep.dry_run {
        "Would forget"
    } else {
        "Forgot"
    };
    html! {
        div.card #forget-report {
            p { "Matching " strong { (rep.criteria.join(", ")) } }
            @if rep.is_empty() { p { "Nothing matches: nothing to forget." } }
            @else {
                p { (verb) " " strong { (rep.turns) " turns" } " (" (rep.chunks) " chunks) of " (rep.sessions) " sessions"
                    @if rep.tool_outputs > 0 { ", " (rep.tool_outputs) " stored tool outputs" }
                    @if rep.spooled_calls > 0 { ", " (rep.spooled_calls) " spooled tool calls" } "." }
                @for b in rep.backups.deleted() {
                    p.backup-deleted { "Deleted a backup that held them: " code { (b.display()) } }
                }
                @for (b, why) in &rep.backups.failed {
                    p.backup-failed { "Could not delete a backup that holds them (" (why) "): " code { (b.display()) } }
                }
                @if !rep.sessions_removed.is_empty() {
                    p { "Sessions " @if rep.dry_run { "that would go" } @else { "removed" } " entirely: "
                        (rep.sessions_removed.iter().map(|s| short(s)).collect::<Vec<_>>().join(", ")) }
                }
                table {
                    tr { th { "Session" } th { "Turn" } th { "Time" } th { "Gist" } }
                    @for l in &rep.turn_lines {
                        tr { td { (short(&l.session)) } td { (l.turn) } td { (l.time.as_deref().unwrap_or("-")) } td { (l.gist) } }
                    }
                }
                @if rep.turns as usize > rep.turn_lines.len() { p.muted { "… and " (rep.turns as usize - rep.turn_lines.len()) " more turns." } }
            }
        }
    }
}

/// `POST /pin`: `chunk`, `pinned` (1 or 0), `back` (a local path to return to).
#[derive(Debug, Deserialize)]
pub(super) struct PinForm {
    #[serde(default)]
    chunk: String,
    #[serde(default)]
    pinned: String,
    #[serde(default)]
    back: String,
}

/// Only paths of this viewer (under its prefix `base`), never `//host` (an open redirect).
fn local_path(back: &str, base: &str) -> String {
    let home = format!("{base}/");
    if back.starts_with(&home) && !back.starts_with("//") && !back.contains('\\') {
        back.to_string()
    } else {
        home
    }
}

pub(super) async fn pin(State(ctx): State<Shared>, F(f): F<PinForm>) -> Result<Response, UiError> {
    page::bounded("back", &f.back)?;
    let id = f
        .chunk
        .trim()
        .parse::<u64>()
        .map_err(|_| UiError::bad(format!("not a chunk id: {:?}", page::clip(&f.chunk, 40))))?;
    let pinned = match f.pinned.as_str() {
        "1" => true,
        "0" => false,
        _ => return Err(UiError::bad("pinned is 1 (pin) or 0 (unpin)")),
    };
    let back = local_path(&f.back, &ctx.base);
    blocking(&ctx, move |c| {
        if !c.engine.set_pinned(id, pinned)? {
            return Err(UiError::not_found(format!("no chunk with id {id}")));
        }
        Ok(Redirect::to(&back).into_response())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_followed() {
        assert_eq!(local_path("/p/session?id=a#t3", "/p"), "/p/session?id=a#t3");
        assert_eq!(local_path("/session?id=a#t3", ""), "/session?id=a#t3");
        for bad in [
            "//evil.example/x",
            "https://evil.example",
            "/p/\\evil",
            "",
            "/session",
            "/pp/session",
        ] {
            assert_eq!(local_path(bad, "/p"), "/p/", "{bad}");
        }
        assert_eq!(local_path("//evil.example/x", ""), "/");
    }

    #[test]
    fn exactly_one_target() {
        assert!(Target::default().request().is_err());
        let two = Target {
            chunk: "1".into(),
            session: "s".into(),
            ..Default::default()
        };
        assert!(two.request().is_err());
        let bad = Target {
            chunk: "x".into(),
            ..Default::default()
        };
        assert!(bad.request().is_err());
    }
}
