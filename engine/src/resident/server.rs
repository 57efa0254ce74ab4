//! `memctl embedder`: the server side (see the module doc of [`super`]).

use super::{
    MAX_REQUEST_BYTES, PROTOCOL_VERSION, Request, ResidentConfig, ResidentError, Response,
    checked_socket, lock_path,
};
use crate::embed::{Embedder, OnnxConfig, OnnxEmbedder};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a server run ended (when it returns at all: a serving process exits from its watchdog).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServeEnd {
    /// Another server holds the lock for this data dir.
    AlreadyRunning,
    /// The listening socket stopped accepting (not seen in practice).
    ListenerClosed,
}

/// How often the watchdog looks at the clock and the socket file.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// One client gets this long to send its request (a stuck client must not stall the others).
const CLIENT_IO: Duration = Duration::from_secs(2);

/// Serve query embeddings for `data_dir` with the model of `onnx` until idle.
///
/// Returns [`ServeEnd::AlreadyRunning`] at once when another server holds the lock. Otherwise
/// loads the model, binds the socket only when it can answer (so a client never waits for a
/// load), and serves one connection at a time (inference is single-threaded). **The process
/// exits** (status 0) from a watchdog thread after `cfg.idle` without a request or when the
/// socket file is gone or replaced; the server keeps no store handle and no unsaved state, so
/// exiting anywhere is safe.
pub fn serve(
    data_dir: &Path,
    onnx: &OnnxConfig,
    cfg: &ResidentConfig,
) -> Result<ServeEnd, ResidentError> {
    // Never create the data dir: the hook that started us had one, and a dir that is gone
    // was deleted on purpose (a test's temp dir, a user's `rm -rf`); re-creating it would
    // leave a server idling in a folder nobody will clean up. A dir deleted while the model
    // loads makes the bind below fail, and the process ends.
    if !data_dir.is_dir() {
        return Err(ResidentError::Io {
            path: data_dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the data dir does not exist (the embedder never creates it)",
            ),
        });
    }
    let sock = checked_socket(data_dir)?;
    let lock_file = lock_path(data_dir);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ResidentError::Io { path, source }
    };
    let Some(lock) = crate::paths::try_lock_file(&lock_file).map_err(io(&lock_file))? else {
        return Ok(ServeEnd::AlreadyRunning);
    };
    let started = Instant::now();
    let model = Arc::new(OnnxEmbedder::load(onnx)?);
    // The first run allocates ONNX Runtime's buffers: pay it before anyone waits.
    model.embed_batch(&["warm up"])?;
    // We hold the lock: a socket file left here belongs to a server that died.
    match std::fs::remove_file(&sock) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&sock)(e)),
    }
    let listener = UnixListener::bind(&sock).map_err(io(&sock))?;
    crate::paths::restrict_file(&sock)?;
    let ino = std::fs::metadata(&sock).map_err(io(&sock))?.ino();
    tracing::info!(
        socket = %sock.display(),
        load_ms = started.elapsed().as_millis() as u64,
        idle_s = cfg.idle.as_secs(),
        "resident embedder listening"
    );
    let last = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    spawn_watchdog(sock.clone(), ino, cfg.idle, Arc::clone(&last), epoch, lock);
    for conn in listener.incoming() {
        match conn {
            Ok(stream) => {
                if let Err(e) = answer(stream, &model) {
                    tracing::debug!(error = %e, "resident embedder: one request failed");
                }
                last.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
            }
            Err(e) => tracing::warn!(error = %e, "resident embedder: accept failed"),
        }
    }
    Ok(ServeEnd::ListenerClosed)
}

/// Exit the process when idle too long or when the socket is no longer ours. The lock file
/// handle lives here so that the lock is held until the process ends.
fn spawn_watchdog(
    sock: PathBuf,
    ino: u64,
    idle: Duration,
    last: Arc<AtomicU64>,
    epoch: Instant,
    lock: std::fs::File,
) {
    std::thread::spawn(move || {
        let _held = lock;
        loop {
            std::thread::sleep(WATCH_EVERY);
            let ours = std::fs::metadata(&sock).is_ok_and(|m| m.ino() == ino);
            let quiet = epoch
                .elapsed()
                .saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
            if !ours || quiet >= idle {
                if ours && let Err(e) = std::fs::remove_file(&sock) {
                    tracing::warn!(error = %e, "resident embedder: socket not removed");
                }
                tracing::info!(
                    idle_s = quiet.as_secs(),
                    socket_replaced = !ours,
                    "resident embedder exiting"
                );
                std::process::exit(0);
            }
        }
    });
}

/// Read one request line, write one response line.
fn answer(stream: UnixStream, model: &OnnxEmbedder) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_IO))?;
    stream.set_write_timeout(Some(CLIENT_IO))?;
    let mut line = Vec::new();
    BufReader::new((&stream).take(MAX_REQUEST_BYTES as u64)).read_until(b'\n', &mut line)?;
    let resp = match serde_json::from_slice::<Request>(&line) {
        Err(e) => failure(format!("bad request: {e}")),
        Ok(r) if r.v != PROTOCOL_VERSION => failure(format!(
            "protocol version {} not supported (this server speaks {PROTOCOL_VERSION})",
            r.v
        )),
        Ok(r) => match model.embed_batch(&[r.text.as_str()]) {
            Ok(mut v) => Response {
                v: PROTOCOL_VERSION,
                model: Some(model.id().clone()),
                vector: v.pop().unwrap_or_default(),
                error: None,
            },
            Err(e) => failure(e.to_string()),
        },
    };
    let mut out = serde_json::to_vec(&resp).map_err(std::io::Error::other)?;
    out.push(b'\n');
    (&stream).write_all(&out)
}

fn failure(msg: String) -> Response {
    Response {
        v: PROTOCOL_VERSION,
        model: None,
        vector: Vec::new(),
        error: Some(msg),
    }
}
