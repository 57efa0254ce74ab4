//! `memctl ui`: a local web page to look at what the agent remembers, check what restores
//! injected, and remove what should not be there.
//!
//! Why this stack: `axum` on the `tokio` the workspace already runs for `rmcp` (small, well
//! kept, HTTP/1 only here), server-rendered HTML from `maud`, which escapes every interpolated
//! value by construction: transcripts hold arbitrary HTML and script, so no string from the
//! store reaches the page unescaped. One small script (`/static/app.js`) asks for confirmations;
//! the Content-Security-Policy forbids every other script and inline code.
//!
//! Who can reach it: the server binds 127.0.0.1 only, and every request must carry the random
//! per-run token (`?t=` on the printed URL, then a `SameSite=Strict`, `HttpOnly` cookie), so
//! other machines and other local users cannot read the archive. The `Host` header must name
//! the loopback address and this port (a DNS-rebinding page in the user's browser is refused).
//!
//! Reads are read transactions on the shared engine (the store is opened in redb's
//! multi-process mode, so hooks keep writing while the page is open); only the explicit fixes
//! (forget, pin, memory files) write, through the same engine calls as the CLI.

mod assets;
mod fix;
mod health;
mod memory;
mod page;
mod search;
mod swap;
mod timeline;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use memctl_engine::{Engine, EngineError, Settings};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// `memctl ui`.
#[derive(Debug, clap::Args)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the page in the default browser (`xdg-open` / `open`).
    #[arg(long)]
    pub open: bool,
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub engine: Arc<Engine>,
    pub settings: Settings,
    /// `--data-dir` as given (the doctor's install environment needs it).
    pub data_dir_flag: Option<PathBuf>,
    pub token: String,
    pub port: u16,
}

impl Ctx {
    fn cookie_name(&self) -> String {
        format!("memctl_ui_{}", self.port)
    }
}

pub(crate) type Shared = Arc<Ctx>;

/// A request that failed: its status and one sentence, rendered as a page.
#[derive(Debug)]
pub(crate) struct UiError {
    pub status: StatusCode,
    pub message: String,
}

impl UiError {
    pub fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: message.into(),
        }
    }
}

/// Bad input the engine refused (a filter that does not parse, an unknown id) is the request's
/// fault; anything else (I/O, a busy store) is ours.
fn engine_status(e: &EngineError) -> StatusCode {
    match e {
        EngineError::Invalid(_) | EngineError::Forget(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<EngineError> for UiError {
    fn from(e: EngineError) -> Self {
        Self {
            status: engine_status(&e),
            message: format!("{e}"),
        }
    }
}

impl From<anyhow::Error> for UiError {
    /// The CLI's helpers (filters, project names) fail with anyhow: their own errors are bad
    /// input, a wrapped engine error keeps the engine's verdict.
    fn from(e: anyhow::Error) -> Self {
        let status = e
            .chain()
            .find_map(|c| c.downcast_ref::<EngineError>())
            .map_or(StatusCode::BAD_REQUEST, engine_status);
        Self {
            status,
            message: format!("{e:#}"),
        }
    }
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(status = %self.status, error = %self.message, "ui request failed");
        }
        let title = self.status.canonical_reason().unwrap_or("error");
        let body = page::layout(
            title,
            "",
            maud::html! {
                h1 { (self.status.as_u16()) " " (title) }
                p.error { (self.message) }
                p { a href="/" { "Back to the timeline" } }
            },
        );
        (self.status, body).into_response()
    }
}

/// `axum::extract::Query` whose rejection (a `from=-1`, a bad encoding) is one of our error
/// pages with status 400, like every other bad input.
#[derive(Debug)]
pub(crate) struct Q<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for Q<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = UiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, UiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Self(q.0))
            .map_err(|e| UiError::bad(e.body_text()))
    }
}

/// `axum::Form` with the same rejection page (a body over the size limit is a 413).
#[derive(Debug)]
pub(crate) struct F<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for F<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = UiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, UiError> {
        axum::Form::<T>::from_request(req, state)
            .await
            .map(|f| Self(f.0))
            .map_err(|e| UiError {
                status: e.status(),
                message: e.body_text(),
            })
    }
}

/// Run `f` on the engine off the async threads (redb reads block).
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Shared,
    f: impl FnOnce(&Ctx) -> Result<T, UiError> + Send + 'static,
) -> Result<T, UiError> {
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || f(&ctx))
        .await
        .map_err(|e| UiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("request task failed: {e}"),
        })?
}

/// A fresh random token: 32 hex characters (128 bits from the OS).
fn new_token() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("no OS randomness: {e}"))?;
    Ok(hex::encode(b))
}

/// Equal without an early exit on the first differing byte.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn query_token(uri: &axum::http::Uri) -> Option<String> {
    let q = uri.query()?;
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(q).ok()?;
    pairs.into_iter().find(|(k, _)| k == "t").map(|(_, v)| v)
}

fn cookie_token(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn forbidden(why: &str) -> Response {
    UiError {
        status: StatusCode::FORBIDDEN,
        message: why.to_string(),
    }
    .into_response()
}

/// The gate in front of every route: loopback `Host`, then the token (query or cookie).
async fn guard(State(ctx): State<Shared>, req: Request, next: Next) -> Response {
    let host_ok = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| {
            h == format!("127.0.0.1:{}", ctx.port) || h == format!("localhost:{}", ctx.port)
        });
    if !host_ok {
        return forbidden("this page answers only to 127.0.0.1 and localhost on its own port");
    }
    let from_query = query_token(req.uri()).filter(|t| same_secret(t, &ctx.token));
    let from_cookie =
        cookie_token(req.headers(), &ctx.cookie_name()).filter(|t| same_secret(t, &ctx.token));
    if from_query.is_none() && from_cookie.is_none() {
        return forbidden(
            "missing or wrong access token: open the URL `memctl ui` printed (it holds the token)",
        );
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    if from_cookie.is_none() {
        let c = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            ctx.cookie_name(),
            ctx.token
        );
        if let Ok(v) = HeaderValue::from_str(&c) {
            h.append(header::SET_COOKIE, v);
        }
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // The token is in the first URL: never send it on to another site.
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

async fn not_found() -> UiError {
    UiError::not_found("no such page")
}

fn router(ctx: Shared) -> Router {
    Router::new()
        .route("/", get(timeline::index))
        .route("/session", get(timeline::session))
        .route("/search", get(search::page))
        .route("/swap", get(swap::list))
        .route("/swap/view", get(swap::view))
        .route("/swap/download", get(swap::download))
        .route("/forget", get(fix::forget_preview).post(fix::forget))
        .route("/pin", post(fix::pin))
        .route("/memory", get(memory::memory))
        .route(
            "/memory/edit",
            get(memory::memory_edit).post(memory::memory_save),
        )
        .route("/memory/init", post(memory::memory_init))
        .route("/health", get(health::page))
        .route("/static/app.css", get(assets::css))
        .route("/static/app.js", get(assets::js))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), guard))
        .with_state(ctx)
}

/// Run `memctl ui` until the process is stopped: print the URL, serve.
pub fn run(
    engine: Engine,
    a: &UiArgs,
    settings: &Settings,
    data_dir_flag: Option<PathBuf>,
    out: &mut dyn Write,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", a.port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{}", a.port))?;
        let port = listener.local_addr()?.port();
        let ctx = Arc::new(Ctx {
            engine: Arc::new(engine),
            settings: settings.clone(),
            data_dir_flag,
            token: new_token()?,
            port,
        });
        let url = format!("http://127.0.0.1:{port}/?t={}", ctx.token);
        writeln!(out, "memctl ui: {url}")?;
        writeln!(
            out,
            "(local only; the token in the URL is the key; Ctrl-C stops)"
        )?;
        out.flush()?;
        if a.open {
            open_browser(&url);
        }
        axum::serve(listener, router(ctx))
            .await
            .context("serving the viewer")
    })
}

/// Hand the URL to the desktop's opener; a failure is a hint, not an error (the URL is printed).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(_) => {}
        Err(e) => eprintln!("memctl: could not run {opener} ({e}): open the URL above by hand"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_hex_and_differ() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abcd", "abcd"));
        assert!(!same_secret("abcd", "abce"));
        assert!(!same_secret("abcd", "abc"));
    }

    #[test]
    fn cookie_token_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; memctl_ui_9=tok; b=2"),
        );
        assert_eq!(cookie_token(&h, "memctl_ui_9").as_deref(), Some("tok"));
        assert_eq!(cookie_token(&h, "memctl_ui_8"), None);
    }
}
