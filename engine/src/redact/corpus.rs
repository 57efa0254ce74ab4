//! A corpus of secrets in every shape docs/usage.md promises to redact, for the tests of this
//! crate and the process tests of the binaries (cargo feature `testing`).
//!
//! Each sample is built at run time from a seed, so that no secret-shaped literal sits in the
//! repository and every (sample, channel) pair of a test has its own secret to look for.

use serde_json::{Value, json};

/// One secret in its context.
#[derive(Debug, Clone)]
pub struct Sample {
    /// What shape this is (one per kind of secret).
    pub name: &'static str,
    /// The secret in plain text, as a prompt or a tool output would hold it.
    pub text: String,
    /// The secret value: it must appear nowhere after redaction.
    pub secret: String,
    /// The JSON document the escaped form encodes.
    inner: Value,
}

impl Sample {
    /// The sample inside escaped JSON, as a structured log line printed into an output shows
    /// it: `log {\"password\":\"…\"} end` (one level of escaping: `\"`, `\n`).
    pub fn escaped(&self) -> String {
        let doc = self.inner.to_string();
        let quoted = serde_json::to_string(&doc).unwrap_or_default();
        let body = quoted
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(&quoted);
        format!("log {body} end")
    }
}

/// A small deterministic generator (xorshift), so each seed gives its own secrets.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn from(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char)
            .collect()
    }
    fn alnum(&mut self, n: usize) -> String {
        self.from(
            b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789",
            n,
        )
    }
    /// A password: letters and digits, always with a digit.
    fn pw(&mut self) -> String {
        format!("{}{}", self.alnum(9), self.from(b"23456789", 1))
    }
    fn upper(&mut self, n: usize) -> String {
        self.from(b"ABCDEFGHJKLMNPQRSTUVWXYZ234567", n)
    }
    fn hex(&mut self, n: usize) -> String {
        self.from(b"0123456789abcdef", n)
    }
    fn b64(&mut self, n: usize) -> String {
        self.from(
            b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789+/",
            n,
        )
    }
}

/// Plain-text sample: the escaped form wraps the text as a command field.
fn s(name: &'static str, text: String, secret: String) -> Sample {
    let inner = json!({ "cmd": text });
    Sample {
        name,
        text,
        secret,
        inner,
    }
}

/// A sample whose natural form is a JSON document (`text` is that document).
fn j(name: &'static str, inner: Value, secret: String) -> Sample {
    Sample {
        name,
        text: inner.to_string(),
        secret,
        inner,
    }
}

/// Every shape, with secrets drawn from `seed` (different seeds give different secrets).
pub fn samples(seed: u64) -> Vec<Sample> {
    let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let g = &mut g;
    let mut out = keys_and_tokens(g);
    out.extend(headers_and_urls(g));
    out.extend(assignments(g));
    out
}

fn keys_and_tokens(g: &mut Gen) -> Vec<Sample> {
    let rsa = format!("MIIE{}", g.b64(60));
    let ssh = format!("b3Bl{}", g.b64(60));
    let pgp = format!("lQdGBF{}", g.b64(60));
    let kube = format!("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo{}", g.b64(40));
    let aws_id = format!("AKIA{}", g.upper(16));
    let aws_secret = g.b64(40);
    let session = format!("FwoGZXIvYXdzE{}", g.b64(100));
    let ghp = format!("ghp_{}", g.alnum(36));
    let pat = format!("github_pat_{}", g.alnum(82));
    let ant = format!("sk-ant-api03-{}", g.alnum(90));
    let oai = format!("sk-proj-{}", g.alnum(100));
    let slack = format!("xoxb-{}-{}", g.hex(12), g.alnum(24));
    let google = format!("AIza{}", g.alnum(35));
    let stripe = format!("sk_live_{}", g.alnum(24));
    let jwt = format!("eyJ{}.eyJ{}.{}", g.alnum(20), g.alnum(40), g.alnum(43));
    let glpat = format!("glpat-{}", g.alnum(20));
    let hf = format!("hf_{}", g.alnum(34));
    let npm = format!("npm_{}", g.alnum(36));
    let sg = format!("SG.{}.{}", g.alnum(22), g.alnum(43));
    let gocspx = format!("GOCSPX-{}", g.alnum(28));
    let dop = format!("dop_v1_{}", g.hex(64));
    vec![
        s(
            "pem_rsa",
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{rsa}\n{}\n-----END RSA PRIVATE KEY-----",
                g.b64(64)
            ),
            rsa,
        ),
        s(
            "pem_openssh",
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh}\n-----END OPENSSH PRIVATE KEY-----"
            ),
            ssh,
        ),
        s(
            "pgp_private_block",
            format!(
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp}\n=Ab12\n-----END PGP PRIVATE KEY BLOCK-----"
            ),
            pgp,
        ),
        s(
            "kubeconfig_key_data",
            format!("users:\n- name: admin\n  user:\n    client-key-data: {kube}\n"),
            kube,
        ),
        s(
            "aws_access_key_id",
            format!("aws_access_key_id = {aws_id}"),
            aws_id,
        ),
        s(
            "aws_secret_access_key",
            format!("aws_secret_access_key = {aws_secret}"),
            aws_secret,
        ),
        s(
            "aws_session_token",
            format!("[default]\naws_session_token = {session}\n"),
            session,
        ),
        s(
            "github_token",
            format!("git push https://github.com/o/r with {ghp}"),
            ghp,
        ),
        s("github_pat", format!("GH {pat} done"), pat),
        s("anthropic_key", format!("using {ant} now"), ant),
        s("openai_key", format!("openai {oai}"), oai),
        s("slack_token", format!("slack {slack}"), slack),
        s("google_api_key", format!("maps {google}"), google),
        s("stripe_key", format!("stripe {stripe}"), stripe),
        s("jwt", format!("session cookie {jwt}"), jwt),
        s("gitlab_token", format!("gitlab {glpat}"), glpat),
        s("huggingface_token", format!("hub {hf}"), hf),
        s("npm_token", format!("publish with {npm}"), npm),
        s("sendgrid_key", format!("mail {sg}"), sg),
        s("google_oauth_secret", format!("oauth {gocspx}"), gocspx),
        s("digitalocean_token", format!("doctl {dop}"), dop),
    ]
}

fn headers_and_urls(g: &mut Gen) -> Vec<Sample> {
    let hook = format!("T0{}/B0{}/{}", g.upper(8), g.upper(8), g.alnum(24));
    let discord = format!("1{}/{}", g.hex(17), g.alnum(60));
    let bearer = g.alnum(40);
    let basic = g.b64(24);
    let token = format!("9{}", g.hex(39));
    let xkey = format!("k3{}", g.alnum(30));
    let (pg, redis, curl, mysql, sshpass, flag) = (g.pw(), g.pw(), g.pw(), g.pw(), g.pw(), g.pw());
    let (query, azure) = (g.pw(), format!("{}==", g.b64(86)));
    vec![
        s(
            "slack_webhook",
            format!("curl -X POST https://hooks.slack.com/services/{hook} -d '{{}}'"),
            hook,
        ),
        s(
            "discord_webhook",
            format!("POST https://discord.com/api/webhooks/{discord}"),
            discord,
        ),
        s(
            "bearer_header",
            format!("curl -H 'Authorization: Bearer {bearer}' https://api.example.com"),
            bearer,
        ),
        s(
            "basic_auth_header",
            format!("Authorization: Basic {basic}"),
            basic,
        ),
        s(
            "token_auth_header",
            format!("Authorization: Token {token}"),
            token,
        ),
        s(
            "x_api_key_header",
            format!("curl -H 'X-API-Key: {xkey}' https://api.example.com"),
            xkey,
        ),
        s(
            "url_password",
            format!("psql postgres://app:{pg}@db.internal:5432/app"),
            pg,
        ),
        s(
            "url_empty_user",
            format!("redis-cli -u redis://:{redis}@cache:6379/0"),
            redis,
        ),
        s(
            "curl_user",
            format!("curl -s -u admin:{curl} https://ci.example.com/api"),
            curl,
        ),
        s(
            "mysql_p",
            format!("mysql -h db -u root -p{mysql} app"),
            mysql,
        ),
        s(
            "sshpass",
            format!("sshpass -p '{sshpass}' ssh root@box"),
            sshpass,
        ),
        s(
            "password_flag",
            format!("tool login --password={flag} --user bob"),
            flag,
        ),
        s(
            "query_api_key",
            format!("GET https://api.example.com/v1/items?api_key={query}&page=2"),
            query,
        ),
        s(
            "azure_account_key",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};EndpointSuffix=core.windows.net"
            ),
            azure,
        ),
    ]
}

fn assignments(g: &mut Gen) -> Vec<Sample> {
    let (env, pgpw, export, form, client, ini, netrc, yaml, field, esc) = (
        g.pw(),
        g.pw(),
        format!("ghx{}", g.alnum(30)),
        g.pw(),
        g.pw(),
        g.pw(),
        g.pw(),
        g.pw(),
        g.pw(),
        g.pw(),
    );
    let (auth_token, docker, kw, yaml_token) = (g.pw(), g.b64(24), g.pw(), g.pw());
    vec![
        s(
            "env_db_password",
            format!("DB_PASSWORD={env} ./run.sh"),
            env,
        ),
        s(
            "env_pgpassword",
            format!("PGPASSWORD={pgpw} psql -h db -U app"),
            pgpw,
        ),
        s(
            "env_export_token",
            format!("export SERVICE_TOKEN=\"{export}\""),
            export,
        ),
        s(
            "form_password",
            format!("POST /login body: user=bob&password={form}&remember=1"),
            form,
        ),
        s(
            "client_secret",
            format!("grant_type=client_credentials&client_id=app&client_secret={client}"),
            client,
        ),
        s(
            "ini_password",
            format!("[db]\npassword = {ini}\nhost = db\n"),
            ini,
        ),
        s(
            "netrc",
            format!("machine api.example.com login bob password {netrc}"),
            netrc,
        ),
        s(
            "yaml_password",
            format!("db:\n  user: app\n  password: {yaml}\n"),
            yaml,
        ),
        s(
            "yaml_api_token",
            format!("service:\n  api_token: {yaml_token}\n"),
            yaml_token,
        ),
        j(
            "json_password",
            json!({"user": "bob", "password": field}),
            field,
        ),
        j(
            "json_client_secret",
            json!({"client_id": "app", "client_secret": esc}),
            esc,
        ),
        s(
            "npmrc_auth_token",
            format!("//npm.example.com/:_authToken={auth_token}"),
            auth_token,
        ),
        j(
            "docker_auth",
            json!({"auths": {"ghcr.io": {"auth": docker}}}),
            docker,
        ),
        s(
            "python_kwarg_literal",
            format!("client = Client(api_key=\"{kw}\")"),
            kw,
        ),
    ]
}
