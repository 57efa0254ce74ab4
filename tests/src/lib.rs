//! Shared fixtures for memctl integration tests (real model, real redb files).

use memctl_test_support::repo_root;
use std::path::PathBuf;

pub mod heldout;
pub mod transcript_gen;

/// The ONNX config that `scripts/setup.sh` prepares. Panics with a clear message when setup has
/// not run: these tests exercise the real model and must not silently skip.
pub fn onnx_config() -> memctl_engine::OnnxConfig {
    let root = memctl_test_support::require_setup();
    memctl_engine::OnnxConfig::new(
        root.join(".cache/onnxruntime")
            .join(memctl_engine::ORT_LIB_FILE),
        root.join("models/all-MiniLM-L6-v2"),
    )
}

/// An engine on `dir` with the real model (from [`onnx_config`]); asserts the model loads, so a
/// test that needs it cannot pass on the hash fallback.
pub fn model_engine(dir: &std::path::Path) -> memctl_engine::Engine {
    let mut opts = memctl_engine::EngineOptions::from_settings(&memctl_engine::Settings::default());
    opts.data_dir = dir.to_path_buf();
    opts.onnx = onnx_config();
    opts.model_disabled = false;
    let e = memctl_engine::Engine::open(opts).expect("engine");
    assert!(e.model().is_ok(), "the real model must load for this test");
    e
}

/// Real transcripts written by the Claude Code CLI in harness runs (committed fixtures).
pub fn real_transcripts_dir() -> PathBuf {
    repo_root().join("engine/tests/fixtures/transcripts")
}

/// The `.jsonl` files under `dir` and its subdirectories, in path order.
pub fn jsonl_files(dir: &std::path::Path) -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out
}
