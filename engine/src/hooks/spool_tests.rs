//! Regression tests of the spool's claims: an unreadable claim is kept, never deleted.

use super::*;
use crate::claim::test_util::{names, unreadable_at};
use crate::engine::EngineOptions;
use crate::spool::spool_dir;

fn engine(dir: &Path) -> Engine {
    Engine::open(EngineOptions {
        data_dir: dir.join("data"),
        onnx: crate::embed::OnnxConfig::discover(None),
        model_disabled: true,
        resident: Default::default(),
    })
    .unwrap_or_else(|e| panic!("open engine: {e}"))
}

/// `read_claimed` turned a failed read into an empty string and `drain_transcripts` then
/// deleted the claimed spool with every transcript path it listed.
#[test]
fn unreadable_transcript_spool_claim_is_kept_not_deleted() {
    for as_dir in [true, false] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let e = engine(dir.path());
        let spool = spool_dir(e.data_dir());
        crate::paths::ensure_private_dir(&spool).unwrap_or_else(|e| panic!("{e}"));
        unreadable_at(&transcripts_path(e.data_dir()), as_dir);

        drain(
            &e,
            Instant::now() + std::time::Duration::from_secs(5),
            &crate::swap::SwapConfig::default(),
        );

        let left = names(&spool);
        let kept = format!("transcripts.draining-{}.bad", std::process::id());
        assert_eq!(left, vec![kept.clone()], "as_dir {as_dir}");
        let kept = spool.join(kept);
        if as_dir {
            assert_eq!(
                std::fs::read_to_string(kept.join("marker")).ok().as_deref(),
                Some("kept")
            );
        } else {
            let len = std::fs::metadata(&kept)
                .unwrap_or_else(|e| panic!("the kept claim must exist: {e}"))
                .len();
            assert_eq!(len, crate::paths::SPOOL_MAX_BYTES + 1);
        }
        // The next drain leaves the kept file alone (it is no claim).
        drain(
            &e,
            Instant::now() + std::time::Duration::from_secs(5),
            &crate::swap::SwapConfig::default(),
        );
        assert!(kept.exists());
    }
}

/// A readable claim next to an unreadable orphan is still drained (and only it is deleted).
#[test]
fn readable_spool_is_drained_next_to_an_unreadable_orphan() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = engine(dir.path());
    let spool = spool_dir(e.data_dir());
    crate::paths::ensure_private_dir(&spool).unwrap_or_else(|e| panic!("{e}"));
    unreadable_at(&spool.join("transcripts.draining-4999999"), true);
    let missing = dir.path().join("gone.jsonl");
    spool_transcript(e.data_dir(), &missing).unwrap_or_else(|e| panic!("{e}"));

    drain(
        &e,
        Instant::now() + std::time::Duration::from_secs(5),
        &crate::swap::SwapConfig::default(),
    );

    let left = names(&spool);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].ends_with(".bad"), "{left:?}");
}
