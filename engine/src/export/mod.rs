//! `memctl export` / `memctl import`: the archive as a portable, versioned JSON Lines file
//! (format in [`format`], documented for users in `docs/export-format.md`).
//!
//! **What goes in**: projects, tombstones, chunks (text and every stored field that is not
//! derived), turns that resolve to another turn's identical chunk, sessions (summaries
//! included), stored tool outputs (exact content), project memory files, and with `--vectors`
//! the model vectors. **What does not**: postings, lexical stats, int8 blocks, dedup hashes,
//! hash vectors, cursors: all derived, rebuilt by the import.
//!
//! **Bounded memory both ways**: the export walks the store in one read transaction row by
//! row into a buffered writer; the import reads batches of at most [`ahead::BATCH_RECORDS`]
//! lines and prepares the next one while it writes this one (a hook that finds the store busy
//! meanwhile spools its work).
//!
//! **Nothing half-imported from a bad file**: the import reads the whole file once to check
//! it (header version, every line a known record, the trailer's counts) before writing
//! anything; a truncated file, a bad line or an unknown kind is an error naming the line.
//! A failure while writing (the store) leaves the batches committed before it, each whole, and
//! says how many records they held; importing again skips what is there (dedup by content hash).

mod ahead;
mod bounds;
pub mod format;
mod import;
mod memory;
mod read;
mod scrub;
#[cfg(test)]
mod tests;
mod write;

pub use import::{ImportReport, KindCounts};

use crate::engine::Engine;
use crate::error::{EmbedError, StoreError};
use crate::memory::MemoryConfig;
use format::Counts;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Only these projects (exact stored paths); empty: every project.
    pub projects: Vec<String>,
    /// Only this session (a full id): its turns, shared chunks written as its own.
    pub session: Option<String>,
    /// Only turns started at or after this time (the search filter's stored form,
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`); tool outputs stored at or after it.
    pub since: Option<String>,
    /// Include the model vectors (loads the model to learn its embedding space).
    pub vectors: bool,
    /// Where project memory files are (`MEMCTL_MEMORY_DIR`).
    pub memory: MemoryConfig,
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Count what would be imported; write nothing (one transaction, rolled back).
    pub dry_run: bool,
    /// Where project memory files are read from (`MEMCTL_MEMORY_DIR`).
    pub memory: MemoryConfig,
    /// The project (an existing directory) whose memory folder receives the file's memory
    /// files (`--memory-into`). `None`: they are kept in the data dir, written into no
    /// project: an export must not plant files in a directory the user did not name.
    pub memory_into: Option<PathBuf>,
    /// Records per write transaction; 0: the default (131,072: the fastest, ~1 GB of memory
    /// at its peak and ~15 s of write lock a transaction at a million chunks). Smaller values
    /// hold less of both at the price of speed.
    pub transaction_records: usize,
}

/// Which pass a [`Progress`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Export: chunks written of the store's total.
    Export,
    /// Import, first pass: file bytes checked.
    Check,
    /// Import, second pass: file bytes imported.
    Import,
}

/// Progress of an export (chunks) or an import (bytes of the file read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The pass.
    pub phase: Phase,
    /// Done so far.
    pub done: u64,
    /// Total (0 when unknown).
    pub total: u64,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportReport {
    /// Records of each kind.
    pub counts: Counts,
    /// Bytes of JSON written (before compression).
    pub bytes: u64,
    /// Embedding space of the vectors written, with `--vectors`.
    pub embedder: Option<String>,
}

/// An export or an import that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Hash-embedding imported text failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing the export failed.
    #[error("writing the export: {0}")]
    Write(#[source] std::io::Error),
    /// A record could not be serialized.
    #[error("encoding a record: {0}")]
    Encode(String),
    /// The output file exists.
    #[error("{} exists (use --force to overwrite it)", .0.display())]
    Exists(PathBuf),
    /// `--vectors` without the model.
    #[error("--vectors needs the model, which is unavailable: {0}")]
    NoModel(String),
    /// A bad option.
    #[error("{0}")]
    Invalid(String),
    /// The file is not a memctl export.
    #[error("line 1: not a memctl export file ({0})")]
    NotExport(String),
    /// The file was written by a newer memctl.
    #[error(
        "this file is export format version {found}, written by memctl {memctl}; this memctl \
         reads versions up to {supported}: upgrade memctl to import it"
    )]
    Newer {
        /// The file's version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
        /// The writer's version.
        memctl: String,
    },
    /// A line that is not a valid record.
    #[error("line {line}: {reason}")]
    Line {
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A record kind this version does not know.
    #[error("line {line}: unknown record kind {kind:?} (known: {})", format::KINDS.join(", "))]
    UnknownKind {
        /// 1-based line number.
        line: u64,
        /// The kind.
        kind: String,
    },
    /// No trailer: the file was cut short.
    #[error(
        "the file ends after line {lines} without its trailer: it is truncated (nothing was imported)"
    )]
    Truncated {
        /// Lines read.
        lines: u64,
    },
    /// The trailer's counts differ from the records read.
    #[error(
        "line {line}: the trailer counts {expected:?} but the file holds {found:?} (nothing was imported)"
    )]
    CountMismatch {
        /// The trailer's line.
        line: u64,
        /// What the trailer says.
        expected: Box<Counts>,
        /// What was read.
        found: Box<Counts>,
    },
    /// Importing stopped after some batches were committed.
    #[error(
        "import stopped after {committed} records were committed (each batch whole; importing again skips them): {source}"
    )]
    Stopped {
        /// Records in the committed batches.
        committed: u64,
        /// Why.
        #[source]
        source: Box<ExportError>,
    },
}

impl Engine {
    /// Write an export of the store to `out` (JSON Lines; the caller compresses if it wants).
    /// `progress` is called with chunks written of the store's total.
    pub fn export(
        &self,
        opts: &ExportOptions,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<ExportReport, ExportError> {
        write::export(self.core(), opts, out, progress)
    }

    /// Export to a file: refused when it exists unless `force`; gzip when its name ends in
    /// `.gz`; written as `<file>.partial` (mode 0600) and renamed into place when complete, so
    /// a failed export never leaves a file that looks whole.
    pub fn export_to_file(
        &self,
        path: &Path,
        force: bool,
        opts: &ExportOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<ExportReport, ExportError> {
        if path.exists() && !force {
            return Err(ExportError::Exists(path.to_path_buf()));
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let io = |source| ExportError::Io {
            path: partial.clone(),
            source,
        };
        let file = create_private(&partial).map_err(io)?;
        let res = (|| {
            let buf = std::io::BufWriter::with_capacity(1 << 20, file);
            let gz = path.extension().is_some_and(|e| e == "gz");
            let report = if gz {
                let mut enc = flate2::write::GzEncoder::new(buf, flate2::Compression::fast());
                let r = self.export(opts, &mut enc, progress)?;
                let buf = enc.finish().map_err(ExportError::Write)?;
                finish(buf)?;
                r
            } else {
                let mut buf = buf;
                let r = self.export(opts, &mut buf, progress)?;
                finish(buf)?;
                r
            };
            std::fs::rename(&partial, path).map_err(|source| ExportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            Ok(report)
        })();
        if res.is_err()
            && let Err(e) = std::fs::remove_file(&partial)
        {
            tracing::warn!(file = %partial.display(), error = %e, "partial export not removed");
        }
        res
    }

    /// Import an export file (gzip or not, detected by its first bytes) into this store.
    pub fn import_file(
        &self,
        path: &Path,
        opts: &ImportOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<ImportReport, ExportError> {
        import::import(self.core(), path, opts, progress)
    }
}

/// Flush a buffered file and make it durable.
fn finish(buf: std::io::BufWriter<std::fs::File>) -> Result<(), ExportError> {
    let f = buf
        .into_inner()
        .map_err(|e| ExportError::Write(e.into_error()))?;
    f.sync_all().map_err(ExportError::Write)
}

/// Create (truncate) a file readable by its owner only: an export holds the whole archive.
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing file keeps its mode through `open`: set it.
    use std::os::unix::fs::PermissionsExt as _;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(f)
}
