//! Tool output text and input summaries from PostToolUse payloads.
//!
//! Shapes observed in real transcripts (`toolUseResult`, which Claude Code also sends as the
//! hook's `tool_response`; see `shared/harness/transcripts/tools-gallery`):
//! - Read: `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`
//! - Bash: `{"stdout","stderr","interrupted","isImage",...}`
//! - Grep: `{"mode":"content"|"files_with_matches"|"count","content"?,"filenames":[..],"numFiles",..}`
//! - Glob: `{"filenames":[..],"durationMs","numFiles","truncated",..}`
//! - WebFetch: `{"bytes","code","codeText","result","durationMs","url"}`
//! - failures (PostToolUseFailure `error`) and some results are plain JSON strings.
//!
//! Each tool has a typed struct; anything that does not fit falls back to the JSON string's
//! value, else the raw JSON text, so nothing is ever lost.

use serde::Deserialize;

#[derive(Deserialize)]
struct ReadFile {
    content: String,
}

#[derive(Deserialize)]
struct ReadResponse {
    file: ReadFile,
}

#[derive(Deserialize)]
struct BashResponse {
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    stderr: Option<String>,
}

#[derive(Deserialize)]
struct GrepResponse {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    filenames: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct GlobResponse {
    filenames: Vec<String>,
}

#[derive(Deserialize)]
struct WebFetchResponse {
    result: String,
}

/// The text a tool produced, from its `tool_response` JSON text.
pub fn output_text(tool: &str, response: &str) -> String {
    typed_output(tool, response).unwrap_or_else(|| fallback(response))
}

fn typed_output(tool: &str, response: &str) -> Option<String> {
    match tool {
        "Read" => serde_json::from_str::<ReadResponse>(response)
            .ok()
            .map(|r| r.file.content),
        "Bash" => {
            let r: BashResponse = serde_json::from_str(response).ok()?;
            if r.stdout.is_none() && r.stderr.is_none() {
                return None;
            }
            let mut out = r.stdout.unwrap_or_default();
            let err = r.stderr.unwrap_or_default();
            if !err.is_empty() {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&err);
            }
            Some(out)
        }
        "Grep" => {
            let r: GrepResponse = serde_json::from_str(response).ok()?;
            // `content` in content/count modes; the file list in files_with_matches mode.
            if let Some(c) = r.content.filter(|c| !c.is_empty()) {
                return Some(c);
            }
            r.filenames.map(|f| f.join("\n"))
        }
        "Glob" => serde_json::from_str::<GlobResponse>(response)
            .ok()
            .map(|r| r.filenames.join("\n")),
        "WebFetch" => serde_json::from_str::<WebFetchResponse>(response)
            .ok()
            .map(|r| r.result),
        _ => None,
    }
}

/// A JSON string's value; other JSON (a response of a shape we do not know, such as a Read of
/// a notebook) with every string redacted as its unescaped text ([`crate::redact::redact_json`]:
/// redacting escaped JSON text misses secrets); else the raw text.
fn fallback(response: &str) -> String {
    if let Ok(s) = serde_json::from_str::<String>(response) {
        return s;
    }
    crate::redact::redact_json(response).unwrap_or_else(|| response.to_string())
}

#[derive(Deserialize)]
struct ReadInput {
    #[serde(default)]
    file_path: Option<String>,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
}

#[derive(Deserialize)]
struct BashInput {
    #[serde(default)]
    command: Option<String>,
}

#[derive(Deserialize)]
struct SearchInput {
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
}

#[derive(Deserialize)]
struct WebFetchInput {
    #[serde(default)]
    url: Option<String>,
}

/// Longest input summary (characters).
pub const MAX_INPUT_SUMMARY: usize = 200;

/// A one-line summary of the tool input: file path, command, pattern (+ path), URL.
/// Not redacted here (the caller redacts).
pub fn input_summary(tool: &str, input: &str) -> String {
    let s = match tool {
        "Read" => serde_json::from_str::<ReadInput>(input).ok().and_then(|i| {
            let p = i.file_path?;
            Some(match (i.offset, i.limit) {
                (None, None) => p,
                (o, l) => format!(
                    "{p} (lines {}..{})",
                    o.unwrap_or(1),
                    l.map_or(String::new(), |l| (o.unwrap_or(1) + l).to_string())
                ),
            })
        }),
        t if crate::patterns::is_shell_tool(t) => serde_json::from_str::<BashInput>(input)
            .ok()
            .and_then(|i| i.command),
        "Grep" | "Glob" => serde_json::from_str::<SearchInput>(input)
            .ok()
            .and_then(|i| {
                let mut s = i.pattern?;
                if let Some(g) = i.glob {
                    s.push_str(&format!(" --glob {g}"));
                }
                if let Some(p) = i.path {
                    s.push_str(&format!(" in {p}"));
                }
                Some(s)
            }),
        "WebFetch" => serde_json::from_str::<WebFetchInput>(input)
            .ok()
            .and_then(|i| i.url),
        _ => None,
    };
    let s = s.unwrap_or_else(|| input.to_string());
    crate::transcript::clip_line(&s, MAX_INPUT_SUMMARY)
}
