//! `memctl setup` and `memctl doctor` as real processes, with the binaries outside the checkout
//! (the case): setup copies the checkout's runtime and model into a data dir and
//! verifies them; the copied binary then finds them there and runs the model; corrupt files are
//! repaired; a source with the wrong bytes is refused; doctor's exit status and JSON name what
//! is broken.

use crate::common;
use crate::common::outside;

use memctl_cli::doctor::{Report, Status};
use memctl_test_support::sample_transcript as sample;
use outside::{Outside, require_checkout_setup, text};
use std::path::{Path, PathBuf};

const ORT: &str = "runtime/libonnxruntime.so.1.31.1";
const FP32: &str = "models/all-MiniLM-L6-v2/model.onnx";
const INT8: &str = "models/all-MiniLM-L6-v2-int8/model.onnx";

/// Where `memctl setup` installs for the machine: `$HOME/.local/share/memctl` (the outside
/// binaries run with `HOME` = `o.home()` and no `XDG_DATA_HOME`). The older tests below also
/// use it as their data dir: a data dir holding its own `runtime/` and `models/`.
fn machine_dir(o: &Outside) -> PathBuf {
    o.home().join(".local/share/memctl")
}

/// `memctl --data-dir dir args`, which must exit 0; its stdout.
fn ok_in(o: &Outside, dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["--data-dir", dir.to_str().expect("utf8")];
    all.extend_from_slice(args);
    let out = o.memctl(&all, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all:?}: {stdout}\n{stderr}");
    stdout
}

/// `status --json` of the data dir `dir`: its vector counts.
fn vector_counts(o: &Outside, dir: &Path) -> (u64, u64, u64, u64) {
    let st: serde_json::Value =
        serde_json::from_str(&ok_in(o, dir, &["status", "--json"])).expect("status json");
    let v = common::status_vectors(&st);
    (v.chunks, v.model, v.hash, v.stale)
}

fn sha(p: &Path) -> String {
    memctl_cli::setup::sha256_file(p).expect("sha256")
}

fn doctor(o: &Outside, data: &Path, env: &[(&str, &str)]) -> (Option<i32>, Report, String) {
    let d = data.to_str().expect("utf8 path");
    let out = o.memctl(&["--data-dir", d, "doctor", "--json"], env);
    let (stdout, stderr) = text(&out);
    let report: Report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("doctor --json is a report ({e}): {stdout}\n{stderr}"));
    (out.status.code(), report, stderr)
}

fn check<'a>(r: &'a Report, name: &str) -> &'a memctl_cli::doctor::Check {
    r.checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}: {r:?}"))
}

#[test]
fn setup_from_a_checkout_lets_a_binary_outside_it_run_the_model() {
    let root = require_checkout_setup();
    let o = Outside::new();
    let data = machine_dir(&o);
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
    let data = machine_dir(&o);
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
    let data = machine_dir(&o);
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
    let data = machine_dir(&o);
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

/// The runtime and model are per machine: one `memctl setup` (no `--data-dir`) and a data dir
/// made later imports an archive and embeds it with the model, keeping one vector space per
/// chunk; an archive whose file carries model vectors is imported without hash vectors.
#[test]
fn a_new_data_dir_uses_the_machine_setup_and_keeps_one_space_per_chunk() {
    let root = require_checkout_setup();
    let o = Outside::new();
    let out = o.memctl(
        &[
            "setup",
            "--int8-only",
            "--from",
            root.to_str().expect("utf8"),
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let machine = machine_dir(&o);
    assert!(
        stdout.contains(&machine.display().to_string())
            && stdout.contains("found by every data dir"),
        "{stdout}"
    );
    assert!(machine.join(ORT).is_file() && machine.join(INT8).is_file());

    // An archive without model vectors: imported as hash vectors, then embed-pending in the
    // new data dir loads the machine's model and the hash vectors go.
    let a = o.path().join("a");
    let sample = sample();
    ok_in(
        &o,
        &a,
        &["ingest", "--no-embed", sample.to_str().expect("utf8")],
    );
    let file = o.path().join("a.jsonl");
    let f = file.to_str().expect("utf8");
    ok_in(&o, &a, &["export", "--all-projects", "--out", f]);
    let b = o.path().join("b");
    ok_in(&o, &b, &["import", f]);
    let (chunks, model, hash, _) = vector_counts(&o, &b);
    assert!(
        chunks > 0 && model == 0 && hash == chunks,
        "{chunks} {model} {hash}"
    );
    let said = ok_in(&o, &b, &["embed-pending"]);
    assert_eq!(said.trim(), format!("embedded {chunks} chunks"));
    assert_eq!(
        vector_counts(&o, &b),
        (chunks, chunks, 0, 0),
        "model space only"
    );

    // An archive with model vectors: reused, no hash vector beside them.
    let with = o.path().join("with-vectors.jsonl");
    let w = with.to_str().expect("utf8");
    ok_in(
        &o,
        &b,
        &["export", "--all-projects", "--vectors", "--out", w],
    );
    let c = o.path().join("c");
    ok_in(&o, &c, &["import", w]);
    assert_eq!(
        vector_counts(&o, &c),
        (chunks, chunks, 0, 0),
        "model space only"
    );
    let said = ok_in(&o, &c, &["embed-pending"]);
    assert_eq!(said.trim(), "embedded 0 chunks");
}

/// Nothing installed for the machine: the errors name the command that installs it.
#[test]
fn without_a_setup_the_model_errors_name_memctl_setup() {
    let o = Outside::new();
    let d = o.path().join("d");
    let sample = sample();
    ok_in(
        &o,
        &d,
        &["ingest", "--no-embed", sample.to_str().expect("utf8")],
    );
    let out = o.memctl(
        &["--data-dir", d.to_str().expect("utf8"), "embed-pending"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("model unavailable") && stderr.contains("run `memctl setup`"),
        "{stderr}"
    );
    let status = ok_in(&o, &d, &["status"]);
    assert!(status.contains("run `memctl setup`"), "{status}");
}
