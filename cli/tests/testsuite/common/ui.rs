//! Helpers of the viewer's tests (`ui_http.rs`, `ui_browser.rs`): a store built from the sample
//! transcript and a hostile one, the real `memctl ui` process, and a plain HTTP/1.1 client over
//! a TCP socket (so a test can send what a browser would not: a forged `Host`, no token).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The hostile session: its text holds markup and script that must never run in the page.
pub const EVIL_SID: &str = "e7e7e7e7-0000-4000-8000-00000000e7e7";
/// A word only the hostile session holds (search finds it lexically).
pub const EVIL_WORD: &str = "zanzibarquux";
/// What the hostile prompt contains.
pub const EVIL_MARKUP: &str =
    "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">";

pub use memctl_test_support::repo_root;

/// `memctl` with the test's data dir and the checkout's runtime and model (scripts/setup.sh
/// puts them there; a missing one fails the test with what to run).
pub fn memctl(home: &Path) -> Command {
    with_env(Command::new(env!("CARGO_BIN_EXE_memctl")), home)
}

fn with_env(mut c: Command, home: &Path) -> Command {
    let root = memctl_test_support::require_setup();
    let ort = root.join(".cache/onnxruntime/libonnxruntime.so.1.31.1");
    let model = root.join("models/all-MiniLM-L6-v2");
    c.env("MEMCTL_HOME", home)
        .env("ORT_DYLIB_PATH", ort)
        .env("MEMCTL_MODEL_DIR", model)
        .env("MEMCTL_BACKGROUND_EMBED", "0")
        .env("MEMCTL_RESIDENT", "0")
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .env_remove("MEMCTL_CONFIG")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("MEMCTL_MEMORY_DIR");
    c
}

/// Run `memctl args` to success; its stdout.
pub fn cli(home: &Path, args: &[&str]) -> String {
    let out = memctl(home).args(args).output().expect("run memctl");
    assert!(
        out.status.success(),
        "memctl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

/// Run `memctl-hook event` with `payload` on stdin (the real hook binary, same environment as
/// [`memctl`]); its stdout.
pub fn hook(home: &Path, event: &str, payload: &serde_json::Value) -> String {
    let mut child = with_env(Command::new(super::hook_bin()), home)
        .arg(event)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start memctl-hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.to_string().as_bytes())
        .expect("write payload");
    let out = child.wait_with_output().expect("memctl-hook");
    assert!(out.status.success(), "hooks exit 0: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A small transcript of the hostile session, run in `project`.
pub fn evil_transcript(path: &Path, project: &Path) {
    let cwd = project.display().to_string();
    let mut s = String::new();
    let mut parent = serde_json::Value::Null;
    let prompts = [
        format!("Please look at this page {EVIL_MARKUP} and tell me about {EVIL_WORD} caching"),
        "Now rename the config loader to load_settings in src/config.rs".to_string(),
        "Run the tests again".to_string(),
    ];
    for (i, p) in prompts.iter().enumerate() {
        let (u, a) = (format!("u-{i}-0000"), format!("a-{i}-0000"));
        s += &line(serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": EVIL_SID, "version": "2.0.37", "type": "user",
            "message": {"role": "user", "content": p},
            "uuid": u, "timestamp": format!("2026-11-20T10:0{i}:00.000Z"),
        }));
        s += &line(serde_json::json!({
            "parentUuid": u, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": EVIL_SID, "version": "2.0.37", "type": "assistant",
            "message": {"id": format!("msg_{i}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": format!("Done with step {i}: {EVIL_WORD} answered. </pre><b>bold?</b>")}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 4, "output_tokens": 10}},
            "uuid": a, "timestamp": format!("2026-11-20T10:0{i}:30.000Z"),
        }));
        parent = serde_json::Value::String(a);
    }
    std::fs::write(path, s).expect("write transcript");
}

/// The session of [`add_copies`]: one test run repeated three times with other timings.
pub const COPIES_SID: &str = "c0c0c0c0-0000-4000-8000-00000000c0c0";
/// A word only the copies hold.
pub const COPY_WORD: &str = "quokkaflux";

/// Ingest a session (in `<dir>/proj`) that runs the same tests three times: the same output
/// with other timings and pids, markup included, so that search folds the runs into one hit.
pub fn add_copies(home: &Path, dir: &Path) {
    let cwd = dir.join("proj").display().to_string();
    let mut s = String::new();
    let mut parent = serde_json::Value::Null;
    for (i, (secs, pid)) in [("0.52", 48213), ("1.91", 51102), ("0.77", 60331)]
        .into_iter()
        .enumerate()
    {
        let (u, a) = (format!("cu-{i}-0000"), format!("ca-{i}-0000"));
        s += &line(serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": COPIES_SID, "version": "2.0.37", "type": "user",
            "message": {"role": "user", "content": format!("Run the {COPY_WORD} tests <i>again</i>")},
            "uuid": u, "timestamp": format!("2026-11-2{i}T09:00:00.000Z"),
        }));
        s += &line(serde_json::json!({
            "parentUuid": u, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": COPIES_SID, "version": "2.0.37", "type": "assistant",
            "message": {"id": format!("cmsg_{i}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": format!(
                    "{COPY_WORD}: 12 passed; 0 failed; finished in {secs}s (pid {pid}) {EVIL_MARKUP}")}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 4, "output_tokens": 10}},
            "uuid": a, "timestamp": format!("2026-11-2{i}T09:00:30.000Z"),
        }));
        parent = serde_json::Value::String(a);
    }
    let path = dir.join(format!("{COPIES_SID}.jsonl"));
    std::fs::write(&path, s).expect("write transcript");
    cli(home, &["ingest", &path.display().to_string()]);
}

/// A store with the sample session and the hostile one (in `<dir>/proj`).
pub fn build_store(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    let proj = dir.join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir proj");
    let sample = memctl_test_support::sample_transcript();
    let evil = dir.join(format!("{EVIL_SID}.jsonl"));
    evil_transcript(&evil, &proj);
    cli(&home, &["ingest", &sample.display().to_string()]);
    cli(&home, &["ingest", &evil.display().to_string()]);
    home
}

/// A running `memctl ui` (killed on drop), with the session a browser would hold after
/// opening its URL: the cookie it set and the form token its pages carry.
pub struct Server {
    child: Child,
    pub url: String,
    pub port: u16,
    pub token: String,
    /// The per-run path prefix every page lives under (`/` and 32 hex characters).
    pub base: String,
    /// `Set-Cookie` of the first page, as the server sent it.
    pub set_cookie: String,
    /// `name=value` of the session cookie.
    pub cookie: String,
    /// The form token of the pages' forms.
    pub csrf: String,
}

/// The value of `<input type="hidden" name="csrf" value="...">` in a page.
pub fn csrf_in(page: &str) -> Option<String> {
    let at = page.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(page[at..].split('"').next()?.to_string())
}

impl Server {
    pub fn start(home: &Path) -> Self {
        Self::start_with(home, &[])
    }

    /// `memctl ui` with extra arguments (the hidden connection limits).
    pub fn start_with(home: &Path, args: &[&str]) -> Self {
        let mut child = memctl(home)
            .arg("ui")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start memctl ui");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        out.read_line(&mut first).expect("read the URL line");
        let url = first
            .trim()
            .strip_prefix("memctl ui: ")
            .unwrap_or_else(|| panic!("memctl ui printed {first:?}, not its URL"))
            .to_string();
        // Keep reading (and dropping) stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let rest = url.strip_prefix("http://127.0.0.1:").expect("loopback URL");
        let (port, path) = rest.split_once('/').expect("port/path");
        let (base, token) = path.split_once("/?t=").expect("prefix/?t=token");
        let mut s = Self {
            child,
            port: port.parse().expect("port"),
            token: token.to_string(),
            base: format!("/{base}"),
            url,
            set_cookie: String::new(),
            cookie: String::new(),
            csrf: String::new(),
        };
        // What a browser does: open the URL (the cookie), then a page with forms (the token).
        let first = s.get("/");
        assert_eq!(first.status, 200, "{first:?}");
        s.set_cookie = first
            .head
            .lines()
            .find_map(|l| l.strip_prefix("set-cookie: "))
            .unwrap_or_else(|| panic!("no cookie set: {}", first.head))
            .to_string();
        s.cookie = s
            .set_cookie
            .split(';')
            .next()
            .unwrap_or_default()
            .to_string();
        let page = s.get("/session?id=db5b5fab-8f4d-4e27-9da1-494c73cf256d");
        s.csrf = csrf_in(&page.body).unwrap_or_else(|| panic!("no form token: {}", page.body));
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// Send one request (`Connection: close`) and read the whole answer.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    extra: &[&str],
    body: &str,
) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for h in extra {
        req += &format!("{h}\r\n");
    }
    if !body.is_empty() || method == "POST" {
        req += &format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    req += "\r\n";
    s.write_all(req.as_bytes()).expect("send head");
    // A server may answer (and close) before reading a huge body: a broken pipe or reset
    // there is expected; any other error is not.
    let closed_early = |e: &std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
        )
    };
    if let Err(e) = s.write_all(body.as_bytes()) {
        assert!(closed_early(&e), "sending the body: {e}");
    }
    let mut raw = Vec::new();
    if let Err(e) = s.read_to_end(&mut raw) {
        // A reset after the answer arrived still leaves the answer to check.
        assert!(
            closed_early(&e) && !raw.is_empty(),
            "reading the answer: {e}"
        );
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

impl Server {
    /// GET `path` (under the prefix) with the token in the query (`path` may hold a query).
    pub fn get(&self, path: &str) -> Answer {
        let sep = if path.contains('?') { '&' } else { '?' };
        let p = format!("{}{path}{sep}t={}", self.base, self.token);
        request(self.port, "GET", &p, &self.host(), &[], "")
    }

    /// POST a form to `path` (under the prefix) as the viewer's own page does: the session
    /// cookie, its `Origin` and fetch metadata, the form token.
    pub fn post(&self, path: &str, form: &str) -> Answer {
        let form = format!("{form}&csrf={}", self.csrf);
        self.post_raw(
            path,
            &form,
            &[&self.origin(), "Sec-Fetch-Site: same-origin"],
        )
    }

    /// POST `form` as is, with the session cookie and `extra` headers only.
    pub fn post_raw(&self, path: &str, form: &str, extra: &[&str]) -> Answer {
        let cookie = format!("Cookie: {}", self.cookie);
        let mut headers = vec![cookie.as_str()];
        headers.extend_from_slice(extra);
        let p = format!("{}{path}", self.base);
        request(self.port, "POST", &p, &self.host(), &headers, form)
    }

    /// `Origin: http://127.0.0.1:<port>`, the header the viewer's own pages send.
    pub fn origin(&self) -> String {
        format!("Origin: http://127.0.0.1:{}", self.port)
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}
