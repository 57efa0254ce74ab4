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
    /// The project directory does not exist here (a store moved to another machine).
    NoProject,
}

/// `decisions.md` → `decisions.imported.md`.
fn beside_name(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.imported.{ext}"),
        None => format!("{name}.imported"),
    }
}

/// Write one imported memory file (`dry_run`: only say what would happen). The name was
/// checked by the reader ([`MemoryFileRec::name_is_safe`]).
pub(super) fn write_file(
    rec: &MemoryFileRec,
    text: &str,
    cfg: &MemoryConfig,
    dry_run: bool,
) -> Result<Written, ExportError> {
    let dir = match &cfg.dir {
        Some(d) => d.clone(),
        None => {
            let p = Path::new(&rec.project);
            if !p.is_absolute() || !p.is_dir() {
                return Ok(Written::NoProject);
            }
            p.join(MEMORY_DIR)
        }
    };
    let same = |path: &Path| -> bool {
        crate::paths::read_regular(path, crate::memory::MAX_FILE_BYTES * 4)
            .is_ok_and(|b| b == text.as_bytes())
    };
    let own = dir.join(&rec.name);
    let (path, outcome) = if !own.exists() {
        (own, Written::New)
    } else if same(&own) {
        return Ok(Written::Same);
    } else {
        let beside = dir.join(beside_name(&rec.name));
        if beside.exists() && same(&beside) {
            return Ok(Written::Same);
        }
        (beside.clone(), Written::Beside(beside))
    };
    if dry_run {
        return Ok(outcome);
    }
    let io = |source| ExportError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|source| ExportError::Io {
        path: dir.clone(),
        source,
    })?;
    // Through a temp file and a rename: a reader (a SessionStart restore) never sees half.
    let tmp = dir.join(format!(".{}.import-{}", rec.name, std::process::id()));
    std::fs::write(&tmp, text.as_bytes()).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(outcome)
}
