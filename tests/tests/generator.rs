//! The transcript generator the tests and benches use (`scripts/gen_transcript.py`): it is
//! deterministic by seed and writes every line type the real CLI writes, and the engine's
//! parser reads all of it.

use memctl_engine::transcript::{ChunkerConfig, chunk_transcript};
use memctl_tests::run_generator;
use std::collections::BTreeSet;

fn generate(seed: &str, layout: &str) -> Vec<u8> {
    run_generator(&["--turns", "300", "--seed", seed, "--layout", layout])
}

#[derive(serde::Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: String,
    subtype: Option<String>,
    attachment: Option<AttachmentKind>,
}

#[derive(serde::Deserialize)]
struct AttachmentKind {
    #[serde(rename = "type")]
    kind: String,
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    println!("seeds 11, 12");
    assert_eq!(generate("11", "split"), generate("11", "split"));
    assert_ne!(generate("11", "split"), generate("12", "split"));
}

#[test]
fn every_line_type_of_the_real_cli_appears_and_parses() {
    for layout in ["combined", "split"] {
        let bytes = generate("7", layout);
        let mut kinds = BTreeSet::new();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let k: Kind = serde_json::from_slice(line).expect("every line is a JSON object");
            kinds.insert(match (k.subtype, k.attachment) {
                (_, Some(a)) => format!("{}:{}", k.kind, a.kind),
                (Some(s), None) if k.kind == "system" => format!("system:{s}"),
                _ => k.kind,
            });
        }
        for want in [
            "user",
            "assistant",
            "file-history-snapshot",
            "queue-operation",
            "last-prompt",
            "attachment:hook_success",
            "attachment:hook_additional_context",
            "system:compact_boundary",
            "future-line-kind",
        ] {
            assert!(
                kinds.contains(want),
                "{layout}: no {want} line in {kinds:?}"
            );
        }
        let b = chunk_transcript(&bytes, "s", &ChunkerConfig::default());
        assert_eq!(b.stats.malformed, 0, "{layout}");
        assert!(
            b.stats
                .skipped_by_type
                .get("future-line-kind")
                .copied()
                .unwrap_or(0)
                > 0,
            "{layout}: an unknown type is skipped and counted, not fatal"
        );
    }
}
