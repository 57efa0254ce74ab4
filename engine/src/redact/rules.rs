//! The redaction rule table: one pattern per secret shape, in priority order.
//!
//! Why the order matters: specific token shapes (a GitHub token, a JWT) come before generic
//! context rules (`Bearer <x>`, `NAME=value`, `"password": "..."`), so the specific kind is the
//! one reported and the generic rule then sees a marker and skips it.

use regex::{Captures, Match, Regex};
use std::sync::{LazyLock, OnceLock};

use super::{MARKER_PREFIX, RedactionKind};

/// Extra check on a candidate secret, for rules whose pattern alone over-matches.
#[derive(Debug, Clone, Copy)]
pub(super) enum Guard {
    /// Any non-empty span is a secret.
    None,
    /// Skip values that are references, not secrets: `$VAR`, `${VAR}`, `$(cmd)`.
    NotVariable,
    /// [`Guard::NotVariable`], and skip version specs (`"token": "^3.4.0"` in a package
    /// manifest names a dependency, it holds no secret).
    Literal,
    /// Random tokens contain a digit or are long; `Bearer authentication-schemes` is prose.
    TokenLike,
}

/// One secret shape.
///
/// The regex is compiled on first use: a hook process pays only for the prefilter set unless
/// a rule actually matches (compiling every rule up front costs about 1 ms).
#[derive(Debug)]
pub(super) struct Rule {
    pub(super) kind: RedactionKind,
    pub(super) pattern: &'static str,
    regex: OnceLock<Regex>,
    /// Capture groups that hold the secret (the first that participated wins); empty means the
    /// whole match is the secret.
    groups: &'static [usize],
    guard: Guard,
}

impl Rule {
    /// The compiled pattern.
    pub(super) fn regex(&self) -> &Regex {
        // Constant patterns, compiled in every test run: failure is a programming error.
        self.regex
            .get_or_init(|| Regex::new(self.pattern).expect("redaction pattern compiles"))
    }

    /// The span to replace in one match.
    pub(super) fn secret_span<'t>(&self, caps: &Captures<'t>) -> Option<Match<'t>> {
        if self.groups.is_empty() {
            return caps.get(0);
        }
        self.groups.iter().find_map(|g| caps.get(*g))
    }

    /// Whether a candidate span really is a secret to replace.
    pub(super) fn accepts(&self, secret: &str) -> bool {
        if secret.is_empty() || secret.starts_with(MARKER_PREFIX) {
            return false;
        }
        match self.guard {
            Guard::None => true,
            Guard::NotVariable => !secret.starts_with('$'),
            Guard::Literal => !secret.starts_with('$') && !is_version_spec(secret),
            Guard::TokenLike => secret.len() >= 32 || secret.bytes().any(|b| b.is_ascii_digit()),
        }
    }
}

/// `^3.4.0`, `~1.2`, `>=2.0.1`, `1.x`: a dependency version, not a secret.
fn is_version_spec(s: &str) -> bool {
    let core = s.trim_start_matches(['^', '~', '>', '<', '=', 'v', ' ']);
    core.contains('.')
        && core.starts_with(|c: char| c.is_ascii_digit())
        && core
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'x' | '*'))
}

/// One row of the rule table.
struct Spec {
    kind: RedactionKind,
    /// The pattern.
    pattern: &'static str,
    /// Capture groups holding the secret; empty = the whole match.
    groups: &'static [usize],
    guard: Guard,
}

/// The rules, in priority order.
const TABLE: &[Spec] = &[
    // A whole PEM block; when the END line is missing (the text was cut), the base64 body up to
    // the first character that cannot be part of it. `\\` and `→` cover JSON-escaped newlines
    // and Read-tool line-number gutters.
    Spec {
        kind: RedactionKind::PrivateKey,
        pattern: r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,\-\\→]*)",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::AwsAccessKeyId,
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::AwsSecretAccessKey,
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9/+]{30,}={0,2})"#,
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::GithubToken,
        pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})(?-u:\b)",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::AnthropicKey,
        pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}",
        groups: &[],
        guard: Guard::None,
    },
    // Project/service keys carry dashes; legacy keys are one long alphanumeric run. Requiring
    // one of the two keeps kebab-case words such as `sk-learn-style-names` out.
    Spec {
        kind: RedactionKind::OpenaiKey,
        pattern: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::SlackToken,
        pattern: r"(?-u:\b)xox[baprs]-[A-Za-z0-9\-]{10,}",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::GoogleApiKey,
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::StripeKey,
        pattern: r"(?-u:\b)(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",
        groups: &[],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::Jwt,
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
        groups: &[],
        guard: Guard::None,
    },
    // At least 16 token characters so prose ("bearer tokens are...") is left alone.
    Spec {
        kind: RedactionKind::BearerToken,
        pattern: r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)",
        groups: &[1],
        guard: Guard::TokenLike,
    },
    Spec {
        kind: RedactionKind::BasicAuth,
        pattern: r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})"#,
        groups: &[1],
        guard: Guard::None,
    },
    // The password is greedy up to the last `@` before a `/` or whitespace, so `p@ss` survives.
    Spec {
        kind: RedactionKind::UrlPassword,
        pattern: r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\[\]]+:([^\s/]+)@",
        groups: &[1],
        guard: Guard::None,
    },
    // `.env`/shell assignments (`NAME=value`, no spaces around `=`, as shells require; spaced
    // `MAX_TOKENS = 4096` is a code constant). Upper-case names only; the secret word ends the
    // name (`DB_PASSWORD`, `GITHUB_TOKEN`, `APIKEY`) or is followed by a known suffix
    // (`SECRET_KEY_BASE`). Bare `PWD` is the working directory, so it needs a prefix (`DB_PWD`).
    Spec {
        kind: RedactionKind::EnvSecret,
        pattern: r#"(?-u:\b)(?:export[ \t]+)?(?:(?:[A-Z0-9]+_)*(?:[A-Z0-9]*APIKEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?)|(?:[A-Z0-9]+_)+PWD)(?:_(?:ID|BASE|B64|BASE64|VALUE|STRING|RAW|[0-9]+))?=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'#=][^\s"'#]*))"#,
        groups: &[1, 2, 3],
        guard: Guard::NotVariable,
    },
    // Quoted values only: `token = next_token()` in code must survive, `"password": "x"` must not.
    Spec {
        kind: RedactionKind::SecretField,
        pattern: r#"(?i)(?-u:\b)[A-Za-z0-9_\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret)["']?[ \t]*[:=][ \t]*(?:"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)')"#,
        groups: &[1, 2],
        guard: Guard::Literal,
    },
    // YAML-style unquoted `password: value` on its own line (no parentheses: not a call).
    Spec {
        kind: RedactionKind::SecretField,
        pattern: r#"(?mi)^[ \t]*[A-Za-z0-9_\-]*(?:password|passwd)[ \t]*:[ \t]+([^\s"'#(){}\[\]$][^\s#(){}\[\]]*)[ \t]*$"#,
        groups: &[1],
        guard: Guard::None,
    },
];

/// The rules, built once per process (patterns compile lazily, see [`Rule`]).
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    TABLE
        .iter()
        .map(|spec| Rule {
            kind: spec.kind,
            pattern: spec.pattern,
            regex: OnceLock::new(),
            groups: spec.groups,
            guard: spec.guard,
        })
        .collect()
});
