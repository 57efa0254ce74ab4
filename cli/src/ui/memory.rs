//! Project memory files (`<project>/.memctl/memory/`, [`memctl_engine::memory`]): list, edit
//! with a confirmation, create from the templates (`memctl memory init`). Only the files the
//! engine injects can be named (no path from the request reaches the file system), the project
//! must be an archived one, and a file that links out of its folder is refused, as the engine
//! refuses to inject it.

use super::page::{self, link};
use super::{F, Q, Shared, UiError, blocking};
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use memctl_engine::{MEMORY_FILES, MEMORY_MAX_FILE_BYTES, SESSION_STATE_FILE};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `?project=&file=` (and the edit form's `text`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct MemQuery {
    #[serde(default)]
    project: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    text: String,
}

fn names() -> impl Iterator<Item = &'static str> {
    MEMORY_FILES
        .iter()
        .copied()
        .chain(std::iter::once(SESSION_STATE_FILE))
}

/// The archived project the request names (404 when none is).
fn project(c: &super::Ctx, p: &str) -> Result<String, UiError> {
    page::bounded("project", p)?;
    crate::filters::project(&c.engine, p).map_err(|e| UiError::not_found(format!("{e:#}")))
}

/// One of the memory files, by its exact name.
fn file_name(f: &str) -> Result<&'static str, UiError> {
    names().find(|n| *n == f).ok_or_else(|| {
        UiError::bad(format!(
            "not a memory file: {:?} (one of {})",
            page::clip(f, 60),
            names().collect::<Vec<_>>().join(", ")
        ))
    })
}

fn dir(c: &super::Ctx, project: &str) -> Option<PathBuf> {
    memctl_engine::find_memory_dir(project, &c.settings.restore.memory)
}

/// The file's path, refused when it links out of the memory folder.
fn inside(dir: &Path, name: &str) -> Result<PathBuf, UiError> {
    let path = dir.join(name);
    match memctl_engine::resolves_inside(&path, dir) {
        Ok(true) => Ok(path),
        Ok(false) => Err(UiError::bad(format!(
            "{} links out of the memory folder: refused",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(path),
        Err(e) => Err(UiError::bad(format!("{}: {e}", path.display()))),
    }
}

pub(super) async fn memory(
    State(ctx): State<Shared>,
    Q(q): Q<MemQuery>,
) -> Result<Markup, UiError> {
    blocking(&ctx, move |c| {
        if q.project.is_empty() {
            let projects = super::page::projects(&c.engine)?;
            return Ok(page::layout(
                "Memory files",
                "memory",
                html! {
                    h1 { "Memory files" }
                    p.muted { "Notes the agent keeps in each project's .memctl/memory/, injected first after a compaction." }
                    ul { @for p in &projects { li { a href=(link("/memory", &[("project", p)])) { (p) } } } }
                },
            ));
        }
        let project = project(c, &q.project)?;
        let d = dir(c, &project);
        let lines = d.as_ref().map(|d| memctl_engine::collect_memory(d, &c.settings.restore.memory));
        Ok(page::layout(
            "Memory files",
            "memory",
            html! {
                h1 { "Memory files of " (project) }
                @match &d {
                    None => {
                        p { "No " code { (memctl_engine::MEMORY_DIR) } " folder in this project." }
                        (page::confirm_form("/memory/init", "Create .memctl/memory with the templates in this project?", &[("project", &project)], "Create it"))
                    }
                    Some(d) => {
                        p.muted { (d.display()) }
                        table #memory-files {
                            tr { th { "File" } th { "Size" } th {} }
                            @for n in names() {
                                @let len = std::fs::metadata(d.join(n)).map(|m| m.len()).ok();
                                tr { td { code { (n) } } td { (len.map_or("missing".to_string(), |l| format!("{l} bytes"))) }
                                    td { a href=(link("/memory/edit", &[("project", &project), ("file", n)])) { "Edit" } } }
                            }
                        }
                        h2 { "What the next restore injects" }
                        @match &lines {
                            Some(l) if !l.is_empty() => { ul { @for x in l { li { (x.text) } } } }
                            _ => { p.muted { "Nothing yet (templates only)." } }
                        }
                    }
                }
            },
        ))
    })
    .await
}

pub(super) async fn memory_edit(
    State(ctx): State<Shared>,
    Q(q): Q<MemQuery>,
) -> Result<Markup, UiError> {
    let name = file_name(&q.file)?;
    blocking(&ctx, move |c| {
        let project = project(c, &q.project)?;
        let Some(d) = dir(c, &project) else {
            return Err(UiError::not_found(format!(
                "{project} has no memory folder (create it on its memory page)"
            )));
        };
        let path = inside(&d, name)?;
        let text = match memctl_engine::read_regular_string(&path, MEMORY_MAX_FILE_BYTES) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(UiError::bad(format!("{}: {e}", path.display()))),
        };
        Ok(page::layout(
            "Edit memory file",
            "memory",
            html! {
                h1 { "Edit " code { (name) } }
                p.muted { (path.display()) }
                form #memory-edit method="post" action=(link("/memory/edit", &[])) data-confirm=(format!("Save {name}? The next restore injects it.")) {
                    (page::csrf_field())
                    input type="hidden" name="project" value=(project);
                    input type="hidden" name="file" value=(name);
                    textarea name="text" { (text) }
                    p { button type="submit" { "Save" } " " a href=(link("/memory", &[("project", &project)])) { "Cancel" } }
                }
            },
        ))
    })
    .await
}

pub(super) async fn memory_save(
    State(ctx): State<Shared>,
    F(q): F<MemQuery>,
) -> Result<Response, UiError> {
    let name = file_name(&q.file)?;
    if q.text.len() as u64 > MEMORY_MAX_FILE_BYTES {
        return Err(UiError::too_large(format!(
            "{} bytes: a memory file holds at most {MEMORY_MAX_FILE_BYTES} (only its newest lines are injected anyway)",
            q.text.len()
        )));
    }
    if name == SESSION_STATE_FILE
        && let Err(e) = serde_json::from_str::<memctl_engine::SessionState>(&q.text)
    {
        return Err(UiError::bad(format!("{name} must stay valid JSON: {e}")));
    }
    // The editor is a way in like the hooks: what it saves is redacted (the JSON state file
    // string by string, so it stays valid JSON).
    let text = if name == SESSION_STATE_FILE {
        memctl_engine::redact_json(&q.text).unwrap_or_else(|| q.text.clone())
    } else {
        memctl_engine::redact(&q.text).into_owned()
    };
    blocking(&ctx, move |c| {
        let project = project(c, &q.project)?;
        let Some(d) = dir(c, &project) else {
            return Err(UiError::not_found(format!(
                "{project} has no memory folder"
            )));
        };
        let path = inside(&d, name)?;
        // Written whole then renamed: a hook reading it meanwhile sees the old or the new file.
        let mut tmp = tempfile::NamedTempFile::new_in(&d)
            .map_err(|e| UiError::bad(format!("{}: {e}", d.display())))?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())
            .and_then(|()| tmp.persist(&path).map(|_| ()).map_err(|e| e.error))
            .map_err(|e| UiError::bad(format!("writing {}: {e}", path.display())))?;
        tracing::info!(file = %path.display(), "memory file saved from the viewer");
        Ok(Redirect::to(&link("/memory", &[("project", &project)])).into_response())
    })
    .await
}

pub(super) async fn memory_init(
    State(ctx): State<Shared>,
    F(q): F<MemQuery>,
) -> Result<Response, UiError> {
    blocking(&ctx, move |c| {
        let project = project(c, &q.project)?;
        if !Path::new(&project).is_dir() {
            return Err(UiError::not_found(format!(
                "{project} is not a directory on this machine"
            )));
        }
        memctl_engine::init_memory(Path::new(&project))
            .map_err(|e| UiError::bad(format!("creating the memory folder: {e}")))?;
        Ok(Redirect::to(&link("/memory", &[("project", &project)])).into_response())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn only_memory_files_can_be_named() {
        assert_eq!(file_name("decisions.md").ok(), Some("decisions.md"));
        for bad in ["../../.bashrc", "/etc/passwd", "decisions.md/..", ""] {
            assert!(file_name(bad).is_err(), "{bad}");
        }
    }
}
