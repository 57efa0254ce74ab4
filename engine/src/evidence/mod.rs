//! What a stored turn shows for a query: its [`Evidence`] and the confidence gate on it
//! ([`gate()`], [`confidence`]), and the passages of its text that hold the query's words.
//!
//! Its own module, below retrieval and recall: search results carry the evidence and its
//! confidence, and recall gates and renders with the same rules, so both sit above this and
//! neither names the other.

mod gate;
pub(crate) mod passage;

pub use gate::{
    CONFIDENT, Evidence, GateParams, PromptKind, Thresholds, confidence, gate, prompt_kind,
};
pub(crate) use passage::{passages, units};

/// Lowercased prompt terms that carry meaning (the BM25 tokenizer, stopwords out).
pub(crate) fn informative_terms(prompt: &str) -> Vec<String> {
    let mut t = crate::index::lexical::query_terms(prompt);
    t.retain(|w| w.chars().count() > 2);
    t.sort();
    t.dedup();
    t
}
