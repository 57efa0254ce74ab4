//! The resident service: one long-lived `memctl embedder` process per data dir that keeps
//! the model loaded, embeds prompts for short-lived hook processes over a Unix socket, and
//! embeds the chunks archived with hash vectors only ("pending") on a bulk thread of its own.
//!
//! Why: prompt-time recall needs the prompt's vector (lexical alone misses paraphrases), and a
//! fresh process pays ~150–190 ms to load ONNX Runtime, the model and the tokenizer (measured in
//! docs/perf/hooks.md): three times the recall budget. A resident process answers
//! in the time of one inference (~5–10 ms for a prompt).
//!
//! Rules that answer what users of peer tools complain about (orphaned workers by the
//! hundred, hooks that block when a worker is down):
//! - **At most one per data dir**: the server holds an exclusive lock on [`lock_path`] for its
//!   life; a second one exits at once.
//! - **It goes away by itself**: after [`ResidentConfig::idle`] without a request, or as soon as
//!   its socket file is removed or replaced (the data dir deleted, a newer server).
//! - **Nobody depends on it**: a client that cannot connect, or gets no answer within
//!   [`ResidentConfig::timeout`], embeds in process as before ([`crate::Engine::recall`]).
//! - **Nobody else gets in**: the socket lives in the data dir (0700) and is made 0600.
//! - Hooks start it only when recall can happen (a session lost context) or when chunks wait
//!   for a model vector, detached; an archiver tells a running one about new pending chunks
//!   ([`notify_pending`]).
//! - **Bulk work yields to prompts** ([`Bulk`]): the bulk thread runs at the lowest CPU and I/O
//!   priority ([`crate::embed::lower_priority`]) with a model session of its own (so a query
//!   never waits for a batch), embeds a few chunks per batch, and starts no batch while a
//!   query is being answered.
//!
//! The protocol: one JSON line each way per connection ([`Request`], [`Response`]), versioned;
//! a [`Op::Pending`] request gets no answer.

mod bulk;
mod client;
mod server;

pub use bulk::Bulk;
pub use client::{Served, embed_query, notify_pending, search_query};
pub use server::{BulkWork, ServeEnd, serve};

use crate::embed::EmbedderId;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Protocol version of [`Request`] / [`Response`]; a server answers other versions with an
/// error and clients ignore answers of other versions (a binary upgraded under a running
/// server falls back to in-process embedding until the old server idles out).
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest request a server reads (a prompt is truncated to 256 tokens by the model anyway).
pub const MAX_REQUEST_BYTES: usize = 256 << 10;

/// Largest response a client reads (384 floats as JSON take ~8 KB).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// Unix socket paths longer than this do not fit `sockaddr_un` (108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 100;

/// Resident-embedder settings (`MEMCTL_RESIDENT`, `MEMCTL_RESIDENT_IDLE_SECS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResidentConfig {
    /// Use and start the resident embedder (default on).
    pub enabled: bool,
    /// The server exits after this long without a request (default 15 min).
    pub idle: Duration,
    /// How long a client waits for an answer before embedding in process (default 300 ms: a
    /// busy server is still faster than a cold load, a stuck one must not cost more).
    pub timeout: Duration,
}

impl Default for ResidentConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            idle: Duration::from_secs(15 * 60),
            timeout: Duration::from_millis(300),
        }
    }
}

/// Why the resident embedder could not answer (the caller embeds in process then).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResidentError {
    /// No server listens on the socket (not started yet, exited, or starting).
    #[error("no resident embedder at {}", path.display())]
    NotRunning { path: PathBuf },
    /// The socket path does not fit a Unix socket address.
    #[error("socket path too long ({len} bytes): {}", path.display())]
    PathTooLong { path: PathBuf, len: usize },
    /// Reading, writing or binding failed.
    #[error("resident embedder I/O at {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The other side spoke another version or sent something that does not parse.
    #[error("resident embedder protocol: {0}")]
    Protocol(String),
    /// The server could not embed (it reports why).
    #[error("resident embedder: {0}")]
    Server(String),
    /// The server could not load the model.
    #[error(transparent)]
    Embed(#[from] crate::error::EmbedError),
    /// The data dir could not be prepared.
    #[error(transparent)]
    Store(#[from] crate::error::StoreError),
}

/// What a [`Request`] asks for. Absent means [`Op::Embed`] (requests of earlier releases).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Embed `text` as a query and answer with the vector.
    #[default]
    Embed,
    /// New chunks wait for a model vector: wake the bulk thread. No answer is written (the
    /// sender does not wait).
    Pending,
    /// Embed `text` and answer with the vector and, when the service keeps a vector index, its
    /// nearest chunks in `projects` ([`crate::ann`]).
    Search,
}

/// One request: embed `text` as a query, or [`Op::Pending`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Request {
    /// [`PROTOCOL_VERSION`].
    pub v: u32,
    /// What is asked.
    #[serde(default)]
    pub op: Op,
    /// The text to embed (empty for [`Op::Pending`]).
    #[serde(default)]
    pub text: String,
    /// [`Op::Search`]: the projects searched.
    #[serde(default)]
    pub projects: Vec<u32>,
    /// [`Op::Search`]: how many nearest chunks are wanted.
    #[serde(default)]
    pub k: usize,
}

/// One response: the vector and the space it is in, or why not.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Response {
    /// [`PROTOCOL_VERSION`].
    pub v: u32,
    /// The embedding space of `vector`.
    #[serde(default)]
    pub model: Option<EmbedderId>,
    /// The L2-normalised vector.
    #[serde(default)]
    pub vector: Vec<f32>,
    /// Set instead of the vector when the server failed.
    #[serde(default)]
    pub error: Option<String>,
    /// [`Op::Search`]: the service index's answer, when it could give one.
    #[serde(default)]
    pub ann: Option<crate::ann::AnnAnswer>,
}

/// The server's socket in `data_dir`.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("embedder.sock")
}

/// The lock a running server holds in `data_dir`.
pub fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("embedder.lock")
}

/// The socket path, or why it cannot be one.
fn checked_socket(data_dir: &Path) -> Result<PathBuf, ResidentError> {
    let path = socket_path(data_dir);
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(ResidentError::PathTooLong { path, len });
    }
    Ok(path)
}

#[cfg(test)]
mod tests;
