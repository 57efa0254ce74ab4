//! Continuing an existing transcript (`--append-to`): the new lines chain onto its last line
//! and keep its session, cwd, version, branch, clock and context size, as a resumed Claude
//! Code session does.

use super::rng::{Rng, parse_iso};
use super::vocab::PROJECTS;
use super::{AppendError, GenConfig, Generator};
use serde::Deserialize;

/// The fields of an existing line that continuing a transcript needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    uuid: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
    git_branch: Option<String>,
    timestamp: Option<String>,
    message: Option<ProbeMessage>,
}

#[derive(Deserialize)]
struct ProbeMessage {
    role: Option<String>,
    usage: Option<ProbeUsage>,
}

#[derive(Deserialize)]
struct ProbeUsage {
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

impl Generator {
    /// A generator that continues `existing`; its streams depend on the seed and on the length
    /// of `existing`, so appending twice to a growing file gives different turns.
    pub fn continuing(existing: &[u8], cfg: &GenConfig) -> Result<Self, AppendError> {
        let mut g = Self::new(cfg);
        let name = format!("append:{}:{}", cfg.seed, existing.len());
        g.rng = Rng::named(&name);
        g.xrng = Rng::named(&format!("extras:{name}"));
        g.base_context = 15_500 + g.rng.below(3000);
        let mut last = None;
        for line in existing.split(|b| *b == b'\n') {
            let Ok(p) = serde_json::from_slice::<Probe>(line) else {
                continue;
            };
            if let Some(u) = p
                .message
                .as_ref()
                .filter(|m| m.role.as_deref() == Some("assistant"))
                .and_then(|m| m.usage.as_ref())
            {
                g.context =
                    u.cache_read_input_tokens + u.cache_creation_input_tokens + u.output_tokens;
            }
            if p.uuid.is_some() && p.session_id.as_deref().is_some_and(|s| !s.is_empty()) {
                last = Some(p);
            }
        }
        let last = last.ok_or(AppendError::NoChainedLine)?;
        let ts = last.timestamp.unwrap_or_default();
        g.t = parse_iso(&ts).ok_or(AppendError::BadTimestamp(ts))?;
        g.parent = last.uuid;
        g.session = last.session_id.unwrap_or_default();
        if let Some(cwd) = last.cwd {
            g.cwd = cwd;
        }
        let trimmed = g.cwd.trim_end_matches('/').to_owned();
        if let Some(&(p, l)) = PROJECTS
            .iter()
            .find(|(p, _)| trimmed.ends_with(&format!("/{p}")))
        {
            (g.project, g.lang) = (p, l);
        }
        g.version = last.version.unwrap_or(g.version);
        g.branch = last.git_branch.unwrap_or(g.branch);
        Ok(g)
    }
}
