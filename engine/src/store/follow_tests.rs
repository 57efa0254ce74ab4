//! Following int8 blocks by cursor: everything once and in pieces, only what was appended
//! since, everything again after the epoch moves (a forget re-packs blocks), the exact scan of
//! what a cursor leaves, and the bounded cold scan.

use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::forget::fixture::{self, three_sessions};
use std::collections::BTreeSet;

const D4: &str = "dddd4444-0000-4000-8000-000000000004";
const D5: &str = "eeee5555-0000-4000-8000-000000000005";

fn ids_after(
    r: &StoreReader,
    from: &[BlockCursor],
    epoch: Option<u64>,
    limit: u64,
) -> (Vec<u64>, Followed) {
    let mut ids = Vec::new();
    let f = r
        .follow_vectors(HashEmbedder::new().id(), from, epoch, limit, &mut |e| {
            ids.push(e.id)
        })
        .expect("follow");
    (ids, f)
}

fn append_turns(e: &crate::Engine, dir: &std::path::Path, session: &str, n: usize) {
    let turns: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("Question {i} on shard {i} of {session}"),
                format!("Answer {i}: shard {i} moved"),
            )
        })
        .collect();
    let t: Vec<fixture::Turn<'_>> = turns.iter().map(|(p, a)| fixture::turn(p, a)).collect();
    let tdir = dir.join("more");
    std::fs::create_dir_all(&tdir).expect("mkdir");
    let path = fixture::transcript(&tdir, session, fixture::project_a(), &t);
    fixture::ingest(e, &path);
}

#[test]
fn a_follower_reads_each_entry_once_then_only_appends_then_all_after_a_forget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    append_turns(&e, dir.path(), D4, 600);
    let r = e.store().read().expect("read");
    let (all, first) = ids_after(&r, &[], None, u64::MAX);
    assert!(
        first.from_start && all.len() > 2 * BLOCK_VECTORS,
        "{}",
        all.len()
    );
    let unique: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "an entry was visited twice");

    // In pieces of about 100 (whole blocks): the same entries, each once.
    let (mut cursors, mut epoch, mut pieces) = (Vec::new(), None, Vec::new());
    loop {
        let (ids, f) = ids_after(&r, &cursors, epoch, 100);
        if ids.is_empty() {
            break;
        }
        pieces.extend(ids);
        cursors = f.cursors;
        epoch = Some(f.epoch);
    }
    assert_eq!(pieces, all);
    assert_eq!(cursors, first.cursors);
    drop(r);

    // Appends: only the new entries.
    append_turns(&e, &dir.path().join("again"), D5, 40);
    let r = e.store().read().expect("read");
    let (new, f) = ids_after(&r, &first.cursors, Some(first.epoch), u64::MAX);
    assert!(!f.from_start && !new.is_empty());
    assert!(
        new.iter().all(|id| !unique.contains(id)),
        "an old entry came again"
    );

    // What a cursor leaves is what the exact scan of everything finds beyond it.
    let h = HashEmbedder::new();
    let q = h.embed("shard moved").expect("embed");
    let pids = r.project_ids().expect("pids");
    let after = r
        .scan_vectors_after(&pids, h.id(), &q, &first.cursors, usize::MAX)
        .expect("scan after");
    let got: BTreeSet<u64> = after.iter().map(|x| x.id).collect();
    assert_eq!(got, new.iter().copied().collect());
    let whole = r.scan_vectors(&pids, h.id(), &q, 20, None).expect("scan");
    assert_eq!(
        r.scan_vectors_after(&pids, h.id(), &q, &[], 20)
            .expect("scan"),
        whole
    );
    drop(r);

    // A forget re-packs blocks: the epoch moves and a follower reads everything again.
    let req = crate::forget::ForgetRequest {
        session: Some("dddd4444".into()),
        ..crate::forget::ForgetRequest::default()
    };
    e.forget(&req, false).expect("forget");
    let r = e.store().read().expect("read");
    let (again, f) = ids_after(&r, &first.cursors, Some(first.epoch), u64::MAX);
    assert!(f.from_start, "the epoch did not move");
    assert!(again.len() < all.len());
}

#[test]
fn the_cold_scan_covers_the_newest_blocks_and_says_how_many() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    append_turns(&e, dir.path(), D4, 700);
    let r = e.store().read().expect("read");
    let h = HashEmbedder::new();
    let pid = r
        .project_id(fixture::project_a())
        .expect("pid")
        .expect("a project");
    let all = r.newest_vectors(&[pid], h.id(), u64::MAX).expect("newest");
    assert_eq!(all.scanned, all.total);
    assert_eq!(all.total, r.vector_count(pid, h.id()).expect("count"));
    let some = r.newest_vectors(&[pid], h.id(), 300).expect("newest");
    assert_eq!(some.total, all.total);
    assert!(
        some.scanned < all.total && some.scanned <= 300 + BLOCK_VECTORS as u64,
        "{some:?}"
    );
    // The newest are the ones scanned: the last entry is among them, the first is not.
    let q = h
        .embed("Question 699 on shard 699 of dddd4444")
        .expect("embed");
    let hits = r
        .scan_vectors_after(&[pid], h.id(), &q, &some.from, usize::MAX)
        .expect("scan");
    assert_eq!(hits.len() as u64, some.scanned);
}
