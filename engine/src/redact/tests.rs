//! Redaction corpus: every kind is caught, ordinary code and prose is left alone.
//!
//! Fake secrets are assembled at run time (`fake(...)`) so that no secret-shaped literal sits
//! in the repository for scanners to flag.

use super::*;
use proptest::prelude::*;

/// A deterministic run of `n` alphanumeric characters after `prefix`.
fn fake(prefix: &str, n: usize) -> String {
    const ALNUM: &[u8] = b"aB3dE5gH7jK9mN2pQ4sT6vW8yZ0cF1";
    let mut s = String::from(prefix);
    s.extend((0..n).map(|i| ALNUM[(i * 7 + 3) % ALNUM.len()] as char));
    s
}

/// Positive case: `text` with `secret` inside; after redaction the secret is gone, the marker of
/// `kind` is present and every string of `keep` survived.
struct Case {
    text: String,
    secret: String,
    kind: RedactionKind,
    keep: Vec<&'static str>,
}

fn case(text: String, secret: String, kind: RedactionKind, keep: &[&'static str]) -> Case {
    Case {
        text,
        secret,
        kind,
        keep: keep.to_vec(),
    }
}

fn positive_cases() -> Vec<Case> {
    use RedactionKind as K;
    let aws_id = fake("AKIA", 16).to_uppercase();
    let asia_id = fake("ASIA", 16).to_uppercase();
    let aws_secret = fake("", 40);
    let ghp = fake("ghp_", 36);
    let gho = fake("gho_", 36);
    let ghs = fake("ghs_", 36);
    let pat = fake("github_pat_", 82);
    let ant = fake("sk-ant-api03-", 93);
    let oai = fake("sk-", 48);
    let oai_proj = fake("sk-proj-", 120);
    let slack = format!("xoxb-{}-{}", fake("", 12), fake("", 24));
    let google = fake("AIza", 35);
    let stripe = fake("sk_live_", 24);
    let rk = fake("rk_live_", 24);
    let jwt = format!("{}.{}.{}", fake("eyJ", 20), fake("eyJ", 40), fake("", 43));
    let bearer = fake("", 40);
    let basic = fake("", 24);
    let pem_body = format!("{}\n{}\n{}", fake("MIIE", 60), fake("", 64), fake("", 20));
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
    let pem_cut = format!("-----BEGIN PRIVATE KEY-----\n{}", fake("MIIE", 64));
    vec![
        case(
            format!("key id {aws_id} here"),
            aws_id.clone(),
            K::AwsAccessKeyId,
            &["key id", "here"],
        ),
        case(
            format!("export AWS_ACCESS_KEY_ID={asia_id}"),
            asia_id,
            K::AwsAccessKeyId,
            &["export AWS_ACCESS_KEY_ID="],
        ),
        case(
            format!("[default]\naws_secret_access_key = {aws_secret}\n"),
            aws_secret.clone(),
            K::AwsSecretAccessKey,
            &["aws_secret_access_key = "],
        ),
        case(
            format!("AWS_SECRET_ACCESS_KEY={aws_secret}"),
            aws_secret,
            K::AwsSecretAccessKey,
            &["AWS_SECRET_ACCESS_KEY="],
        ),
        case(
            format!("git push https://{ghp}@github.com/o/r"),
            ghp.clone(),
            K::GithubToken,
            &["@github.com/o/r"],
        ),
        case(format!("token: {gho}"), gho, K::GithubToken, &["token: "]),
        case(format!("GH {ghs}."), ghs, K::GithubToken, &["GH ", "."]),
        case(format!("pat={pat}"), pat, K::GithubToken, &["pat="]),
        case(
            format!("ANTHROPIC_API_KEY={ant}"),
            ant.clone(),
            K::AnthropicKey,
            &["ANTHROPIC_API_KEY="],
        ),
        case(
            format!("client = Anthropic(api_key=\"{ant}\")"),
            ant,
            K::AnthropicKey,
            &["client = Anthropic("],
        ),
        case(
            format!("openai key {oai} ok"),
            oai,
            K::OpenaiKey,
            &["openai key", " ok"],
        ),
        case(
            format!("OPENAI_API_KEY: {oai_proj}"),
            oai_proj,
            K::OpenaiKey,
            &["OPENAI_API_KEY: "],
        ),
        case(format!("slack {slack}"), slack, K::SlackToken, &["slack "]),
        case(
            format!("maps?key={google}&q=1"),
            google,
            K::GoogleApiKey,
            &["maps?key=", "&q=1"],
        ),
        case(
            format!("stripe.api_key = {stripe}"),
            stripe,
            K::StripeKey,
            &["stripe.api_key = "],
        ),
        case(
            format!("{rk} restricted"),
            rk,
            K::StripeKey,
            &[" restricted"],
        ),
        case(
            format!("cookie session={jwt}; Path=/"),
            jwt.clone(),
            K::Jwt,
            &["cookie session=", "; Path=/"],
        ),
        case(
            format!("curl -H 'Authorization: Bearer {bearer}' https://api.x.io"),
            bearer.clone(),
            K::BearerToken,
            &["Authorization: Bearer ", "https://api.x.io"],
        ),
        case(
            format!("bearer {bearer}"),
            bearer,
            K::BearerToken,
            &["bearer "],
        ),
        case(
            format!("Authorization: Basic {basic}=="),
            basic,
            K::BasicAuth,
            &["Authorization: Basic "],
        ),
        case(pem.clone(), pem_body, K::PrivateKey, &[]),
        case(
            format!("before\n{pem}\nafter"),
            "BEGIN RSA PRIVATE KEY".into(),
            K::PrivateKey,
            &["before\n", "\nafter"],
        ),
        case(pem_cut, fake("MIIE", 64), K::PrivateKey, &[]),
        case(
            "DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app".into(),
            "s3cr3t-pw".into(),
            K::UrlPassword,
            &["postgres://app:", "@db.internal:5432/app"],
        ),
        case(
            "clone https://bob:p@ss@git.example.com/x.git".into(),
            "p@ss".into(),
            K::UrlPassword,
            &["https://bob:", "@git.example.com/x.git"],
        ),
        case(
            "DB_PASSWORD=hunter2!".into(),
            "hunter2!".into(),
            K::EnvSecret,
            &["DB_PASSWORD="],
        ),
        case(
            "export STRIPE_WEBHOOK_SECRET=whsec_abc123".into(),
            "whsec_abc123".into(),
            K::EnvSecret,
            &["export STRIPE_WEBHOOK_SECRET="],
        ),
        case(
            "SECRET_KEY_BASE='f00b4r'".into(),
            "f00b4r".into(),
            K::EnvSecret,
            &["SECRET_KEY_BASE='", "'"],
        ),
        case(
            "     3\u{2192}API_KEY=\"abc def\"".into(),
            "abc def".into(),
            K::EnvSecret,
            &["API_KEY=\""],
        ),
        case(
            "MY_PWD=letmein".into(),
            "letmein".into(),
            K::EnvSecret,
            &["MY_PWD="],
        ),
        case(
            "GOOGLE_CREDENTIALS=/x/y.json".into(),
            "/x/y.json".into(),
            K::EnvSecret,
            &["GOOGLE_CREDENTIALS="],
        ),
        case(
            r#"{"user": "bob", "password": "correct horse"}"#.into(),
            "correct horse".into(),
            K::SecretField,
            &[r#""user": "bob""#, r#""password": ""#],
        ),
        case(
            r#"{"client_secret":"a\"b"}"#.into(),
            r#"a\"b"#.into(),
            K::SecretField,
            &[r#"{"client_secret":""#],
        ),
        case(
            "db_password = 'tr0ub4dor'".into(),
            "tr0ub4dor".into(),
            K::SecretField,
            &["db_password = '"],
        ),
        case(
            "  x-api-key: \"k-123\"".into(),
            "k-123".into(),
            K::SecretField,
            &["x-api-key: \""],
        ),
        case(
            "deploy with <private>the staging root pw is Kq7-violet</private> then check".into(),
            "Kq7-violet".into(),
            K::Private,
            &["deploy with ", " then check"],
        ),
        case(
            "db:\n  password: s3cret\n  host: x\n".into(),
            "s3cret".into(),
            K::SecretField,
            &["password: ", "host: x"],
        ),
    ]
}

#[test]
fn every_kind_is_caught() {
    let mut seen = std::collections::BTreeSet::new();
    for c in positive_cases() {
        let (out, counts) = redact_counted(&c.text);
        assert!(
            !out.contains(&c.secret),
            "secret survived in {:?} -> {out:?}",
            c.text
        );
        assert!(
            out.contains(&c.kind.marker()),
            "expected {} in {out:?} (from {:?})",
            c.kind,
            c.text
        );
        assert!(
            counts.get(c.kind) >= 1,
            "count for {} missing: {counts:?}",
            c.kind
        );
        for k in &c.keep {
            assert!(out.contains(k), "lost {k:?}: {:?} -> {out:?}", c.text);
        }
        seen.insert(c.kind);
    }
    for kind in RedactionKind::ALL {
        assert!(seen.contains(&kind), "no positive case for {kind}");
    }
}

/// Ordinary code and prose that looks a bit like secrets: nothing may change.
const NEGATIVES: &str = include_str!("../../tests/fixtures/redact/negatives.txt");

#[test]
fn ordinary_text_is_left_alone() {
    for (i, line) in NEGATIVES.split("\n---\n").enumerate() {
        let (out, counts) = redact_counted(line);
        assert!(
            matches!(out, Cow::Borrowed(_)),
            "negative #{i} changed: {line:?} -> {out:?} ({counts:?})"
        );
    }
}

#[test]
fn already_redacted_text_is_stable() {
    for c in positive_cases() {
        let once = redact(&c.text).into_owned();
        let (twice, counts) = redact_counted(&once);
        assert_eq!(once, twice);
        assert!(
            counts.is_empty(),
            "second pass counted {counts:?} on {once:?}"
        );
    }
}

#[test]
fn counts_add_up_per_kind() {
    let text = format!(
        "{} and {} and DB_PASSWORD=x1 and {}",
        fake("ghp_", 36),
        fake("gho_", 36),
        fake("AIza", 35)
    );
    let (_, counts) = redact_counted(&text);
    assert_eq!(counts.get(RedactionKind::GithubToken), 2);
    assert_eq!(counts.get(RedactionKind::EnvSecret), 1);
    assert_eq!(counts.get(RedactionKind::GoogleApiKey), 1);
    assert_eq!(counts.total(), 4);
}

#[test]
fn marker_opening_a_word_boundary_is_handled_in_one_call() {
    // The Google key is exactly 35 characters, so the AWS id glued to it only becomes a word of
    // its own once the key is replaced: one call must still catch both.
    let text = format!("{}{}", fake("AIza", 35), fake("AKIA", 16).to_uppercase());
    let once = redact(&text).into_owned();
    assert_eq!(redact(&once), once.as_str());
}

#[test]
fn unicode_and_empty_inputs() {
    assert_eq!(redact(""), "");
    let s = "naïve café — 東京 🚀 password: (none)";
    assert_eq!(redact(s), s);
    let t = format!("é{}é", fake(" ghp_", 36));
    assert!(!redact(&t).contains("ghp_"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn idempotent_on_arbitrary_strings(s in any::<String>()) {
        let once = redact(&s).into_owned();
        prop_assert_eq!(redact(&once).into_owned(), once);
    }

    /// Strings built from secret-ish fragments hit the rules far more often than random text.
    #[test]
    fn idempotent_on_secretish_strings(
        parts in proptest::collection::vec(prop_oneof![
            Just("AKIA".to_string()), Just("ghp_".to_string()), Just("sk-".to_string()),
            Just("sk-ant-".to_string()), Just("eyJ".to_string()), Just(".".to_string()),
            Just("Bearer ".to_string()), Just("https://u:".to_string()), Just("@".to_string()),
            Just("API_KEY=".to_string()), Just("\"password\": \"".to_string()), Just("\"".to_string()),
            Just("-----BEGIN PRIVATE KEY-----".to_string()), Just("-----END PRIVATE KEY-----".to_string()),
            Just("\n".to_string()), Just(" ".to_string()), Just("[REDACTED:jwt]".to_string()),
            Just("AIza".to_string()), Just("xoxb-".to_string()), Just("$".to_string()),
            "[A-Za-z0-9_]{1,40}",
        ], 0..24)
    ) {
        let s: String = parts.concat();
        let once = redact(&s).into_owned();
        prop_assert_eq!(redact(&once).into_owned(), once);
    }
}

#[test]
fn private_spans_go_whole_and_unclosed_ones_run_to_the_end() {
    let (out, counts) = redact_counted(
        "a <PRIVATE>one\nline two</Private> b <private>x</private> c <private>cut off API_KEY=zzz",
    );
    assert_eq!(
        out,
        "a [REDACTED:private] b [REDACTED:private] c [REDACTED:private]"
    );
    assert_eq!(counts.get(RedactionKind::Private), 3);
    assert!(matches!(
        redact("no tags, just </private> alone"),
        Cow::Borrowed(_)
    ));
    let twice = redact(&out).into_owned();
    assert_eq!(twice, out, "idempotent");
    // Multi-byte text around and inside the span stays valid UTF-8 and is cut at the tags.
    assert_eq!(redact("é<private>ü</private>ß"), "é[REDACTED:private]ß");
}

proptest::proptest! {
    #[test]
    fn nothing_between_private_tags_survives(
        before in "[a-z é]{0,20}", secret in "[A-Za-z0-9]{8,20}", after in "[a-z é]{0,20}"
    ) {
        let text = format!("{before}<private>{secret}</private>{after}");
        let out = redact(&text);
        proptest::prop_assert!(!out.contains(&secret), "{out}");
        proptest::prop_assert!(out.starts_with(before.as_str()) && out.ends_with(after.as_str()));
    }
}

/// `strip_private` as it was before it jumped from `<` to `<` (a case-insensitive compare at
/// every byte): the new search must find the same spans.
fn reference_strip_private(text: &str) -> Option<(String, u32)> {
    let lower_find = |hay: &str, needle: &str, from: usize| -> Option<usize> {
        let bytes = hay.as_bytes();
        let n = needle.len();
        (from..=bytes.len().checked_sub(n)?)
            .find(|&i| bytes[i..i + n].eq_ignore_ascii_case(needle.as_bytes()))
    };
    let mut start = lower_find(text, PRIVATE_OPEN, 0)?;
    let mut out = String::new();
    let mut last = 0;
    let mut n = 0u32;
    loop {
        out.push_str(&text[last..start]);
        out.push_str(&RedactionKind::Private.marker());
        n += 1;
        let body = start + PRIVATE_OPEN.len();
        match lower_find(text, PRIVATE_CLOSE, body) {
            Some(end) => last = end + PRIVATE_CLOSE.len(),
            None => return Some((out, n)),
        }
        match lower_find(text, PRIVATE_OPEN, last) {
            Some(next) => start = next,
            None => break,
        }
    }
    out.push_str(&text[last..]);
    Some((out, n))
}

proptest::proptest! {
    #[test]
    fn private_tag_search_matches_reference(
        pieces in proptest::collection::vec(
            "(<|<private>|</private>|<PRIVATE>|</Private|<priv|é|x y|>)", 0..12
        )
    ) {
        let text = pieces.concat();
        proptest::prop_assert_eq!(strip_private(&text), reference_strip_private(&text));
    }
}
