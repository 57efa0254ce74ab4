//! Context size from the transcript tail: API `usage` when present, else chars / 3.5.

use super::AutopilotConfig;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Where a token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenSource {
    /// The API's `usage` of the last assistant message (exact).
    Usage,
    /// Claude Code's status line `context_window.current_usage` (exact).
    Statusline,
    /// Characters / [`AutopilotConfig::chars_per_token`] since the last compact boundary.
    Estimate,
}

/// A context size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Tokens in the context.
    pub tokens: u64,
    /// How they were counted.
    pub source: TokenSource,
}

#[derive(Deserialize)]
struct TailLine {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(default)]
    message: Option<TailMessage>,
    #[serde(default)]
    attachment: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Deserialize)]
struct TailMessage {
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    content: Option<Box<serde_json::value::RawValue>>,
}

/// The API's token usage of one message (fields Claude Code writes; missing ones count 0).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
}

/// Estimate from the last bytes of a transcript.
///
/// `tail` holds the last bytes of the file; `from_start` says whether it is the whole file
/// (otherwise its first, partial line is dropped); `total_len` is the file length (used to
/// extrapolate the fallback when the compact boundary is not inside the tail).
pub fn estimate_tail(
    tail: &[u8],
    from_start: bool,
    total_len: u64,
    cfg: &AutopilotConfig,
) -> Option<Estimate> {
    let body = if from_start {
        tail
    } else {
        match tail.iter().position(|&b| b == b'\n') {
            Some(i) => &tail[i + 1..],
            None => return None,
        }
    };
    // (content chars of the line, usage if an assistant line has it, is a compact boundary)
    let mut last_usage: Option<(usize, u64)> = None;
    let mut last_boundary: Option<usize> = None;
    let mut content: Vec<u64> = Vec::new();
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let Ok(line) = serde_json::from_slice::<TailLine>(raw) else {
            content.push(0);
            continue;
        };
        if line.is_sidechain {
            content.push(0);
            continue;
        }
        let kind = line.kind.as_deref().unwrap_or_default();
        if kind == "system" && line.subtype.as_deref() == Some("compact_boundary") {
            last_boundary = Some(i);
        }
        let mut chars = 0u64;
        if let Some(m) = &line.message {
            if kind == "assistant"
                && let Some(u) = m.usage
            {
                let t = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
                if t > 0 {
                    last_usage = Some((i, t));
                }
            }
            if let Some(c) = &m.content {
                chars += c.get().chars().count() as u64;
            }
        }
        if kind == "attachment"
            && let Some(a) = &line.attachment
        {
            chars += a.get().chars().count() as u64;
        }
        content.push(chars);
    }
    if let Some((at, tokens)) = last_usage
        && last_boundary.is_none_or(|b| at > b)
    {
        return Some(Estimate {
            tokens,
            source: TokenSource::Usage,
        });
    }
    let chars: u64 = match last_boundary {
        Some(b) => content[b + 1..].iter().sum(),
        None => {
            let seen: u64 = content.iter().sum();
            if from_start || body.is_empty() {
                seen
            } else {
                // The boundary (or the file start) lies before the tail: extrapolate the
                // tail's content density over the whole file.
                (seen as f64 * total_len as f64 / body.len() as f64) as u64
            }
        }
    };
    if chars == 0 {
        return None;
    }
    Some(Estimate {
        tokens: tokens_from_chars(chars, cfg.chars_per_token),
        source: TokenSource::Estimate,
    })
}

/// The one characters → tokens estimate of memctl: `chars / chars_per_token`, rounded
/// ([`AutopilotConfig::chars_per_token`], 3.5 by default; at least 0.5 so a bad setting cannot
/// blow the count up). Used for the context fill and for injection telemetry
/// ([`crate::telemetry`]), so both speak of the same tokens.
pub fn tokens_from_chars(chars: u64, chars_per_token: f32) -> u64 {
    (chars as f64 / f64::from(chars_per_token.max(0.5))).round() as u64
}

/// Read the last [`AutopilotConfig::tail_bytes`] of a transcript and estimate from them.
pub fn estimate_transcript(
    path: &Path,
    cfg: &AutopilotConfig,
) -> std::io::Result<Option<Estimate>> {
    // The payload's path: a FIFO or a device must not hang the prompt.
    let mut f = crate::paths::open_regular(path)?;
    let len = f.metadata()?.len();
    let want = cfg.tail_bytes.max(1024).min(len);
    let start = len - want;
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(want as usize);
    f.take(want).read_to_end(&mut buf)?;
    Ok(estimate_tail(&buf, start == 0, len, cfg))
}
