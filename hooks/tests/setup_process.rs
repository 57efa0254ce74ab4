//! `memctl setup` and `memctl doctor` as real processes, with the binaries outside the checkout
//! (the case): setup copies the checkout's runtime and model into a data dir and
//! verifies them; the copied binary then finds them there and runs the model; corrupt files are
//! repaired; a source with the wrong bytes is refused; doctor's exit status and JSON name what
//! is broken.

#[path = "common/outside.rs"]
mod outside;

use memctl_hooks::doctor::{Report, Status};
use outside::{Outside, require_checkout_setup, text};
use std::path::Path;

const ORT: &str = "runtime/libonnxruntime.so.1.31.1";
const FP32: &str = "models/all-MiniLM-L6-v2/model.onnx";
const INT8: &str = "models/all-MiniLM-L6-v2-int8/model.onnx";

fn sha(p: &Path) -> String {
    memctl_hooks::setup::sha256_file(p).expect("sha256")
}

fn doctor(o: &Outside, data: &Path, env: &[(&str, &str)]) -> (Option<i32>, Report, String) {
    let d = data.to_str().expect("utf8 path");
    let out = o.memctl(&["--data-dir", d, "doctor", "--json"], env);
    let (stdout, stderr) = text(&out);
    let report: Report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("doctor --json is a report ({e}): {stdout}\n{stderr}"));
    (out.status.code(), report, stderr)
}

fn check<'a>(r: &'a Report, name: &str) -> &'a memctl_hooks::doctor::Check {
    r.checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}: {r:?}"))
}

#[test]
fn setup_from_a_checkout_lets_a_binary_outside_it_run_the_model() {
    let root = require_checkout_setup();
    let o = Outside::new();
    let data = o.path().join("data");
    let d = data.to_str().expect("utf8");
    let from = root.to_str().expect("utf8");

    let out = o.memctl(&["--data-dir", d, "setup", "--from", from], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("installed 5 file(s)"), "{stdout}");
    for (rel, src) in [
        (ORT, ".cache/onnxruntime/libonnxruntime.so.1.31.1"),
        (FP32, FP32),
        (INT8, INT8),
    ] {
        assert_eq!(sha(&data.join(rel)), sha(&root.join(src)), "{rel}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.join(rel))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{rel} is private: {mode:o}");
        }
    }
    assert!(
        !data.join("setup-cache").exists(),
        "no download cache with --from"
    );

    // Idempotent: a second run verifies and changes nothing.
    let out = o.memctl(&["--data-dir", d, "setup", "--from", from], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("all present, sha256 ok"), "{stdout}");

    // The binary outside the checkout, with a clean environment: the runtime and model come
    // from the data dir, and the ONNX embedder is active.
    let (code, report, stderr) = doctor(&o, &data, &[]);
    assert_eq!(code, Some(0), "{report:#?}\n{stderr}");
    assert!(report.ok && report.errors == 0, "{report:#?}");
    let rt = check(&report, "runtime");
    assert_eq!(rt.status, Status::Ok);
    assert!(
        rt.detail.contains(&data.join(ORT).display().to_string()),
        "{rt:?}"
    );
    let model = check(&report, "model");
    assert!(
        model
            .detail
            .contains(&data.join(FP32).display().to_string()),
        "{model:?}"
    );
    let emb = check(&report, "embedder");
    assert_eq!(emb.status, Status::Ok, "{emb:?}");
    assert!(emb.detail.contains("ONNX, active"), "{emb:?}");
    assert_eq!(check(&report, "agent").status, Status::Ok);
    assert_eq!(check(&report, "store").status, Status::Ok);

    // Human output: one line per check, exit 0.
    let out = o.memctl(&["--data-dir", d, "doctor"], &[]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("ok    embedder")),
        "{stdout}"
    );
}

#[test]
fn a_corrupted_file_is_detected_and_copied_again() {
    let root = require_checkout_setup();
    let o = Outside::new();
    let data = o.path().join("data");
    let d = data.to_str().expect("utf8");
    let from = root.to_str().expect("utf8");
    let out = o.memctl(
        &["--data-dir", d, "setup", "--int8-only", "--from", from],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert!(
        !data.join(FP32).exists(),
        "--int8-only installs no fp32 model"
    );

    // One byte flipped in the middle of the model.
    let target = data.join(INT8);
    let mut bytes = std::fs::read(&target).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&target, &bytes).expect("write");

    // Doctor sees it: exit 1, the model check named.
    let (code, report, stderr) = doctor(&o, &data, &[]);
    assert_eq!(code, Some(1), "{report:#?}");
    assert_eq!(check(&report, "model").status, Status::Error);
    assert!(
        check(&report, "model").detail.contains("pinned"),
        "{report:#?}"
    );
    assert!(
        stderr.contains("memctl: error: doctor found") && stderr.contains("model"),
        "{stderr}"
    );

    // Setup repairs it from the source.
    let out = o.memctl(
        &["--data-dir", d, "setup", "--int8-only", "--from", from],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{INT8}: sha256")) && stderr.contains("installing it again"),
        "{stderr}"
    );
    assert!(stdout.contains("installed 1 file(s)"), "{stdout}");
    assert_eq!(sha(&target), sha(&root.join(INT8)));

    // The int8 model is then the main model: doctor is happy with it.
    let (code, report, _) = doctor(&o, &data, &[]);
    assert_eq!(code, Some(0), "{report:#?}");
    let model = check(&report, "model");
    assert!(model.detail.contains("all-MiniLM-L6-v2-int8"), "{model:?}");
    assert!(check(&report, "embedder").detail.contains("ONNX, active"));
}

#[test]
fn a_source_with_other_bytes_is_refused_with_a_clear_error() {
    let o = Outside::new();
    let src = o.path().join("src");
    let lib = src.join(".cache/onnxruntime/libonnxruntime.so.1.31.1");
    std::fs::create_dir_all(lib.parent().expect("dir")).expect("mkdir");
    std::fs::write(&lib, b"not the runtime").expect("write");
    let data = o.path().join("data");
    let out = o.memctl(
        &[
            "--data-dir",
            data.to_str().expect("utf8"),
            "setup",
            "--from",
            src.to_str().expect("utf8"),
        ],
        &[],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let err: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("memctl: error:"))
        .collect();
    assert_eq!(err.len(), 1, "{stderr}");
    let got = sha(&lib);
    assert!(
        err[0].contains(&format!("sha256 mismatch for {}", lib.display()))
            && err[0].contains(&got)
            && err[0].contains("expected fc44112f"),
        "{stderr}"
    );
    assert!(!data.join(ORT).exists(), "nothing installed");
    assert!(
        std::fs::read_dir(data.join("runtime")).map_or(0, |d| d.count()) == 0,
        "no temp file left"
    );

    // A source without the files: the error names what it looked for.
    let empty = o.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = o.memctl(
        &[
            "--data-dir",
            data.to_str().expect("utf8"),
            "setup",
            "--from",
            empty.to_str().expect("utf8"),
        ],
        &[],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            ".cache/onnxruntime/libonnxruntime.so.1.31.1 or runtime/libonnxruntime.so.1.31.1"
        ),
        "{stderr}"
    );
}

#[test]
fn doctor_exits_1_and_names_the_missing_model() {
    let root = require_checkout_setup();
    let o = Outside::new();
    let data = o.path().join("data");
    let d = data.to_str().expect("utf8");
    let out = o.memctl(
        &[
            "--data-dir",
            d,
            "setup",
            "--int8-only",
            "--from",
            root.to_str().expect("utf8"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    std::fs::remove_dir_all(data.join("models")).expect("remove the models");

    let (code, report, stderr) = doctor(&o, &data, &[]);
    assert_eq!(code, Some(1), "{report:#?}");
    assert!(!report.ok);
    let model = check(&report, "model");
    assert_eq!(model.status, Status::Error);
    assert!(
        model.detail.contains("missing: run `memctl setup`"),
        "{model:?}"
    );
    assert_eq!(check(&report, "embedder").status, Status::Error);
    assert_eq!(check(&report, "runtime").status, Status::Ok);
    assert!(stderr.contains("model, embedder"), "{stderr}");

    // The model switched off on purpose: warnings, exit 0.
    let (code, report, _) = doctor(&o, &data, &[("MEMCTL_EMBEDDER", "hash")]);
    assert_eq!(code, Some(0), "{report:#?}");
    assert_eq!(check(&report, "model").status, Status::Warn);

    // The agent cannot run memctl: PATH without it is an error too.
    let no_memctl = o.path().join("empty-path");
    std::fs::create_dir_all(&no_memctl).expect("mkdir");
    let out = o.memctl(
        &["--data-dir", d, "doctor", "--json"],
        &[
            ("MEMCTL_EMBEDDER", "hash"),
            ("PATH", no_memctl.to_str().expect("utf8")),
        ],
    );
    let report: Report = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(out.status.code(), Some(1));
    let agent = check(&report, "agent");
    assert_eq!(agent.status, Status::Error);
    assert!(
        agent.detail.contains("cargo install --locked --path hooks"),
        "{agent:?}"
    );
}
