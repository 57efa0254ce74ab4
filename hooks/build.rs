//! Link the two binaries as position-dependent executables on Linux.
//!
//! Why: a PIE binary of this size carries ~26,000 relative relocations; the dynamic loader
//! applies them at every start and copy-on-write faults ~550 KB of RELRO pages in. Every
//! Claude Code prompt starts `memctl-hook`, so this is paid per prompt: linked without PIE
//! a UserPromptSubmit process takes ~140 fewer page faults (426 → 286) and had lower p50 and
//! p95 beside a busy embedder (docs/perf/embedder-contention.md). The trade: the
//! executable's own base address is no longer randomized; shared libraries (ONNX Runtime
//! included), heap and stack still are.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
