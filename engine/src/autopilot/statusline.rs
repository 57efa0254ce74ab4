//! Claude Code's status line input (typed, every field optional) and our one-line rendering.

use super::{ContextReport, Level, TokenSource};
use serde::Deserialize;

/// The JSON Claude Code writes to a `statusLine` command's stdin. Every field is optional:
/// older and newer versions add or drop fields, and the status line must never fail.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StatusInput {
    /// Session id.
    #[serde(default)]
    pub session_id: String,
    /// Transcript path.
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Model in use.
    #[serde(default)]
    pub model: Option<ModelInfo>,
    /// Workspace directories.
    #[serde(default)]
    pub workspace: Option<WorkspaceInfo>,
    /// Claude Code version.
    #[serde(default)]
    pub version: Option<String>,
    /// Context window facts (newer versions).
    #[serde(default)]
    pub context_window: Option<ContextWindowInfo>,
}

/// `model`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModelInfo {
    /// Model id (`claude-sonnet-4-5-...`).
    #[serde(default)]
    pub id: Option<String>,
    /// Display name (`Sonnet 4.5`).
    #[serde(default)]
    pub display_name: Option<String>,
}

/// `workspace`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WorkspaceInfo {
    /// Current directory.
    #[serde(default)]
    pub current_dir: Option<String>,
    /// Directory Claude Code was started in.
    #[serde(default)]
    pub project_dir: Option<String>,
}

/// `context_window`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContextWindowInfo {
    /// Window size in tokens.
    #[serde(default)]
    pub context_window_size: Option<u64>,
    /// Usage of the last API call (null right after `/clear`).
    #[serde(default)]
    pub current_usage: Option<CurrentUsage>,
    /// Session totals (cumulative, not the context size: not used for the percentage).
    #[serde(default)]
    pub total_input_tokens: Option<u64>,
    /// Session totals of output tokens.
    #[serde(default)]
    pub total_output_tokens: Option<u64>,
}

/// `context_window.current_usage`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct CurrentUsage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl StatusInput {
    /// The window size Claude Code reports, if any.
    pub fn window(&self) -> Option<u64> {
        self.context_window
            .as_ref()
            .and_then(|c| c.context_window_size)
            .filter(|n| *n > 0)
    }

    /// Context tokens from `current_usage`, if Claude Code reported them.
    pub fn current_tokens(&self) -> Option<u64> {
        let u = self.context_window.as_ref()?.current_usage?;
        let t = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
        (t > 0).then_some(t)
    }

    /// The project directory (workspace.project_dir, else current_dir, else cwd).
    pub fn project(&self) -> Option<&str> {
        let w = self.workspace.as_ref();
        w.and_then(|w| w.project_dir.as_deref())
            .or_else(|| w.and_then(|w| w.current_dir.as_deref()))
            .or(self.cwd.as_deref())
            .filter(|s| !s.is_empty())
    }
}

/// `850`, `8.4k`, `84k`, `1.2M`.
pub fn format_tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (n as f64 / 1000.0).round() as u64)
    } else {
        format!("{:.1}M", n as f64 / 1e6)
    }
}

/// `1,234,567`.
pub fn format_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// This session's injection telemetry on the status line, in estimated tokens
/// ([`crate::telemetry`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemTokens {
    /// Tokens memctl added to the context.
    pub injected: u64,
    /// Tokens memctl took out of the context by swapping tool outputs for digests.
    pub removed: u64,
}

/// One status line:
/// `memctl ● 42% ctx (84k/200k) ↑3.1k/prompt · 1,234 turns archived · mem +1.2k/−5.0k tok`.
///
/// Icons: `●` below warn, `▲` warn, `■` critical, `○` unknown. `~` marks an estimated count.
/// `mem +A/−B tok`: what memctl injected into this session (A) and removed by swapping (B),
/// shown once a hook of the session injected or swapped. ANSI colours only when `color` is set.
pub fn format_statusline(
    r: Option<&ContextReport>,
    archived_turns: Option<u64>,
    mem: Option<MemTokens>,
    color: bool,
) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("memctl ");
    match r {
        None => out.push_str(&paint("2", "○ ctx n/a")),
        Some(r) => {
            let (icon, code) = match r.level {
                Level::Ok => ("●", "32"),
                Level::Warn => ("▲", "33"),
                Level::Critical => ("■", "31"),
            };
            let approx = if r.source == TokenSource::Estimate {
                "~"
            } else {
                ""
            };
            out.push_str(&paint(code, &format!("{icon} {:.0}% ctx", r.percent)));
            out.push_str(&format!(
                " ({approx}{}/{})",
                format_tokens(r.tokens),
                format_tokens(r.window)
            ));
            if let Some(t) = r.per_prompt.filter(|t| *t >= 1.0) {
                out.push_str(&format!(" ↑{}/prompt", format_tokens(t.round() as u64)));
            }
            match r.level {
                Level::Critical => out.push_str(&paint(code, " · checkpoint now")),
                Level::Warn => {
                    if let Some(n) = r.prompts_to_critical {
                        out.push_str(&format!(" · ~{n} prompts to critical"));
                    }
                }
                Level::Ok => {}
            }
        }
    }
    if let Some(n) = archived_turns {
        out.push_str(&format!(
            " · {} turn{} archived",
            format_count(n),
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(m) = mem {
        out.push_str(&format!(
            " · mem +{}/\u{2212}{} tok",
            format_tokens(m.injected),
            format_tokens(m.removed)
        ));
    }
    out
}
