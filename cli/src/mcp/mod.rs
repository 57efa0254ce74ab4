//! `memctl mcp`: the agent's own access to its memory, as an MCP server over stdio.
//!
//! Why MCP and not `memctl search` through Bash: the tools are typed (the model sees a JSON
//! schema per tool, with field descriptions), need no Bash permission, and answer in compact
//! JSON. Why rmcp: it is the official Rust SDK; it derives each tool's input schema from the
//! input struct (schemars), so the schema the model reads and the struct the server parses are
//! one definition, and it speaks the protocol (handshake, versions, cancellation) we would
//! otherwise re-implement.
//!
//! Start-up is cheap on purpose: Claude Code gives MCP servers a start-up timeout, so the
//! handshake and `tools/list` touch neither the store nor the model. The store is opened on the
//! first tool call and held (redb multi-writer: each call's read transaction sees every commit
//! hooks made since); the model loads on the first `search` that needs a query vector, unless
//! the resident embedder answers first ([`memctl_engine::Engine::search`]).
//!
//! The project is `CLAUDE_PROJECT_DIR` when Claude Code sets it, else the working directory the
//! server was started in (Claude Code starts it in the project).
//!
//! Files: `types.rs` (typed inputs and outputs), `tools.rs` (what each tool does, plain
//! functions over the engine), `server.rs` (the rmcp router).

mod server;
pub mod tools;
pub mod types;

use anyhow::{Context, Result};
use memctl_engine::{EngineOptions, Settings};
use rmcp::ServiceExt;

pub use server::MemctlServer;

/// The project this server answers for: `CLAUDE_PROJECT_DIR`, else the working directory.
pub fn project_dir(settings: &Settings) -> Result<String> {
    match settings.project_dir.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => Ok(p.to_string()),
        None => Ok(std::env::current_dir()
            .context("current directory")?
            .display()
            .to_string()),
    }
}

/// Largest JSON-RPC message (one line on stdin) the server reads. A longer one is dropped
/// by the transport while it is read, never buffered whole, and left unanswered (rmcp logs
/// it; it cannot know the request's id): the connection goes on. Below it, an argument over
/// its own, far smaller bound is answered with a tool error naming that bound
/// ([`tools::MAX_QUERY_BYTES`] and its siblings); this bound is kept well above those (an
/// 8 MB query still gets that error) and is rmcp's own default, written out so that it stays.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Serve MCP on stdin/stdout until the client closes stdin.
pub fn serve(opts: EngineOptions, settings: &Settings) -> Result<()> {
    let ctx = tools::Ctx {
        project: project_dir(settings)?,
        memory: settings.restore.memory.clone(),
        resident_vectors: settings.mcp_resident_vectors,
        settings: settings.clone(),
    };
    tracing::info!(project = %ctx.project, "mcp server starting");
    let server = MemctlServer::new(opts, ctx);
    // One thread for the transport; tool calls run on the blocking pool (store and model work
    // is synchronous). Two cores are shared with the client and its hooks: no worker pool.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let (stdin, stdout) = rmcp::transport::stdio();
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout)
            .with_max_line_length(MAX_MESSAGE_BYTES);
        let running = server.serve(transport).await.context("MCP handshake")?;
        let reason = running.waiting().await.context("MCP service")?;
        tracing::info!(?reason, "mcp server stopped");
        anyhow::Ok(())
    })?;
    // A pending read on stdin cannot be cancelled; do not wait for it at runtime shutdown.
    rt.shutdown_background();
    Ok(())
}
