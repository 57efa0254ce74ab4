//! Decisions that supersede: when two turns of one project decide something about the same
//! subject ("Decision on the cache eviction policy: we use LRU", later "... switch to LFU"),
//! the later one replaces the earlier. Search marks the earlier hit as superseded by the later
//! one and ranks the later one first, so an old decision is never served as the current one.
//!
//! Pure: a decision is a sentence the extractive summary would take as one (`DECISION_RE`);
//! its subject is its index terms without the words that only say "decided". Two decisions
//! share a subject when they share at least [`MIN_SHARED`] subject terms and at least
//! [`MIN_SHARE`] of the smaller subject. Soft, like every reordering of search: nothing is
//! hidden, the older hit stays listed with a note.

use crate::patterns::DECISION_RE;
use std::collections::BTreeSet;

/// Subject terms two decisions must share.
const MIN_SHARED: usize = 2;
/// Share of the smaller subject they must share.
const MIN_SHARE: f32 = 0.5;

/// Index terms (stems) that say a sentence decides, not what about.
const DECIDING: &[&str] = &[
    "decid", "decis", "use", "keep", "go", "chose", "choos", "instead", "rather", "root", "caus",
    "fix", "agre", "opt", "switch", "must", "will", "we", "i", "settl", "now",
];

/// One search hit as this module sees it.
#[derive(Debug, Clone)]
pub struct DecisionHit<'a> {
    /// The hit's project.
    pub project: &'a str,
    /// When its turn started (RFC 3339; compared as text, as stored).
    pub started_at: Option<&'a str>,
    /// Its text.
    pub text: &'a str,
}

/// The subjects of the decisions a turn's text states (one term set per decision sentence).
fn subjects(text: &str) -> Vec<BTreeSet<String>> {
    text.split(['\n', '.', '!', '?'])
        .filter(|s| DECISION_RE.is_match(s))
        .map(|s| {
            crate::index::lexical::tokenize(s)
                .into_iter()
                .filter(|t| t.chars().count() > 2 && !DECIDING.contains(&t.as_str()))
                .collect::<BTreeSet<String>>()
        })
        .filter(|s| s.len() >= MIN_SHARED)
        .collect()
}

/// Whether two subjects are the same subject.
fn same_subject(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let shared = a.intersection(b).count();
    shared >= MIN_SHARED && shared as f32 >= MIN_SHARE * a.len().min(b.len()) as f32
}

/// For each hit, the index of the newest later hit of the same project that decides about the
/// same subject (`None`: not superseded by any of these hits).
pub fn superseded_by(hits: &[DecisionHit<'_>]) -> Vec<Option<usize>> {
    let subj: Vec<Vec<BTreeSet<String>>> = hits.iter().map(|h| subjects(h.text)).collect();
    let mut out = vec![None; hits.len()];
    for (i, h) in hits.iter().enumerate() {
        let Some(t) = h.started_at else { continue };
        let mut newest: Option<(usize, &str)> = None;
        for (j, o) in hits.iter().enumerate() {
            let Some(u) = o.started_at else { continue };
            let later = u > t && newest.is_none_or(|(_, n)| u > n);
            if later
                && o.project == h.project
                && subj[i]
                    .iter()
                    .any(|a| subj[j].iter().any(|b| same_subject(a, b)))
            {
                newest = Some((j, u));
            }
        }
        out[i] = newest.map(|(j, _)| j);
    }
    out
}

/// The order that puts every superseding hit before the hits it supersedes, as early as the
/// first of them, and keeps the rest in their order (indexes into the input). A mark that
/// would close a cycle is ignored (marks point to strictly later turns, so none does).
pub fn order(superseded: &[Option<usize>]) -> Vec<usize> {
    fn place(i: usize, marks: &[Option<usize>], state: &mut [u8], out: &mut Vec<usize>) {
        if state[i] != 0 {
            return; // placed, or on the path being placed (a cycle)
        }
        state[i] = 1;
        if let Some(j) = marks[i].filter(|&j| j < marks.len()) {
            place(j, marks, state, out);
        }
        state[i] = 2;
        out.push(i);
    }
    let mut state = vec![0u8; superseded.len()];
    let mut out = Vec::with_capacity(superseded.len());
    for i in 0..superseded.len() {
        place(i, superseded, &mut state, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hit<'a>(project: &'a str, t: &'a str, text: &'a str) -> DecisionHit<'a> {
        DecisionHit {
            project,
            started_at: Some(t),
            text,
        }
    }

    #[test]
    fn a_later_decision_on_the_same_subject_supersedes() {
        let hits = [
            hit(
                "p",
                "2026-10-08",
                "Decision on the cache eviction policy: we use LRU.",
            ),
            hit(
                "p",
                "2026-11-26",
                "Decision on the cache eviction policy: we keep LFU but cap it.",
            ),
            hit(
                "p",
                "2026-11-17",
                "Decision on the cache eviction policy: we switch to LFU.",
            ),
            hit(
                "p",
                "2026-11-20",
                "Decision on the log format: we switch to logfmt.",
            ),
            hit(
                "q",
                "2026-11-27",
                "Decision on the cache eviction policy: FIFO.",
            ),
            hit(
                "p",
                "2026-11-27",
                "The cache eviction policy is slow on CI.",
            ),
        ];
        let s = superseded_by(&hits);
        assert_eq!(s, [Some(1), None, Some(1), None, None, None]);
        assert_eq!(order(&s), [1, 0, 2, 3, 4, 5]);
    }

    proptest! {
        /// Any marks: the order is a permutation, and a hit superseded by another comes after it.
        #[test]
        fn order_is_a_permutation_that_puts_the_newer_first(
            marks in proptest::collection::vec(proptest::option::of(0usize..8), 0..8)
        ) {
            let n = marks.len();
            let marks: Vec<Option<usize>> = marks
                .into_iter()
                .enumerate()
                .map(|(i, m)| m.filter(|&j| j < n && j > i))
                .collect();
            let o = order(&marks);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            for (i, m) in marks.iter().enumerate() {
                if let Some(j) = m {
                    let (pi, pj) = (o.iter().position(|x| *x == i), o.iter().position(|x| x == j));
                    prop_assert!(pj < pi, "{j} after {i} in {o:?} ({marks:?})");
                }
            }
        }
    }
}
