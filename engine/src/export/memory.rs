//! Project memory files in an export: read every `.md` / `.json` file of a project's memory
//! directory; on import, write them back without ever overwriting a different local file.

use super::ExportError;
use super::format::MemoryFileRec;
use crate::memory::{MEMORY_DIR, MemoryConfig};
use std::path::{Path, PathBuf};

/// The memory directory of `project` (the configured one, else `<project>/.memctl/memory`),
/// when it exists.
fn dir_of(project: &str, cfg: &MemoryConfig) -> Option<PathBuf> {
    crate::memory::find_dir(project, cfg)
}

/// (name, text) of the project's memory files, by name. Files that are not plain UTF-8
/// files of a safe name, or larger than [`crate::memory::MAX_FILE_BYTES`], are left out
/// (memctl never injects them either).
pub(super) fn read_files(
    project: &str,
    cfg: &MemoryConfig,
) -> Result<Vec<(String, String)>, ExportError> {
    let Some(dir) = dir_of(project, cfg) else {
        return Ok(Vec::new());
    };
    let io = |source| ExportError::Io {
        path: dir.clone(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !MemoryFileRec::name_is_safe(&name) {
            continue;
        }
        let path = entry.path();
        match crate::paths::read_regular(&path, crate::memory::MAX_FILE_BYTES) {
            Ok(b) => match String::from_utf8(b) {
                Ok(text) => out.push((name, text)),
                Err(_) => {
                    tracing::warn!(file = %path.display(), "memory file not UTF-8: not exported")
                }
            },
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "memory file not exported")
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What importing one memory file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Written {
    /// Written under its own name.
    New,
    /// The same text is there already.
    Same,
    /// A different file has the name: written as `<stem>.imported.<ext>` (that path).
    Beside(PathBuf),
}

/// `decisions.md` → `decisions.imported.md`.
fn beside_name(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.imported.{ext}"),
        None => format!("{name}.imported"),
    }
}

/// Where an import writes memory files.
///
/// Invariant: never outside the data dir unless the user named the project (`--memory-into`):
/// a memory file is injected into every session of its project, so an export file naming any
/// local directory as its project would otherwise plant instructions in that repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MemoryTarget {
    /// The memory directory of the project the user named.
    Into(PathBuf),
    /// `<data dir>/imported-memory/<project>/`: kept, injected nowhere.
    Keep(PathBuf),
}

/// Subdirectory of the data dir holding memory files imported without `--memory-into`.
pub(super) const KEPT_DIR: &str = "imported-memory";

impl MemoryTarget {
    /// The target for `into` (`--memory-into DIR`: an existing directory) or, without it, the
    /// data dir's holding area. `cfg.dir` (`MEMCTL_MEMORY_DIR`) is where memory of every
    /// project is read from, so it is also where `--memory-into` writes.
    pub(super) fn resolve(
        into: Option<&Path>,
        cfg: &MemoryConfig,
        data_dir: &Path,
    ) -> Result<Self, ExportError> {
        let Some(project) = into else {
            return Ok(Self::Keep(data_dir.join(KEPT_DIR)));
        };
        let io = |source| ExportError::Io {
            path: project.to_path_buf(),
            source,
        };
        let project = project.canonicalize().map_err(io)?;
        if !project.is_dir() {
            return Err(ExportError::Invalid(format!(
                "--memory-into {}: not a directory",
                project.display()
            )));
        }
        if let Some(d) = &cfg.dir {
            return Ok(Self::Into(d.clone()));
        }
        // A `.memctl` (or its `memory`) that links out of the project would take the files
        // elsewhere: refused, as the restore refuses to read through it.
        for sub in [".memctl", MEMORY_DIR] {
            let p = project.join(sub);
            if std::fs::symlink_metadata(&p).is_ok()
                && !crate::paths::resolves_inside(&p, &project).map_err(io)?
            {
                return Err(ExportError::Invalid(format!(
                    "--memory-into {}: {} links out of the project",
                    project.display(),
                    p.display()
                )));
            }
        }
        Ok(Self::Into(project.join(MEMORY_DIR)))
    }

    /// The directory `project`'s files go to.
    pub(super) fn dir_for(&self, project: &str) -> PathBuf {
        match self {
            Self::Into(d) => d.clone(),
            Self::Keep(root) => root.join(project_slug(project)),
        }
    }
}

/// A directory name for a project path: its readable tail and a hash of the whole (two paths
/// with the same tail stay apart; `/`, `..` and odd characters never reach the file system).
fn project_slug(project: &str) -> String {
    let tail: String = project
        .rsplit('/')
        .find(|c| !c.is_empty())
        .unwrap_or("project")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let hash = crate::swap::content_id(project);
    format!("{tail}-{}", &hash[..12])
}

/// Write one imported memory file into `dir` (`dry_run`: only say what would happen). The
/// name was checked by the reader ([`MemoryFileRec::name_is_safe`]). Returns the outcome and
/// the path written (or that would be).
pub(super) fn write_file(
    rec: &MemoryFileRec,
    text: &str,
    dir: &Path,
    dry_run: bool,
) -> Result<(Written, PathBuf), ExportError> {
    let same = |path: &Path| -> bool {
        crate::paths::read_regular(path, crate::memory::MAX_FILE_BYTES * 4)
            .is_ok_and(|b| b == text.as_bytes())
    };
    let own = dir.join(&rec.name);
    let (path, outcome) = if std::fs::symlink_metadata(&own).is_err() {
        (own, Written::New)
    } else if same(&own) {
        return Ok((Written::Same, own));
    } else {
        let beside = dir.join(beside_name(&rec.name));
        if std::fs::symlink_metadata(&beside).is_ok() && same(&beside) {
            return Ok((Written::Same, beside));
        }
        (beside.clone(), Written::Beside(beside))
    };
    if dry_run {
        return Ok((outcome, path));
    }
    let io = |source| ExportError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // Through a temp file and a rename: a reader (a SessionStart restore) never sees half, and
    // a link in the directory is replaced, never followed.
    let tmp = dir.join(format!(".{}.import-{}", rec.name, std::process::id()));
    write_new(&tmp, text.as_bytes()).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok((outcome, path))
}

/// Write a new file (`O_EXCL`: a link already at `path` is removed, never followed).
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    let mut f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            open()?
        }
        other => other?,
    };
    f.write_all(bytes)
}
