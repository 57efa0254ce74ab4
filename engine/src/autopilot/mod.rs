//! Context autopilot: how full is the model's context window, how fast is it filling, and when
//! should the agent checkpoint before compaction.
//!
//! Why from the transcript tail: the last assistant message's `usage` holds exactly what the
//! API counted for the context (`input_tokens + cache_read_input_tokens +
//! cache_creation_input_tokens`), and it sits at the end of the file. Hooks and the status line
//! run often, so we read only the last [`AutopilotConfig::tail_bytes`] (seek from the end), never
//! the whole transcript. Without usage (or when a compaction happened after it) we estimate
//! `content chars / 3.5` since the last compact boundary.
//!
//! The trend ("tokens per prompt") comes from samples recorded at each UserPromptSubmit in a
//! small per-session JSON file under `<data dir>/autopilot/`.

mod estimate;
mod statusline;

pub use estimate::{Estimate, TokenSource, estimate_transcript, tokens_from_chars};
pub use statusline::{MemTokens, StatusInput, format_count, format_statusline, format_tokens};

use crate::error::StoreError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Autopilot settings (defaults are the product's; variables in [`crate::Settings::autopilot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AutopilotConfig {
    /// Context window in tokens (default 200 000).
    pub window_tokens: u64,
    /// Warn at this percentage (default 70).
    pub warn_pct: f32,
    /// Critical at this percentage (default 85).
    pub critical_pct: f32,
    /// Bytes read from the end of the transcript (default 64 KiB).
    pub tail_bytes: u64,
    /// Samples the trend is computed from (default 5).
    pub trend_samples: usize,
    /// Characters per token of the fallback estimate (default 3.5).
    pub chars_per_token: f32,
    /// Emit a one-line note from UserPromptSubmit above the warn threshold (default off).
    pub note: bool,
}

impl Default for AutopilotConfig {
    fn default() -> Self {
        Self {
            window_tokens: 200_000,
            warn_pct: 70.0,
            critical_pct: 85.0,
            tail_bytes: 64 * 1024,
            trend_samples: 5,
            chars_per_token: 3.5,
            note: false,
        }
    }
}

/// How full the context is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Below the warn threshold.
    Ok,
    /// At or above warn, below critical.
    Warn,
    /// At or above critical.
    Critical,
}

/// The level of `pct` under `cfg`'s thresholds.
pub fn level(pct: f32, cfg: &AutopilotConfig) -> Level {
    if pct >= cfg.critical_pct {
        Level::Critical
    } else if pct >= cfg.warn_pct {
        Level::Warn
    } else {
        Level::Ok
    }
}

/// One recorded sample (at a UserPromptSubmit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Unix seconds.
    pub at: i64,
    /// Context tokens then.
    pub tokens: u64,
}

/// Per-session autopilot state (persisted as JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AutopilotState {
    /// Most recent samples, oldest first (bounded by [`MAX_SAMPLES`]).
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// Samples kept per session.
pub const MAX_SAMPLES: usize = 16;

impl AutopilotState {
    /// Append a sample, dropping the oldest beyond [`MAX_SAMPLES`].
    pub fn push(&mut self, s: Sample) {
        self.samples.push(s);
        if self.samples.len() > MAX_SAMPLES {
            let drop = self.samples.len() - MAX_SAMPLES;
            self.samples.drain(..drop);
        }
    }
}

/// Tokens per prompt over the last `n` samples. A drop in tokens (compaction, `/clear`) starts
/// a new series: only samples after the last drop count. `None` with fewer than two samples.
pub fn trend(samples: &[Sample], n: usize) -> Option<f64> {
    let recent = &samples[samples.len().saturating_sub(n.max(2))..];
    let start = recent
        .windows(2)
        .rposition(|w| w[1].tokens < w[0].tokens)
        .map_or(0, |i| i + 1);
    let series = &recent[start..];
    if series.len() < 2 {
        return None;
    }
    let (first, last) = (series[0].tokens, series[series.len() - 1].tokens);
    Some((last as f64 - first as f64) / (series.len() - 1) as f64)
}

/// Everything the status line and the note show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextReport {
    /// Context tokens.
    pub tokens: u64,
    /// Window size.
    pub window: u64,
    /// `tokens / window × 100`.
    pub percent: f32,
    /// Threshold level.
    pub level: Level,
    /// Where `tokens` came from.
    pub source: TokenSource,
    /// Tokens added per prompt (recent trend), when known.
    pub per_prompt: Option<f64>,
    /// Prompts until the critical threshold at the current trend, when it is rising.
    pub prompts_to_critical: Option<u64>,
}

/// Combine an estimate, a window and the recorded samples into a report.
pub fn report(
    est: &Estimate,
    window: u64,
    samples: &[Sample],
    cfg: &AutopilotConfig,
) -> ContextReport {
    let window = window.max(1);
    let percent = (est.tokens as f64 * 100.0 / window as f64) as f32;
    let per_prompt = trend(samples, cfg.trend_samples);
    let critical_tokens = (window as f64 * f64::from(cfg.critical_pct) / 100.0) as u64;
    let prompts_to_critical = per_prompt
        .filter(|t| *t >= 1.0)
        .map(|t| ((critical_tokens.saturating_sub(est.tokens)) as f64 / t).ceil() as u64);
    ContextReport {
        tokens: est.tokens,
        window,
        percent,
        level: level(percent, cfg),
        source: est.source,
        per_prompt,
        prompts_to_critical,
    }
}

/// The one-line note for the model above the warn threshold (None below it).
pub fn note(r: &ContextReport) -> Option<String> {
    if r.level == Level::Ok {
        return None;
    }
    let mut s = format!(
        "memctl autopilot: context is {:.0}% full ({}/{} tokens",
        r.percent,
        format_tokens(r.tokens),
        format_tokens(r.window)
    );
    if let Some(t) = r.per_prompt.filter(|t| *t >= 1.0) {
        s.push_str(&format!(", +{}/prompt", format_tokens(t as u64)));
    }
    s.push_str("). ");
    s.push_str(match r.level {
        Level::Critical => {
            "Compaction is near: finish the current step and checkpoint now (update .memctl/memory/active-state.md and session-state.json if the project uses them)."
        }
        _ => {
            "Plan for compaction: keep the task state current (.memctl/memory/active-state.md, session-state.json) at the next natural checkpoint."
        }
    });
    Some(s)
}

/// `<data dir>/autopilot/<sanitized session id>.json`.
pub fn state_path(data_dir: &Path, session_id: &str) -> PathBuf {
    data_dir.join("autopilot").join(format!(
        "{}.json",
        crate::paths::sanitize_component(session_id)
    ))
}

/// A state file is a few hundred bytes; anything bigger is not ours.
const STATE_MAX_BYTES: u64 = 1 << 20;

/// Load a session's state (missing or unreadable file → empty state).
pub fn load_state(data_dir: &Path, session_id: &str) -> AutopilotState {
    crate::paths::read_regular(&state_path(data_dir, session_id), STATE_MAX_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Save a session's state atomically (temp file + rename, 0600 in a 0700 dir).
pub fn save_state(
    data_dir: &Path,
    session_id: &str,
    st: &AutopilotState,
) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(st).map_err(|e| StoreError::Encode(e.to_string()))?;
    crate::paths::write_private_atomic(&state_path(data_dir, session_id), &bytes)
}

/// UserPromptSubmit: estimate the context from the transcript tail, record a sample, and
/// return the report (None when the transcript has nothing to estimate from).
pub fn on_prompt(
    data_dir: &Path,
    session_id: &str,
    transcript: &Path,
    cfg: &AutopilotConfig,
    now: i64,
) -> Result<Option<ContextReport>, StoreError> {
    let est = match estimate_transcript(transcript, cfg) {
        Ok(Some(e)) => e,
        Ok(None) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: transcript.to_path_buf(),
                source,
            });
        }
    };
    let mut st = load_state(data_dir, session_id);
    st.push(Sample {
        at: now,
        tokens: est.tokens,
    });
    save_state(data_dir, session_id, &st)?;
    Ok(Some(report(&est, cfg.window_tokens, &st.samples, cfg)))
}

/// Hook step (UserPromptSubmit): record a sample and return the one-line note when notes are
/// enabled and the context is above the warn threshold. Failures are logged, never returned.
pub fn on_prompt_hook(
    data_dir: &Path,
    session_id: &str,
    transcript: Option<&Path>,
    cfg: &AutopilotConfig,
) -> Option<String> {
    let t = transcript.filter(|t| !t.as_os_str().is_empty())?;
    if session_id.is_empty() {
        return None;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    match on_prompt(data_dir, session_id, t, cfg, now) {
        Ok(Some(r)) if cfg.note => note(&r),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(error = %e, "autopilot sample not recorded");
            None
        }
    }
}

#[cfg(test)]
mod tests;
