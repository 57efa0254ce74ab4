//! Tool-call inputs: the file paths they touch, their redaction, and a stable rendering.

use serde::Deserialize;

use crate::redact::{RedactionCounts, redact_counted};

/// The path-like fields of a tool input (`Read`/`Edit`/`Write` `file_path`, `Glob`/`Grep`/`LS`
/// `path`, `NotebookEdit` `notebook_path`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct PathFields {
    file_path: Option<MaybeString>,
    path: Option<MaybeString>,
    notebook_path: Option<MaybeString>,
}

/// A field that is a path when it is a string, and is ignored otherwise.
#[derive(Deserialize)]
#[serde(untagged)]
enum MaybeString {
    Str(String),
    Other(serde::de::IgnoredAny),
}

pub(super) fn tool_paths(input: &serde_json::Value) -> Vec<String> {
    let Ok(fields) = PathFields::deserialize(input) else {
        return Vec::new();
    };
    [fields.file_path, fields.notebook_path, fields.path]
        .into_iter()
        .filter_map(|f| match f {
            Some(MaybeString::Str(s)) if !s.trim().is_empty() => Some(s),
            _ => None,
        })
        .collect()
}

/// Values longer than this (serialized) go after the short ones in a rendered tool input.
const LONG_VALUE_BYTES: usize = 160;

/// Compact JSON of a tool input in a stable, readable order.
///
/// Why not `serde_json::to_string`: key order would then depend on whether some other crate
/// in the build enabled serde_json's `preserve_order`, and the chunk hash must not. Short
/// top-level fields (paths, commands, patterns) come first, sorted by key, then long ones
/// (file contents, edits), so bounding the text to a head never cuts the path away.
pub(super) fn tool_input_json(input: &serde_json::Value) -> String {
    let serde_json::Value::Object(map) = input else {
        return canonical_json(input);
    };
    let mut fields: Vec<(bool, &String, String)> = map
        .iter()
        .map(|(k, v)| {
            let json = canonical_json(v);
            (json.len() > LONG_VALUE_BYTES, k, json)
        })
        .collect();
    fields.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let body: Vec<String> = fields
        .into_iter()
        .map(|(_, k, v)| format!("{}:{v}", json_string(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// Compact JSON with object keys sorted at every level.
fn canonical_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .filter_map(|k| {
                    map.get(k)
                        .map(|v| format!("{}:{}", json_string(k), canonical_json(v)))
                })
                .collect();
            format!("{{{}}}", body.join(","))
        }
        serde_json::Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        scalar => scalar.to_string(),
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Redact every string inside a JSON value (keys stay: they are schema, not data).
///
/// Why per string and not on the serialized JSON: inside JSON a newline is `\n`, so line-based
/// rules (`.env` lines, PEM blocks) would see one long line and over- or under-match.
pub(super) fn redact_json_strings(v: &mut serde_json::Value, counts: &mut RedactionCounts) {
    match v {
        serde_json::Value::String(s) => {
            let (red, c) = redact_counted(s);
            if !c.is_empty() {
                *s = red.into_owned();
                counts.merge(&c);
            }
        }
        serde_json::Value::Array(items) => items
            .iter_mut()
            .for_each(|i| redact_json_strings(i, counts)),
        serde_json::Value::Object(map) => map
            .values_mut()
            .for_each(|i| redact_json_strings(i, counts)),
        _ => {}
    }
}
