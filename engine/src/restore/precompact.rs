//! Plain-text instructions for Claude's summariser (PreCompact stdout): the open task,
//! decisions and exact identifiers of the latest turns, so the summary keeps them verbatim.

use super::assemble::{RestoreConfig, is_bare_command};
use super::fetch::latest_chunks;
use super::lines::turn_parts;
use super::{RestoreBudget, RestoreLine};
use crate::core::Core;
use crate::error::EngineError;
use crate::patterns::DECISION_RE;

/// The instructions for `session_id`, within `cfg.precompact_chars`. Empty when the session
/// has no turns.
pub(crate) fn compaction_instructions(
    engine: &Core,
    session_id: &str,
    custom: Option<&str>,
    cfg: &RestoreConfig,
) -> Result<String, EngineError> {
    let r = engine.store().read()?;
    let recent = latest_chunks(&r, session_id, 30)?;
    let Some((_, last)) = recent
        .iter()
        .find(|(_, c)| !c.chunk.is_compact_summary && !is_bare_command(&c.chunk.text))
    else {
        return Ok(String::new());
    };
    let task: String = last
        .chunk
        .text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("User: ")
        .trim_end_matches(" (continued)")
        .chars()
        .take(300)
        .collect();
    let mut decisions: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut cmds: Vec<String> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for (_, rec) in &recent {
        for line in rec
            .chunk
            .text
            .lines()
            .filter(|l| l.starts_with("Assistant: "))
        {
            let text = line
                .trim_start_matches("Assistant: ")
                .replace("! ", ". ")
                .replace("? ", ". ");
            for sentence in text.split_inclusive(". ") {
                let s = sentence.trim();
                if DECISION_RE.is_match(s) && s.len() > 12 && decisions.len() < 8 {
                    let s: String = s.chars().take(220).collect();
                    if !decisions.contains(&s) {
                        decisions.push(s);
                    }
                }
            }
        }
        for f in &rec.chunk.files {
            if !files.contains(f) && files.len() < 15 {
                files.push(f.clone());
            }
        }
        let parts = turn_parts(&rec.chunk.text);
        for c in parts.commands {
            if !cmds.contains(&c) && cmds.len() < 8 {
                cmds.push(c);
            }
        }
        if let Some(e) = parts.error
            && !errors.contains(&e)
            && errors.len() < 5
        {
            errors.push(e);
        }
    }
    let mut lines = vec![RestoreLine {
        section: 0,
        order: 0,
        value: 10.0,
        text: format!("Open task (latest request): {task}"),
    }];
    let groups: [(&Vec<String>, &str, f32); 4] = [
        (&decisions, "Decision", 5.0),
        (&files, "File", 4.0),
        (&cmds, "Command", 3.0),
        (&errors, "Error", 2.0),
    ];
    for (list, label, base) in groups {
        for (i, item) in list.iter().enumerate() {
            let item = if label == "Command" {
                format!("`{item}`")
            } else {
                item.clone()
            };
            lines.push(RestoreLine {
                section: 0,
                order: lines.len() as u64,
                value: base - i as f32 * 0.01,
                text: format!("{label}: {item}"),
            });
        }
    }
    if let Some(c) = custom.filter(|c| !c.trim().is_empty()) {
        lines.push(RestoreLine {
            section: 0,
            order: 1,
            value: 9.0,
            text: format!("The user asked to focus on: {c}"),
        });
    }
    let frame = super::Frame {
        open: "<memctl-context kind=\"compaction-instructions\">",
        label: "memctl, for the summary: keep these exact details verbatim (they come from the archived conversation and are easy to lose).",
        close: super::WRAP_CLOSE,
        knob: "MEMCTL_PRECOMPACT_CHARS",
    };
    Ok(super::build_framed(
        frame,
        &["Details to keep"],
        &lines,
        RestoreBudget {
            max_chars: cfg.precompact_chars,
            max_line_chars: 300,
        },
    ))
}
