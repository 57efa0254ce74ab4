//! Templates written by `memctl memory init`: a heading and an HTML comment saying what goes in
//! the file. A file that still holds only these is skipped at injection.

/// The template of a markdown memory file (None for unknown names).
pub fn template(file: &str) -> Option<&'static str> {
    Some(match file {
        "active-state.md" => ACTIVE_STATE,
        "decisions.md" => DECISIONS,
        "gotchas.md" => GOTCHAS,
        "feedback.md" => FEEDBACK,
        _ => return None,
    })
}

const ACTIVE_STATE: &str = "# Active state

<!--
What is being worked on right now, in a few lines: the goal, where it stands, what comes next.
Rewrite it (do not append forever) at each checkpoint: after finishing a step, before a risky
change, and when memctl's autopilot says the context is filling up. Newest lines last.
memctl restores the last lines of this file after compaction, /clear and --resume.
-->
";

const DECISIONS: &str = "# Decisions

<!--
One line per decision, appended at the end, newest last:
- 2025-01-31: use X instead of Y, because Z (rejected: W)
Record choices a later session must not undo or re-litigate. memctl restores the latest ones.
-->
";

const GOTCHAS: &str = "# Gotchas

<!--
Traps found the hard way, one line each, appended at the end:
- `cargo test` needs ORT_DYLIB_PATH set, else the model tests skip silently
Commands that must be run a certain way, flaky tests, misleading errors and their real cause.
-->
";

const FEEDBACK: &str = "# Feedback

<!--
What the user asked for or corrected about *how* to work (style, tools, process), one line each,
appended at the end:
- never commit; the lead commits
- prefer small str_replace edits over rewriting files
-->
";

/// The template of `session-state.json` (every field empty: skipped until filled in).
pub const SESSION_STATE_TEMPLATE: &str = r#"{
  "task": "",
  "phase": "",
  "completed": [],
  "next_steps": [],
  "file_scope": [],
  "blockers": [],
  "updated_at": null
}
"#;
