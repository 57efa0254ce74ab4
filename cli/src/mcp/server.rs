//! The rmcp server: one `#[tool]` method per tool, each a thin call into [`super::tools`] on
//! tokio's blocking pool (store reads and the model are synchronous, and a slow call must not
//! stop the transport from answering pings or cancellations).

use super::tools::{self, Ctx};
use super::types::*;
use memctl_engine::{Engine, EngineOptions};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};
use std::sync::{Arc, Mutex};

/// What the model reads about the server as a whole (MCP `instructions`).
const INSTRUCTIONS: &str = "memctl: the archive of this project's past coding-agent sessions (Claude Code, Codex, Gemini) \
(every prompt, answer, tool call and output, redacted). Use it after a compaction or /clear, when \
the user refers to earlier work, and before re-running an expensive command whose output may be \
stored. Start with `search` (one line per hit), then open only what you need with `get`, \
`timeline` or `tool_output`. `remember` appends a durable note to .memctl/memory/; `forget` \
removes turns the user asked to forget (ask first).";

/// The server: the engine (opened on first use, then held: redb's multi-writer mode lets every
/// read transaction see what hooks committed since) and the project context.
#[derive(Debug, Clone)]
pub struct MemctlServer {
    opts: EngineOptions,
    engine: Arc<Mutex<Option<Arc<Engine>>>>,
    ctx: Arc<Ctx>,
    tool_router: ToolRouter<Self>,
}

impl MemctlServer {
    /// A server for `ctx.project` over the store `opts` names. Opens nothing yet: Claude Code
    /// waits for the MCP handshake with a start-up timeout.
    pub fn new(opts: EngineOptions, ctx: Ctx) -> Self {
        Self {
            opts,
            engine: Arc::new(Mutex::new(None)),
            ctx: Arc::new(ctx),
            tool_router: Self::tool_router(),
        }
    }

    /// The engine, opening the store on first use (a failed open is retried next call).
    fn engine(&self) -> Result<Arc<Engine>, String> {
        let mut slot = self
            .engine
            .lock()
            .map_err(|_| "memctl: an earlier call panicked; restart the server".to_string())?;
        if let Some(e) = slot.as_ref() {
            return Ok(Arc::clone(e));
        }
        let path = self.opts.store_path();
        // A store of an earlier memctl is migrated here (the server runs off the prompt path,
        // lazily at its first tool call), the old file kept under backups/.
        let (mut engine, migrated) = Engine::open_migrating(self.opts.clone())
            .map_err(|e| format!("cannot open the memctl store at {}: {e}", path.display()))?;
        if let Some(rep) = migrated {
            tracing::info!(from = rep.from, to = rep.to, backup = ?rep.backup, "store migrated");
        }
        // A long-lived process: the int8 blocks stay in memory between searches.
        if self.ctx.resident_vectors {
            engine.keep_vectors_resident();
        }
        let e = Arc::new(engine);
        *slot = Some(Arc::clone(&e));
        Ok(e)
    }

    /// Run `f` with the engine on the blocking pool; any error becomes the tool's error text.
    async fn run<T, F>(&self, name: &'static str, f: F) -> Result<Json<T>, String>
    where
        T: Send + 'static,
        F: FnOnce(&Engine, &Ctx) -> anyhow::Result<T> + Send + 'static,
    {
        let this = self.clone();
        let started = std::time::Instant::now();
        let res = tokio::task::spawn_blocking(move || {
            let engine = this.engine()?;
            f(&engine, &this.ctx).map_err(|e| format!("{e:#}"))
        })
        .await
        .map_err(|e| format!("memctl {name} failed: {e}"))?;
        let ms = started.elapsed().as_millis() as u64;
        match &res {
            Ok(_) => tracing::info!(tool = name, ms, "mcp tool call"),
            Err(e) => tracing::warn!(tool = name, ms, error = %e, "mcp tool call failed"),
        }
        res.map(Json)
    }
}

#[tool_router(router = tool_router)]
impl MemctlServer {
    /// Search the archive of past sessions (hybrid: meaning + exact words).
    #[tool(
        description = "Search memctl's archive of past turns of every coding agent (this project by \
        default). Returns one line per hit: id, session, turn, time, age, gist, score, confidence \
        (0..1, absolute; `confident: false` marks a weak match), the line that matched, `copies` \
        (\"×N, first …, last …\") when near-identical turns were folded into the hit, and \
        `superseded_by` when a later hit decides the same subject. Open hits with `get` (full \
        text) or `timeline` (turns around it). Use rare words (names, error text, ids) or a plain \
        question; a time phrase (\"last week\", \"in October\", \"the first time\") orders by time."
    )]
    async fn search(&self, p: Parameters<SearchInput>) -> Result<Json<SearchOutput>, String> {
        self.run("search", move |e, c| tools::search(e, c, p.0))
            .await
    }

    /// Full archived chunks by id.
    #[tool(
        description = "The full archived text of chunks by id (from `search` or \
        `timeline`), at most 10 per call."
    )]
    async fn get(&self, p: Parameters<GetInput>) -> Result<Json<GetOutput>, String> {
        self.run("get", move |e, _| tools::get(e, p.0)).await
    }

    /// The turns around a hit.
    #[tool(
        description = "The turns before and after a chunk in its session (one line each), \
        to see what led to a hit and what came of it."
    )]
    async fn timeline(&self, p: Parameters<TimelineInput>) -> Result<Json<TimelineOutput>, String> {
        self.run("timeline", move |e, _| tools::timeline(e, p.0))
            .await
    }

    /// The exact stored output of a tool call.
    #[tool(
        description = "The exact stored output of a past tool call (big outputs memctl \
        kept whole), by its id from a restore inventory; optionally a line or byte range. Read \
        this instead of re-running an expensive command."
    )]
    async fn tool_output(
        &self,
        p: Parameters<ToolOutputInput>,
    ) -> Result<Json<ToolOutputOutput>, String> {
        self.run("tool_output", move |e, _| tools::tool_output(e, p.0))
            .await
    }

    /// Archived sessions, newest first.
    #[tool(
        description = "Archived sessions of this project (or all projects), newest first: \
        id, turns, first/last time, one line of summary."
    )]
    async fn sessions(&self, p: Parameters<SessionsInput>) -> Result<Json<SessionsOutput>, String> {
        self.run("sessions", move |e, c| tools::sessions(e, c, p.0))
            .await
    }

    /// Load a past session: summary and newest turns.
    #[tool(
        description = "Load a past session: its summary (decisions, files, commands, \
        errors), the agent's compaction summary and its newest turns (one line each)."
    )]
    async fn session_summary(
        &self,
        p: Parameters<SessionSummaryInput>,
    ) -> Result<Json<SessionSummaryOutput>, String> {
        self.run("session_summary", move |e, _| {
            tools::session_summary(e, p.0)
        })
        .await
    }

    /// Forget archived turns for good.
    #[tool(
        description = "Forget archived turns for good, by chunk id (from `search` or \
        `timeline`; each id takes the rest of its turn, and the tool outputs stored during it). \
        Only for what the user asked you to forget: show them the turns first and ask before \
        calling. It cannot be undone."
    )]
    async fn forget(&self, p: Parameters<ForgetInput>) -> Result<Json<ForgetOutput>, String> {
        self.run("forget", move |e, _| tools::forget(e, p.0)).await
    }

    /// Append a durable note to the project's memory files.
    #[tool(description = "Append one dated line to the project's memory files \
        (.memctl/memory/: decisions, gotchas, feedback, active state), restored after every \
        compaction. Secrets are redacted; at most 500 characters.")]
    async fn remember(&self, p: Parameters<RememberInput>) -> Result<Json<RememberOutput>, String> {
        let ctx = Arc::clone(&self.ctx);
        tokio::task::spawn_blocking(move || tools::remember(&ctx, p.0))
            .await
            .map_err(|e| format!("memctl remember failed: {e}"))?
            .map(Json)
            .map_err(|e| format!("{e:#}"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemctlServer {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            "memctl",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS.to_string())
    }
}
