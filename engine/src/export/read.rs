//! Reading an export file: line by line (gzip detected by its first bytes), each line one
//! typed record, with the line number in every error; and the first pass of an import, which
//! checks the whole file (header version, every record, the trailer's counts) before anything
//! is written.

use super::bounds::Bounds;
use super::format::{Counts, FORMAT, Header, KINDS, Record, VERSION};
use super::{ExportError, Phase, Progress};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest line accepted. The largest line memctl writes is a stored tool output (8 MiB by
/// default, `MEMCTL_SWAP_MAX_ENTRY_BYTES`), a few times that once JSON-escaped. The reader
/// never holds more than this of one line (a 2 GiB line in a small `.gz` is refused after
/// this many bytes, not after buffering it).
pub(crate) const MAX_LINE_BYTES: u64 = 64 << 20;
/// A line buffer grown above this is released after its line (one big tool output must not
/// keep its buffer for the rest of the file).
const KEEP_BUF_BYTES: usize = 4 << 20;

/// Counts the bytes read from the file (progress).
struct Counting<R> {
    inner: R,
    n: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
}

/// Reads records line by line (sendable: an import reads ahead on a helper thread).
pub(super) struct Reader {
    inner: Box<dyn BufRead + Send>,
    path: PathBuf,
    line: u64,
    /// The current line's bytes.
    buf: Vec<u8>,
    read: Arc<AtomicU64>,
    total: u64,
}

/// Only the tag of a line that did not parse as a known record.
#[derive(serde::Deserialize)]
struct KindOnly {
    kind: Option<serde_json::Value>,
}

impl Reader {
    pub(super) fn open(path: &Path) -> Result<Self, ExportError> {
        let io = |source| ExportError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let total = file.metadata().map_err(io)?.len();
        let read = Arc::new(AtomicU64::new(0));
        let mut raw = BufReader::with_capacity(
            1 << 20,
            Counting {
                inner: file,
                n: Arc::clone(&read),
            },
        );
        let gz = raw.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
        let inner: Box<dyn BufRead + Send> = if gz {
            Box::new(BufReader::with_capacity(
                1 << 20,
                flate2::bufread::MultiGzDecoder::new(raw),
            ))
        } else {
            Box::new(raw)
        };
        Ok(Self {
            inner,
            path: path.to_path_buf(),
            line: 0,
            buf: Vec::new(),
            read,
            total,
        })
    }

    /// The next record with its line number; `None` at the end of the file.
    pub(super) fn next(&mut self) -> Result<Option<(u64, Record)>, ExportError> {
        match self.next_line()? {
            Some(line) => Ok(Some((line, parse_line(line, &self.buf)?))),
            None => Ok(None),
        }
    }

    /// The next line, unparsed, with its number (see [`parse_line`]); `None` at the end.
    pub(super) fn next_raw(&mut self) -> Result<Option<(u64, Vec<u8>)>, ExportError> {
        match self.next_line()? {
            Some(line) => Ok(Some((line, std::mem::take(&mut self.buf)))),
            None => Ok(None),
        }
    }

    /// Read the next line into `buf`: its number, or `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<u64>, ExportError> {
        if self.buf.capacity() > KEEP_BUF_BYTES {
            self.buf = Vec::new();
        }
        self.buf.clear();
        let n = (&mut self.inner)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| ExportError::Io {
                path: self.path.clone(),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let line = self.line;
        if n as u64 > MAX_LINE_BYTES {
            return Err(ExportError::Line {
                line,
                reason: format!("longer than {MAX_LINE_BYTES} bytes"),
            });
        }
        if self.buf.last() != Some(&b'\n') {
            return Err(ExportError::Line {
                line,
                reason: "the last line is cut short (no newline): the file is truncated".into(),
            });
        }
        Ok(Some(line))
    }

    pub(super) fn progress(&self, phase: Phase) -> Progress {
        Progress {
            phase,
            done: self.read.load(Ordering::Relaxed),
            total: self.total,
        }
    }
}

/// One line (number `line`, its bytes) as a typed record; an error names the line and, for
/// an unknown `kind`, the kind.
pub(super) fn parse_line(line: u64, buf: &[u8]) -> Result<Record, ExportError> {
    match serde_json::from_slice::<Record>(buf) {
        Ok(r) => Ok(r),
        Err(e) => Err(match serde_json::from_slice::<KindOnly>(buf) {
            Ok(KindOnly {
                kind: Some(serde_json::Value::String(k)),
            }) if !KINDS.contains(&k.as_str()) => ExportError::UnknownKind { line, kind: k },
            Ok(KindOnly { kind: None }) => ExportError::Line {
                line,
                reason: "a JSON object without a \"kind\"".into(),
            },
            _ => ExportError::Line {
                line,
                reason: format!("not a valid record: {e}"),
            },
        }),
    }
}

/// Check a header line.
fn check_header(line: u64, r: Option<Record>) -> Result<Header, ExportError> {
    let h = match r {
        Some(Record::Header(h)) => h,
        Some(other) => {
            return Err(ExportError::NotExport(format!(
                "it starts with a {} record, not a header",
                other.kind()
            )));
        }
        None => return Err(ExportError::NotExport("the file is empty".into())),
    };
    debug_assert_eq!(line, 1);
    if h.format != FORMAT {
        return Err(ExportError::NotExport(format!("format {:?}", h.format)));
    }
    if h.version > VERSION {
        return Err(ExportError::Newer {
            found: h.version,
            supported: VERSION,
            memctl: h.memctl,
        });
    }
    Ok(h)
}

/// What the first pass learned about a file.
#[derive(Debug)]
pub(super) struct Checked {
    /// Its header.
    pub header: Header,
    /// Projects its memory files belong to.
    pub memory_projects: BTreeSet<String>,
}

/// First pass: the whole file is well formed and complete, every record within
/// [`Bounds`]. `now`: the import's unix time.
pub(super) fn check_file(
    path: &Path,
    now: i64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Checked, ExportError> {
    let mut rd = Reader::open(path)?;
    let first = rd.next()?;
    let header = check_header(1, first.map(|(_, r)| r))?;
    let bounds = Bounds::new(now);
    let mut memory_projects = BTreeSet::new();
    let mut counts = Counts::default();
    loop {
        let Some((line, r)) = rd.next()? else {
            return Err(ExportError::Truncated { lines: rd.line });
        };
        if line.is_multiple_of(256) {
            progress(rd.progress(Phase::Check));
        }
        if let Record::Trailer(t) = &r {
            if t.counts != counts {
                return Err(ExportError::CountMismatch {
                    line,
                    expected: Box::new(t.counts),
                    found: Box::new(counts),
                });
            }
            if let Some((after, _)) = rd.next()? {
                return Err(ExportError::Line {
                    line: after,
                    reason: "a record after the trailer".into(),
                });
            }
            progress(rd.progress(Phase::Check));
            return Ok(Checked {
                header,
                memory_projects,
            });
        }
        bounds
            .check(&r)
            .map_err(|reason| ExportError::Line { line, reason })?;
        if let Record::MemoryFile(m) = &r {
            memory_projects.insert(m.project.clone());
        }
        counts.add(&r);
    }
}
