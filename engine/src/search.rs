//! Fusion of the dense and BM25 lists (pure functions; the pipeline around them is
//! [`crate::retrieve`]).
//!
//! Why an adaptive fusion: measured with MiniLM on turn chunks, BM25 wins on chatty questions
//! full of names and dates (LoCoMo) while dense wins on coding questions phrased with few of the
//! original words, and a naive RRF lost to the better single method on both. So each list is
//! normalized by its own best score (score-aware, not rank-only) and the two are mixed with a
//! per-query lexical weight that listens to *both* retrievers ([`lexical_weight`]):
//!
//! - **Lexical confidence** = coverage, the share of the query's idf mass that the best BM25
//!   document matched. The weight grows with √(coverage above `coverage_floor`): a chatty
//!   question rarely has all its words in one turn (LoCoMo: median coverage 0.61) yet BM25 wins
//!   there in every coverage band, so partial coverage must count early; but a paraphrase that
//!   only shares a couple of common words with the archive (coding set: median coverage 0.15)
//!   is not lexical evidence at all, so coverage up to `coverage_floor` leaves `lexical_min`.
//! - **Dense confidence** = margin, how far the best cosine stands above the mean of the
//!   top 10. A clear dense winner hands up to `dense_trust` of the lexical weight to the dense
//!   list (margin from `dense_margin_lo` to `dense_margin_hi`). On LoCoMo this is the one band
//!   where dense beats BM25 (margin ≥ 0.15: turn R@5 0.83 vs 0.79); on the coding paraphrases
//!   it keeps a moderately covered but wrong BM25 match from burying the dense answer.
//!
//! Cosines are floored at `dense_floor` (unrelated text), but never above the lowest cosine in
//! the list: a paraphrase whose best match scores 0.21 still has a dense ordering.
//! A lexical candidate missing from the dense list still gets its cosine
//! ([`fuse_completed`]): otherwise a candidate past one list's cut-off gets nothing from it.
//!
//! Tuned by replaying the fusion offline on the candidate lists (dense top 50, BM25 top 50,
//! coverage) of LoCoMo (1,982 questions, `scripts/locomo.sh`) and of the coding query set
//! `tests/fixtures/queries/coding.jsonl` (`tests/tests/testsuite/retrieval_quality.rs`), then
//! checked with the real CLI (`memctl search --fusion ...`). Turn R@1/5/10 on LoCoMo:
//! 0.413/0.687/0.760 (BM25 0.421/0.683/0.740, dense 0.215/0.460/0.560; coverage alone:
//! 0.422/0.689/0.769). Coding set R@5: identifiers 25/25 (= BM25, R@1 25/25), paraphrases
//! 17/21 (= dense; coverage alone 13/21).
//! Each new part is needed there: without the coverage floor 14/21, without the dense margin
//! 15/21, without the low-cosine floor 16/21.

use crate::index::Hit;
use std::collections::HashMap;

/// Which retrievers to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Dense + BM25, fused.
    #[default]
    Hybrid,
    /// Vectors only.
    Dense,
    /// BM25 only.
    Lexical,
}

impl std::str::FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hybrid" => Ok(Self::Hybrid),
            "dense" => Ok(Self::Dense),
            "lexical" | "bm25" => Ok(Self::Lexical),
            other => Err(format!(
                "unknown search mode {other:?} (hybrid, dense, lexical)"
            )),
        }
    }
}

/// Parameters of the fusion (see the module doc and [`lexical_weight`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FusionParams {
    /// Lexical weight when the query's terms are fully matched (coverage 1).
    pub lexical_max: f32,
    /// Lexical weight at or below `coverage_floor`; above it the weight follows √coverage.
    pub lexical_min: f32,
    /// Dense scores below this cosine count as no evidence (MiniLM puts unrelated text at
    /// roughly 0–0.2), unless the whole list is below it.
    pub dense_floor: f32,
    /// Coverage up to this share of the query's idf mass is no lexical evidence (a paraphrase
    /// matching a few common words).
    pub coverage_floor: f32,
    /// Dense margin (top-1 cosine minus the top-10 mean) at which dense confidence starts.
    pub dense_margin_lo: f32,
    /// Dense margin at which dense confidence is full.
    pub dense_margin_hi: f32,
    /// Share of the lexical weight handed to the dense list at full dense confidence.
    pub dense_trust: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        Self {
            lexical_max: 0.9,
            lexical_min: 0.15,
            dense_floor: 0.2,
            coverage_floor: 0.15,
            dense_margin_lo: 0.05,
            dense_margin_hi: 0.25,
            dense_trust: 0.5,
        }
    }
}

/// How many of the best cosines the dense margin compares the top one with.
const MARGIN_TOP: usize = 10;

/// Dense confidence signal: the best cosine minus the mean of the best [`MARGIN_TOP`] (0 for
/// fewer than two hits). Order of `dense` does not matter.
pub fn dense_margin(dense: &[Hit]) -> f32 {
    if dense.len() < 2 {
        return 0.0;
    }
    let mut s: Vec<f32> = dense.iter().map(|h| h.score).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s.truncate(MARGIN_TOP);
    let mean = s.iter().sum::<f32>() / s.len() as f32;
    (s[0] - mean).max(0.0)
}

/// Weight of the lexical list in [0, 1] (the dense list gets the rest): grows with the lexical
/// coverage (√ of the coverage above `coverage_floor`, from `lexical_min` to `lexical_max`) and
/// shrinks by up to `dense_trust` as the dense margin goes from `dense_margin_lo` to
/// `dense_margin_hi`. Non-decreasing in coverage, non-increasing in margin.
pub fn lexical_weight(coverage: f32, dense_margin: f32, p: &FusionParams) -> f32 {
    let ramp = |x: f32, lo: f32, hi: f32| {
        if hi > lo {
            ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else if x >= hi {
            1.0
        } else {
            0.0
        }
    };
    let cov = ramp(coverage.clamp(0.0, 1.0), p.coverage_floor.min(1.0), 1.0);
    let lexical = p.lexical_min + (p.lexical_max - p.lexical_min) * cov.sqrt();
    let dense_conf = ramp(dense_margin, p.dense_margin_lo, p.dense_margin_hi);
    let w = lexical * (1.0 - p.dense_trust.clamp(0.0, 1.0) * dense_conf);
    if w.is_finite() {
        w.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Fuse a dense list and a lexical list into one ranking.
///
/// `lexical_coverage` in [0, 1] is the share of the query's idf mass that the best BM25 document
/// matched ([`crate::index::Bm25Hits::coverage`]); the dense margin is read off `dense`. Pure function:
/// property-tested.
pub fn fuse(
    dense: &[Hit],
    lexical: &[Hit],
    lexical_coverage: f32,
    p: &FusionParams,
) -> Vec<FusedHit> {
    fuse_completed(dense, &[], lexical, lexical_coverage, p)
}

/// [`fuse`] with `completed`: the cosines of lexical candidates that the dense list lacks.
/// They add their dense part like any dense hit, but the dense list alone sets the floor, the
/// top and the margin, so a completed low cosine neither moves the normalization nor counts
/// below the floor. Why: a candidate missing from one list gets nothing from it, and a BM25
/// hit just past the dense cut-off lost all its semantic evidence to one just inside it.
pub fn fuse_completed(
    dense: &[Hit],
    completed: &[Hit],
    lexical: &[Hit],
    lexical_coverage: f32,
    p: &FusionParams,
) -> Vec<FusedHit> {
    let w_lex = if lexical.is_empty() {
        0.0
    } else {
        lexical_weight(lexical_coverage, dense_margin(dense), p)
    };
    let w_dense = if dense.is_empty() { 0.0 } else { 1.0 - w_lex };
    let lex_max = lexical.iter().map(|h| h.score).fold(0.0f32, f32::max);
    // The floor never sits above the whole list: low cosines still order a paraphrase.
    let floor = dense.iter().map(|h| h.score).fold(p.dense_floor, f32::min);
    let dense_max = dense.iter().map(|h| h.score).fold(floor, f32::max);
    let mut by_id: HashMap<u64, FusedHit> = HashMap::new();
    for h in dense.iter().chain(completed) {
        let norm = ((h.score - floor) / (dense_max - floor).max(1e-6)).clamp(0.0, 1.0);
        let e = by_id.entry(h.id).or_insert_with(|| FusedHit::new(h.id));
        if e.dense.is_some() {
            continue; // first (best) occurrence wins
        }
        e.dense = Some(h.score);
        e.score += w_dense * norm;
    }
    for h in lexical {
        let norm = if lex_max > 0.0 {
            h.score / lex_max
        } else {
            0.0
        };
        let e = by_id.entry(h.id).or_insert_with(|| FusedHit::new(h.id));
        if e.lexical.is_some() {
            continue;
        }
        e.lexical = Some(h.score);
        e.score += w_lex * norm;
    }
    let mut out: Vec<FusedHit> = by_id.into_values().collect();
    // Ties (e.g. the bottom of the dense list at 0): the higher cosine, then BM25, then id.
    let raw = |x: Option<f32>| x.unwrap_or(f32::NEG_INFINITY);
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(raw(b.dense).total_cmp(&raw(a.dense)))
            .then(raw(b.lexical).total_cmp(&raw(a.lexical)))
            .then(a.id.cmp(&b.id))
    });
    out
}

/// One fused result.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FusedHit {
    /// Chunk id.
    pub id: u64,
    /// Fused score (higher is better).
    pub score: f32,
    /// Raw cosine, when the dense list had it.
    pub dense: Option<f32>,
    /// Raw BM25, when the lexical list had it.
    pub lexical: Option<f32>,
}

impl FusedHit {
    fn new(id: u64) -> Self {
        Self {
            id,
            score: 0.0,
            dense: None,
            lexical: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hits(v: &[(u64, f32)]) -> Vec<Hit> {
        v.iter().map(|&(id, score)| Hit { id, score }).collect()
    }

    #[test]
    fn agreement_wins() {
        let d = hits(&[(1, 0.8), (2, 0.7), (3, 0.2)]);
        let l = hits(&[(2, 9.0), (4, 8.0)]);
        let f = fuse(&d, &l, 0.5, &FusionParams::default());
        assert_eq!(f[0].id, 2);
    }

    #[test]
    fn full_coverage_leans_lexical_and_none_leans_dense() {
        let d = hits(&[(1, 0.7), (2, 0.5), (3, 0.45), (4, 0.4)]);
        let l = hits(&[(2, 10.0), (1, 1.0)]);
        assert_eq!(fuse(&d, &l, 1.0, &FusionParams::default())[0].id, 2);
        assert_eq!(fuse(&d, &l, 0.0, &FusionParams::default())[0].id, 1);
    }

    #[test]
    fn partial_coverage_already_leans_lexical() {
        // A question whose best turn holds a quarter of its idf mass (typical of chatty
        // questions) and no clear dense winner: a clear BM25 winner beats a slightly better
        // cosine.
        let d = hits(&[(1, 0.60), (2, 0.45)]);
        let l = hits(&[(2, 10.0), (1, 2.0)]);
        assert_eq!(fuse(&d, &l, 0.25, &FusionParams::default())[0].id, 2);
        assert_eq!(fuse(&d, &l, 0.0, &FusionParams::default())[0].id, 1);
    }

    #[test]
    fn confident_dense_beats_a_moderately_covered_lexical_match() {
        // A paraphrase: BM25's best turn shares half the query's idf mass but is the wrong one,
        // the dense top stands well above the rest. Coverage alone (no dense trust) would follow
        // BM25.
        let d = hits(&[
            (1, 0.50),
            (2, 0.34),
            (3, 0.33),
            (4, 0.32),
            (5, 0.31),
            (6, 0.30),
            (7, 0.30),
            (8, 0.29),
            (9, 0.29),
            (10, 0.28),
        ]);
        let l = hits(&[(5, 10.0), (1, 3.0)]);
        assert_eq!(fuse(&d, &l, 0.5, &FusionParams::default())[0].id, 1);
        let coverage_only = FusionParams {
            dense_trust: 0.0,
            ..FusionParams::default()
        };
        assert_eq!(fuse(&d, &l, 0.5, &coverage_only)[0].id, 5);
    }

    #[test]
    fn a_completed_cosine_counts_without_moving_the_dense_normalization() {
        let d = hits(&[(1, 0.8), (2, 0.6), (3, 0.5)]);
        // 4 and 5: BM25 ties, outside the dense list; 4 is close to the query, 5 is not.
        let l = hits(&[(4, 5.0), (5, 5.0), (2, 1.0)]);
        let c = hits(&[(4, 0.45), (5, 0.05)]);
        let p = FusionParams::default();
        let plain = fuse(&d, &l, 0.5, &p);
        let done = fuse_completed(&d, &c, &l, 0.5, &p);
        let score = |v: &[FusedHit], id| v.iter().find(|h| h.id == id).map(|h| h.score);
        // Without the completion the two BM25 ties are tied; with it, the close one leads.
        assert_eq!(score(&plain, 4), score(&plain, 5));
        assert!(score(&done, 4) > score(&done, 5), "{done:?}");
        // Below the floor adds nothing, and the dense list's own scores are unchanged.
        assert_eq!(score(&done, 5), score(&plain, 5));
        for id in [1, 2, 3] {
            assert_eq!(score(&done, id), score(&plain, id));
        }
    }

    #[test]
    fn cosines_below_the_floor_keep_their_order() {
        let d = hits(&[(3, 0.15), (1, 0.12), (2, 0.05)]);
        let ids: Vec<u64> = fuse(&d, &[], 0.0, &FusionParams::default())
            .iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ids, vec![3, 1, 2]);
    }

    #[test]
    fn dense_margin_is_top_minus_top10_mean() {
        assert_eq!(dense_margin(&[]), 0.0);
        assert_eq!(dense_margin(&hits(&[(1, 0.9)])), 0.0);
        let m = dense_margin(&hits(&[(2, 0.4), (1, 0.8)]));
        assert!((m - 0.2).abs() < 1e-6, "{m}");
    }

    proptest! {
        #[test]
        fn union_sorted_and_bounded(
            d in proptest::collection::vec((0u64..50, -1.0f32..1.0), 0..30),
            l in proptest::collection::vec((0u64..50, 0.0f32..30.0), 0..30),
            cov in 0.0f32..1.0,
        ) {
            let f = fuse(&hits(&d), &hits(&l), cov, &FusionParams::default());
            let ids: std::collections::HashSet<u64> = d.iter().chain(l.iter()).map(|x| x.0).collect();
            prop_assert_eq!(f.len(), ids.len());
            for w in f.windows(2) {
                prop_assert!(w[0].score >= w[1].score);
            }
            for h in &f {
                prop_assert!(h.score >= 0.0 && h.score <= 1.0 + 1e-4, "score {}", h.score);
            }
        }

        /// More lexical evidence never lowers the lexical weight, more dense confidence never
        /// raises it, and it stays a weight.
        #[test]
        fn lexical_weight_is_monotone_and_bounded(
            c1 in 0.0f32..1.0, c2 in 0.0f32..1.0,
            m1 in -0.2f32..1.0, m2 in -0.2f32..1.0,
            lexical_min in 0.0f32..1.0, span in 0.0f32..1.0,
            coverage_floor in 0.0f32..1.0,
            dense_margin_lo in 0.0f32..0.5, width in 0.0f32..0.5,
            dense_trust in 0.0f32..1.0,
        ) {
            let p = FusionParams {
                lexical_min,
                lexical_max: (lexical_min + span).min(1.0),
                coverage_floor,
                dense_margin_lo,
                dense_margin_hi: dense_margin_lo + width,
                dense_trust,
                ..FusionParams::default()
            };
            for p in [p, FusionParams::default()] {
                let (clo, chi) = (c1.min(c2), c1.max(c2));
                let (mlo, mhi) = (m1.min(m2), m1.max(m2));
                for m in [mlo, mhi] {
                    let (a, b) = (lexical_weight(clo, m, &p), lexical_weight(chi, m, &p));
                    prop_assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b));
                    prop_assert!(a <= b + 1e-6, "coverage {clo} -> {a}, {chi} -> {b}");
                }
                for c in [clo, chi] {
                    let (a, b) = (lexical_weight(c, mlo, &p), lexical_weight(c, mhi, &p));
                    prop_assert!(b <= a + 1e-6, "margin {mlo} -> {a}, {mhi} -> {b}");
                }
            }
        }
    }
}
