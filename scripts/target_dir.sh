# Sourced by the scripts that run memctl's binaries: TARGET is where cargo puts them, as cargo
# itself decides (CARGO_TARGET_DIR, a config file's build.target-dir, else <repo>/target), so a
# developer who shares one target dir across checkouts runs what they built.
# shellcheck shell=bash
cargo_target_dir() {
    local repo=$1 dir
    dir=$(cd "$repo" && cargo metadata --format-version 1 --no-deps 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])') || dir=
    [[ -n $dir ]] || dir=${CARGO_TARGET_DIR:-$repo/target}
    printf '%s\n' "$dir"
}

# The debug binaries and every test harness, built as `cargo test --workspace` builds them: the
# test profile and the features dev-dependencies turn on. A plain `cargo build` resolves other
# features (serde, syn, tokio, ...), so the two would each compile most of the graph.
build_test_units() {
    local repo=$1
    (cd "$repo" && cargo build --quiet --workspace --bins --tests --profile test)
}
