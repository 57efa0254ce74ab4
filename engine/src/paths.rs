//! Where memctl keeps its data, and safe handling of paths built from input.
//!
//! Data dir: `$MEMCTL_HOME`, else `$XDG_DATA_HOME/memctl`, else `~/.local/share/memctl`
//! (resolved by [`crate::Settings`]).
//! Directories are created 0700 and files 0600: transcripts hold source code and (before
//! redaction) secrets, so nothing we write is readable by other users.

use crate::error::StoreError;
use std::path::Path;

/// Create `dir` (and parents) with mode 0700 when missing; tighten it to 0700 when it is ours.
pub fn ensure_private_dir(dir: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if !dir.exists() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(dir).map_err(io)?;
    }
    Ok(())
}

/// Set a file we created to mode 0600.
pub fn restrict_file(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
                |source| StoreError::Io {
                    path: path.to_path_buf(),
                    source,
                },
            )?;
        }
    }
    Ok(())
}

/// Make an id (session id, tool name, transcript path) safe to use as one path component, one
/// to one: two different ids never share a file.
///
/// Keeps `[A-Za-z0-9_-]` (so a UUID session id is its own file name, as before) and writes every
/// other byte as `~xx` (lowercase hex), `~` included; the empty id is `~`. Why one to one: the
/// old rule mapped `..`, `.`, `~`, NUL and a space all to `_`, so those sessions shared one
/// autopilot state file, and `a/b` and `a\nb` another. Ids longer than 96 bytes once
/// escaped keep 78 bytes and a `~h` + 16 hex of sha256: `~h` is never produced by escaping.
pub fn sanitize_component(id: &str) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            s.push(b as char);
        } else {
            let _ = write!(s, "~{b:02x}");
        }
    }
    if s.is_empty() {
        return "~".into();
    }
    if s.len() > 96 {
        let h = crate::chunk::Chunk::hash_text(id);
        s.truncate(78);
        s.push_str("~h");
        s.push_str(&h[..16]);
    }
    s
}

/// Was the file behind `entry` last modified more than `age` ago? (False when unknown.)
pub fn modified_longer_ago(entry: &std::fs::DirEntry, age: std::time::Duration) -> bool {
    entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|a| a > age)
}

/// Remove the file at `path`; one already gone is no error. Returns whether this call removed it.
pub fn remove_if_present(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Remove every file directly in `dir` (none there, or no `dir`, is no error). Returns how many.
pub(crate) fn remove_files_in(dir: &Path) -> Result<u64, crate::StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| crate::StoreError::Io { path, source }
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut n = 0;
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        n += u64::from(remove_if_present(&path).map_err(io(&path))?);
    }
    Ok(n)
}

/// Open `path` for appending, creating it with mode 0600: spools and access logs name the
/// user's files and sessions. (`O_APPEND` keeps concurrent appenders' single writes whole.)
pub fn append_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Take the exclusive lock on the lock file `path` (created 0600 when missing) without waiting:
/// `Some(file)` holds it until the file is dropped, `None` when another process holds it. One
/// helper for every "at most one of these per data dir" process (resident embedder, embedders
/// of pending chunks, per-transcript archivers).
pub fn try_lock_file(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let file = o.open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Upper bound for our own spool and log files read back whole (one line per event).
pub const SPOOL_MAX_BYTES: u64 = 64 << 20;

/// Open `path` for reading only if it is a regular file (after following symlinks).
///
/// Why: every path a hook reads comes from input (the payload's `transcript_path`, files in the
/// project). Opening a FIFO blocks until a writer appears — a hook that never ends — and a
/// device such as `/dev/zero` never ends either. The open itself is non-blocking
/// (`O_NONBLOCK`: a FIFO open returns at once) and the type is checked on the opened file, so
/// there is no window between check and use. Reads from a regular file ignore `O_NONBLOCK`.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(f)
}

/// Whether `path`'s real location (every symlink resolved) lies inside `root`'s.
///
/// Why: a cloned repository can carry links out of itself (`.memctl/memory/decisions.md ->
/// ~/.aws/config`, or `.memctl -> ~`); memctl must neither inject the target into the model's
/// context nor append a note to it. `NotFound` when either does not exist.
pub fn resolves_inside(path: &Path, root: &Path) -> std::io::Result<bool> {
    Ok(path.canonicalize()?.starts_with(root.canonicalize()?))
}

/// Read a whole regular file of at most `max_bytes` (see [`open_regular`]); a bigger file is
/// an error (`InvalidData`), never a huge allocation: a 3 GB sparse file in a project must not
/// abort a hook.
pub fn read_regular(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = open_regular(path)?;
    let len = f.metadata()?.len();
    if len > max_bytes {
        return Err(too_big(path, len, max_bytes));
    }
    let mut buf = Vec::with_capacity(len as usize);
    // `take`: the file may grow between the size check and the read.
    f.take(max_bytes + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max_bytes {
        return Err(too_big(path, buf.len() as u64, max_bytes));
    }
    Ok(buf)
}

/// [`read_regular`] as UTF-8 (invalid sequences replaced: these are notes, not data).
pub fn read_regular_string(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let bytes = read_regular(path, max_bytes)?;
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn too_big(path: &Path, len: u64, max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "{} is {len} bytes, over the {max}-byte limit",
            path.display()
        ),
    )
}

/// Write `bytes` to `path` atomically: a temp file beside it (0600, in a 0700 directory made
/// when missing), then a rename, so a reader sees the old or the new file, never a half.
pub fn write_private_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_private_dir(dir)?;
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(io)?;
    restrict_file(&tmp)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mkfifo(path: &Path) {
        let st = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap_or_else(|e| panic!("mkfifo (coreutils): {e}"));
        assert!(st.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn fifo_is_refused_at_once_not_waited_on() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fifo = d.path().join("t.jsonl");
        mkfifo(&fifo);
        let err = open_regular(&fifo).expect_err("a FIFO is not a regular file");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(read_regular(&fifo, 10).is_err());
    }

    #[test]
    fn devices_and_directories_are_refused() {
        for p in ["/dev/zero", "/dev/null", "/"] {
            assert!(read_regular(Path::new(p), 1 << 20).is_err(), "{p}");
        }
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let link = d.path().join("state.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap_or_else(|e| panic!("{e}"));
        assert!(read_regular(&link, 1 << 20).is_err(), "symlink to a device");
    }

    #[test]
    fn huge_sparse_file_is_refused_without_allocating() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("gotchas.md");
        let f = std::fs::File::create(&p).unwrap_or_else(|e| panic!("{e}"));
        f.set_len(3 << 30).unwrap_or_else(|e| panic!("{e}"));
        let err = read_regular(&p, 1 << 20).expect_err("too big");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        std::fs::write(&p, b"ok").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_regular(&p, 2).unwrap_or_default(), b"ok");
    }

    #[test]
    fn traversal_is_neutralized() {
        assert_eq!(
            sanitize_component("../../etc/passwd"),
            "~2e~2e~2f~2e~2e~2fetc~2fpasswd"
        );
        assert_eq!(sanitize_component(".."), "~2e~2e");
        assert_eq!(sanitize_component(""), "~");
        assert_eq!(
            sanitize_component("16bf7cf7-6ebd-46f5-ac2c-6025ff9b684d"),
            "16bf7cf7-6ebd-46f5-ac2c-6025ff9b684d"
        );
    }

    /// Regression: these ids shared one autopilot state file, and `a/b` and `a\nb` another.
    #[test]
    fn sanitizer_is_one_to_one_on_the_ids_that_collided() {
        let ids = ["..", ".", "~", "\0", " ", "_", "a/b", "a\nb", "a_b", "~2e"];
        let out: std::collections::BTreeSet<String> =
            ids.iter().map(|i| sanitize_component(i)).collect();
        assert_eq!(out.len(), ids.len(), "{out:?}");
    }

    proptest! {
        #[test]
        fn distinct_ids_get_distinct_components(a in "\\PC{0,40}", b in "\\PC{0,40}") {
            prop_assume!(a != b);
            prop_assert_ne!(sanitize_component(&a), sanitize_component(&b));
        }

        #[test]
        fn always_one_safe_component(s in "\\PC{0,300}") {
            let c = sanitize_component(&s);
            prop_assert!(!c.is_empty() && c.len() <= 96);
            prop_assert!(!c.contains('/') && !c.contains('\\') && c != "." && c != "..");
        }
    }
}
