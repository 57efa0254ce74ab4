//! The format's own rules (the round trips through real stores are in
//! `tests/tests/testsuite/export_roundtrip.rs` and `cli/tests/testsuite/export_process.rs`).

use super::format::{Counts, KINDS, MemoryFileRec, Record, VectorRec};

#[test]
fn vectors_round_trip_bit_for_bit_and_bad_ones_are_errors() {
    let v = vec![0.0f32, -1.5, f32::MIN_POSITIVE, 0.123_456_79, 3.0e-9];
    let r = VectorRec::new("m@v/5".into(), &v);
    let back = r.values().expect("decode");
    assert_eq!(
        back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let odd = VectorRec {
        embedder: "m".into(),
        f32le: "AAAAAAA=".into(), // 5 bytes
    };
    assert!(odd.values().is_err());
    let bad = VectorRec {
        embedder: "m".into(),
        f32le: "*not base64*".into(),
    };
    assert!(bad.values().is_err());
}

#[test]
fn memory_file_names_are_plain_file_names() {
    for good in ["decisions.md", "session-state.json", "notes_2.md"] {
        assert!(MemoryFileRec::name_is_safe(good), "{good}");
    }
    for bad in [
        "../x.md",
        "a/b.md",
        ".hidden.md",
        "x.sh",
        "x..md",
        "/etc/passwd",
        "a\\b.md",
        "",
    ] {
        assert!(!MemoryFileRec::name_is_safe(bad), "{bad}");
    }
}

#[test]
fn unknown_fields_are_ignored_and_every_kind_is_known() {
    // A newer writer of the same version may add optional fields.
    let line = r#"{"kind":"project","path":"/w","added_later":{"x":1}}"#;
    let r: Record = serde_json::from_str(line).expect("parse");
    assert_eq!(r.kind(), "project");
    let t: Record = serde_json::from_str(r#"{"kind":"trailer","counts":{"chunks":3}}"#)
        .expect("trailer with missing counts");
    let Record::Trailer(t) = t else {
        panic!("not a trailer")
    };
    assert_eq!(
        t.counts,
        Counts {
            chunks: 3,
            ..Counts::default()
        }
    );
    // `kind()` and the list the error message shows agree.
    let serialized = serde_json::to_value(Record::Trailer(t)).expect("json");
    assert!(KINDS.contains(&serialized["kind"].as_str().unwrap_or_default()));
}
