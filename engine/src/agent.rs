//! Which coding agent wrote a session: each has its own transcript format, and a session keeps
//! its agent in the archive (`memctl search --agent`, labels in results).

use serde::{Deserialize, Serialize};

/// A coding agent whose sessions memctl archives. Exhaustive on purpose: a new agent needs an
/// adapter, a transcript decoder and an install, and the compiler should point at each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// Claude Code (every session archived before agents were told apart is one).
    #[default]
    #[serde(rename = "claude", alias = "claude-code")]
    ClaudeCode,
    /// OpenAI's Codex CLI (rollout JSONL under `$CODEX_HOME/sessions/`).
    Codex,
    /// Google's Gemini CLI (chat JSONL under `~/.gemini/tmp/<project>/chats/`).
    Gemini,
}

impl Agent {
    /// Every agent, in the order help texts list them.
    pub const ALL: [Self; 3] = [Self::ClaudeCode, Self::Codex, Self::Gemini];

    /// The short name used on the command line, in settings and in output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
        }
    }

    /// The agent of a short name (`claude-code` is accepted for Claude Code too).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "gemini" => Some(Self::Gemini),
            _ => None,
        }
    }

    /// The agent whose transcript starts with `first_line` (one JSON line, without `\n`).
    /// Codex rollouts open with a `session_meta` line, Gemini chats with a header holding
    /// `sessionId` and `projectHash` (or a message line of type `gemini`); anything else is
    /// read as Claude Code's format, whose parser skips what it does not know.
    pub fn sniff(first_line: &[u8]) -> Self {
        #[derive(Deserialize)]
        struct Head {
            #[serde(rename = "type", default)]
            kind: Option<String>,
            #[serde(rename = "sessionId", default)]
            session_id: Option<serde::de::IgnoredAny>,
            #[serde(rename = "projectHash", default)]
            project_hash: Option<serde::de::IgnoredAny>,
        }
        let Ok(head) = serde_json::from_slice::<Head>(first_line) else {
            return Self::ClaudeCode;
        };
        match head.kind.as_deref() {
            Some("session_meta") => Self::Codex,
            Some("gemini") => Self::Gemini,
            None if head.session_id.is_some() && head.project_hash.is_some() => Self::Gemini,
            _ => Self::ClaudeCode,
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_recorded_transcript_is_recognised_by_its_first_line() {
        let first = |name: &str| {
            let path = format!(
                "{}/../tests/fixtures/agents/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let end = bytes
                .iter()
                .position(|b| *b == b'\n')
                .unwrap_or(bytes.len());
            Agent::sniff(&bytes[..end])
        };
        assert_eq!(first("codex-0.171.0.jsonl"), Agent::Codex);
        assert_eq!(first("gemini-0.61.0.jsonl"), Agent::Gemini);
        assert_eq!(
            Agent::sniff(br#"{"type":"user","sessionId":"s","message":{"content":"hi"}}"#),
            Agent::ClaudeCode
        );
        assert_eq!(Agent::sniff(b"not json"), Agent::ClaudeCode);
        assert_eq!(
            Agent::sniff(br#"{"sessionId":"s","projectHash":"h","startTime":"t"}"#),
            Agent::Gemini
        );
    }

    #[test]
    fn names_round_trip() {
        for a in Agent::ALL {
            assert_eq!(Agent::from_name(a.as_str()), Some(a));
        }
        assert_eq!(Agent::from_name("Claude-Code"), Some(Agent::ClaudeCode));
        assert_eq!(Agent::from_name("cursor"), None);
    }
}
