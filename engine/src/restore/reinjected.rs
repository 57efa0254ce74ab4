//! What Claude Code puts back into the context itself after a compaction or `/clear`: the
//! project's CLAUDE.md files and its auto-memory index
//! (`~/.claude/projects/<project key>/memory/MEMORY.md`). A restore block that repeats them
//! spends its budget twice on the same lines, so restore lines and memory lines
//! whose content is one of those lines are left out, and so are turns that only read or wrote
//! those files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Largest re-injected file read (Claude Code itself loads only the first lines of MEMORY.md).
const MAX_FILE_BYTES: u64 = 256 << 10;

/// Shortest normalized line worth matching: shorter ones ("- [x]", "Notes") match by accident.
const MIN_LINE_CHARS: usize = 12;

/// Claude Code's folder name for a project under `~/.claude/projects/`: every character that
/// is not an ASCII letter or digit becomes `-` (`<dir>/u/my.app` → `…-u-my-app`).
pub(crate) fn project_key(project: &str) -> String {
    project
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The files Claude Code re-injects for `project` (`claude_dir`: `$CLAUDE_CONFIG_DIR` or
/// `~/.claude`, when known).
pub(crate) fn files(project: &str, claude_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if !project.is_empty() {
        let root = Path::new(project);
        out.push(root.join("CLAUDE.md"));
        out.push(root.join(".claude").join("CLAUDE.md"));
        out.push(root.join("CLAUDE.local.md"));
    }
    if let Some(dir) = claude_dir {
        out.push(dir.join("CLAUDE.md"));
        if !project.is_empty() {
            out.push(
                dir.join("projects")
                    .join(project_key(project))
                    .join("memory")
                    .join("MEMORY.md"),
            );
        }
    }
    out
}

/// True for a path Claude Code re-injects by name: any `CLAUDE.md` / `CLAUDE.local.md`, and
/// the auto-memory files under `.claude/projects/*/memory/`.
pub(crate) fn is_reinjected_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "CLAUDE.md"
        || name == "CLAUDE.local.md"
        || (path.contains(".claude/projects/") && path.contains("/memory/"))
}

/// A line reduced to what matching needs: list markers and markdown emphasis dropped, blanks
/// collapsed, lower case.
pub(crate) fn normalize(line: &str) -> String {
    let t = line
        .trim()
        .trim_start_matches(['-', '*', '+', '#', '>', ' '])
        .trim_start_matches("[ ] ")
        .trim_start_matches("[x] ");
    t.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(['*', '`'], "")
        .trim_end_matches('.')
        .to_lowercase()
}

/// The normalized lines of the files Claude Code re-injects.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reinjected {
    lines: HashSet<String>,
}

impl Reinjected {
    /// Read the re-injected files of `project` (missing files are skipped; an unreadable one is
    /// logged and skipped: a restore never fails for it).
    pub(crate) fn load(project: &str, claude_dir: Option<&Path>) -> Self {
        let mut texts = Vec::new();
        for f in files(project, claude_dir) {
            match crate::paths::read_regular_string(&f, MAX_FILE_BYTES) {
                Ok(t) => texts.push(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(file = %f.display(), error = %e, "re-injected file not read")
                }
            }
        }
        Self::from_texts(texts.iter().map(String::as_str))
    }

    /// From file contents (pure; [`Self::load`] reads the files).
    pub(crate) fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let lines = texts
            .into_iter()
            .flat_map(str::lines)
            .map(normalize)
            .filter(|l| l.chars().count() >= MIN_LINE_CHARS)
            .collect();
        Self { lines }
    }

    /// True when `text` is one of the re-injected lines (after [`normalize`]), or holds one
    /// whole and little else: the model already reads it there.
    pub(crate) fn covers(&self, text: &str) -> bool {
        if self.lines.is_empty() {
            return false;
        }
        let n = normalize(text);
        if n.chars().count() < MIN_LINE_CHARS {
            return false;
        }
        self.lines.contains(&n)
            || self
                .lines
                .iter()
                .any(|l| n.contains(l.as_str()) && l.len() * 10 >= n.len() * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn project_key_is_claude_codes_folder_name() {
        let p = std::env::temp_dir().join("u").join("my.app");
        let key = project_key(&p.display().to_string());
        assert!(key.starts_with('-') && key.ends_with("-u-my-app"), "{key}");
        assert!(
            key.chars().all(|c| c == '-' || c.is_ascii_alphanumeric()),
            "{key}"
        );
        assert_eq!(project_key("a_b/c"), "a-b-c");
    }

    #[test]
    fn reinjected_paths() {
        assert!(is_reinjected_path("/p/CLAUDE.md"));
        assert!(is_reinjected_path("CLAUDE.local.md"));
        assert!(is_reinjected_path(
            "/home/u/.claude/projects/-home-u-p/memory/MEMORY.md"
        ));
        assert!(!is_reinjected_path("/p/docs/CLAUDE.md.bak"));
        assert!(!is_reinjected_path("/p/.memctl/memory/decisions.md"));
    }

    #[test]
    fn covers_lines_with_markup_differences_only() {
        let r = Reinjected::from_texts([
            "# Rules\n- Always run `cargo fmt` before committing.\n- ok\n",
        ]);
        assert!(r.covers("Always run cargo fmt before committing"));
        assert!(r.covers("* always run `cargo fmt` before committing"));
        assert!(!r.covers("Always run cargo clippy before committing."));
        assert!(!r.covers("ok"), "short lines never match");
    }

    #[test]
    fn files_include_project_and_auto_memory() {
        let f = files("/w/p", Some(Path::new("/h/.claude")));
        assert!(f.contains(&PathBuf::from("/w/p/CLAUDE.md")));
        assert!(f.contains(&PathBuf::from("/h/.claude/projects/-w-p/memory/MEMORY.md")));
        assert!(files("", None).is_empty());
    }

    proptest! {
        /// Every line long enough that is in a re-injected file is covered, whatever its list
        /// marker or case; an empty set covers nothing.
        #[test]
        fn every_file_line_is_covered(words in proptest::collection::vec("[a-z]{3,8}", 4..10), marker in "(- |\\* |)") {
            let line = words.join(" ");
            let r = Reinjected::from_texts([format!("{marker}{line}").as_str()]);
            prop_assert!(r.covers(&line.to_uppercase()));
            prop_assert!(!Reinjected::default().covers(&line));
        }
    }
}
