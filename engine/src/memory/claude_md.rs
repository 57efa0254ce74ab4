//! The CLAUDE.md snippet (`memctl install --claude-md`): the checkpoint protocol in a marked
//! block, inserted or replaced idempotently, removed by `memctl uninstall --claude-md`.

/// Opening marker.
pub const BEGIN: &str =
    "<!-- memctl:begin (managed by `memctl install --claude-md`; edits inside are replaced) -->";
/// Closing marker.
pub const END: &str = "<!-- memctl:end -->";

/// The snippet between the markers.
pub const SNIPPET: &str = "## Memory (memctl)

This project keeps working memory in `.memctl/memory/` (created by `memctl memory init`). memctl
restores it after compaction, `/clear` and `--resume`, so keep it current:

- `session-state.json` — the task, phase, next steps, files in scope, blockers. Update it when the
  task or phase changes and after each completed step.
- `active-state.md` — a few lines on where the work stands. Rewrite it at each checkpoint.
- `decisions.md` — append one line per decision a later session must not undo (what, why).
- `gotchas.md` — append one line per trap found the hard way (command, cause, fix).
- `feedback.md` — append one line per correction the user made about how to work.

Checkpoint (update the files above) after finishing a step, before a risky or long operation, and
at once when memctl's context note says the context is filling up. Keep entries short: the restore
budget is small and the newest lines win. Never put secrets in these files.
";

/// The whole managed block (markers included).
pub fn block() -> String {
    format!("{BEGIN}\n{SNIPPET}{END}\n")
}

/// `text` with the managed block inserted (appended) or replaced in place. Idempotent.
pub fn upsert(text: &str) -> String {
    let block = block();
    if let Some((before, after)) = split(text) {
        return format!("{before}{block}{after}");
    }
    if text.is_empty() {
        return block;
    }
    let sep = if text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{text}{sep}{block}")
}

/// `text` without the managed block (unchanged when there is none).
pub fn remove(text: &str) -> String {
    match split(text) {
        Some((before, after)) => {
            let before = before.trim_end_matches('\n');
            let after = after.trim_start_matches('\n');
            match (before.is_empty(), after.is_empty()) {
                (true, true) => String::new(),
                (true, false) => after.to_string(),
                (false, true) => format!("{before}\n"),
                (false, false) => format!("{before}\n\n{after}"),
            }
        }
        None => text.to_string(),
    }
}

/// (text before the block, text after it) when a complete block is present.
fn split(text: &str) -> Option<(&str, &str)> {
    let start = text.find(BEGIN)?;
    let end_rel = text[start..].find(END)?;
    let mut end = start + end_rel + END.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    Some((&text[..start], &text[end..]))
}
