//! Secret redaction: every text is passed through here before it is stored, indexed or restored.
//!
//! An example of use is the test `tests::redaction_keeps_names_and_hosts_and_counts_kinds`.
//!
//! Why a rule table and not one big regex: each kind of secret has its own shape, and some rules
//! must keep part of the match (the variable name in `DB_PASSWORD=...`, the user and host in
//! `postgres://user:pass@host`), so each rule says which capture group is the secret.
//!
//! Why it is fast enough for the hook path: one [`RegexSet`] scan over the text tells which
//! rules match at all; ordinary text (no secret) costs that single linear scan (~600 MB/s
//! measured on transcript text) and returns the input borrowed ([`Cow::Borrowed`]). Only the
//! rules that matched run again to find spans, and each rule's own regex is compiled on first
//! use, so a short-lived hook process pays only the set's compilation (~0.6 ms) when its text
//! holds no secret. Patterns use ASCII word boundaries (`(?-u:\b)`) so the lazy DFA never has
//! to bail out on non-ASCII input. (Measured and rejected: a set of cheap literal "trigger"
//! patterns compiled no faster and, by firing on `sk-` or `://`, made clean text 3× slower.)
//!
//! Guarantees (tested, including by proptest): redaction never panics, and it is idempotent —
//! a marker `[REDACTED:<kind>]` is never matched again, because every rule skips a secret span
//! that already starts with the marker prefix and no pattern can match inside a marker.

#[cfg(any(test, feature = "testing"))]
pub mod corpus;
mod rules;
#[cfg(test)]
mod tests;

use regex::{RegexSet, RegexSetBuilder};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use rules::{RULES, Rule};

/// The prefix of every replacement marker; a span that starts with it is already redacted.
pub const MARKER_PREFIX: &str = "[REDACTED:";

/// The kind of secret a redaction replaced; its label appears in the marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RedactionKind {
    /// A PEM `-----BEGIN ... PRIVATE KEY-----` block (through `END`, or to the end of the
    /// base64 body when the block was cut).
    PrivateKey,
    /// AWS access key id (`AKIA...`, `ASIA...`).
    AwsAccessKeyId,
    /// The value of `aws_secret_access_key = ...`.
    AwsSecretAccessKey,
    /// GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// Anthropic API keys (`sk-ant-...`).
    AnthropicKey,
    /// OpenAI API keys (`sk-...`, `sk-proj-...`).
    OpenaiKey,
    /// Slack tokens (`xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-`).
    SlackToken,
    /// Google API keys (`AIza...`).
    GoogleApiKey,
    /// Stripe secret and restricted keys (`sk_live_`, `rk_live_`, and their `_test_` forms).
    StripeKey,
    /// JSON Web Tokens (`eyJ...`.`eyJ...`.`...`).
    Jwt,
    /// The token after `Bearer` (covers `Authorization: Bearer ...`).
    BearerToken,
    /// The credentials after `Authorization: Basic`.
    BasicAuth,
    /// The password in `scheme://user:pass@host` (user and host are kept).
    UrlPassword,
    /// The value of an env-style assignment whose name says secret
    /// (`API_KEY=...`, `export GITHUB_TOKEN=...`, `DB_PASSWORD=...`).
    EnvSecret,
    /// The quoted value of a `"password": "..."`-style pair (JSON, YAML, code literals).
    SecretField,
    /// A span the user marked `<private>…</private>` (tags included, see [`redact_in_turn`]
    /// for the whole rule): the user's own "do not keep this", honoured like a secret.
    Private,
    /// Tokens of other services with a fixed shape (GitLab `glpat-`, Hugging Face `hf_`,
    /// npm `npm_`, SendGrid `SG.`, Google OAuth `GOCSPX-`, DigitalOcean `dop_v1_`, Slack app
    /// `xapp-`, Shopify `shpat_`).
    ServiceToken,
    /// The secret path of a Slack or Discord incoming-webhook URL (the host is kept).
    Webhook,
    /// The credential of an `Authorization: Token …` / `X-API-Key: …`-style header.
    AuthHeader,
    /// A password given on a command line: `curl -u user:pass`, `mysql -ppass`,
    /// `--password=…`, `sshpass -p …`.
    CliPassword,
    /// The key of an Azure connection string (`AccountKey=`, `SharedAccessKey=`).
    ConnectionKey,
    /// An unquoted `name=value` whose name says secret, any case: form bodies and query strings
    /// (`&password=…`, `?api_key=…`), `client_secret=…`, INI lines (`aws_session_token = …`),
    /// `.npmrc` (`_authToken=`), `.netrc` (`password …`).
    SecretParam,
}

impl RedactionKind {
    /// Every kind, in rule order.
    pub const ALL: [RedactionKind; 22] = [
        Self::PrivateKey,
        Self::AwsAccessKeyId,
        Self::AwsSecretAccessKey,
        Self::GithubToken,
        Self::AnthropicKey,
        Self::OpenaiKey,
        Self::SlackToken,
        Self::GoogleApiKey,
        Self::StripeKey,
        Self::Jwt,
        Self::BearerToken,
        Self::BasicAuth,
        Self::UrlPassword,
        Self::EnvSecret,
        Self::SecretField,
        Self::Private,
        Self::ServiceToken,
        Self::Webhook,
        Self::AuthHeader,
        Self::CliPassword,
        Self::ConnectionKey,
        Self::SecretParam,
    ];

    /// The label used in the marker, e.g. `github_token` in `[REDACTED:github_token]`.
    pub fn label(self) -> &'static str {
        match self {
            Self::PrivateKey => "private_key",
            Self::AwsAccessKeyId => "aws_access_key_id",
            Self::AwsSecretAccessKey => "aws_secret_access_key",
            Self::GithubToken => "github_token",
            Self::AnthropicKey => "anthropic_key",
            Self::OpenaiKey => "openai_key",
            Self::SlackToken => "slack_token",
            Self::GoogleApiKey => "google_api_key",
            Self::StripeKey => "stripe_key",
            Self::Jwt => "jwt",
            Self::BearerToken => "bearer_token",
            Self::BasicAuth => "basic_auth",
            Self::UrlPassword => "url_password",
            Self::EnvSecret => "env_secret",
            Self::SecretField => "secret_field",
            Self::Private => "private",
            Self::ServiceToken => "service_token",
            Self::Webhook => "webhook",
            Self::AuthHeader => "auth_header",
            Self::CliPassword => "cli_password",
            Self::ConnectionKey => "connection_key",
            Self::SecretParam => "secret_param",
        }
    }

    /// The full replacement marker, e.g. `[REDACTED:jwt]`.
    pub fn marker(self) -> String {
        format!("{MARKER_PREFIX}{}]", self.label())
    }
}

impl fmt::Display for RedactionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How many secrets of each kind were replaced (kinds with zero are absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactionCounts {
    counts: BTreeMap<RedactionKind, u32>,
}

impl RedactionCounts {
    /// Replacements of one kind.
    pub fn get(&self, kind: RedactionKind) -> u32 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// Replacements of all kinds.
    pub fn total(&self) -> u32 {
        self.counts.values().sum()
    }

    /// True when nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Non-zero counts, in kind order.
    pub fn iter(&self) -> impl Iterator<Item = (RedactionKind, u32)> + '_ {
        self.counts.iter().map(|(k, v)| (*k, *v))
    }

    /// Add another set of counts into this one (used to total a whole batch).
    pub fn merge(&mut self, other: &RedactionCounts) {
        for (kind, n) in other.iter() {
            self.add(kind, n);
        }
    }

    fn add(&mut self, kind: RedactionKind, n: u32) {
        if n > 0 {
            *self.counts.entry(kind).or_insert(0) += n;
        }
    }
}

/// Cache of the prefilter set's lazy DFA. The default (2 MiB) is too small for the set's
/// states since the rules for escaped JSON and command lines joined it: the cache was cleared
/// over and over and the scan fell back to a slow engine (redaction 5x slower on a transcript
/// of code); 8 MiB keeps it within about 1.3x of the smaller rule set. Memory is taken only as
/// states are built, and only by a process that redacts much text.
const PREFILTER_DFA_BYTES: usize = 8 << 20;

/// One scan for "which rules match here?": the cheap path for the common, secret-free text.
static PREFILTER: LazyLock<RegexSet> = LazyLock::new(|| {
    // The patterns are constants covered by tests; a failure here is a programming error.
    RegexSetBuilder::new(RULES.iter().map(|r| r.pattern))
        .dfa_size_limit(PREFILTER_DFA_BYTES)
        .build()
        .expect("redaction patterns compile")
});

/// Text that went through [`redact`]: printing it again needs no second pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted(String);

impl Redacted {
    /// `text`, redacted.
    pub fn new(text: &str) -> Self {
        Self(redact(text).into_owned())
    }

    /// Text the caller knows these rules redacted already (it was made by [`Self::new`] under
    /// the same [`rules_fingerprint`], and kept where nothing else writes).
    pub(crate) fn assume(text: String) -> Self {
        Self(text)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// Identifies the rule set: the same value only for the same patterns, groups and guards.
pub(crate) fn rules_fingerprint() -> String {
    RULES
        .iter()
        .map(Rule::identity)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Redact secrets in `text`; borrowed when nothing was found.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_counted(text).0
}

/// Redact secrets inside a JSON document: every string (values and keys) is redacted as the
/// text it *means*, then the document is serialized again. `None` when `json` is not JSON.
///
/// Why not redact the JSON text itself: inside JSON a quote is `\"` and a newline is `\n`, so
/// `password = \"hunter2\"` has no quote for the rule to anchor on, and `\nDB_PASSWORD=x`
/// puts an `n` before the name, where the word boundary the rule needs does not exist. Found by
/// an adversarial run: such secrets reached the swap store word for word.
pub fn redact_json(json: &str) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_str(json).ok()?;
    redact_value(&mut v);
    serde_json::to_string(&v).ok()
}

fn redact_value(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut val) in old {
                redact_value(&mut val);
                map.insert(redact(&k).into_owned(), val);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Redact secrets in `text` and report how many of each kind were replaced.
pub fn redact_counted(text: &str) -> (Cow<'_, str>, RedactionCounts) {
    redact_in_turn(text, &mut 0)
}

/// Redact one message of a turn: `private_open` is how many `<private>` spans the turn's
/// earlier messages left open (0 for the first message), updated for the next one.
///
/// The `<private>` rule, one message (a prompt, an answer, a tool call, a tool output) at a
/// time and across the messages of one turn:
/// - a tag is `<private>` or `<private` + attributes + `>` (`<private reason="x">`), closed by
///   `</private>`, any case; a span goes whole, tags included, and becomes one marker;
/// - spans nest: `<private>a <private>b</private> c</private>` hides `a`, `b` and `c`;
/// - a span not closed in its message runs to the end of it and on through the turn's next
///   messages up to its closing tag (or to the end of the turn);
/// - a closing tag with no opening tag before it in the message (its span was opened in an
///   earlier message that this caller does not see) hides the message up to it.
pub fn redact_in_turn<'t>(
    text: &'t str,
    private_open: &mut u32,
) -> (Cow<'t, str>, RedactionCounts) {
    let mut counts = RedactionCounts::default();
    let stripped = strip_private(text, *private_open);
    *private_open = stripped.open;
    let mut current: Cow<'_, str> = match stripped.text {
        Some(s) => {
            counts.add(RedactionKind::Private, stripped.spans);
            Cow::Owned(s)
        }
        None => Cow::Borrowed(text),
    };
    // A replacement can create a word boundary that lets a rule match which did not match the
    // original text (a marker ends in `]`), so repeat until nothing changes. Every round
    // replaces non-marker text with markers, which are never matched again; the cap is only a
    // guard against a future rule breaking that property.
    for _ in 0..MAX_ROUNDS {
        if !redact_round(&mut current, &mut counts) {
            break;
        }
    }
    (current, counts)
}

/// What [`strip_private`] did to one message.
#[derive(Debug, PartialEq, Eq)]
struct Stripped {
    /// The text with its spans replaced; `None` when it had none.
    text: Option<String>,
    /// Spans replaced (one marker each).
    spans: u32,
    /// Spans still open at the end of the text.
    open: u32,
}

/// A `<private …>` or `</private>` tag at a `<`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Open,
    Close,
}

/// The tag starting at `bytes[at]` (a `<`) and the index just past it. An opening tag whose
/// `>` never comes (a cut-off text) runs to the end: what follows may be what the user hid.
fn tag_at(bytes: &[u8], at: usize) -> Option<(Tag, usize)> {
    const NAME: &[u8] = b"private";
    let rest = bytes.get(at + 1..)?;
    let (tag, name_at) = match rest.first() {
        Some(b'/') => (Tag::Close, 1),
        _ => (Tag::Open, 0),
    };
    let after = name_at + NAME.len();
    if !rest.get(name_at..after)?.eq_ignore_ascii_case(NAME) {
        return None;
    }
    let unterminated = match tag {
        Tag::Open => Some((Tag::Open, bytes.len())),
        Tag::Close => None,
    };
    match rest.get(after) {
        Some(b'>') => Some((tag, at + 1 + after + 1)),
        None => unterminated,
        Some(c) if c.is_ascii_whitespace() || *c == b'/' => {
            match rest[after..].iter().position(|c| *c == b'>') {
                Some(p) => Some((tag, at + 1 + after + p + 1)),
                None => unterminated,
            }
        }
        Some(_) => None,
    }
}

/// Replace every private span of `text` with the private marker (the rule is on
/// [`redact_in_turn`]); `carried` spans are open when the text starts.
///
/// Why before the rules: a private span may hold anything, secrets included, and must go whole.
/// Every tag starts with `<`, which has no case: the scan jumps from `<` to `<` instead of a
/// case-insensitive compare at every byte (every archived text goes through here).
fn strip_private(text: &str, carried: u32) -> Stripped {
    if text.is_empty() {
        return Stripped {
            text: None,
            spans: 0,
            open: carried,
        };
    }
    let bytes = text.as_bytes();
    let mut depth = carried;
    let mut out = String::new();
    // `text[kept..]` is not decided yet; while `depth > 0` it is the open span.
    let mut kept = 0;
    let mut spans = 0u32;
    let mut i = 0;
    let marker = RedactionKind::Private.marker();
    while let Some(off) = bytes
        .get(i..)
        .and_then(|b| b.iter().position(|c| *c == b'<'))
    {
        let at = i + off;
        match tag_at(bytes, at) {
            Some((Tag::Open, end)) => {
                if depth == 0 {
                    out.push_str(&text[kept..at]);
                    kept = at;
                }
                depth = depth.saturating_add(1);
                i = end;
            }
            Some((Tag::Close, end)) if depth > 1 => {
                depth -= 1;
                i = end;
            }
            // The close of the outermost span, or a stray close: `text[kept..end]` goes.
            Some((Tag::Close, end)) => {
                out.push_str(&marker);
                spans += 1;
                kept = end;
                depth = 0;
                i = end;
            }
            None => i = at + 1,
        }
    }
    if depth > 0 {
        out.push_str(&marker);
        spans += 1;
        kept = text.len();
    }
    if spans == 0 {
        return Stripped {
            text: None,
            spans: 0,
            open: 0,
        };
    }
    out.push_str(&text[kept..]);
    Stripped {
        text: Some(out),
        spans,
        open: depth,
    }
}

/// Upper bound of redaction rounds (one is enough for almost every text; two covers markers
/// that open a new word boundary).
const MAX_ROUNDS: usize = 4;

/// One pass of every rule the prefilter selects; true when something was replaced.
fn redact_round(current: &mut Cow<'_, str>, counts: &mut RedactionCounts) -> bool {
    // Most text holds no secret: a plain "any match?" scan is cheaper than the overlapping
    // "which rules?" scan, which then runs only on the rare text that matched.
    if !PREFILTER.is_match(current) {
        return false;
    }
    let hits = PREFILTER.matches(current);
    if !hits.matched_any() {
        return false;
    }
    let mut changed = false;
    // Rule order is priority order: specific token shapes run before generic `NAME=value` rules
    // so that the specific kind is reported and the generic rule then skips the marker.
    for idx in hits.iter() {
        let Some(rule) = RULES.get(idx) else { continue };
        if let Some((replaced, n)) = apply_rule(rule, current) {
            counts.add(rule.kind, n);
            *current = Cow::Owned(replaced);
            changed = true;
        }
    }
    changed
}

/// Replace every secret span `rule` finds in `text`; `None` when it replaced nothing.
fn apply_rule(rule: &Rule, text: &str) -> Option<(String, u32)> {
    let mut out = String::new();
    let mut last = 0;
    let mut n = 0u32;
    for caps in rule.regex().captures_iter(text) {
        let Some(span) = rule.secret_span(&caps) else {
            continue;
        };
        if span.start() < last || !rule.accepts(span.as_str()) {
            continue;
        }
        if n == 0 {
            out.reserve(text.len());
        }
        out.push_str(&text[last..span.start()]);
        out.push_str(MARKER_PREFIX);
        out.push_str(rule.kind.label());
        out.push(']');
        last = span.end();
        n += 1;
    }
    if n == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some((out, n))
}

#[cfg(test)]
mod json_tests {
    use super::*;

    #[test]
    fn redact_json_sees_unescaped_text() {
        let doc = serde_json::json!({"a": "x\nDB_PASSWORD=\"pw-123456789\"\n", "b": ["password = \"hunter2hunter2\""]})
            .to_string();
        // The rules also accept the escaped shapes (`\"`, a `\n` before a name) now, so the
        // escaped text itself is caught too.
        let flat = redact(&doc);
        assert!(
            !flat.contains("pw-123456789") && !flat.contains("hunter2hunter2"),
            "{flat}"
        );
        let out = redact_json(&doc).unwrap_or_default();
        assert!(
            !out.contains("pw-123456789") && !out.contains("hunter2hunter2"),
            "{out}"
        );
        assert_eq!(redact_json("not json"), None);
    }
}
