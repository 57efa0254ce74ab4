//! Shared fixtures for memctl integration tests (real model, real redb files).

use std::path::PathBuf;

/// Repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Path of a file under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

/// The ONNX config that `scripts/setup.sh` prepares. Panics with a clear message when setup has
/// not run: these tests exercise the real model and must not silently skip.
pub fn onnx_config() -> memctl_engine::embed::OnnxConfig {
    let root = repo_root();
    let cfg = memctl_engine::embed::OnnxConfig::new(
        root.join(".cache/onnxruntime")
            .join(memctl_engine::embed::onnx::ORT_LIB_FILE),
        root.join("models/all-MiniLM-L6-v2"),
    );
    assert!(
        cfg.dylib_path.is_file() && cfg.model_path().is_file(),
        "ONNX Runtime or the model is missing: run scripts/setup.sh first ({} / {})",
        cfg.dylib_path.display(),
        cfg.model_path().display()
    );
    cfg
}

/// The realistic transcript generator (`scripts/gen_transcript.py`, deterministic by seed).
pub fn generator() -> PathBuf {
    repo_root().join("scripts/gen_transcript.py")
}

/// Real transcripts written by the Claude Code CLI in harness runs (committed fixtures).
pub fn real_transcripts_dir() -> PathBuf {
    repo_root().join("engine/tests/fixtures/transcripts")
}

/// Run the generator with `args`; panics with what to install when Python is missing (a test
/// that needs it must fail, never skip).
pub fn run_generator<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Vec<u8> {
    let out = std::process::Command::new("python3")
        .arg(generator())
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "python3 (>= 3.11) is needed to run {}: {e}",
                generator().display()
            )
        });
    assert!(
        out.status.success(),
        "{} failed: {}",
        generator().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
