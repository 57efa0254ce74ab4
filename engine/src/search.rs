//! Hybrid retrieval: dense (stored vectors, int8 scan + f32 re-score) fused with BM25.
//!
//! Why an adaptive fusion: measured with MiniLM on turn chunks, BM25 wins on chatty questions
//! full of names and dates (LoCoMo) while dense wins on coding questions phrased with few of the
//! original words, and a naive RRF lost to the better single method on both. So each list is
//! normalized by its own best score (score-aware, not rank-only) and the weight of the lexical
//! list grows with how much of the query it actually matched: a query whose rare terms hit
//! strongly leans lexical, a query whose words barely appear leans dense.
//!
//! The weight grows with the *square root* of the coverage: a natural-language question rarely
//! has all its words in one turn (LoCoMo: median coverage 0.61), yet BM25 still wins there in
//! every coverage band, so partial coverage must already count; the low end (`lexical_min`, for
//! queries that share almost no words with the archive) is unchanged. Tuned on LoCoMo with
//! `scripts/locomo.sh` (see `benches/results/locomo-*.md` for the sweep): turn R@5 0.689 vs
//! BM25 0.684 and dense 0.460; the linear weight with the old defaults gave 0.647.

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

/// Parameters of the fusion (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FusionParams {
    /// Lexical weight when the query's terms are fully matched (coverage 1).
    pub lexical_max: f32,
    /// Lexical weight as coverage goes to 0; in between the weight follows √coverage.
    pub lexical_min: f32,
    /// Dense scores below this cosine count as no evidence (MiniLM puts unrelated text at
    /// roughly 0–0.2).
    pub dense_floor: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        Self {
            lexical_max: 0.9,
            lexical_min: 0.15,
            dense_floor: 0.2,
        }
    }
}

/// Fuse a dense list and a lexical list into one ranking.
///
/// `lexical_coverage` in [0, 1] is the share of the query's idf mass that matched at least one
/// document (computed by the caller from the postings). Pure function: property-tested.
pub fn fuse(
    dense: &[Hit],
    lexical: &[Hit],
    lexical_coverage: f32,
    p: &FusionParams,
) -> Vec<FusedHit> {
    if !dense.is_empty() && !lexical.is_empty() {
        tmp_dump(
            &serde_json::json!({"fuse": 1, "dense": dense.iter().map(|h| (h.id, h.score)).collect::<Vec<_>>(), "lex": lexical.iter().map(|h| (h.id, h.score)).collect::<Vec<_>>(), "cov": lexical_coverage}),
        );
    }
    let cov = lexical_coverage.clamp(0.0, 1.0);
    let w_lex = if lexical.is_empty() {
        0.0
    } else {
        // Concave in coverage: see the module doc.
        p.lexical_min + (p.lexical_max - p.lexical_min) * cov.sqrt()
    };
    let w_dense = if dense.is_empty() { 0.0 } else { 1.0 - w_lex };
    let lex_max = lexical.iter().map(|h| h.score).fold(0.0f32, f32::max);
    let dense_max = dense.iter().map(|h| h.score).fold(p.dense_floor, f32::max);
    let mut by_id: HashMap<u64, FusedHit> = HashMap::new();
    for h in dense {
        let norm = ((h.score - p.dense_floor) / (dense_max - p.dense_floor).max(1e-6)).max(0.0);
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
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
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

/// BM25 over the store's postings. Returns the top `n` hits and the *lexical coverage*: the
/// share of the query's idf mass that the best document matched (1.0 = it contains every
/// query term), which drives the fusion weight.
pub fn bm25_store(
    view: &crate::store::StoreLexical<'_>,
    query: &str,
    n: usize,
) -> Result<(Vec<Hit>, f32), crate::error::StoreError> {
    let params = crate::index::lexical::Bm25Params::default();
    let docs = view.doc_count();
    if docs == 0 {
        return Ok((Vec::new(), 0.0));
    }
    let avgdl = (view.total_len() as f32 / docs as f32).max(1.0);
    let mut terms = crate::index::lexical::query_terms(query);
    terms.sort();
    terms.dedup();
    let mut scores: HashMap<u64, (f32, f32)> = HashMap::new(); // doc -> (bm25, idf matched)
    let mut idf_total = 0.0f32;
    for term in &terms {
        let postings = view.postings(term)?;
        let df = postings.len() as f32;
        let idf = (1.0 + (docs as f32 - df + 0.5) / (df + 0.5)).ln();
        idf_total += idf;
        for (doc, tf, dl) in postings {
            let tf = tf as f32;
            let s = idf * tf * (params.k1 + 1.0)
                / (tf + params.k1 * (1.0 - params.b + params.b * dl as f32 / avgdl));
            let e = scores.entry(doc).or_insert((0.0, 0.0));
            e.0 += s;
            e.1 += idf;
        }
    }
    let mut hits: Vec<(Hit, f32)> = scores
        .into_iter()
        .map(|(id, (score, matched))| (Hit { id, score }, matched))
        .collect();
    hits.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.id.cmp(&b.0.id)));
    let coverage = match hits.first() {
        Some((_, matched)) if idf_total > 0.0 => matched / idf_total,
        _ => 0.0,
    };
    tmp_dump(
        &serde_json::json!({"q": query, "docs_n": docs, "idf_total": idf_total, "cov": coverage, "docs": hits.iter().take(n).map(|(h, m)| (h.id, h.score, *m)).collect::<Vec<_>>()}),
    );
    hits.truncate(n);
    Ok((hits.into_iter().map(|(h, _)| h).collect(), coverage))
}

// TEMPORARY replay dump (removed before handing back).
fn tmp_dump(v: &serde_json::Value) {
    if let Some(p) = std::env::var_os("MEMCTL_FUSION_DUMP") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let _ = writeln!(f, "{v}");
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
        let d = hits(&[(1, 0.9), (2, 0.3)]);
        let l = hits(&[(2, 10.0), (1, 1.0)]);
        assert_eq!(fuse(&d, &l, 1.0, &FusionParams::default())[0].id, 2);
        assert_eq!(fuse(&d, &l, 0.0, &FusionParams::default())[0].id, 1);
    }

    #[test]
    fn partial_coverage_already_leans_lexical() {
        // A question whose best turn holds a quarter of its idf mass (typical of chatty
        // questions): √0.25 puts the lexical weight halfway, so a clear BM25 winner beats a
        // slightly better cosine.
        let d = hits(&[(1, 0.60), (2, 0.45)]);
        let l = hits(&[(2, 10.0), (1, 2.0)]);
        assert_eq!(fuse(&d, &l, 0.25, &FusionParams::default())[0].id, 2);
        assert_eq!(fuse(&d, &l, 0.0, &FusionParams::default())[0].id, 1);
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
    }
}
