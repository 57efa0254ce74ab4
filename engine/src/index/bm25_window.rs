//! Bounded BM25 top-k for dense lists: term-at-a-time over windows of ids, exact.
//!
//! When the query's lists hold postings for a large share of all documents (common words), the
//! document-at-a-time walk of [`super::bm25_topk`] pays its cursor bookkeeping for nearly every
//! document and its block bounds prune little. Here ids are taken in windows of [`WINDOW`]:
//! - the window is skipped, nothing decoded, when the sum over lists of the largest block bound
//!   overlapping it cannot beat θ (the k-th best score so far);
//! - otherwise each list, in query term order, adds its postings' contributions into a dense
//!   array of the window (a score and the idf mass held per id), and the window's documents are
//!   offered to the top k in id order.
//!
//! Exactness: a document's score is the sum of its terms' contributions in term order, starting
//! from zero: the exhaustive scorer's sum, to the bit. Documents are offered in ascending id
//! order with the same admission rule as the document-at-a-time walk, and a skipped window holds
//! no document that could enter (its bound is ≤ θ).

use super::TopK;
use super::bm25_topk::{Ranked, Weights, beats, cursors};
use super::lexical::{PostingBlock, Postings};
use std::collections::HashMap;

/// Ids per window (Lucene's bulk disjunction scorer uses 2,048).
const WINDOW: u64 = 2048;

/// Document lengths below this have their single-occurrence contribution tabled per term.
const TABLED_LEN: usize = 1024;

/// A term's contributions, with those of one occurrence in a document shorter than
/// [`TABLED_LEN`] looked up (most postings of a common word): the same values, computed once.
struct TermScores {
    once: Vec<f64>,
}

impl TermScores {
    fn new(w: &Weights, term: usize) -> Self {
        let once = (0..TABLED_LEN as u32)
            .map(|len| w.score(term, 1, len))
            .collect();
        Self { once }
    }

    #[inline]
    fn score(&self, w: &Weights, term: usize, tf: u32, len: u32) -> f64 {
        match self.once.get(len as usize) {
            Some(&s) if tf == 1 => s,
            _ => w.score(term, tf, len),
        }
    }
}

/// The `k` best documents passing `filter` over `lists` ((term, blocks) pairs), best first, with
/// the idf mass each holds; the same answer as [`super::bm25_topk::top_k`].
pub(super) fn top_k<P: Postings>(
    src: &P,
    lists: Vec<(usize, Vec<PostingBlock<P::Block>>)>,
    w: &Weights,
    k: usize,
    filter: impl Fn(u64) -> bool,
) -> Result<Ranked, P::Error> {
    let mut cur = cursors(src, lists, w)?;
    // Term order: contributions are summed as the exhaustive scorer sums them.
    cur.sort_by_key(|c| c.term);
    let tables: Vec<TermScores> = (0..w.idf.len()).map(|t| TermScores::new(w, t)).collect();
    let mut top = TopK::new(k);
    let mut matched: HashMap<u64, f64> = HashMap::new();
    let mut score = vec![0.0f64; WINDOW as usize];
    let mut held = vec![0.0f64; WINDOW as usize];
    let mut touched = vec![false; WINDOW as usize];
    while let Some(start) = cur.iter().map(|c| c.doc).min().filter(|&d| d != u64::MAX) {
        let end = start.saturating_add(WINDOW);
        let theta = top
            .worst_kept()
            .map_or(f64::NEG_INFINITY, |h| f64::from(h.score));
        let bound: f64 = cur.iter_mut().map(|c| c.bound_until(start, end)).sum();
        if !beats(bound, theta) {
            for c in &mut cur {
                c.seek(src, end)?;
            }
            continue;
        }
        for c in &mut cur {
            let (table, idf) = (&tables[c.term], w.idf[c.term]);
            let term = c.term;
            c.drain_until(src, end, |p| {
                let i = (p.doc - start) as usize;
                score[i] += table.score(w, term, p.tf, p.doc_len);
                held[i] += idf;
                touched[i] = true;
            })?;
        }
        // Ids ascend, so a document ties the k-th only to rank after it: it enters iff its
        // score is above the k-th's (or fewer than k are kept).
        let mut entry = theta as f32;
        for i in 0..WINDOW as usize {
            if !std::mem::take(&mut touched[i]) {
                continue;
            }
            let (s, m) = (std::mem::take(&mut score[i]), std::mem::take(&mut held[i]));
            let (d, s) = (start + i as u64, s as f32);
            if s > entry && filter(d) {
                top.push(d, s);
                matched.insert(d, m);
                entry = top.worst_kept().map_or(f32::NEG_INFINITY, |h| h.score);
            }
        }
    }
    Ok((top.into_sorted(), matched))
}
