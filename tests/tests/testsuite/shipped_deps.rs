//! What a workspace build links into the shipped binaries (`memctl` of package `memctl-cli`,
//! `memctl-hook` of package `memctl-hooks`). cargo resolves one feature set per package for a whole workspace build, so a
//! feature that the benches turn on in the engine lands in the binaries too; the docs say the
//! hook scans int8 blocks and never carries hnsw_rs (the graph lives in the resident service,
//! `memctl embedder`, through `memctl-ann`), and this checks the resolved graph says the same. `cargo tree` resolves it like `cargo build --workspace --all-targets` does.

use std::collections::BTreeSet;
use std::process::Command;

/// The package names `cargo tree` prints for `args` over the whole workspace (host target).
fn tree_packages(args: &[&str]) -> BTreeSet<String> {
    tree_packages_of(&["--workspace"], args)
}

/// The package names `cargo tree` prints for `args` over the packages `select` names.
fn tree_packages_of(select: &[&str], args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = Command::new(cargo)
        .args(["tree", "--manifest-path", manifest, "--locked", "--offline"])
        .args(select)
        .args(["--prefix", "none"])
        .args(["--format", "{p}"])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn only_the_service_index_and_the_benches_depend_on_hnsw_rs() {
    // Inverted: hnsw_rs and every package above it through normal and build edges (what is
    // linked into a library or binary; dev-dependencies only reach tests and benches).
    let above = tree_packages(&["-e", "normal,build", "-i", "hnsw_rs"]);
    assert!(
        above.contains("hnsw_rs"),
        "hnsw_rs is not in the graph at all: {above:?}"
    );
    let expected: BTreeSet<String> = ["hnsw_rs", "memctl-ann", "memctl-benches", "memctl-cli"]
        .map(String::from)
        .into();
    assert_eq!(
        above, expected,
        "only memctl-ann (and memctl, which runs the service, and the benches) may depend on \
         hnsw_rs; the hook (memctl-hooks) and the engine must not"
    );
}

#[test]
fn the_hook_links_the_engine_and_no_server_stack() {
    // `memctl-hook` runs on every prompt: its package links the engine and small crates, never
    // the CLI's surfaces (async runtime, HTTP server, MCP, PostgreSQL, TLS).
    let linked = tree_packages_of(&["-p", "memctl-hooks"], &["-e", "normal,build"]);
    assert!(linked.contains("memctl-engine"), "{linked:?}");
    let forbidden = [
        "memctl-cli",
        "tokio",
        "axum",
        "hyper",
        "maud",
        "rmcp",
        "postgres",
        "pgvector",
        "rustls",
    ];
    let found: Vec<&str> = forbidden
        .into_iter()
        .filter(|p| linked.contains(*p))
        .collect();
    assert!(found.is_empty(), "memctl-hooks links {found:?}");
    let engine = tree_packages_of(&["-p", "memctl-engine"], &["-e", "normal,build"]);
    let extra: BTreeSet<&String> = linked.difference(&engine).collect();
    println!(
        "memctl-hooks links {} packages, {} beyond the engine's: {extra:?}",
        linked.len(),
        extra.len()
    );
}
