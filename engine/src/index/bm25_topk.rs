//! Bounded BM25 top-k: block-max MaxScore, exact.
//!
//! The exhaustive scorer reads and scores every posting of every query term; at 1e6 chunks a
//! common word has hundreds of thousands. Here the lists are walked document-at-a-time in id
//! order, and nothing is decoded or scored where the k-th best score so far (θ) cannot be beaten:
//! - every block (a store segment) carries its max term frequency and min document length, so
//!   the contribution of any of its postings is bounded without decoding it;
//! - MaxScore: lists sorted by their largest block bound; the prefix whose bounds sum to ≤ θ is
//!   *non-essential*: a document only in those cannot enter the top k, so candidates come from
//!   the other (essential) lists, and non-essential lists are probed by seeking (whole blocks
//!   skipped by their base ids) only while the candidate can still beat θ;
//! - block-max: before a candidate is scored, the sum of every list's current block bound
//!   bounds all documents up to the nearest block end; when it is ≤ θ the essential lists jump
//!   past that end.
//!
//! Exactness: a document is dropped only when an upper bound of its score is ≤ θ. Documents
//! come in ascending id order, so every kept hit has a smaller id than the current one, and a
//! later document scoring exactly θ would rank after the k-th ([`Hit::rank_cmp`]): it could not
//! enter either. Bounds are compared with a relative slack ([`SLACK`]) far above f64 rounding, so
//! rounding never drops a document the exhaustive scorer keeps; admission itself is [`TopK`]'s
//! exact comparison. A scored document is scored whole, its terms summed in the exhaustive
//! scorer's order: equal scores to the bit (the conformance suite and a property test compare
//! both scorers).

use super::lexical::{Posting, PostingBlock, Postings, term_score};
use super::{Hit, TopK};
use std::collections::HashMap;

/// Relative slack on every bound comparison: f64 sums of a few positive terms are off by a few
/// ulps (~1e-16 relative); this only makes pruning a little less eager.
const SLACK: f64 = 1e-9;

/// Whether a document whose score is at most `bound` could still enter above `theta`.
pub(super) fn beats(bound: f64, theta: f64) -> bool {
    bound * (1.0 + SLACK) > theta
}

/// Per query term (in the sorted term order): idf times its repeats; and the BM25 parameters.
pub(super) struct Weights {
    pub idf: Vec<f64>,
    pub k1: f64,
    pub b: f64,
    pub avgdl: f64,
}

impl Weights {
    pub(super) fn score(&self, term: usize, tf: u32, doc_len: u32) -> f64 {
        term_score(self.idf[term], tf, doc_len, self.k1, self.b, self.avgdl)
    }
}

/// A position in one list of one term. Invariant: `doc` is the first posting ≥ the last seek
/// target (`u64::MAX` when none is left) and, unless exhausted, `buf[pos]` holds it; a
/// [`Self::shallow`] move may leave `doc` stale, but only below the target it moved to, which
/// every later seek passes.
pub(super) struct Cursor<B> {
    pub(super) term: usize,
    blocks: Vec<PostingBlock<B>>,
    bounds: Vec<f64>,
    max_bound: f64,
    bi: usize,
    buf: Vec<Posting>,
    buf_of: usize,
    pos: usize,
    pub(super) doc: u64,
}

impl<B> Cursor<B> {
    fn new(term: usize, blocks: Vec<PostingBlock<B>>, w: &Weights) -> Self {
        let bounds: Vec<f64> = blocks
            .iter()
            .map(|b| w.score(term, b.max_tf, b.min_len))
            .collect();
        let max_bound = bounds.iter().copied().fold(0.0, f64::max);
        Self {
            term,
            blocks,
            bounds,
            max_bound,
            bi: 0,
            buf: Vec::new(),
            buf_of: usize::MAX,
            pos: 0,
            doc: 0,
        }
    }

    /// Move to the block that would hold `d`, decoding nothing.
    fn shallow(&mut self, d: u64) {
        while self.bi + 1 < self.blocks.len() && self.blocks[self.bi + 1].base <= d {
            self.bi += 1;
        }
    }

    /// Bound of the current block (0 when the list is exhausted).
    fn block_bound(&self) -> f64 {
        self.bounds.get(self.bi).copied().unwrap_or(0.0)
    }

    /// First id past the current block.
    fn block_end(&self) -> u64 {
        self.blocks.get(self.bi + 1).map_or(u64::MAX, |b| b.base)
    }

    fn current(&self) -> Posting {
        self.buf[self.pos]
    }

    /// The largest bound of the blocks that may hold ids in [from, end) (0 when none).
    pub(super) fn bound_until(&mut self, from: u64, end: u64) -> f64 {
        self.shallow(from);
        let mut bound = 0.0f64;
        let mut i = self.bi;
        while i < self.blocks.len() && self.blocks[i].base < end {
            bound = bound.max(self.bounds[i]);
            i += 1;
        }
        bound
    }

    /// Hand every posting below `end` to `each`, in id order, and move to the first one ≥ `end`.
    #[inline]
    pub(super) fn drain_until<P: Postings<Block = B>>(
        &mut self,
        src: &P,
        end: u64,
        mut each: impl FnMut(Posting),
    ) -> Result<(), P::Error> {
        while self.doc < end {
            let rest = &self.buf[self.pos..];
            let n = rest.partition_point(|p| p.doc < end);
            rest[..n].iter().for_each(|&p| each(p));
            self.pos += n;
            match self.buf.get(self.pos) {
                Some(p) => self.doc = p.doc,
                // The block is used up: on to the next posting, wherever it is.
                None => {
                    let last = self.buf.last().map_or(self.doc, |p| p.doc);
                    self.seek(src, last + 1)?;
                }
            }
        }
        Ok(())
    }

    /// Position on the first posting ≥ `d`.
    pub(super) fn seek<P: Postings<Block = B>>(&mut self, src: &P, d: u64) -> Result<(), P::Error> {
        if self.doc >= d && self.buf_of != usize::MAX {
            return Ok(());
        }
        self.shallow(d);
        loop {
            let Some(block) = self.blocks.get(self.bi) else {
                self.doc = u64::MAX;
                return Ok(());
            };
            if self.buf_of != self.bi {
                self.buf.clear();
                src.decode_block(block, &mut self.buf)?;
                self.buf_of = self.bi;
                self.pos = 0;
            }
            self.pos += self.buf[self.pos..].partition_point(|p| p.doc < d);
            if let Some(p) = self.buf.get(self.pos) {
                self.doc = p.doc;
                return Ok(());
            }
            self.bi += 1;
        }
    }
}

/// Per-term contributions of the candidate being scored.
struct Candidate {
    contrib: Vec<f64>,
    held: Vec<bool>,
    /// Sum of the contributions so far (any order: only compared with bounds).
    partial: f64,
}

impl Candidate {
    fn add(&mut self, w: &Weights, term: usize, p: Posting) {
        let v = w.score(term, p.tf, p.doc_len);
        self.contrib[term] += v;
        self.held[term] = true;
        self.partial += v;
    }

    /// The exact score (terms summed in term order, as the exhaustive scorer does) and the idf
    /// mass held; clears the candidate.
    fn take(&mut self, w: &Weights) -> (f64, f64) {
        let (mut score, mut matched) = (0.0f64, 0.0f64);
        for t in 0..self.held.len() {
            if self.held[t] {
                score += self.contrib[t];
                matched += w.idf[t];
            }
            self.held[t] = false;
            self.contrib[t] = 0.0;
        }
        self.partial = 0.0;
        (score, matched)
    }
}

/// A cursor per list, each on its first posting.
pub(super) fn cursors<P: Postings>(
    src: &P,
    lists: Vec<(usize, Vec<PostingBlock<P::Block>>)>,
    w: &Weights,
) -> Result<Vec<Cursor<P::Block>>, P::Error> {
    let mut cur = Vec::with_capacity(lists.len());
    for (t, blocks) in lists {
        let mut c = Cursor::new(t, blocks, w);
        c.seek(src, 0)?;
        cur.push(c);
    }
    Ok(cur)
}

/// Hits best first, and the idf mass held by each document that entered the top k.
pub(super) type Ranked = (Vec<Hit>, HashMap<u64, f64>);

/// The `k` best documents passing `filter` over `lists` ((term, blocks) pairs), best first,
/// with the idf mass each holds. See the module doc.
pub(super) fn top_k<P: Postings>(
    src: &P,
    lists: Vec<(usize, Vec<PostingBlock<P::Block>>)>,
    w: &Weights,
    k: usize,
    filter: impl Fn(u64) -> bool,
) -> Result<Ranked, P::Error> {
    let mut cur = cursors(src, lists, w)?;
    // Ascending bound: the non-essential lists are a prefix.
    cur.sort_by(|a, b| {
        a.max_bound
            .total_cmp(&b.max_bound)
            .then(a.term.cmp(&b.term))
    });
    let prefix: Vec<f64> = cur
        .iter()
        .scan(0.0, |s, c| {
            *s += c.max_bound;
            Some(*s)
        })
        .collect();
    let mut top = TopK::new(k);
    let mut matched: HashMap<u64, f64> = HashMap::new();
    let mut cand = Candidate {
        contrib: vec![0.0; w.idf.len()],
        held: vec![false; w.idf.len()],
        partial: 0.0,
    };
    let mut first_ess = 0;
    loop {
        let theta = top
            .worst_kept()
            .map_or(f64::NEG_INFINITY, |h| f64::from(h.score));
        while first_ess < cur.len() && !beats(prefix[first_ess], theta) {
            first_ess += 1;
        }
        let d = cur[first_ess..].iter().map(|c| c.doc).min();
        let Some(d) = d.filter(|&d| d != u64::MAX) else {
            break;
        };
        // Block-max: every list's current block bounds the documents in [d, end).
        let (mut bound, mut end) = (0.0, u64::MAX);
        for c in &mut cur {
            c.shallow(d);
            if c.bi < c.blocks.len() {
                bound += c.block_bound();
                end = end.min(c.block_end());
            }
        }
        if !beats(bound, theta) {
            if end == u64::MAX {
                break;
            }
            for c in &mut cur[first_ess..] {
                c.seek(src, end)?;
            }
            continue;
        }
        for c in &cur[first_ess..] {
            if c.doc == d {
                cand.add(w, c.term, c.current());
            }
        }
        if filter(d) && probe(src, &mut cur[..first_ess], d, theta, w, &mut cand)? {
            let (score, held) = cand.take(w);
            let hit = Hit {
                id: d,
                score: score as f32,
            };
            if top
                .worst_kept()
                .is_none_or(|worst| Hit::rank_cmp(&hit, &worst).is_lt())
            {
                top.push(hit.id, hit.score);
                matched.insert(d, held);
            }
        } else {
            cand.take(w);
        }
        for c in &mut cur[first_ess..] {
            if c.doc == d {
                c.seek(src, d + 1)?;
            }
        }
    }
    Ok((top.into_sorted(), matched))
}

/// Add the non-essential lists' postings of `d` to `cand`, highest bound first, while `d` can
/// still beat `theta`; whether it still can at the end (the lists were moved to `d`'s blocks).
fn probe<P: Postings>(
    src: &P,
    non_essential: &mut [Cursor<P::Block>],
    d: u64,
    theta: f64,
    w: &Weights,
    cand: &mut Candidate,
) -> Result<bool, P::Error> {
    let rest = |lists: &[Cursor<P::Block>]| lists.iter().map(Cursor::block_bound).sum::<f64>();
    if !beats(cand.partial + rest(non_essential), theta) {
        return Ok(false);
    }
    for i in (0..non_essential.len()).rev() {
        // Summed afresh (a handful of lists): no drift from subtracting.
        let rest = rest(&non_essential[..i]);
        let c = &mut non_essential[i];
        c.seek(src, d)?;
        if c.doc == d {
            cand.add(w, c.term, c.current());
        }
        if !beats(cand.partial + rest, theta) {
            return Ok(false);
        }
    }
    Ok(true)
}
