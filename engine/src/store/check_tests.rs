//! The checker finds each kind of damage it claims to find, and nothing in a whole store.

use super::check::{Integrity, Rule, check_store};
use super::schema::*;
use crate::store::Store;
use redb::ReadableTable;

/// A store holding the sample session (50 chunks, hash vectors, all pending for the model).
fn fixture() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, engine) = crate::prune::tests::engine_with_fixture();
    let path = engine.store_path();
    drop(engine);
    (dir, path)
}

fn rules(path: &std::path::Path) -> Vec<Rule> {
    let r = check_store(path).unwrap_or_else(|e| panic!("check: {e}"));
    for v in &r.violations {
        println!("{v}");
    }
    r.violations.iter().map(|v| v.rule).collect()
}

/// Break the store with `f` (one raw write transaction), then expect `rule` among the findings.
fn broken_by(rule: Rule, f: impl FnOnce(&redb::WriteTransaction) -> Result<(), redb::Error>) {
    let (_dir, path) = fixture();
    {
        let store = Store::open(&path).unwrap_or_else(|e| panic!("open: {e}"));
        store
            .write(|w| f(&w.tx).map_err(crate::error::StoreError::from))
            .unwrap_or_else(|e| panic!("break: {e}"));
    }
    let found = rules(&path);
    assert!(found.contains(&rule), "{rule:?} expected, found {found:?}");
}

/// The first chunk id of the fixture and its record.
fn first_chunk(tx: &redb::WriteTransaction) -> Result<(u64, super::ChunkRecord), redb::Error> {
    let t = tx.open_table(CHUNKS)?;
    let (k, v) = t.first()?.unwrap_or_else(|| panic!("no chunk"));
    let rec = crate::codec::decode_record(v.value()).unwrap_or_else(|e| panic!("{e}"));
    Ok((k.value(), rec))
}

#[test]
fn a_whole_store_breaks_no_rule() {
    let (_dir, path) = fixture();
    let r = check_store(&path).unwrap_or_else(|e| panic!("check: {e}"));
    assert_eq!(r.integrity, Integrity::Clean);
    assert_eq!(r.counts.chunks, 50, "{r:?}");
    assert!(
        r.counts.postings > 0 && r.counts.block_vectors == 50,
        "{r:?}"
    );
    assert!(r.is_consistent(), "{:?}", r.violations);
}

#[test]
fn a_missing_store_is_an_error_not_a_new_store() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("memctl.redb");
    assert!(check_store(&path).is_err());
    assert!(!path.exists(), "the checker never creates a store");
}

#[test]
fn a_turn_entry_of_a_missing_chunk_is_found() {
    broken_by(Rule::Turn, |tx| {
        tx.open_table(TURNS)?
            .insert(("s-x", 7u32, 0u16), 999_999u64)?;
        Ok(())
    });
}

#[test]
fn a_chunk_without_its_turn_entry_is_found() {
    broken_by(Rule::OrphanChunk, |tx| {
        let (id, rec) = first_chunk(tx)?;
        let key = (
            rec.chunk.session_id.as_str(),
            rec.chunk.turn_index,
            rec.chunk.part,
        );
        assert_eq!(
            tx.open_table(TURNS)?.remove(key)?.map(|v| v.value()),
            Some(id)
        );
        Ok(())
    });
}

#[test]
fn a_posting_removed_is_found() {
    broken_by(Rule::Posting, |tx| {
        let (id, rec) = first_chunk(tx)?;
        let (term, _) = crate::index::lexical::term_frequencies(&rec.chunk.text)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("terms"));
        let mut p = tx.open_table(POSTING_LISTS)?;
        let key = (rec.project_id, term.as_str(), 0u64);
        let (base, bytes) = {
            let (k, v) = p
                .range(key..=(rec.project_id, term.as_str(), id))?
                .next_back()
                .unwrap_or_else(|| panic!("a posting list"))?;
            (k.value().2, v.value().to_vec())
        };
        let mut entries = crate::store::postings::decode_segment(base, &bytes)
            .unwrap_or_else(|e| panic!("decode: {e}"));
        let before = entries.len();
        entries.retain(|e| e.0 != id);
        assert_eq!(entries.len() + 1, before, "the chunk's posting was there");
        let k = (rec.project_id, term.as_str(), base);
        if entries.is_empty() {
            p.remove(k)?;
        } else {
            p.insert(
                k,
                crate::store::postings::encode_segment(base, &entries).as_slice(),
            )?;
        }
        Ok(())
    });
}

/// A segment header whose bounds are not its entries' would let search skip a segment that
/// holds a top hit: the checker decodes every segment and compares.
#[test]
fn a_posting_segment_header_that_lies_is_found() {
    for lie in [0usize, 1, 2] {
        broken_by(Rule::Decode, |tx| {
            let mut p = tx.open_table(POSTING_LISTS)?;
            let ((proj, term, base), bytes) = {
                let (k, v) = p.first()?.unwrap_or_else(|| panic!("a posting list"));
                let (a, b, c) = k.value();
                ((a, b.to_string(), c), v.value().to_vec())
            };
            let (h, body) = crate::store::postings::segment_header(&bytes)
                .unwrap_or_else(|e| panic!("header: {e}"));
            let mut fields = [h.count, h.max_tf, h.min_len];
            fields[lie] += 1;
            let mut out = vec![bytes[0]];
            for mut f in fields {
                while f >= 0x80 {
                    out.push((f as u8) | 0x80);
                    f >>= 7;
                }
                out.push(f as u8);
            }
            out.extend_from_slice(&bytes[body..]);
            p.insert((proj, term.as_str(), base), out.as_slice())?;
            Ok(())
        });
    }
}

#[test]
fn lexical_stats_off_by_one_are_found() {
    broken_by(Rule::LexStats, |tx| {
        let mut t = tx.open_table(LEX_STATS)?;
        let (k, (d, n)) = {
            let (k, v) = t.first()?.unwrap_or_else(|| panic!("stats"));
            (k.value(), v.value())
        };
        t.insert(k, (d + 1, n))?;
        Ok(())
    });
}

#[test]
fn a_missing_f32_vector_is_found() {
    broken_by(Rule::Vector, |tx| {
        let (id, rec) = first_chunk(tx)?;
        tx.open_table(VECTORS)?
            .remove((id, rec.embedders[0].as_str()))?;
        Ok(())
    });
}

#[test]
fn a_vector_count_that_is_not_the_rows_is_found() {
    broken_by(Rule::Vector, |tx| {
        let mut t = tx.open_table(VEC_COUNTS)?;
        let (k, n) = {
            let (k, v) = t.first()?.unwrap_or_else(|| panic!("counts"));
            (k.value().to_string(), v.value())
        };
        t.insert(k.as_str(), n + 1)?;
        Ok(())
    });
    broken_by(Rule::Vector, |tx| {
        tx.open_table(VEC_COUNTS)?.insert("other@v1/384", 1)?;
        Ok(())
    });
    broken_by(Rule::Vector, |tx| {
        tx.delete_table(VEC_COUNTS)?;
        Ok(())
    });
}

#[test]
fn a_chunk_neither_pending_nor_embedded_is_found() {
    broken_by(Rule::Pending, |tx| {
        let (id, _) = first_chunk(tx)?;
        tx.open_table(PENDING)?.remove(id)?;
        Ok(())
    });
}

#[test]
fn a_vector_tail_that_disagrees_is_found() {
    broken_by(Rule::Block, |tx| {
        let mut t = tx.open_table(VEC_TAILS)?;
        let (k, (no, n)) = {
            let (k, v) = t.first()?.unwrap_or_else(|| panic!("tails"));
            let (p, key) = k.value();
            ((p, key.to_string()), v.value())
        };
        t.insert((k.0, k.1.as_str()), (no, n + 1))?;
        Ok(())
    });
}

#[test]
fn a_session_record_counting_too_few_turns_is_found() {
    broken_by(Rule::Session, |tx| {
        let mut t = tx.open_table(SESSIONS)?;
        let (k, mut rec) = {
            let (k, v) = t.first()?.unwrap_or_else(|| panic!("sessions"));
            (
                k.value().to_string(),
                super::session_from(v.value()).unwrap_or_else(|e| panic!("{e}")),
            )
        };
        rec.turns = 1;
        t.insert(
            k.as_str(),
            crate::codec::encode_record(&rec)
                .unwrap_or_default()
                .as_slice(),
        )?;
        Ok(())
    });
}

#[test]
fn a_swap_ref_without_its_blob_is_found() {
    broken_by(Rule::Swap, |tx| {
        tx.open_table(SWAP_REFS)?.insert(("ab12", "s-x"), ())?;
        Ok(())
    });
}
