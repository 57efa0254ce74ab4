//! The "binaries copied out of the checkout": `memctl` and `memctl-hook` linked (or
//! copied) into a temp dir outside the repository, run with a clean environment, so nothing
//! (no `ORT_DYLIB_PATH`, no `MEMCTL_MODEL_DIR`, no ancestor of the executable) leads them back
//! to the checkout's `.cache` and `models/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use memctl_test_support::{repo_root, require_setup as require_checkout_setup};

/// A temp dir outside the checkout with `bin/memctl`, `bin/memctl-hook`, `home/` and `proj/`.
#[derive(Debug)]
pub struct Outside {
    pub tmp: tempfile::TempDir,
}

impl Outside {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = repo_root().canonicalize().expect("repo root");
        let here = tmp.path().canonicalize().expect("tempdir path");
        assert!(
            !here.starts_with(&root),
            "the temp dir {} must be outside the checkout {}",
            here.display(),
            root.display()
        );
        let bin = tmp.path().join("bin");
        for d in [&bin, &tmp.path().join("home"), &tmp.path().join("proj")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        for (name, exe) in [
            ("memctl", env!("CARGO_BIN_EXE_memctl")),
            ("memctl-hook", super::hook_bin()),
        ] {
            // A hard link costs nothing; the executable's path (what `locate` climbs) is the
            // link's. Another filesystem: a copy.
            let to = bin.join(name);
            if std::fs::hard_link(exe, &to).is_err() {
                std::fs::copy(exe, &to).expect("copy the binary");
            }
        }
        Self { tmp }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    pub fn bin(&self) -> PathBuf {
        self.path().join("bin")
    }

    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    pub fn proj(&self) -> PathBuf {
        self.path().join("proj")
    }

    /// Run `bin/<name> args` in `proj/` with only `PATH` (the bin dir first), `HOME` and the
    /// given variables; no resident embedder, no background embedding.
    pub fn run(&self, name: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        use std::io::Write;
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin().display());
        let mut cmd = Command::new(self.bin().join(name));
        cmd.args(args)
            .current_dir(self.proj())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("MEMCTL_RESIDENT", "0")
            .env("MEMCTL_BACKGROUND_EMBED", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write stdin");
        child.wait_with_output().expect("wait")
    }

    /// `memctl args`.
    pub fn memctl(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.run("memctl", args, b"", env)
    }
}

/// stdout and stderr as text, for assertions.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
