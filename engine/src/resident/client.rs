//! The client side: one query embedding from the resident server, or an error that tells the
//! caller to embed in process.

use super::{
    MAX_RESPONSE_BYTES, Op, PROTOCOL_VERSION, Request, ResidentError, Response, checked_socket,
};
use crate::embed::EmbedderId;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// What the service answered to a search query.
#[derive(Debug, Clone)]
pub struct Served {
    /// The space of `vector`.
    pub embedder: EmbedderId,
    /// The query's L2-normalised vector.
    pub vector: Vec<f32>,
    /// The service index's nearest chunks, when it keeps an index for that space.
    pub ann: Option<crate::ann::AnnAnswer>,
}

/// Embed `text` as a query with the resident embedder of `data_dir`, waiting at most `timeout`
/// for the whole exchange. [`ResidentError::NotRunning`] when no server listens.
pub fn embed_query(
    data_dir: &Path,
    text: &str,
    timeout: Duration,
) -> Result<(EmbedderId, Vec<f32>), ResidentError> {
    let served = exchange(data_dir, Op::Embed, text, &[], 0, timeout)?;
    Ok((served.embedder, served.vector))
}

/// Embed `text` and ask the service's vector index for the `k` nearest chunks in `projects`
/// in one exchange (a service without an index answers with the vector alone).
pub fn search_query(
    data_dir: &Path,
    text: &str,
    projects: &[u32],
    k: usize,
    timeout: Duration,
) -> Result<Served, ResidentError> {
    exchange(data_dir, Op::Search, text, projects, k, timeout)
}

fn exchange(
    data_dir: &Path,
    op: Op,
    text: &str,
    projects: &[u32],
    k: usize,
    timeout: Duration,
) -> Result<Served, ResidentError> {
    let (path, stream) = connect(data_dir)?;
    let io = |source| ResidentError::Io {
        path: path.clone(),
        source,
    };
    let timeout = timeout.max(Duration::from_millis(1));
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut req = serde_json::to_vec(&Request {
        v: PROTOCOL_VERSION,
        op,
        text: text.to_string(),
        projects: projects.to_vec(),
        k,
    })
    .map_err(|e| ResidentError::Protocol(e.to_string()))?;
    req.push(b'\n');
    (&stream).write_all(&req).map_err(io)?;
    let mut line = Vec::new();
    BufReader::new((&stream).take(MAX_RESPONSE_BYTES as u64))
        .read_until(b'\n', &mut line)
        .map_err(io)?;
    parse_response(&line)
}

/// Tell the service of `data_dir` that chunks wait for a model vector (it wakes its bulk
/// thread). Never waits for an answer: one line written into the socket's buffer.
/// [`ResidentError::NotRunning`] when no service listens (the caller starts one then).
pub fn notify_pending(data_dir: &Path) -> Result<(), ResidentError> {
    let (path, stream) = connect(data_dir)?;
    let io = |source| ResidentError::Io {
        path: path.clone(),
        source,
    };
    stream
        .set_write_timeout(Some(Duration::from_millis(50)))
        .map_err(io)?;
    let mut req = serde_json::to_vec(&Request {
        v: PROTOCOL_VERSION,
        op: Op::Pending,
        text: String::new(),
        projects: Vec::new(),
        k: 0,
    })
    .map_err(|e| ResidentError::Protocol(e.to_string()))?;
    req.push(b'\n');
    (&stream).write_all(&req).map_err(io)
}

/// Connect to the service's socket; [`ResidentError::NotRunning`] when nobody listens.
fn connect(data_dir: &Path) -> Result<(std::path::PathBuf, UnixStream), ResidentError> {
    let path = checked_socket(data_dir)?;
    let stream = match UnixStream::connect(&path) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(ResidentError::NotRunning { path });
        }
        Err(source) => return Err(ResidentError::Io { path, source }),
    };
    Ok((path, stream))
}

/// Check a response line: version, error, a vector of the model's dimension.
pub(super) fn parse_response(line: &[u8]) -> Result<Served, ResidentError> {
    let resp: Response = serde_json::from_slice(line)
        .map_err(|e| ResidentError::Protocol(format!("unreadable response: {e}")))?;
    if resp.v != PROTOCOL_VERSION {
        return Err(ResidentError::Protocol(format!(
            "server speaks version {}, we speak {PROTOCOL_VERSION}",
            resp.v
        )));
    }
    if let Some(e) = resp.error {
        return Err(ResidentError::Server(e));
    }
    let Some(model) = resp.model else {
        return Err(ResidentError::Protocol(
            "response without a model id".into(),
        ));
    };
    if resp.vector.len() != model.dims || resp.vector.iter().any(|x| !x.is_finite()) {
        return Err(ResidentError::Protocol(format!(
            "vector of {} values for a {}-dimensional model",
            resp.vector.len(),
            model.dims
        )));
    }
    Ok(Served {
        embedder: model,
        vector: resp.vector,
        ann: resp.ann,
    })
}
