//! The one claim protocol for work files (spooled transcripts, spooled tool calls, the access
//! log).
//!
//! A process takes a work file by renaming it to `<stem>.<tag>-<pid>` ([`claim_own`]): `rename`
//! is atomic, so of two hooks racing for one file exactly one gets it, and appenders start a
//! fresh file. Claims of processes that died (or older than [`ORPHAN_AFTER`]) are taken over
//! under `<stem>.<tag>-<pid>-orphan<n>` ([`claim_orphans`]). A claimed file that cannot be read
//! is renamed to `<claim>.bad` ([`set_aside`]) and never deleted: its entries stay for a human
//! (or a later fix) instead of being lost. These on-disk names are read by earlier releases'
//! stores too: do not change them.

use std::path::{Path, PathBuf};

/// A claimed work file whose process is alive is still left alone after this long only if it is
/// younger: hooks live seconds, not minutes.
const ORPHAN_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// Is the process `pid` alive? (`/proc` on Linux; elsewhere assume yes and rely on the age.)
pub(crate) fn pid_alive(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// This process's claim name for `path`: `<stem>.<tag>-<pid>`.
pub fn own_name(path: &Path, tag: &str) -> PathBuf {
    path.with_extension(format!("{tag}-{}", std::process::id()))
}

/// Claim `path` for this process; `None` when it is absent or another process took it first.
pub fn claim_own(path: &Path, tag: &str) -> Option<PathBuf> {
    let own = own_name(path, tag);
    std::fs::rename(path, &own).ok().map(|()| own)
}

/// Every claim of `path` this process now holds: orphans taken over, then `path` itself.
pub fn claim_all(path: &Path, tag: &str) -> Vec<PathBuf> {
    let mut claims = claim_orphans(path, tag);
    claims.extend(claim_own(path, tag));
    claims
}

/// The pid of a claim name's rest (`<pid>` or `<pid>-orphan<n>`); anything else (a `.bad`
/// file set aside, a temporary) is not a claim.
fn claim_pid(rest: &str) -> Option<u32> {
    let (pid, tail) = rest.split_once('-').unwrap_or((rest, ""));
    let tail_ok = tail.is_empty()
        || tail
            .strip_prefix("orphan")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    tail_ok.then(|| pid.parse().ok()).flatten()
}

/// Take over work files that other processes claimed and never finished.
///
/// Why: a hook killed after its claim (SIGTERM at its timeout, kill -9) used to leave the claim
/// behind for ever, and the sessions it named were never archived. Claims of dead processes (or
/// older than ten minutes) are renamed to this process's own claim names and returned.
pub fn claim_orphans(path: &Path, tag: &str) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Vec::new();
    };
    let prefix = format!("{}.{tag}-", stem.to_string_lossy());
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (n, entry) in entries.flatten().enumerate() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(&prefix).and_then(claim_pid) else {
            continue;
        };
        let old = crate::paths::modified_longer_ago(&entry, ORPHAN_AFTER);
        if pid == me || (pid_alive(pid) && !old) {
            continue;
        }
        let mine = dir.join(format!("{prefix}{me}-orphan{n}"));
        if std::fs::rename(entry.path(), &mine).is_ok() {
            tracing::info!(from = %name, "took over work claimed by a process that died");
            out.push(mine);
        }
    }
    out
}

/// Keep a claimed file that could not be read: renamed to `<claim>.bad`, which no claim
/// matches, so it is neither retried by every hook (an oversized file would fail each time)
/// nor deleted. Logs an error either way; returns where the file now is.
pub fn set_aside(claimed: &Path, why: &dyn std::fmt::Display) -> PathBuf {
    let mut name = claimed.as_os_str().to_owned();
    name.push(".bad");
    let bad = PathBuf::from(name);
    match std::fs::rename(claimed, &bad) {
        Ok(()) => {
            tracing::error!(file = %bad.display(), error = %why, "claimed work file unreadable; kept aside");
            bad
        }
        Err(e) => {
            tracing::error!(file = %claimed.display(), error = %why, rename_error = %e,
                "claimed work file unreadable and could not be set aside; left claimed");
            claimed.to_path_buf()
        }
    }
}

/// Helpers of the claim regression tests (spool, access log).
#[cfg(test)]
pub(crate) mod test_util {
    use std::path::Path;

    /// Put something unreadable where a work file goes: a directory (holding a marker), or a
    /// regular file one byte over the read bound (sparse: no real allocation).
    pub(crate) fn unreadable_at(path: &Path, as_dir: bool) {
        if as_dir {
            std::fs::create_dir_all(path).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(path.join("marker"), "kept").unwrap_or_else(|e| panic!("{e}"));
        } else {
            let f = std::fs::File::create(path).unwrap_or_else(|e| panic!("{e}"));
            f.set_len(crate::paths::SPOOL_MAX_BYTES + 1)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// Names in `dir` (sorted).
    pub(crate) fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_names_are_the_ones_earlier_releases_wrote() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("transcripts.txt");
        std::fs::write(&p, "x\n").unwrap_or_else(|e| panic!("{e}"));
        let c = claim_own(&p, "draining").unwrap_or_else(|| panic!("claimed"));
        let want = format!("transcripts.draining-{}", std::process::id());
        assert_eq!(c.file_name().and_then(|n| n.to_str()), Some(want.as_str()));
        assert!(!p.exists());
        assert!(claim_own(&p, "draining").is_none(), "nothing left to claim");
    }

    #[test]
    fn dead_claims_are_taken_over_and_set_aside_files_are_not() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("access.log");
        for name in [
            "access.applying-4999999",
            "access.applying-4999998-orphan3",
            "access.applying-4999997-orphan3.bad",
            "access.applying-4999996.bad",
        ] {
            std::fs::write(d.path().join(name), "1 2\n").unwrap_or_else(|e| panic!("{e}"));
        }
        let mut got = claim_orphans(&p, "applying");
        got.sort();
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            d.path()
                .join("access.applying-4999997-orphan3.bad")
                .exists()
        );
        assert!(d.path().join("access.applying-4999996.bad").exists());
    }

    #[test]
    fn claim_pid_accepts_only_claim_names() {
        assert_eq!(claim_pid("42"), Some(42));
        assert_eq!(claim_pid("42-orphan7"), Some(42));
        for bad in ["42.bad", "42-orphan7.bad", "42-orphan", "x", "42-other"] {
            assert_eq!(claim_pid(bad), None, "{bad}");
        }
    }
}
