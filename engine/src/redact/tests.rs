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
    let mut all = base_cases();
    all.extend(more_cases());
    all
}

/// Shapes added after the adversarial review: each with the kind that must catch it.
fn more_cases() -> Vec<Case> {
    use RedactionKind as K;
    let pgp = format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----",
        fake("lQdGBF", 60)
    );
    let kube = fake("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo", 40);
    let session = fake("FwoGZXIvYXdzE", 120);
    let glpat = fake("glpat-", 20);
    let hf = fake("hf_", 34);
    let npm = fake("npm_", 36);
    let sg = format!("SG.{}.{}", fake("", 22), fake("", 43));
    let gocspx = fake("GOCSPX-", 28);
    let dop = format!("dop_v1_{}", "a1b2c3d4".repeat(8));
    let xapp = format!("xapp-1-{}", fake("A0", 40));
    let slack_hook = format!("T0{}/B0{}/{}", fake("", 8), fake("", 8), fake("", 24));
    let drf = fake("9", 40);
    let xkey = fake("k3", 30);
    let azure = format!("{}==", fake("", 86));
    let b64 = fake("dXNlcjpw", 16);
    let c =
        |text: String, secret: String, kind, keep: &[&'static str]| case(text, secret, kind, keep);
    vec![
        c(
            format!("key:\n{pgp}\nend"),
            fake("lQdGBF", 60),
            K::PrivateKey,
            &["key:", "end"],
        ),
        c(
            format!("users:\n- user:\n    client-key-data: {kube}\n"),
            kube.clone(),
            K::PrivateKey,
            &["client-key-data: "],
        ),
        c(
            format!("[default]\naws_session_token = {session}\n"),
            session.clone(),
            K::AwsSecretAccessKey,
            &["aws_session_token = "],
        ),
        c(
            format!("push with {glpat} now"),
            glpat.clone(),
            K::ServiceToken,
            &["push with ", " now"],
        ),
        c(
            format!("HF token {hf}"),
            hf.clone(),
            K::ServiceToken,
            &["HF token "],
        ),
        c(
            format!("//npm.example.com/:_authToken={npm}"),
            npm.clone(),
            K::ServiceToken,
            &["_authToken="],
        ),
        c(
            format!("sendgrid {sg}"),
            sg.clone(),
            K::ServiceToken,
            &["sendgrid "],
        ),
        c(
            format!("oauth {gocspx}"),
            gocspx.clone(),
            K::ServiceToken,
            &["oauth "],
        ),
        c(format!("do {dop}"), dop.clone(), K::ServiceToken, &["do "]),
        c(
            format!("slack app {xapp}"),
            xapp.clone(),
            K::ServiceToken,
            &["slack app "],
        ),
        c(
            format!("curl -X POST https://hooks.slack.com/services/{slack_hook} -d x"),
            slack_hook.clone(),
            K::Webhook,
            &["https://hooks.slack.com/services/", " -d x"],
        ),
        c(
            format!("Authorization: Token {drf}"),
            drf.clone(),
            K::AuthHeader,
            &["Authorization: Token "],
        ),
        c(
            format!("curl -H 'X-API-Key: {xkey}' https://api.example.com"),
            xkey.clone(),
            K::AuthHeader,
            &["X-API-Key: ", "https://api.example.com"],
        ),
        c(
            "redis-cli -u redis://:Rp4ssw0rd@cache:6379/0".into(),
            "Rp4ssw0rd".into(),
            K::UrlPassword,
            &["redis://:", "@cache:6379/0"],
        ),
        c(
            "curl -s -u admin:Cu9rlPass https://ci.example.com/api".into(),
            "Cu9rlPass".into(),
            K::CliPassword,
            &["-u admin:", "https://ci.example.com/api"],
        ),
        c(
            "mysql -h db -u root -pMy5qlPass app".into(),
            "My5qlPass".into(),
            K::CliPassword,
            &["-u root -p", " app"],
        ),
        c(
            "sshpass -p 'Ss4hPass' ssh root@box".into(),
            "Ss4hPass".into(),
            K::CliPassword,
            &["ssh root@box"],
        ),
        c(
            "tool login --password=Fl4gPass --user bob".into(),
            "Fl4gPass".into(),
            K::CliPassword,
            &["--password=", "--user bob"],
        ),
        c(
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};EndpointSuffix=core.windows.net"
            ),
            azure.clone(),
            K::ConnectionKey,
            &["AccountName=acme;AccountKey=", ";EndpointSuffix"],
        ),
        c(
            "PGPASSWORD=Pg5ecret psql -h db".into(),
            "Pg5ecret".into(),
            K::EnvSecret,
            &["PGPASSWORD=", " psql -h db"],
        ),
        c(
            "{\\\"cmd\\\":\\\"x\\nMYSQL_PWD=My5qlPwd\\\"}".into(),
            "My5qlPwd".into(),
            K::EnvSecret,
            &["MYSQL_PWD="],
        ),
        c(
            "log {\\\"user\\\":\\\"bob\\\",\\\"password\\\":\\\"Esc4pedPw\\\"} done".into(),
            "Esc4pedPw".into(),
            K::SecretField,
            &["\\\"user\\\":\\\"bob\\\"", " done"],
        ),
        c(
            format!("{{\"auths\": {{\"ghcr.io\": {{\"auth\": \"{b64}\"}}}}}}"),
            b64.clone(),
            K::SecretField,
            &["ghcr.io"],
        ),
        c(
            "POST /login body: user=bob&password=F0rmPass&remember=1".into(),
            "F0rmPass".into(),
            K::SecretParam,
            &["user=bob&password=", "&remember=1"],
        ),
        c(
            "GET https://api.example.com/v1/items?api_key=Qu3ryKey99&page=2".into(),
            "Qu3ryKey99".into(),
            K::SecretParam,
            &["?api_key=", "&page=2"],
        ),
        c(
            "grant_type=client_credentials&client_id=app&client_secret=Cl13ntSecret".into(),
            "Cl13ntSecret".into(),
            K::SecretParam,
            &["client_id=app&client_secret="],
        ),
        c(
            "[db]\npassword = In1Pass\nhost = x\n".into(),
            "In1Pass".into(),
            K::SecretParam,
            &["password = ", "host = x"],
        ),
        c(
            "machine api.example.com login bob password N3trcPass".into(),
            "N3trcPass".into(),
            K::SecretParam,
            &["login bob password "],
        ),
        c(
            "a <private reason=\"hr\">Attr1Secret</private> b".into(),
            "Attr1Secret".into(),
            K::Private,
            &["a ", " b"],
        ),
    ]
}

fn base_cases() -> Vec<Case> {
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
        redact("no tags, just <privateer> and </privately> alone"),
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

#[test]
fn private_tags_with_attributes_any_case_and_nested() {
    let cases = [
        (
            "a <private reason=\"x\">S1attr</private> b",
            "a [REDACTED:private] b",
        ),
        ("a <PRIVATE>S2up</PRIVATE> b", "a [REDACTED:private] b"),
        (
            "a <Private\tnote='y'>S3tab</private > b",
            "a [REDACTED:private] b",
        ),
        (
            "a <private>S4 <private>S5</private> S6</private> b",
            "a [REDACTED:private] b",
        ),
        (
            "a <private>S7 <private>S8</private> S9 unclosed",
            "a [REDACTED:private]",
        ),
        ("a <private reason=\"cut", "a [REDACTED:private]"),
        ("a <private", "a [REDACTED:private]"),
        ("S10 the prompt's part</private> b", "[REDACTED:private] b"),
    ];
    for (text, want) in cases {
        let (out, counts) = redact_counted(text);
        assert_eq!(out, want, "{text:?}");
        assert!(counts.get(RedactionKind::Private) >= 1, "{text:?}");
        assert_eq!(redact(&out), out.as_ref(), "idempotent on {out:?}");
    }
    for kept in ["<privateer>", "a <privacy> b", "x </privately> y", "<priv>"] {
        assert!(matches!(redact(kept), Cow::Borrowed(_)), "{kept:?}");
    }
}

#[test]
fn private_span_carries_across_the_messages_of_a_turn() {
    let mut open = 0;
    let (prompt, _) = redact_in_turn("deploy <private>the root pw is Kq7pass", &mut open);
    assert_eq!(prompt, "deploy [REDACTED:private]");
    assert_eq!(open, 1);
    let (tool, _) = redact_in_turn("tool output Zt4tool", &mut open);
    assert_eq!(tool, "[REDACTED:private]");
    let (answer, _) = redact_in_turn("used Wp2ans</private> and done", &mut open);
    assert_eq!(answer, "[REDACTED:private] and done");
    assert_eq!(open, 0);
    let (next, _) = redact_in_turn("plain text", &mut open);
    assert!(matches!(next, Cow::Borrowed(_)));
    // Nested spans carry their depth: one close is not enough.
    let mut open = 0;
    let _ = redact_in_turn("<private>a <private>b", &mut open);
    assert_eq!(open, 2);
    let (mid, _) = redact_in_turn("c</private> d", &mut open);
    assert_eq!((mid.as_ref(), open), ("[REDACTED:private]", 1));
    let (end, _) = redact_in_turn("e</private> f", &mut open);
    assert_eq!((end.as_ref(), open), ("[REDACTED:private] f", 0));
    // An empty message neither opens nor closes anything.
    let mut open = 1;
    assert_eq!(redact_in_turn("", &mut open).0, "");
    assert_eq!(open, 1);
}

proptest::proptest! {
    /// Whatever the tags around it, a secret inside a span never survives, and the scan never
    /// panics on a cut tag or multi-byte text.
    #[test]
    fn nothing_inside_any_private_span_survives(
        pieces in proptest::collection::vec(
            "(<|<private>|</private>|<PRIVATE a=\"1\">|</Private|<priv|é|x y|>)", 0..12
        ),
        secret in "[A-Z]{3}[0-9]{6}",
    ) {
        let mut text = pieces.concat();
        text.push_str("<private note=\"n\">");
        text.push_str(&secret);
        text.push_str("</private>");
        let out = redact(&text);
        proptest::prop_assert!(!out.contains(&secret), "{out}");
    }
}

/// The shared corpus (also used by the binaries' process tests): every sample is caught as
/// plain text, inside escaped JSON, and as a string of a JSON document.
#[test]
fn the_corpus_is_redacted_plain_and_inside_escaped_json() {
    let samples = super::corpus::samples(1);
    assert!(samples.len() >= 40, "{} kinds", samples.len());
    let mut missed = Vec::new();
    for s in &samples {
        let doc = serde_json::json!({ "stdout": s.text }).to_string();
        let forms = [
            ("plain", redact(&s.text).into_owned()),
            ("escaped", redact(&s.escaped()).into_owned()),
            ("json", redact_json(&doc).unwrap_or_default()),
        ];
        for (form, out) in forms {
            if out.contains(&s.secret) || !out.contains(MARKER_PREFIX) {
                missed.push(format!("{} ({form}): {out}", s.name));
            }
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

/// The module documentation's example.
#[test]
fn redaction_keeps_names_and_hosts_and_counts_kinds() {
    use crate::redact::{RedactionKind, redact, redact_counted};

    let (text, counts) = redact_counted("DB_PASSWORD=hunter2 psql postgres://app:s3cret@db/app");
    assert_eq!(
        text,
        "DB_PASSWORD=[REDACTED:env_secret] psql postgres://app:[REDACTED:url_password]@db/app"
    );
    assert_eq!(counts.get(RedactionKind::EnvSecret), 1);
    assert_eq!(counts.total(), 2);
    assert!(matches!(
        redact("nothing secret here"),
        std::borrow::Cow::Borrowed(_)
    ));
}
