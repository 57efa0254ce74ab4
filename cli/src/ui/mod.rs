//! `memctl ui`: a local web page to look at what the agent remembers, check what restores
//! injected, and remove what should not be there.
//!
//! Why this stack: `axum` on the `tokio` the workspace already runs for `rmcp` (small, well
//! kept, HTTP/1 only here), server-rendered HTML from `maud`, which escapes every interpolated
//! value by construction: transcripts hold arbitrary HTML and script, so no string from the
//! store reaches the page unescaped. One small script (`/static/app.js`) asks for confirmations;
//! the Content-Security-Policy forbids every other script and inline code.
//!
//! Who can reach it: the server binds 127.0.0.1 only and serves every page under a random
//! per-run path prefix; every request must carry the random per-run token (`?t=` on the
//! printed URL, then a session cookie scoped to that prefix), and every change must come from
//! the viewer's own page with its form token: [`gate`] says how and why. Other machines, other
//! local users and pages of other local servers the user opens can neither read the archive
//! nor change it.
//!
//! Connections: hyper's HTTP/1 server in our own accept loop, so a client that sends half a
//! request, or keeps a connection idle, is closed after `--read-timeout-ms` (hyper's header
//! read timeout also runs while a kept-alive connection waits for its next request; [`gate`]
//! bounds the body), and at most `--max-connections` are served at once: further ones wait
//! in the listen queue until one closes, so a flood of idle sockets is cleared by the timeout
//! and cannot exhaust the process's file descriptors.
//!
//! Reads are read transactions on the shared engine (the store is opened in redb's
//! multi-process mode, so hooks keep writing while the page is open); only the explicit fixes
//! (forget, pin, memory files, all POST) write, through the same engine calls as the CLI.

mod assets;
mod fix;
mod gate;
mod health;
mod memory;
mod page;
mod search;
mod swap;
mod timeline;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use memctl_engine::{Engine, EngineError, Settings};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `memctl ui`.
#[derive(Debug, clap::Args)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the page in the default browser (`xdg-open` / `open`).
    #[arg(long)]
    pub open: bool,
    /// Milliseconds a client may take to send a request's head or body, and may keep a
    /// connection idle between requests, before it is closed.
    #[arg(long, hide = true, default_value_t = 5_000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub read_timeout_ms: u64,
    /// Connections served at once; further ones wait until one closes.
    #[arg(long, hide = true, default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_connections: u32,
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub engine: Arc<Engine>,
    pub settings: Settings,
    /// `--data-dir` as given (the doctor's install environment needs it).
    pub data_dir_flag: Option<PathBuf>,
    /// The printed URL's key (`?t=`).
    pub token: String,
    /// The session cookie's value: another random value, so the cookie is not the token.
    pub session: String,
    /// The form token every change carries ([`gate`]).
    pub csrf: String,
    /// The path prefix every URL and the cookie live under (`/` and 32 hex characters).
    pub base: String,
    pub port: u16,
    /// How long a client may take to send a request body.
    pub read_timeout: std::time::Duration,
}

impl Ctx {
    fn cookie_name(&self) -> String {
        format!("memctl_ui_{}", self.port)
    }

    /// The session cookie: sent back only to this viewer's paths, never readable by script,
    /// never sent on a request another site starts, gone when the browser closes.
    fn set_cookie(&self) -> String {
        format!(
            "{}={}; Path={}; HttpOnly; SameSite=Strict",
            self.cookie_name(),
            self.session,
            self.base
        )
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
                p { a href=(page::link("/", &[])) { "Back to the timeline" } }
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

async fn not_found() -> UiError {
    UiError::not_found("no such page")
}

/// Every route lives under the per-run prefix (`ctx.base`); anything else reaches the gate
/// and then the fallback.
fn router(ctx: Shared) -> Router {
    let at = |path: &str| format!("{}{path}", ctx.base);
    Router::new()
        .route(&at("/"), get(timeline::index))
        .route(&at("/session"), get(timeline::session))
        .route(&at("/search"), get(search::page))
        .route(&at("/swap"), get(swap::list))
        .route(&at("/swap/view"), get(swap::view))
        .route(&at("/swap/download"), get(swap::download))
        .route(&at("/forget"), get(fix::forget_preview).post(fix::forget))
        .route(&at("/pin"), post(fix::pin))
        .route(&at("/memory"), get(memory::memory))
        .route(
            &at("/memory/edit"),
            get(memory::memory_edit).post(memory::memory_save),
        )
        .route(&at("/memory/init"), post(memory::memory_init))
        .route(&at("/health"), get(health::page))
        .route(&at("/static/app.css"), get(assets::css))
        .route(&at("/static/app.js"), get(assets::js))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            ctx.clone(),
            gate::guard,
        ))
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
            token: gate::new_secret()?,
            session: gate::new_secret()?,
            csrf: gate::new_secret()?,
            base: format!("/{}", gate::new_secret()?),
            port,
            read_timeout: Duration::from_millis(a.read_timeout_ms),
        });
        page::set_site(page::Site {
            base: ctx.base.clone(),
            csrf: ctx.csrf.clone(),
        })
        .map_err(|_| anyhow::anyhow!("one viewer per process: `memctl ui` already ran here"))?;
        let url = format!("http://127.0.0.1:{port}{}/?t={}", ctx.base, ctx.token);
        writeln!(out, "memctl ui: {url}")?;
        writeln!(
            out,
            "(local only; the token in the URL is the key; Ctrl-C stops)"
        )?;
        out.flush()?;
        if a.open {
            open_browser(&url);
        }
        let limits = Limits {
            read_timeout: ctx.read_timeout,
            max_connections: a.max_connections as usize,
        };
        serve(listener, router(ctx), limits).await
    })
}

/// What bounds the connections ([`serve`]).
#[derive(Debug, Clone, Copy)]
struct Limits {
    read_timeout: Duration,
    max_connections: usize,
}

/// Accept and serve connections forever: a connection is accepted only with a free slot (the
/// others wait in the kernel's listen queue), and hyper closes one whose request head does not
/// arrive within the read timeout, which also bounds how long a kept-alive connection idles.
async fn serve(listener: tokio::net::TcpListener, app: Router, limits: Limits) -> Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.read_timeout)
        .keep_alive(true);
    loop {
        let slot = slots
            .clone()
            .acquire_owned()
            .await
            .context("the connection slots closed")?;
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors or an aborted handshake: passing; retry shortly rather
                // than spin or stop serving.
                tracing::warn!(error = %e, "ui: accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let conn = http.serve_connection(
            TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(app.clone()),
        );
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "ui: connection closed");
            }
            drop(slot);
        });
    }
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
