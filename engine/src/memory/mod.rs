//! Project memory files: small, agent-maintained notes in `<project>/.memctl/memory/` that are
//! injected at SessionStart (compact / resume / clear, and startup when enabled) as the first
//! section of the restore block, within their own sub-budget.
//!
//! Why files in the project and not rows in the store: the agent edits them with its normal
//! tools, the user can read and correct them, and they can be committed with the code. The
//! archive (the store) remembers what was *said*; these files hold what the agent *decided is
//! true now*. The checkpoint protocol (when to update which file) is in
//! `docs/memory-protocol.md`; `memctl install --claude-md` adds it to the project's CLAUDE.md.
//!
//! Injection rules: files still equal to their template (only headings and HTML comments) are
//! skipped; markdown files keep their *last* lines (entries are appended, so the newest are
//! last) within a per-file cap; files are filled in [`FILES`] order until the sub-budget is
//! used up.

pub mod claude_md;
pub mod note;
mod templates;

pub use templates::{SESSION_STATE_TEMPLATE, template};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The memory directory inside a project.
pub const MEMORY_DIR: &str = ".memctl/memory";

/// The structured task state file.
pub const SESSION_STATE_FILE: &str = "session-state.json";

/// Markdown memory files, in injection priority order.
pub const FILES: [&str; 4] = [
    "active-state.md",
    "decisions.md",
    "gotchas.md",
    "feedback.md",
];

/// Title of the restore section.
pub const SECTION_TITLE: &str = "Project memory (.memctl/memory, maintained by the agent)";

/// Memory injection settings (variables in [`crate::Settings::restore`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Inject at all (default on; `MEMCTL_MEMORY=0` disables).
    pub enabled: bool,
    /// Sub-budget of the restore block for memory lines (default 1500 chars of the 4000).
    pub budget_chars: usize,
    /// Cap per file (default 600 chars).
    pub file_chars: usize,
    /// Longest single line (default 300 chars).
    pub line_chars: usize,
    /// The memory directory when the user names one (`MEMCTL_MEMORY_DIR`), else
    /// `<project>/.memctl/memory` (see [`find_dir`]).
    pub dir: Option<PathBuf>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            budget_chars: 1500,
            file_chars: 600,
            line_chars: 300,
            dir: None,
        }
    }
}

/// `session-state.json`: where the current task stands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// The task being worked on, in one sentence.
    pub task: String,
    /// Current phase (e.g. investigating, implementing, testing, reviewing).
    pub phase: String,
    /// Steps done (append; the latest are injected).
    pub completed: Vec<String>,
    /// Next steps, in order.
    pub next_steps: Vec<String>,
    /// Files in scope for the task.
    pub file_scope: Vec<String>,
    /// What blocks progress.
    pub blockers: Vec<String>,
    /// When it was last updated (free text, e.g. RFC 3339).
    pub updated_at: Option<String>,
}

impl SessionState {
    /// True when nothing was filled in.
    pub fn is_empty(&self) -> bool {
        self.task.trim().is_empty()
            && self.phase.trim().is_empty()
            && self.completed.is_empty()
            && self.next_steps.is_empty()
            && self.file_scope.is_empty()
            && self.blockers.is_empty()
    }

    /// Lines in priority order (task first, oldest completed steps last).
    fn lines(&self) -> Vec<String> {
        let join = |v: &[String]| {
            v.iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        };
        let mut out = Vec::new();
        if !self.task.trim().is_empty() {
            out.push(format!("Task: {}", self.task.trim()));
        }
        if !self.phase.trim().is_empty() {
            out.push(format!("Phase: {}", self.phase.trim()));
        }
        if !self.next_steps.is_empty() {
            out.push(format!("Next: {}", join(&self.next_steps)));
        }
        if !self.blockers.is_empty() {
            out.push(format!("Blockers: {}", join(&self.blockers)));
        }
        if !self.file_scope.is_empty() {
            out.push(format!("Files in scope: {}", join(&self.file_scope)));
        }
        if !self.completed.is_empty() {
            let n = self.completed.len();
            let latest = &self.completed[n.saturating_sub(3)..];
            out.push(format!(
                "Done (latest {} of {n}): {}",
                latest.len(),
                join(latest)
            ));
        }
        out
    }
}

/// One injected line.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryLine {
    /// File it came from.
    pub file: String,
    /// Text (one line).
    pub text: String,
    /// Keep-value inside the restore block (memory lines outrank archived turns; inside the
    /// memory section newer lines outrank older ones).
    pub value: f32,
}

/// The `.memctl/memory` directory for a project: `cfg.dir` (`MEMCTL_MEMORY_DIR`) when the user
/// names one, else `<project>/.memctl/memory`.
///
/// Why never a parent directory: anything found above the project (a shared `/tmp`, the folder
/// a repository was cloned into, another user's home) would be injected into the model's
/// context as the project's own memory. The project root is where Claude Code runs
/// (`cwd`, `CLAUDE_PROJECT_DIR`); a sub-folder is not a project.
pub fn find_dir(project: &str, cfg: &MemoryConfig) -> Option<PathBuf> {
    if let Some(d) = &cfg.dir {
        return d.is_dir().then(|| d.clone());
    }
    if project.is_empty() {
        return None;
    }
    let m = Path::new(project).join(MEMORY_DIR);
    if !m.is_dir() {
        return None;
    }
    match crate::paths::resolves_inside(&m, Path::new(project)) {
        Ok(true) => Some(m),
        Ok(false) => {
            tracing::warn!(dir = %m.display(), "memory folder links out of the project; skipped");
            None
        }
        Err(e) => {
            tracing::warn!(dir = %m.display(), error = %e, "memory folder skipped");
            None
        }
    }
}

/// Largest memory file read (a few KB is typical; only the newest lines are injected anyway).
pub const MAX_FILE_BYTES: u64 = 256 << 10;

/// Read one memory file of `dir`: a bounded regular-file read; a missing file is `None`
/// silently, anything else unreadable (a FIFO, a device, a 3 GB file, a link out of `dir`) is
/// `None` with a log line.
fn read_memory_file(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let path = dir.join(name);
    match crate::paths::resolves_inside(&path, dir) {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(file = %path.display(), "memory file links out of its folder; skipped");
            return None;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "memory file skipped");
            return None;
        }
    }
    match crate::paths::read_regular(&path, MAX_FILE_BYTES) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "memory file skipped");
            None
        }
    }
}

/// Content lines of a markdown memory file: HTML comments, headings and blank lines removed,
/// list markers stripped. Empty when the file is still its template.
pub fn markdown_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for raw in text.lines() {
        let mut line = String::new();
        let mut rest = raw;
        loop {
            if in_comment {
                match rest.find("-->") {
                    Some(i) => {
                        in_comment = false;
                        rest = &rest[i + 3..];
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(i) => {
                        line.push_str(&rest[..i]);
                        in_comment = true;
                        rest = &rest[i + 4..];
                    }
                    None => {
                        line.push_str(rest);
                        break;
                    }
                }
            }
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t
            .strip_prefix("- [ ] ")
            .map(|s| format!("[ ] {s}"))
            .or_else(|| t.strip_prefix("- [x] ").map(|s| format!("[x] {s}")))
            .unwrap_or_else(|| {
                t.trim_start_matches("- ")
                    .trim_start_matches("* ")
                    .to_string()
            });
        if !t.trim().is_empty() {
            out.push(t.trim().to_string());
        }
    }
    out
}

/// Keep the last lines of `lines` whose rendered size fits `cap` (order preserved).
fn newest_within(lines: &[String], label: &str, cap: usize, line_chars: usize) -> Vec<String> {
    let mut kept = Vec::new();
    let mut used = 0;
    for l in lines.iter().rev() {
        let l = crate::transcript::ellipsize(l, line_chars).into_owned();
        let cost = rendered_len(label, &l);
        if used + cost > cap {
            break;
        }
        used += cost;
        kept.push(l);
    }
    kept.reverse();
    kept
}

/// Characters one line takes in the restore block: `- [label] text\n`.
fn rendered_len(label: &str, text: &str) -> usize {
    label.chars().count() + text.chars().count() + 6
}

/// Keep the first lines of `lines` (priority order) within `cap`.
fn first_within(lines: &[String], label: &str, cap: usize, line_chars: usize) -> Vec<String> {
    let mut kept = Vec::new();
    let mut used = 0;
    for l in lines {
        let l = crate::transcript::ellipsize(l, line_chars).into_owned();
        let cost = rendered_len(label, &l);
        if used + cost > cap {
            continue;
        }
        used += cost;
        kept.push(l);
    }
    kept
}

/// The lines to inject from a memory directory (empty when disabled or nothing is filled in).
pub fn collect(dir: &Path, cfg: &MemoryConfig) -> Vec<MemoryLine> {
    if !cfg.enabled || cfg.budget_chars == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut left = cfg.budget_chars;
    let mut push = |file: &str, label: &str, lines: Vec<String>, left: &mut usize| {
        let n = lines.len();
        for (i, text) in lines.into_iter().enumerate() {
            *left = left.saturating_sub(rendered_len(label, &text));
            // Newer (later) lines are worth more; files earlier in priority order more still.
            let value = 1000.0 - out.len() as f32 * 0.001 + (i as f32 / n.max(1) as f32) * 0.0005;
            out.push(MemoryLine {
                file: file.to_string(),
                text: format!("[{label}] {text}"),
                value,
            });
        }
    };
    // session-state.json first: it says where the task stands.
    if let Some(bytes) = read_memory_file(dir, SESSION_STATE_FILE) {
        match serde_json::from_slice::<SessionState>(&bytes) {
            Ok(st) if !st.is_empty() => {
                let lines = first_within(
                    &st.lines(),
                    "state",
                    cfg.file_chars.min(left),
                    cfg.line_chars,
                );
                push(SESSION_STATE_FILE, "state", lines, &mut left);
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, dir = %dir.display(), "session-state.json is not valid; skipped");
            }
        }
    }
    for file in FILES {
        let Some(bytes) = read_memory_file(dir, file) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let label = file.trim_end_matches(".md");
        let lines = markdown_lines(&text);
        if lines.is_empty() {
            continue; // still the template
        }
        let kept = newest_within(&lines, label, cfg.file_chars.min(left), cfg.line_chars);
        push(file, label, kept, &mut left);
    }
    out
}

/// The lines to inject for a project (finds the directory; empty when there is none).
pub fn restore_lines(project: &str, cfg: &MemoryConfig) -> Vec<MemoryLine> {
    if !cfg.enabled {
        return Vec::new();
    }
    find_dir(project, cfg).map_or_else(Vec::new, |d| collect(&d, cfg))
}

/// What [`init`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitFile {
    /// The file.
    pub path: PathBuf,
    /// True when created now (false: it existed and was left alone).
    pub created: bool,
}

/// Create `<dir>/.memctl/memory/` with the templates; existing files are never overwritten.
pub fn init(project_dir: &Path) -> std::io::Result<Vec<InitFile>> {
    let dir = project_dir.join(MEMORY_DIR);
    std::fs::create_dir_all(&dir)?;
    let mut out = Vec::new();
    let files = FILES
        .iter()
        .map(|f| (*f, template(f).unwrap_or_default()))
        .chain(std::iter::once((
            SESSION_STATE_FILE,
            SESSION_STATE_TEMPLATE,
        )));
    for (name, body) in files {
        let path = dir.join(name);
        let created = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                use std::io::Write as _;
                f.write_all(body.as_bytes())?;
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(e),
        };
        out.push(InitFile { path, created });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
