//! Folding telemetry files into per-hook, per-session and overall counts (`memctl status`,
//! the status line). Tokens are derived here from the summed characters, with the one
//! estimator ([`crate::autopilot::tokens_from_chars`]).

use super::{ContextSample, Injection, Record, SessionLog, TelemetryError};
use crate::autopilot::AutopilotConfig;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Character sums before tokens are derived.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    calls: u64,
    chars: Injection,
}

impl Tally {
    fn add(&mut self, i: &Injection) {
        self.calls += 1;
        self.chars.injected_chars += i.injected_chars;
        self.chars.summarizer_chars += i.summarizer_chars;
        self.chars.removed_chars += i.removed_chars;
    }

    fn merge(&mut self, o: &Tally) {
        self.calls += o.calls;
        self.chars.injected_chars += o.chars.injected_chars;
        self.chars.summarizer_chars += o.chars.summarizer_chars;
        self.chars.removed_chars += o.chars.removed_chars;
    }

    fn counts(&self, cpt: f32) -> Counts {
        let t = |c| crate::autopilot::tokens_from_chars(c, cpt);
        Counts {
            calls: self.calls,
            injected_chars: self.chars.injected_chars,
            injected_tokens: t(self.chars.injected_chars),
            summarizer_chars: self.chars.summarizer_chars,
            summarizer_tokens: t(self.chars.summarizer_chars),
            removed_chars: self.chars.removed_chars,
            removed_tokens: t(self.chars.removed_chars),
        }
    }
}

/// Sums over some hook runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Hook runs that printed something.
    pub calls: u64,
    /// Characters added to the context.
    pub injected_chars: u64,
    /// Estimated tokens of those.
    pub injected_tokens: u64,
    /// Characters handed to the compaction summariser (PreCompact).
    pub summarizer_chars: u64,
    /// Estimated tokens of those.
    pub summarizer_tokens: u64,
    /// Characters removed by swapping tool outputs for digests.
    pub removed_chars: u64,
    /// Estimated tokens of those.
    pub removed_tokens: u64,
}

/// The sums of one hook event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookCounts {
    /// Event name.
    pub hook: String,
    /// Its sums.
    #[serde(flatten)]
    pub counts: Counts,
}

/// One session's telemetry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReport {
    /// Session id.
    pub session_id: String,
    /// Unix seconds of the first and the last record (0 when none).
    pub first_at: i64,
    /// See `first_at`.
    pub last_at: i64,
    /// Sums over every hook of the session.
    pub total: Counts,
    /// Sums per hook event, by name.
    pub hooks: Vec<HookCounts>,
    /// The latest context-window numbers from Claude Code's status line, if any.
    pub context: Option<ContextSample>,
    /// How full the session's context was last seen: Claude Code's numbers when the status
    /// line recorded them, else memctl's own estimate (None from [`summarize`], which reads
    /// only the telemetry file).
    pub fill: Option<ContextFill>,
    /// Lines of the file that did not parse.
    pub skipped_lines: u64,
}

/// Where a [`ContextFill`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FillSource {
    /// `context_window` of Claude Code's status-line input (exact).
    ClaudeCode,
    /// memctl's autopilot sample at the session's last prompt (transcript usage or chars).
    Estimate,
}

/// A session's context size, last seen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContextFill {
    /// Tokens in the context.
    pub used_tokens: u64,
    /// Window size (Claude Code's when it reported one, else the configured one).
    pub window_tokens: u64,
    /// `used / window × 100`.
    pub percent: f64,
    /// Where `used_tokens` came from.
    pub source: FillSource,
    /// Unix seconds of the numbers.
    pub at: i64,
}

/// The context fill of a session: Claude Code's numbers (`latest`, from the status line) when
/// they carry a usage, else the autopilot's last sample. The window is Claude Code's when it
/// reported one, else `cfg.window_tokens`.
pub fn context_fill(
    data_dir: &Path,
    session_id: &str,
    latest: Option<&ContextSample>,
    cfg: &AutopilotConfig,
) -> Option<ContextFill> {
    let window = latest
        .and_then(|c| c.window_tokens)
        .filter(|w| *w > 0)
        .unwrap_or(cfg.window_tokens)
        .max(1);
    let (used, source, at) = match latest.and_then(|c| Some((c.used_tokens?, c.at))) {
        Some((used, at)) => (used, FillSource::ClaudeCode, at),
        None => {
            let s = *crate::autopilot::load_state(data_dir, session_id)
                .samples
                .last()?;
            (s.tokens, FillSource::Estimate, s.at)
        }
    };
    Some(ContextFill {
        used_tokens: used,
        window_tokens: window,
        percent: used as f64 * 100.0 / window as f64,
        source,
        at,
    })
}

/// Every session's telemetry under a data dir.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TelemetryReport {
    /// Sessions with a readable telemetry file.
    pub sessions: u64,
    /// Sums over every session and hook.
    pub total: Counts,
    /// Sums per hook event over every session.
    pub hooks: Vec<HookCounts>,
    /// The most recent sessions (by last record), newest first.
    pub recent: Vec<SessionReport>,
    /// Lines skipped over all files.
    pub skipped_lines: u64,
    /// Files that could not be read (`file: error`).
    pub unreadable: Vec<String>,
}

/// A session's fold before tokens.
struct Folded {
    session_id: String,
    first_at: i64,
    last_at: i64,
    context: Option<ContextSample>,
    skipped_lines: u64,
    total: Tally,
    hooks: BTreeMap<String, Tally>,
}

fn fold(log: &SessionLog, fallback_id: &str) -> Folded {
    let mut total = Tally::default();
    let mut hooks: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut id = None;
    for r in &log.records {
        let (sid, at) = match r {
            Record::Hook(h) => {
                total.add(&h.injection);
                hooks.entry(h.hook.clone()).or_default().add(&h.injection);
                (&h.session_id, h.at)
            }
            Record::Context(c) => (&c.session_id, c.at),
        };
        id.get_or_insert(sid);
        first = first.min(at);
        last = last.max(at);
    }
    if log.records.is_empty() {
        (first, last) = (0, 0);
    }
    Folded {
        session_id: id.map_or_else(|| fallback_id.to_string(), String::clone),
        first_at: first,
        last_at: last,
        context: log.latest_context().cloned(),
        skipped_lines: log.skipped_lines,
        total,
        hooks,
    }
}

fn hook_counts(hooks: &BTreeMap<String, Tally>, cpt: f32) -> Vec<HookCounts> {
    hooks
        .iter()
        .map(|(hook, t)| HookCounts {
            hook: hook.clone(),
            counts: t.counts(cpt),
        })
        .collect()
}

fn session_of(f: &Folded, cpt: f32) -> SessionReport {
    SessionReport {
        session_id: f.session_id.clone(),
        first_at: f.first_at,
        last_at: f.last_at,
        total: f.total.counts(cpt),
        hooks: hook_counts(&f.hooks, cpt),
        context: f.context.clone(),
        fill: None,
        skipped_lines: f.skipped_lines,
    }
}

/// One session's report from its log (`cpt`: characters per token).
pub fn summarize(log: &SessionLog, session_id: &str, cpt: f32) -> SessionReport {
    session_of(&fold(log, session_id), cpt)
}

/// One session's report, its context fill included; `None` when it has no telemetry file.
pub fn session_report(
    data_dir: &Path,
    session_id: &str,
    cfg: &AutopilotConfig,
) -> Result<Option<SessionReport>, TelemetryError> {
    let Some(log) = super::read_session(data_dir, session_id)? else {
        return Ok(None);
    };
    let mut r = summarize(&log, session_id, cfg.chars_per_token);
    r.fill = context_fill(data_dir, session_id, r.context.as_ref(), cfg);
    Ok(Some(r))
}

/// Every session's telemetry under `data_dir`, with the `recent` most recent sessions in
/// detail. A file (or the directory) that cannot be read is listed in
/// [`TelemetryReport::unreadable`], not an error: `memctl status` shows what it can. No
/// telemetry directory is an empty report.
pub fn report(
    data_dir: &Path,
    recent: usize,
    cfg: &AutopilotConfig,
) -> Result<TelemetryReport, TelemetryError> {
    let cpt = cfg.chars_per_token;
    let dir = data_dir.join(super::DIR);
    let mut out = TelemetryReport::default();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => {
            // `memctl status` still shows the store (a data dir of another user, a bad mode).
            out.unreadable.push(format!("{}: {e}", dir.display()));
            return Ok(out);
        }
    };
    let mut total = Tally::default();
    let mut hooks: BTreeMap<String, Tally> = BTreeMap::new();
    let mut sessions = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.unreadable.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let log = match super::read_file(&entry.path()) {
            Ok(l) => l,
            Err(e) => {
                out.unreadable.push(format!("{name}: {e}"));
                continue;
            }
        };
        let f = fold(&log, stem);
        total.merge(&f.total);
        for (h, t) in &f.hooks {
            hooks.entry(h.clone()).or_default().merge(t);
        }
        out.skipped_lines += log.skipped_lines;
        sessions.push(f);
    }
    out.sessions = sessions.len() as u64;
    out.total = total.counts(cpt);
    out.hooks = hook_counts(&hooks, cpt);
    sessions.sort_by(|a, b| {
        b.last_at
            .cmp(&a.last_at)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    out.recent = sessions
        .iter()
        .take(recent)
        .map(|f| {
            let mut r = session_of(f, cpt);
            r.fill = context_fill(data_dir, &r.session_id, r.context.as_ref(), cfg);
            r
        })
        .collect();
    out.unreadable.sort();
    Ok(out)
}
