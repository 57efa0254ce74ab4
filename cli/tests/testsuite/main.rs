//! memctl-cli's process tests: the real `memctl` and `memctl-hook` binaries spawned with a
//! temp data dir. One test binary for the whole package (one link of the dependencies instead
//! of one per file); each file is a module, so a test is `<file>::<test>` (for example
//! `cargo test --workspace --test testsuite -- kill_trials::`). Tests share the process: none
//! may set environment variables, change the working directory or rely on process-wide state;
//! a child process gets what it needs through its own `Command`.

mod agent_hook_process;
mod common;
mod concurrency;
mod config_process;
mod export_process;
mod faults;
mod filters_cli;
mod forget_process;
mod fuzz_cli;
mod hook_process;
mod ingest_report_process;
mod install_process;
mod kill_trials;
mod lifecycle_cli;
mod mcp_process;
mod private_process;
mod progress_process;
mod resident_process;
mod search_process;
mod settings_process;
mod setup_process;
mod store_v1_fixture;
mod store_write_faults;
mod swap_process;
mod team;
mod team_search;
mod team_tls;
mod telemetry_process;
mod ui_browser;
mod ui_http;

#[test]
fn every_file_is_a_module() {
    memctl_test_support::assert_every_file_is_a_module(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testsuite"),
    );
}
