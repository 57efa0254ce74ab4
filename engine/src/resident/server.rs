//! `memctl embedder`: the server side (see the module doc of [`super`]).

use super::{
    Bulk, MAX_REQUEST_BYTES, Op, PROTOCOL_VERSION, Request, ResidentConfig, ResidentError,
    Response, checked_socket, lock_path,
};
use crate::ann::DenseService;
use crate::embed::{Embedder, OnnxConfig, OnnxEmbedder};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bulk work of a service (embedding pending chunks), run on a thread of its own once the
/// service holds the data dir's lock; it returns when it has nothing left to do for good.
pub type BulkWork = Box<dyn FnOnce(Bulk) + Send + 'static>;

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

/// Serve query embeddings for `data_dir` with the model of `onnx` until idle, and run `bulk`
/// (if any) on a thread of its own beside it.
///
/// Returns [`ServeEnd::AlreadyRunning`] at once when another server holds the lock. Otherwise
/// starts `bulk`, loads the model, binds the socket only when it can answer (so a client never waits for a
/// load), and serves one connection at a time (inference is single-threaded). **The process
/// exits** (status 0) from a watchdog thread after `cfg.idle` without a request or a bulk
/// batch, or when the socket file is gone or replaced; the query side keeps no store handle,
/// and the bulk side's store writes are transactions that survive the process ending anywhere
/// (like a kill), so exiting anywhere is safe.
pub fn serve(
    data_dir: &Path,
    onnx: &OnnxConfig,
    cfg: &ResidentConfig,
    bulk: Option<BulkWork>,
    index: Option<Arc<dyn DenseService>>,
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
    let signals = Bulk::new();
    if let Some(work) = bulk {
        let b = signals.clone();
        let spawned = std::thread::Builder::new()
            .name("memctl-bulk".into())
            .spawn(move || work(b));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "resident service: no bulk thread; chunks stay pending");
        }
    }
    if let Some(ix) = index.as_ref().map(Arc::clone) {
        let spawned = std::thread::Builder::new()
            .name("memctl-index".into())
            .spawn(move || ix.follow());
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "resident service: no index thread; searches scan");
        }
    }
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
    signals.touch();
    let watch = Watch {
        sock: sock.clone(),
        ino,
        idle: cfg.idle,
        index: index.clone(),
    };
    spawn_watchdog(watch, signals.clone(), lock);
    for conn in listener.incoming() {
        match conn {
            Ok(stream) => {
                if let Err(e) = answer(stream, &model, index.as_deref(), &signals) {
                    tracing::debug!(error = %e, "resident embedder: one request failed");
                }
                signals.touch();
            }
            Err(e) => tracing::warn!(error = %e, "resident embedder: accept failed"),
        }
    }
    Ok(ServeEnd::ListenerClosed)
}

/// A quiet spell after which a service whose index wants a restart exits
/// ([`DenseService::restart_wanted`]).
const RESTART_QUIET: Duration = Duration::from_secs(30);

/// What the watchdog watches: the socket it must still own, the idle limit, the index.
struct Watch {
    sock: PathBuf,
    ino: u64,
    idle: Duration,
    index: Option<Arc<dyn DenseService>>,
}

/// Exit the process when idle too long, when the socket is no longer ours, or when the index
/// wants a restart and nothing happened for [`RESTART_QUIET`]. The lock file handle lives
/// here so that the lock is held until the process ends.
fn spawn_watchdog(w: Watch, signals: Bulk, lock: std::fs::File) {
    std::thread::spawn(move || {
        let _held = lock;
        let Watch {
            sock,
            ino,
            idle,
            index,
        } = w;
        loop {
            std::thread::sleep(WATCH_EVERY);
            let ours = std::fs::metadata(&sock).is_ok_and(|m| m.ino() == ino);
            let quiet = signals.quiet_for();
            let restart =
                quiet >= RESTART_QUIET && index.as_ref().is_some_and(|ix| ix.restart_wanted());
            if restart {
                tracing::info!("resident service: restarting to give back the index's memory");
            }
            if !ours || quiet >= idle || restart {
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

/// Read one request line, write one response line (none for [`Op::Pending`], which wakes the
/// bulk thread). The bulk thread starts no batch while a query is answered here.
fn answer(
    stream: UnixStream,
    model: &OnnxEmbedder,
    index: Option<&dyn DenseService>,
    signals: &Bulk,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_IO))?;
    stream.set_write_timeout(Some(CLIENT_IO))?;
    let mut line = Vec::new();
    BufReader::new((&stream).take(MAX_REQUEST_BYTES as u64)).read_until(b'\n', &mut line)?;
    let request = serde_json::from_slice::<Request>(&line);
    if let Ok(r) = &request
        && r.v == PROTOCOL_VERSION
        && r.op == Op::Pending
    {
        signals.wake();
        return Ok(());
    }
    let _query = signals.query_started();
    let resp = match request {
        Err(e) => failure(format!("bad request: {e}")),
        Ok(r) if r.v != PROTOCOL_VERSION => failure(format!(
            "protocol version {} not supported (this server speaks {PROTOCOL_VERSION})",
            r.v
        )),
        Ok(r) => match model.embed_batch(&[r.text.as_str()]) {
            Ok(mut v) => {
                let vector = v.pop().unwrap_or_default();
                let ann = match (r.op, index) {
                    (Op::Search, Some(ix)) if r.k > 0 => {
                        ix.search(model.id(), &r.projects, &vector, r.k)
                    }
                    _ => None,
                };
                Response {
                    v: PROTOCOL_VERSION,
                    model: Some(model.id().clone()),
                    vector,
                    error: None,
                    ann,
                }
            }
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
        ann: None,
    }
}
