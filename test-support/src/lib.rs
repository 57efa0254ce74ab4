//! What the workspace's test suites share: where the checkout and its fixtures are, the sample
//! transcript, the setup the real-model tests need, and the two rules of a test binary that
//! holds a whole package's tests (every file is a module; a test that needs a process of its
//! own gets one).
//!
//! Only std and the engine's constants: the helpers that spawn `memctl` stay in memctl-cli's
//! suite, where cargo tells the binary's path.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Session id of the sample transcript (`tests/fixtures/sample`).
pub const SID: &str = "db5b5fab-8f4d-4e27-9da1-494c73cf256d";
/// The project (cwd) the sample transcript ran in.
pub const PROJECT: &str = "/home/dev/src/quill-notes";

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support/ has a parent")
        .to_path_buf()
}

/// A path under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

/// The sample transcript.
pub fn sample_transcript() -> PathBuf {
    fixture(&format!("sample/{SID}.jsonl"))
}

/// The checkout's setup (scripts/setup.sh: ONNX Runtime and both models) must exist: the test
/// command runs it first. A test that needs it fails, never skips, without it. Returns the root.
pub fn require_setup() -> PathBuf {
    let root = repo_root();
    let runtime = format!(".cache/onnxruntime/{}", memctl_engine::ORT_LIB_FILE);
    for rel in [
        runtime.as_str(),
        "models/all-MiniLM-L6-v2/model.onnx",
        "models/all-MiniLM-L6-v2-int8/model.onnx",
    ] {
        assert!(
            root.join(rel).is_file(),
            "{} is missing: run scripts/setup.sh first (the test command does)",
            root.join(rel).display()
        );
    }
    root
}

/// Copy the tree `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// Every `*.rs` file and module directory beside the suite's `main.rs` in `dir` is declared in
/// it (`mod name;`): a file left out compiles nowhere, and its tests would never run.
pub fn assert_every_file_is_a_module(dir: &Path) {
    let main = std::fs::read_to_string(dir.join("main.rs")).expect("main.rs");
    let declared: Vec<&str> = main
        .lines()
        .filter_map(|l| l.trim().strip_suffix(';'))
        .filter_map(|l| l.rsplit_once("mod ").map(|(_, name)| name.trim()))
        .collect();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let path = e.expect("entry").path();
        let name = if path.is_dir() && path.join("mod.rs").is_file() {
            path.file_name().and_then(|n| n.to_str())
        } else if path.extension().is_some_and(|x| x == "rs") {
            path.file_stem().and_then(|n| n.to_str())
        } else {
            None
        };
        match name {
            Some(n) if n != "main" && !declared.contains(&n) => missing.push(n.to_string()),
            _ => {}
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "{}: not declared in main.rs (`mod <name>;`), so never compiled nor run: {missing:?}",
        dir.display()
    );
}

/// The variable that tells a child of [`in_own_process`] to run the body.
const OWN_PROCESS: &str = "MEMCTL_TEST_OWN_PROCESS";

/// Run `body` in a process of its own: this test binary again, filtered to the one test.
///
/// For a test that changes what the whole process keeps (ONNX Runtime's one environment, for
/// instance) while the package's other tests share that process. `test` is the test's full
/// path, `concat!(module_path!(), "::name")`; the child must report that exactly one test
/// passed, so a filter that matches nothing cannot pass for a run.
pub fn in_own_process(test: &str, body: impl FnOnce()) {
    let name = test.split_once("::").map_or(test, |(_crate, rest)| rest);
    if std::env::var(OWN_PROCESS).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([name, "--exact", "--test-threads", "1", "--nocapture"])
        .env(OWN_PROCESS, name)
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed;"),
        "{name} in its own process: {}\n{stdout}\n{stderr}",
        out.status
    );
}
