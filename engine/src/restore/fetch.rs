//! What a restore reads from the store: the sessions and turns to show, the seed of the
//! retrieval. Bounded reads only (hooks run this): reverse range scans, a few parts per turn.

use crate::embed::{Embedder, EmbedderId, l2_normalize};
use crate::error::EngineError;
use crate::store::{ChunkId, ChunkRecord, SessionRecord, StoreReader};
use std::collections::HashSet;

/// Parts of one turn read at most (a turn is split into parts of 4000 chars; eight is a
/// 32,000-char turn, and the prompt and the answer are at its ends).
const MAX_TURN_PARTS: u16 = 8;

/// The whole labelled text of `rec`'s turn (its parts joined in order; each later part starts
/// with its `(continued)` header, which line parsing skips). A turn whose first part is gone
/// keeps what is left.
pub(super) fn turn_text(r: &StoreReader, rec: &ChunkRecord) -> Result<String, EngineError> {
    let c = &rec.chunk;
    let mut out = String::new();
    for part in 0..MAX_TURN_PARTS {
        let text = if part == c.part {
            Some(c.text.clone())
        } else {
            match r.turn_chunk(&c.session_id, c.turn_index, part)? {
                Some(id) => r.chunk(id)?.map(|p| p.chunk.text),
                None => None,
            }
        };
        match text {
            Some(t) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&t);
            }
            None if part > c.part => break,
            None => {}
        }
    }
    Ok(out)
}

/// The most recently updated session of `project` other than `except` that has turns.
pub(super) fn previous_session(
    r: &StoreReader,
    project: &str,
    except: &str,
) -> Result<Option<(String, SessionRecord)>, EngineError> {
    Ok(r.sessions()?
        .into_iter()
        .filter(|(id, s)| id != except && s.project == project && s.turns > 0)
        .max_by(|a, b| {
            a.1.last_ts
                .cmp(&b.1.last_ts)
                .then(a.1.updated_at.cmp(&b.1.updated_at))
        }))
}

/// The latest `n` chunks of a session, newest first.
pub(super) fn latest_chunks(
    r: &StoreReader,
    session: &str,
    n: usize,
) -> Result<Vec<(ChunkId, ChunkRecord)>, EngineError> {
    let mut out = Vec::new();
    for (_, id) in r.session_turns_rev(session, n)? {
        if let Some(rec) = r.chunk(id)? {
            out.push((id, rec));
        }
    }
    Ok(out)
}

/// Mean of the stored vectors of `ids` in the first embedding space they all share (model
/// space preferred, hash space always present).
pub(super) fn seed_vector(
    r: &StoreReader,
    recs: &[(ChunkId, ChunkRecord)],
) -> Result<Option<(EmbedderId, Vec<f32>)>, EngineError> {
    let spaces = [
        EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            "fp32",
            crate::embed::onnx::MINILM_DIMS,
        ),
        crate::embed::HashEmbedder::new().id().clone(),
    ];
    for emb in spaces {
        let mut acc: Option<Vec<f32>> = None;
        let mut n = 0;
        for (id, _) in recs.iter().take(3) {
            if let Some(v) = r.vector(*id, &emb)? {
                match &mut acc {
                    None => acc = Some(v),
                    Some(a) => a.iter_mut().zip(&v).for_each(|(x, y)| *x += y),
                }
                n += 1;
            }
        }
        if let Some(mut v) = acc
            && n > 0
        {
            l2_normalize(&mut v);
            return Ok(Some((emb, v)));
        }
    }
    Ok(None)
}

pub(super) fn word_set(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

/// Near-duplicate check (Jaccard of words ≥ 0.8) for diversity.
pub(super) fn near_duplicate(a: &HashSet<String>, seen: &[HashSet<String>]) -> bool {
    seen.iter().any(|b| {
        let inter = a.intersection(b).count();
        let union = a.len() + b.len() - inter;
        union > 0 && inter as f32 / union as f32 >= 0.8
    })
}

/// Keep the words of `text` whose terms are informative in this project (document frequency at
/// most 1/16 of the documents, or 64), at most 12: common words would make BM25 read postings
/// lists as long as the history, for little ranking value. Bounds restore work on long sessions.
pub(super) fn informative_words(
    lex: &crate::store::StoreLexical<'_>,
    text: &str,
) -> Result<String, EngineError> {
    let cap = (lex.docs() / 16).max(64);
    let mut kept = Vec::new();
    let mut seen = HashSet::new();
    for word in text.split_whitespace() {
        let terms = crate::index::lexical::query_terms(word);
        if terms.is_empty() || !seen.insert(word.to_string()) {
            continue;
        }
        let mut ok = true;
        for t in &terms {
            if lex.df(t)? > cap {
                ok = false;
                break;
            }
        }
        if ok {
            kept.push(word);
        }
        if kept.len() >= 12 {
            break;
        }
    }
    Ok(kept.join(" "))
}
