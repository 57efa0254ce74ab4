//! memctl-tests' integration tests: the engine in process against the real model and real redb
//! files. One test binary for the package (one link of the dependencies instead of one per
//! file); each file is a module, so a test is `<file>::<test>` (for example
//! `cargo test --workspace --test testsuite -- recall_gate::`). Tests share the process: ONNX
//! Runtime's one environment among them, so a test that would change it runs in a process of
//! its own (`memctl_test_support::in_own_process`).

mod agents_ingest;
mod embed_fallback;
mod embed_onnx;
mod export_batches;
mod export_roundtrip;
mod generated_turns_kept;
mod generator;
mod identifier_recall;
mod ingest_completeness;
mod recall_gate;
mod recall_heldout;
mod restore_quality;
mod restore_reinforcement;
mod retrieval_quality;
mod shipped_deps;
mod time_aware;

#[test]
fn every_file_is_a_module() {
    memctl_test_support::assert_every_file_is_a_module(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testsuite"),
    );
}
