//! Appending one note to a project memory file (the agent's `remember` tool).
//!
//! Why append-only lines and not a rewrite: the files belong to the user and the agent; a tool
//! that rewrites them could drop what someone wrote by hand. One dated line is appended at the
//! end (where [`super::collect`] looks for the newest entries), after redaction, on one line,
//! within a size cap, so a note can neither leak a secret into a file that may be committed nor
//! grow a memory file without bound.

use super::{FILES, MAX_FILE_BYTES, MEMORY_DIR, MemoryConfig};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Longest note kept (characters after redaction); the restore keeps lines of 300 chars anyway.
pub const MAX_NOTE_CHARS: usize = 500;

/// Which memory file a note goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// `decisions.md`: a choice a later session must not undo.
    Decision,
    /// `gotchas.md`: a trap found the hard way.
    Gotcha,
    /// `feedback.md`: how the user wants the work done.
    Feedback,
    /// `active-state.md`: where the current task stands.
    State,
}

impl NoteKind {
    /// The file of this kind (one of [`FILES`]).
    pub fn file(self) -> &'static str {
        match self {
            Self::State => FILES[0],
            Self::Decision => FILES[1],
            Self::Gotcha => FILES[2],
            Self::Feedback => FILES[3],
        }
    }
}

/// Why a note was not written.
#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    /// Nothing left after trimming.
    #[error("the note is empty")]
    Empty,
    /// Longer than [`MAX_NOTE_CHARS`].
    #[error("the note has {chars} characters; at most {max} are kept: shorten it")]
    TooLong {
        /// Its length.
        chars: usize,
        /// The cap.
        max: usize,
    },
    /// The file would pass [`MAX_FILE_BYTES`] (memory files are read up to that size).
    #[error(
        "{} is full ({bytes} bytes, at most {max}): tidy it before adding more",
        path.display()
    )]
    FileFull {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The cap.
        max: u64,
    },
    /// No project to write into.
    #[error("no project directory: memory notes live in <project>/{MEMORY_DIR}")]
    NoProject,
    /// Creating or appending failed.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A note that was appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noted {
    /// The file it went to.
    pub path: PathBuf,
    /// The line written (without the newline).
    pub line: String,
    /// Secrets replaced by markers.
    pub redactions: u32,
}

/// Append `text` as one dated line to the `kind` file of `project`'s memory directory
/// (`cfg.dir` when the user names one), creating the directory from its templates when it does
/// not exist yet. `now` is unix seconds (the date written).
pub fn append_note(
    project: &Path,
    kind: NoteKind,
    text: &str,
    cfg: &MemoryConfig,
    now: i64,
) -> Result<Noted, NoteError> {
    // Redact the text as written, then fold it onto one line: rules anchored at a line start
    // (`password = …` in an INI or YAML block) no longer see one once the lines are joined.
    let (multi, counts) = crate::redact::redact_counted(text);
    let redacted = multi.split_whitespace().collect::<Vec<_>>().join(" ");
    if redacted.is_empty() {
        return Err(NoteError::Empty);
    }
    let chars = redacted.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(NoteError::TooLong {
            chars,
            max: MAX_NOTE_CHARS,
        });
    }
    let dir = match &cfg.dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|source| NoteError::Io {
                path: d.clone(),
                source,
            })?;
            d.clone()
        }
        None if project.as_os_str().is_empty() => return Err(NoteError::NoProject),
        None => {
            let io = |source| NoteError::Io {
                path: project.join(MEMORY_DIR),
                source,
            };
            // Checked before `init` too: templates must not be created through a link either.
            let out_of_project = || {
                io(std::io::Error::other(
                    "the memory folder links out of the project",
                ))
            };
            let top = project.join(MEMORY_DIR.split('/').next().unwrap_or(MEMORY_DIR));
            if std::fs::symlink_metadata(&top).is_ok()
                && !matches!(crate::paths::resolves_inside(&top, project), Ok(true))
            {
                return Err(out_of_project());
            }
            super::init(project).map_err(io)?;
            let dir = project.join(MEMORY_DIR);
            if !crate::paths::resolves_inside(&dir, project).map_err(io)? {
                return Err(out_of_project());
            }
            dir
        }
    };
    let path = dir.join(kind.file());
    let line = format!("- {}: {redacted}", utc_date(now));
    let io = |source| NoteError::Io {
        path: path.clone(),
        source,
    };
    // A link out of the memory folder (a cloned repository's `decisions.md -> ~/.bashrc`)
    // must not receive the note, nor a dangling link create its target.
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
        Ok(_) => {
            if !matches!(crate::paths::resolves_inside(&path, &dir), Ok(true)) {
                return Err(io(std::io::Error::other(
                    "the file is a link out of the memory folder",
                )));
            }
        }
    }
    // Opening a FIFO for writing would block until a reader appears: regular files only.
    match std::fs::metadata(&path) {
        Ok(m) if !m.is_file() => {
            return Err(io(std::io::Error::other("not a regular file")));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let mut f = crate::paths::append_private(&path).map_err(io)?;
    let bytes = f.metadata().map_err(io)?.len();
    if bytes + line.len() as u64 + 2 > MAX_FILE_BYTES {
        return Err(NoteError::FileFull {
            path,
            bytes,
            max: MAX_FILE_BYTES,
        });
    }
    // A file whose last line has no newline would glue the note onto it.
    let needs_newline = bytes > 0 && !ends_with_newline(&path).map_err(io)?;
    let text = format!("{}{line}\n", if needs_newline { "\n" } else { "" });
    f.write_all(text.as_bytes()).map_err(io)?;
    f.flush().map_err(io)?;
    Ok(Noted {
        path,
        line,
        redactions: counts.total(),
    })
}

fn ends_with_newline(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::End(-1))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b)?;
    Ok(b[0] == b'\n')
}

/// `YYYY-MM-DD` (UTC) of unix seconds: the date format the templates show.
pub fn utc_date(unix: i64) -> String {
    // Days to civil date (H. Hinnant's algorithm), valid for every i64 day count we can see.
    let z = unix.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MemoryConfig {
        MemoryConfig::default()
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_767_225_599), "2025-12-31");
    }

    #[test]
    fn a_note_is_appended_redacted_on_one_line_and_injected() {
        let dir = tempfile::tempdir().unwrap();
        let n = append_note(
            dir.path(),
            NoteKind::Decision,
            "use redb\nnot sqlite; password = \"hunter2hunter2\"",
            &cfg(),
            0,
        )
        .unwrap();
        assert_eq!(n.path, dir.path().join(MEMORY_DIR).join("decisions.md"));
        assert!(n.redactions >= 1, "{n:?}");
        let text = std::fs::read_to_string(&n.path).unwrap();
        assert!(text.ends_with(&format!("{}\n", n.line)));
        assert!(!text.contains("hunter2hunter2"));
        assert!(n.line.starts_with("- 1970-01-01: use redb not sqlite;"));
        let lines = super::super::restore_lines(&dir.path().display().to_string(), &cfg());
        assert!(lines.iter().any(|l| l.text.contains("use redb not sqlite")));
    }

    #[test]
    fn empty_long_and_full_notes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            append_note(dir.path(), NoteKind::Gotcha, " \n ", &cfg(), 0),
            Err(NoteError::Empty)
        ));
        let long = "x".repeat(MAX_NOTE_CHARS + 1);
        assert!(matches!(
            append_note(dir.path(), NoteKind::Gotcha, &long, &cfg(), 0),
            Err(NoteError::TooLong { .. })
        ));
        let path = dir.path().join(MEMORY_DIR).join("gotchas.md");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "y".repeat(MAX_FILE_BYTES as usize)).unwrap();
        assert!(matches!(
            append_note(dir.path(), NoteKind::Gotcha, "z", &cfg(), 0),
            Err(NoteError::FileFull { .. })
        ));
    }

    #[test]
    fn a_file_without_final_newline_gets_one_before_the_note() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join(MEMORY_DIR);
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("feedback.md"), "- keep it short").unwrap();
        append_note(dir.path(), NoteKind::Feedback, "no emojis", &cfg(), 0).unwrap();
        let text = std::fs::read_to_string(m.join("feedback.md")).unwrap();
        assert_eq!(text, "- keep it short\n- 1970-01-01: no emojis\n");
    }
}
