//! Loading the ONNX embedder without a usable runtime or model is a typed error, never a panic.
//! ONNX Runtime is loaded once per process and a failed load is remembered: the test that loads
//! a bad library runs in a process of its own, away from the suite's real-model tests.

use memctl_engine::{EmbedError, OnnxConfig, OnnxEmbedder};
use memctl_test_support::{in_own_process, repo_root};

#[test]
fn missing_runtime_is_a_typed_error() {
    let cfg = OnnxConfig::new(
        "/nonexistent/libonnxruntime.so",
        repo_root().join("models/all-MiniLM-L6-v2"),
    );
    match OnnxEmbedder::load(&cfg) {
        Err(EmbedError::RuntimeUnavailable { .. }) | Err(EmbedError::ModelMissing { .. }) => {}
        other => panic!("expected a typed error, got {other:?}"),
    }
}

#[test]
fn a_file_that_is_not_a_library_is_a_typed_error() {
    in_own_process(
        concat!(
            module_path!(),
            "::a_file_that_is_not_a_library_is_a_typed_error"
        ),
        || {
            let dir = tempfile::tempdir().expect("tempdir");
            let fake = dir.path().join("libonnxruntime.so");
            std::fs::write(&fake, b"not an ELF file").expect("write");
            let cfg = OnnxConfig::new(&fake, repo_root().join("models/all-MiniLM-L6-v2"));
            match OnnxEmbedder::load(&cfg) {
                Err(EmbedError::RuntimeUnavailable { .. })
                | Err(EmbedError::ModelMissing { .. }) => {}
                other => panic!("expected a typed error, got {other:?}"),
            }
        },
    );
}

#[test]
fn missing_model_is_a_typed_error() {
    let cfg = OnnxConfig::new("/nonexistent/libonnxruntime.so", "/nonexistent/model-dir");
    assert!(matches!(
        OnnxEmbedder::load(&cfg),
        Err(EmbedError::ModelMissing { .. })
    ));
}
