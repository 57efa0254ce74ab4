//! Where memctl keeps its data, and safe handling of paths built from input.
//!
//! Data dir: `$MEMCTL_HOME`, else `$XDG_DATA_HOME/memctl`, else `~/.local/share/memctl`.
//! Directories are created 0700 and files 0600: transcripts hold source code and (before
//! redaction) secrets, so nothing we write is readable by other users.

use crate::error::StoreError;
use std::path::{Path, PathBuf};

/// The data directory (not created).
pub fn data_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("MEMCTL_HOME").filter(|s| !s.is_empty()) {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|s| !s.is_empty()) {
        return PathBuf::from(x).join("memctl");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".local/share/memctl")
}

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

/// Make an id (session id, tool name) safe to use as one path component.
///
/// Keeps `[A-Za-z0-9._-]`, maps everything else to `_`, refuses `.`/`..`/empty by mapping them
/// to `_`, and bounds the length (long ids keep a hash suffix so they stay distinct).
pub fn sanitize_component(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        s = "_".into();
    }
    if s.len() > 96 {
        let h = crate::chunk::Chunk::hash_text(id);
        s.truncate(80);
        s.push('-');
        s.push_str(&h[..12]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn traversal_is_neutralized() {
        assert_eq!(sanitize_component("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(sanitize_component(".."), "_");
        assert_eq!(sanitize_component(""), "_");
        assert_eq!(
            sanitize_component("16bf7cf7-6ebd-46f5-ac2c-6025ff9b684d"),
            "16bf7cf7-6ebd-46f5-ac2c-6025ff9b684d"
        );
    }

    proptest! {
        #[test]
        fn always_one_safe_component(s in "\\PC{0,300}") {
            let c = sanitize_component(&s);
            prop_assert!(!c.is_empty() && c.len() <= 96);
            prop_assert!(!c.contains('/') && !c.contains('\\') && c != "." && c != "..");
        }
    }
}
