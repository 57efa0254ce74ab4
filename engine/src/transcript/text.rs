//! Small string helpers for turn text: context stripping, bounding, sentence extraction.
//!
//! All slicing goes through `floor_char_boundary`-style helpers: input is arbitrary UTF-8 and a
//! byte index inside a multi-byte character would panic.

use std::borrow::Cow;

/// Opening tag of memctl's restore output (its attributes follow).
pub const CONTEXT_OPEN: &str = "<memctl-context";
/// Closing tag of memctl's restore output.
pub const CONTEXT_CLOSE: &str = "</memctl-context>";

/// Whether `tool` is one of memctl's own MCP tools (`memctl mcp`), as Claude Code names them:
/// `mcp__memctl__<tool>` when the server was added by hand, `mcp__plugin_memctl_memctl__<tool>`
/// from the plugin.
///
/// Why: their results quote the archive (search hits, whole chunks, stored tool outputs).
/// Archiving them again would put copies of old turns into every session that looked them up,
/// and later searches would find the copies: the feedback loop [`strip_restored_context`]
/// prevents for restore blocks.
pub fn is_memctl_mcp_tool(tool: &str) -> bool {
    // Claude Code and Codex CLI (`mcp__<server>__<tool>`), Claude Code's plugin, Gemini CLI
    // (`mcp_<server>_<tool>`).
    tool.starts_with("mcp__memctl__")
        || tool.starts_with("mcp__plugin_memctl_memctl__")
        || tool.starts_with("mcp_memctl_")
}

/// Remove every `<memctl-context ...> ... </memctl-context>` block (an unclosed one runs to the
/// end of the text).
///
/// Why: that wrapper marks our own restored memory. If it ever reaches a transcript as user or
/// tool text, archiving it would store the archive inside itself and grow on every restore.
pub fn strip_restored_context(text: &str) -> Cow<'_, str> {
    if !text.contains(CONTEXT_OPEN) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = find_open_tag(rest) {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        rest = match after.find(CONTEXT_CLOSE) {
            Some(end) => &after[end + CONTEXT_CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Byte index of the next `<memctl-context` that is a tag (followed by `>`, `/` or whitespace),
/// not a longer word such as `<memctl-contextual>`.
fn find_open_tag(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(rel) = text.get(from..)?.find(CONTEXT_OPEN) {
        let at = from + rel;
        let next = text[at + CONTEXT_OPEN.len()..].chars().next();
        match next {
            Some(c) if c == '>' || c == '/' || c.is_whitespace() => return Some(at),
            None => return Some(at),
            _ => from = at + CONTEXT_OPEN.len(),
        }
    }
    None
}

/// The largest char boundary `<= i`.
pub fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary `>= i`.
pub fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Keep at most `max` bytes: the head only, then `… [N bytes omitted]`.
///
/// Used for tool inputs, whose start (command, path) is what identifies them.
pub fn bound_head(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let cut = floor_boundary(s, max);
    Cow::Owned(format!("{}… [{} bytes omitted]", &s[..cut], s.len() - cut))
}

/// Keep at most `max` bytes: three quarters from the head, one quarter from the tail, with
/// `… [N bytes omitted] …` between.
///
/// Used for tool results: a build log's verdict or a stack trace's cause is at the end.
pub fn bound_head_tail(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let head_end = floor_boundary(s, max * 3 / 4);
    let tail_start = ceil_boundary(s, s.len() - (max - max * 3 / 4)).max(head_end);
    let omitted = tail_start - head_end;
    Cow::Owned(format!(
        "{}\n… [{omitted} bytes omitted] …\n{}",
        &s[..head_end],
        &s[tail_start..]
    ))
}

/// The one clipping rule: at most `max` characters (`max` ≥ 1); a longer `s` keeps its first
/// `max − 1` characters, loses the whitespace they end with, and gains `…`. Behind every clip:
/// chunk headers (stored text: this rule must not change, or re-ingest would see every chunk
/// as changed), restore, swap, summary and memory lines ([`clip_line`]).
pub fn ellipsize(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => {
            let keep = s[..cut]
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(cut, |(i, _)| i);
            Cow::Owned(format!("{}…", s[..keep].trim_end()))
        }
    }
}

/// [`ellipsize`] for one display line: trimmed, and each line break or tab becomes a space.
/// Other spacing is kept: a clipped command (`echo "a  b"`) stays the exact command.
pub fn clip_line(s: &str, max: usize) -> String {
    let flat: String = s
        .trim()
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    ellipsize(&flat, max).into_owned()
}

/// The first sentence of `s` (up to `. `, `? `, `! ` or a line break), at most `max` chars.
pub fn first_sentence(s: &str, max: usize) -> String {
    let s = s.trim_start();
    let mut end = s.len();
    let mut prev_terminal = false;
    for (i, c) in s.char_indices() {
        if c == '\n' {
            end = i;
            break;
        }
        if prev_terminal && c.is_whitespace() {
            end = i;
            break;
        }
        prev_terminal = matches!(c, '.' | '?' | '!');
    }
    ellipsize(s[..end].trim_end(), max).into_owned()
}

/// The first line of `s` that has any non-space character, trimmed.
pub fn first_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The text between `open` and the next `close` after it, trimmed.
pub fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let len = s[start..].find(close)?;
    Some(s[start..start + len].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_context_blocks_and_unclosed_tails() {
        let s = "a <memctl-context source=\"x\">secret memory</memctl-context> b";
        assert_eq!(strip_restored_context(s), "a  b");
        assert_eq!(
            strip_restored_context("x<memctl-context>\nall the rest"),
            "x"
        );
        assert_eq!(
            strip_restored_context("<memctl-contextual> stays"),
            "<memctl-contextual> stays"
        );
        let two = "1<memctl-context>a</memctl-context>2<memctl-context k=v>b</memctl-context>3";
        assert_eq!(strip_restored_context(two), "123");
        assert!(matches!(strip_restored_context("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn bounding_respects_char_boundaries() {
        let s = "é".repeat(100);
        let h = bound_head(&s, 11);
        assert!(h.starts_with(&"é".repeat(5)));
        assert!(h.ends_with("[190 bytes omitted]"));
        let ht = bound_head_tail(&s, 21);
        assert!(ht.contains("bytes omitted"));
        assert_eq!(bound_head("short", 10), "short");
    }

    #[test]
    fn head_tail_keeps_the_end() {
        let s = format!("{}VERDICT", "x".repeat(5000));
        let b = bound_head_tail(&s, 2048);
        assert!(b.ends_with("VERDICT"));
        assert!(b.len() < 2200);
    }

    #[test]
    fn sentences_and_truncation() {
        assert_eq!(
            first_sentence("Fix the bug. Then test.", 160),
            "Fix the bug."
        );
        assert_eq!(first_sentence("v1.2 is out? yes", 160), "v1.2 is out?");
        assert_eq!(first_sentence("line one\nline two", 160), "line one");
        assert_eq!(first_sentence(&"word ".repeat(100), 10), "word word…");
        assert_eq!(ellipsize("abc", 3), "abc");
        assert_eq!(ellipsize("abcd", 3), "ab…");
        assert_eq!(ellipsize("a cd", 3), "a…", "no space before the ellipsis");
        assert_eq!(clip_line("  a\nb\t c  ", 10), "a b  c");
        assert_eq!(first_sentence("", 5), "");
    }

    proptest::proptest! {
        /// The clip rule: never over `max` characters, unchanged when it fits, else a prefix
        /// (up to trailing whitespace) plus `…`; lines are single lines.
        #[test]
        fn clip_rule(s in "\\PC{0,80}|[ a-z\n\t]{0,80}", max in 1usize..60) {
            let e = ellipsize(&s, max);
            let n = e.chars().count();
            proptest::prop_assert!(n <= max);
            if s.chars().count() <= max {
                proptest::prop_assert_eq!(&*e, s.as_str());
            } else {
                let body = e.strip_suffix('…').unwrap_or_else(|| panic!("{e:?} ends with …"));
                proptest::prop_assert!(s.starts_with(body));
                proptest::prop_assert!(body.is_empty() || !body.ends_with(char::is_whitespace));
            }
            let l = clip_line(&s, max);
            proptest::prop_assert!(l.chars().count() <= max);
            proptest::prop_assert!(!l.contains(['\n', '\r', '\t']));
            proptest::prop_assert!(!l.starts_with(char::is_whitespace));
        }
    }

    #[test]
    fn between_tags() {
        let s = "<command-name>/compact</command-name>\n<command-args>keep x</command-args>";
        assert_eq!(
            between(s, "<command-name>", "</command-name>"),
            Some("/compact")
        );
        assert_eq!(
            between(s, "<command-args>", "</command-args>"),
            Some("keep x")
        );
        assert_eq!(between(s, "<nope>", "</nope>"), None);
    }
}
