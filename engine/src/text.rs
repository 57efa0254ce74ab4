//! Small text helpers that layers which must not depend on each other both need: the
//! tokenizer and the hash embedder lower words the same way, and settings and restore read
//! switch words the same way. A leaf: it names no other module of the crate.

/// Parse a switch: `1/0`, `true/false`, `yes/no`, `on/off`, any case, surrounding blanks
/// ignored. `None` for anything else.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `s` lowercased into `buf` (cleared first): ASCII in place, other scripts through
/// `str::to_lowercase` (same result as calling it on the whole string). Also the hash
/// embedder's word lowering (its vectors used `to_lowercase` on the whole word).
pub(crate) fn lower_into(buf: &mut String, s: &str) {
    buf.clear();
    if s.is_ascii() {
        buf.push_str(s);
        buf.make_ascii_lowercase();
    } else {
        buf.push_str(&s.to_lowercase());
    }
}
