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
    /// [`Guard::NotVariable`], and skip placeholders of help texts and docs (`--token TOKEN`,
    /// `--password <pw>`).
    NotPlaceholder,
    /// An unquoted value on a `name = value` line, where code is as likely as a config file:
    /// [`Guard::NotPlaceholder`], not a keyword (`None`, `true`), and opaque — a digit, a
    /// symbol other than `-_.`, or 20+ characters (`token = token` and `api-key: your-api-key`
    /// are code or docs, `password = hunter2` is not).
    Opaque,
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
    /// What makes the rule this rule (its compiled regex aside).
    pub(super) fn identity(&self) -> String {
        format!(
            "{:?}|{}|{:?}|{:?}",
            self.kind, self.pattern, self.groups, self.guard
        )
    }

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
            Guard::NotPlaceholder => !is_reference(secret),
            Guard::Opaque => {
                !is_reference(secret)
                    && !KEYWORDS.iter().any(|k| secret.eq_ignore_ascii_case(k))
                    && (secret.len() >= 20
                        || secret
                            .bytes()
                            .any(|b| !(b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b'.'))))
            }
        }
    }
}

/// Literal values of code that a `name = value` line may hold.
const KEYWORDS: &[&str] = &["none", "null", "nil", "true", "false", "undefined", "self"];

/// `$VAR`, `<pw>`, `TOKEN`, `%s`: a reference or a placeholder, not a secret.
fn is_reference(s: &str) -> bool {
    s.starts_with(['$', '<', '%', '{', '['])
        || (s
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-'))
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
///
/// Inside escaped JSON (a structured log printed into a tool output) a quote is `\"` and a
/// newline `\n`: patterns accept backslashes before a quote, and rules anchored on a word boundary
/// also start after a literal `\n`/`\t`/`\r` (where `\b` does not exist), capturing the secret.
const TABLE: &[Spec] = &[
    // A whole PEM or PGP block; when the END line is missing (the text was cut), the base64
    // body up to the first character that cannot be part of it. `\\` and `→` cover
    // JSON-escaped newlines and Read-tool line-number gutters.
    Spec {
        kind: RedactionKind::PrivateKey,
        pattern: r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\-\\→]*)",
        groups: &[],
        guard: Guard::None,
    },
    // A base64-encoded PEM key under a name that says key (kubeconfig `client-key-data`,
    // a Kubernetes secret's `tls.key`); encoded certificates (public) are left alone.
    Spec {
        kind: RedactionKind::PrivateKey,
        pattern: r#"(?i-u:client-key-data|tls\.key|private[_\-]?key)[A-Za-z0-9_\-]*(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?(LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,})"#,
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::AwsAccessKeyId,
        pattern: r"(?:(?-u:\b)|\\[nrt])((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?-u:\b)",
        groups: &[1],
        guard: Guard::None,
    },
    // The secret key and the temporary credentials' session token, in `~/.aws/credentials`,
    // env files and JSON alike.
    Spec {
        kind: RedactionKind::AwsSecretAccessKey,
        pattern: r#"(?i-u:aws_?(?:secret_?(?:access_?)?key|session_?token|security_?token))(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?([A-Za-z0-9/+]{30,}={0,2})"#,
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::GithubToken,
        pattern: r"(?:(?-u:\b)|\\[nrt])(gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})(?-u:\b)",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::AnthropicKey,
        pattern: r"(?:(?-u:\b)|\\[nrt])(sk-ant-[A-Za-z0-9_\-]{20,})",
        groups: &[1],
        guard: Guard::None,
    },
    // Project/service keys carry dashes; legacy keys are one long alphanumeric run. Requiring
    // one of the two keeps kebab-case words such as `sk-learn-style-names` out.
    Spec {
        kind: RedactionKind::OpenaiKey,
        pattern: r"(?:(?-u:\b)|\\[nrt])(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,}))",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::SlackToken,
        pattern: r"(?:(?-u:\b)|\\[nrt])(xox[baprs]-[A-Za-z0-9\-]{10,})",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::GoogleApiKey,
        pattern: r"(?:(?-u:\b)|\\[nrt])(AIza[0-9A-Za-z_\-]{35})",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::StripeKey,
        pattern: r"(?:(?-u:\b)|\\[nrt])((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,})",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::ServiceToken,
        pattern: r"(?:(?-u:\b)|\\[nrt])(glpat-[A-Za-z0-9_\-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}|GOCSPX-[A-Za-z0-9_\-]{28}|dop_v1_[a-f0-9]{64}|xapp-[0-9]-[A-Za-z0-9\-]{20,}|shpat_[a-fA-F0-9]{32})",
        groups: &[1],
        guard: Guard::None,
    },
    Spec {
        kind: RedactionKind::Jwt,
        pattern: r"(?:(?-u:\b)|\\[nrt])(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*)",
        groups: &[1],
        guard: Guard::None,
    },
    // The host says which workspace; the path is the credential.
    Spec {
        kind: RedactionKind::Webhook,
        pattern: r"(?i-u:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/)([A-Za-z0-9_/\-]{16,})",
        groups: &[1],
        guard: Guard::None,
    },
    // At least 16 token characters so prose ("bearer tokens are...") is left alone.
    Spec {
        kind: RedactionKind::BearerToken,
        pattern: r"(?:(?-u:\b)|\\[nrt])(?i-u:bearer)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)",
        groups: &[1],
        guard: Guard::TokenLike,
    },
    Spec {
        kind: RedactionKind::BasicAuth,
        pattern: r#"(?-u:\b)(?i-u:authorization)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?(?i-u:basic)[ \t]+([A-Za-z0-9+/]{8,}={0,2})"#,
        groups: &[1],
        guard: Guard::None,
    },
    // Other credential headers: `Authorization: Token|ApiKey|Key …` and the API-key headers.
    Spec {
        kind: RedactionKind::AuthHeader,
        pattern: r#"(?:(?-u:\b)(?i-u:authorization)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?(?i-u:token|api-?key|key|sso-key)[ \t]+|(?-u:\b)(?i-u:x-api-key|x-auth-token|x-access-token|x-api-token|api-key|apikey|private-token|x-vault-token|x-goog-api-key|ocp-apim-subscription-key)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?)([A-Za-z0-9\-._~+/=]{8,})"#,
        groups: &[1],
        guard: Guard::TokenLike,
    },
    // The password is greedy up to the last `@` before a `/` or whitespace, so `p@ss` survives;
    // the user may be empty (`redis://:pw@host`).
    Spec {
        kind: RedactionKind::UrlPassword,
        pattern: r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\[\]]*:([^\s/]+)@",
        groups: &[1],
        guard: Guard::None,
    },
    // `curl -u user:pass` / `--user user:pass` (anywhere in the curl command).
    Spec {
        kind: RedactionKind::CliPassword,
        pattern: r#"(?-u:\b)curl[ \t](?:[^\n|;&]*?[ \t])?(?:-u|--user)(?:[ \t]+|=)?["']?[^\s:"']+:([^\s"'\\]+)"#,
        groups: &[1],
        guard: Guard::NotVariable,
    },
    // `mysql -ppass` (a bare `-p` prompts and is kept) and `sshpass -p pass`.
    Spec {
        kind: RedactionKind::CliPassword,
        pattern: r#"(?-u:\b)(?:(?:mysql|mysqldump|mysqladmin|mariadb)[ \t](?:[^\n|;&]*?[ \t])?-p(?:"([^"\n\\]+)"|'([^'\n]+)'|([^\s"'\\\-][^\s"'\\]*))|sshpass[ \t]+-p[ \t]*(?:"([^"\n\\]+)"|'([^'\n]+)'|([^\s"'\\\-][^\s"'\\]*)))"#,
        groups: &[1, 2, 3, 4, 5, 6],
        guard: Guard::NotVariable,
    },
    // `--password=x`, `--password x`, `--token x` (`--password-stdin` is a different flag).
    Spec {
        kind: RedactionKind::CliPassword,
        pattern: r#"(?:^|[ \t"'=(])--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token)(?:=|[ \t]+)(?:"([^"\n\\]+)"|'([^'\n]+)'|([^\s"'\\\-][^\s"'\\]*))"#,
        groups: &[1, 2, 3],
        guard: Guard::NotPlaceholder,
    },
    Spec {
        kind: RedactionKind::ConnectionKey,
        pattern: r"(?i-u:AccountKey|SharedAccessKey|SharedSecretValue)=([^;\s\x22'\\]+)",
        groups: &[1],
        guard: Guard::NotVariable,
    },
    // `.env`/shell assignments (`NAME=value`, no spaces around `=`, as shells require; spaced
    // `MAX_TOKENS = 4096` is a code constant). Upper-case names only; the secret word ends the
    // name (`DB_PASSWORD`, `PGPASSWORD`, `GITHUB_TOKEN`, `APIKEY`) or is followed by a known
    // suffix (`SECRET_KEY_BASE`). `KEY` and `PASS` need a `_` before them (`MONKEY`,
    // `BYPASS`); bare `PWD` is the working directory, so it needs a prefix (`DB_PWD`).
    Spec {
        kind: RedactionKind::EnvSecret,
        pattern: r#"(?:(?-u:\b)|\\[nrt])(?:export[ \t]+)?(?:(?:[A-Z0-9]+_)*(?:[A-Z0-9]*(?:APIKEY|TOKEN|SECRET|PASSWORD|PASSWD)|KEY|PASS|CREDENTIALS?)|(?:[A-Z0-9]+_)+PWD)(?:_(?:ID|BASE|B64|BASE64|VALUE|STRING|RAW|[0-9]+))?=(?:\\+"([^"\\\n]*)\\+"|"([^"\n\\]*)"|'([^'\n]*)'|([^\s"'#=\\][^\s"'#\\]*))"#,
        groups: &[1, 2, 3, 4],
        guard: Guard::NotVariable,
    },
    // Quoted values only: `token = next_token()` in code must survive, `"password": "x"` must
    // not. The first alternative is the escaped form `\"password\":\"x\"`.
    Spec {
        kind: RedactionKind::SecretField,
        pattern: r#"(?i-u:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\+"([^"\\\n]+)\\+"|"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)')"#,
        groups: &[1, 2, 3],
        guard: Guard::Literal,
    },
    // Docker's `config.json`: `"auth": "<base64 user:password>"`.
    Spec {
        kind: RedactionKind::SecretField,
        pattern: r#""(?i-u:auth)\\*"[ \t]*:[ \t]*\\*"([A-Za-z0-9+/]{8,}={0,2})\\*""#,
        groups: &[1],
        guard: Guard::None,
    },
    // YAML-style unquoted `password: value` on its own line (no parentheses: not a call); a
    // line may also start and end at an escaped `\n`.
    Spec {
        kind: RedactionKind::SecretField,
        pattern: r#"(?m)(?:^|\\[nr])[ \t]*[A-Za-z0-9_\-]*(?i-u:password|passwd)[ \t]*:[ \t]+([^\s"'#(){}\[\]$\\][^\s#(){}\[\]\\]*)[ \t]*(?:$|\\+[nr])"#,
        groups: &[1],
        guard: Guard::None,
    },
    // Unquoted `name=value`, any case: form bodies, query strings, `client_secret=…`, `.npmrc`.
    // The value must end at a separator (`&`, `;`, space, quote, end of text), so a keyword
    // argument in code (`f(token=token)`, `password=pw,`) is left alone.
    Spec {
        kind: RedactionKind::SecretParam,
        pattern: r#"(?:(?i-u:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|signature)|(?:(?-u:\b)|\\[nrt])(?i-u:_auth|sig))=([^\s"'#&;,()\[\]{}<>\\$][^\s"'#&;,()\[\]{}<>\\]*)(?:[&;\s"'#\\]|$)"#,
        groups: &[1],
        guard: Guard::NotPlaceholder,
    },
    // A config line `name = value` / `name: value` (INI, TOML without quotes, YAML), lines
    // split by real or escaped newlines.
    Spec {
        kind: RedactionKind::SecretParam,
        pattern: r#"(?m)(?:^|\\[nr])[ \t]*[A-Za-z0-9_\-]*(?i-u:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key)[ \t]*[:=][ \t]*([^\s"'#(){}\[\]$<>\\][^\s#(){}\[\]\\]*)[ \t]*\r?(?:$|\\+[nr])"#,
        groups: &[1],
        guard: Guard::Opaque,
    },
    // `.netrc`: `machine host login user password pass` (on one line or several).
    Spec {
        kind: RedactionKind::SecretParam,
        pattern: r"(?-u:\b)machine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S+)",
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
