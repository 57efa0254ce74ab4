//! The confidence gate of prompt-time recall: whether a candidate is a good enough match to
//! inject, from its evidence and the kind of prompt.
//!
//! Why the kind of prompt matters: a question about the past ("which host did we pick?",
//! "who signs off the offsets?") is what recall is for, and after a compaction its answer is
//! usually in one turn whose vector is diluted by tool output, so its cosine is modest (0.25–0.4
//! measured on a held-out archive, against ≥ 0.45 for a short plain exchange). A request to act
//! ("run the linter again", "write a docstring for the new script") restates work the archive
//! also holds, with high word overlap and a fair cosine, yet the old turn is stale noise for it.
//! So questions get lenient thresholds and everything else strict ones; within one kind the
//! gate stays monotone in the evidence.

/// Evidence thresholds for one kind of prompt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A model cosine at or above this is a match on its own.
    pub dense_alone: f32,
    /// A model cosine at or above this is a match when the turn also holds at least
    /// `coverage_with_dense` of the prompt's idf mass.
    pub dense_with_lexical: f32,
    /// Lexical coverage that confirms a moderate cosine.
    pub coverage_with_dense: f32,
    /// Lexical coverage that is a match on its own (no model, or an exact identifier).
    pub coverage_alone: f32,
}

/// Thresholds of [`gate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateParams {
    /// For questions ([`PromptKind::Question`]).
    pub question: Thresholds,
    /// For everything else: requests to act, statements.
    pub other: Thresholds,
    /// Informative prompt terms needed before recall is tried at all.
    pub min_terms: usize,
}

impl Default for GateParams {
    fn default() -> Self {
        Self {
            question: Thresholds {
                dense_alone: 0.33,
                dense_with_lexical: 0.26,
                coverage_with_dense: 0.05,
                coverage_alone: 0.75,
            },
            other: Thresholds {
                dense_alone: 0.50,
                dense_with_lexical: 0.40,
                coverage_with_dense: 0.05,
                // Word overlap alone is what a repeated request has ("run the linter again"):
                // never enough for a non-question.
                coverage_alone: f32::INFINITY,
            },
            min_terms: 2,
        }
    }
}

impl GateParams {
    /// The thresholds for a kind of prompt.
    pub fn for_kind(&self, kind: PromptKind) -> &Thresholds {
        match kind {
            PromptKind::Question => &self.question,
            PromptKind::Other => &self.other,
        }
    }
}

/// What a prompt is, as far as the gate cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum PromptKind {
    /// A question (ends with `?`, or opens with an interrogative or "remind me").
    Question,
    /// Anything else.
    Other,
}

/// Words that open a question even without a question mark ("remind me how to redo a night").
/// Not "do", "can", "could", "have": they also open requests ("do the same for the parser").
const QUESTION_OPENERS: &[&str] = &[
    "what", "what's", "whats", "which", "who", "who's", "whom", "whose", "when", "where",
    "where's", "why", "how", "how's", "remind", "recall", "remember", "did", "does", "was", "were",
    "is", "are",
];

/// Leading fillers skipped before the opener ("ok, so what was ...", "and which ...").
const FILLERS: &[&str] = &[
    "ok", "okay", "so", "and", "but", "also", "hey", "quick", "question",
];

/// Classify a prompt. Pure; only its first words and last character matter.
pub fn prompt_kind(prompt: &str) -> PromptKind {
    let p = prompt.trim();
    if p.ends_with('?') {
        return PromptKind::Question;
    }
    let first = p
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('\u{2019}', "'"))
        .find(|w| !FILLERS.contains(&w.as_str()));
    match first {
        Some(w) if QUESTION_OPENERS.contains(&w.as_str()) => PromptKind::Question,
        _ => PromptKind::Other,
    }
}

/// The evidence behind one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Evidence {
    /// Model cosine (None without the model or when the dense list missed it).
    pub dense: Option<f32>,
    /// Share of the prompt's idf mass the turn holds (0 when BM25 missed it).
    pub coverage: f32,
}

/// Whether a candidate is a good enough match to inject for a prompt of `kind`. Pure and
/// monotone: more dense or more lexical evidence never turns a match into a non-match.
pub fn gate(e: &Evidence, kind: PromptKind, p: &GateParams) -> bool {
    let t = p.for_kind(kind);
    let d = e.dense.unwrap_or(0.0);
    d >= t.dense_alone
        || (d >= t.dense_with_lexical && e.coverage >= t.coverage_with_dense)
        || e.coverage >= t.coverage_alone
}

/// Confidence at and above which a hit is a confident match: the value [`confidence`] gives
/// exactly where [`gate`] starts to pass.
pub const CONFIDENT: f32 = 0.5;

/// An absolute confidence in 0..=1 for one candidate: the continuous form of [`gate`] for a
/// prompt of `kind`. Each of the gate's clauses becomes a score that reaches [`CONFIDENT`]
/// exactly at its threshold (linear below, linear up to 1 at full evidence above); a clause of
/// two conditions takes the smaller of its two scores, and the confidence is the best clause.
/// So `confidence >= CONFIDENT` if and only if [`gate`] passes, and, being a max of mins of
/// non-decreasing ramps, it never falls when the cosine or the coverage rises. Pure: the same
/// evidence gives the same value whatever else was retrieved with it.
pub fn confidence(e: &Evidence, kind: PromptKind, p: &GateParams) -> f32 {
    let t = p.for_kind(kind);
    let d = e.dense.unwrap_or(0.0);
    let dense_alone = ramp(d, t.dense_alone);
    let both = ramp(d, t.dense_with_lexical).min(ramp(e.coverage, t.coverage_with_dense));
    let lexical_alone = ramp(e.coverage, t.coverage_alone);
    dense_alone.max(both).max(lexical_alone)
}

/// `x` in 0..=1 mapped to 0..=1, reaching [`CONFIDENT`] exactly at `threshold` (an infinite or
/// unreachable threshold gives at most just under it). Non-decreasing in `x`; NaN counts as 0.
fn ramp(x: f32, threshold: f32) -> f32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    if x >= threshold {
        let room = 1.0 - threshold;
        if room > 0.0 {
            CONFIDENT + (1.0 - CONFIDENT) * ((x - threshold) / room)
        } else {
            1.0
        }
    } else if threshold > 0.0 && threshold.is_finite() {
        // Below the threshold: proportional, kept strictly under CONFIDENT.
        (CONFIDENT * x / threshold).min(CONFIDENT - f32::EPSILON)
    } else {
        0.0
    }
}
