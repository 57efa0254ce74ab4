//! Near-duplicate folding: turns whose text differs only in what changes between two runs of
//! the same thing (timings, timestamps, process and commit ids, uuids, temp paths) share one
//! fold key, so a result list shows one of them with a count instead of spending its slots on
//! copies.
//!
//! Folding happens at query time over the ranked hits, never in the store: nothing is merged
//! or deleted, every copy stays searchable (`memctl search --no-fold`) and is listed by
//! `memctl show`. Exact copies in other sessions are already stored once (`shared_with`);
//! this folds the near-identical ones the store keeps apart.
//!
//! What is masked and what is not: numbers that vary between identical runs (decimals,
//! durations, integers of four digits or more, times and dates) are masked; small bare
//! integers are kept, because they carry meaning ("3 passed; 2 failed" is not "5 passed;
//! 0 failed"). Case and runs of whitespace are ignored.
//!
//! Near-copies the key misses (one more test passed, an answer re-generated with a few words
//! changed, the same output with one more warning line) fold by similarity: the same project,
//! word 3-gram Jaccard of the masked texts at least [`TEXT_MIN`] AND cosine of their stored
//! model vectors at least [`VECTOR_MIN`] (thresholds swept on labelled pairs, see
//! docs/perf/retrieval.md "Duplicates"). A turn without a model vector yet folds by text alone
//! only at the stricter [`TEXT_ALONE_MIN`]. The test runs only among the candidates a query
//! holds already (tens to a few hundred), never over the archive.

use regex::{Captures, Regex};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

/// Two candidates with model vectors fold when the word 3-gram Jaccard of their masked texts is
/// at least this ...
pub const TEXT_MIN: f32 = 0.55;
/// ... and the cosine of their model vectors at least this.
pub const VECTOR_MIN: f32 = 0.90;
/// Without model vectors in one space on both sides (one is not embedded yet), text alone must
/// be this similar: a step above the lowest threshold with no wrong fold by text alone, as
/// nothing else vouches for the pair.
pub const TEXT_ALONE_MIN: f32 = 0.75;

/// One alternation, tried left to right at each position: the longest shapes first (a uuid
/// before its hex parts, a timestamp before its numbers). ASCII word boundaries and digits
/// only: a Unicode `\b` makes the regex engine leave its fast automaton on non-ASCII text, and
/// a search reads the key of every loaded hit.
static VOLATILE: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = concat!(
        r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)",
        r"|(?P<ts>\b[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?\b)",
        r"|(?P<clock>\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?\b)",
        r#"|(?P<tmp>(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'"`,;)\]]*)"#,
        r"|(?P<tmpname>\btmp[._-]?[A-Za-z0-9_]{6,}\b)",
        r"|(?P<dur>\b[0-9]+(?:\.[0-9]+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|min|mins|minutes?|h|hours?)\b)",
        r"|(?P<hex>\b(?:0x)?[0-9a-fA-F]{7,}\b)",
        r"|(?P<num>\b[0-9]+(?:\.[0-9]+)+\b)",
    );
    Regex::new(&pattern.replace(r"\b", r"(?-u:\b)")).expect("fold pattern compiles")
});

/// The text with what varies between runs of the same thing masked, lowercased, whitespace
/// collapsed: two texts fold together exactly when this is equal.
pub(crate) fn normalize(text: &str) -> String {
    let masked = VOLATILE.replace_all(text, |c: &Captures<'_>| mask(text, c));
    let masked = LONG_INT.replace_all(&masked, "<n>");
    let mut out = String::with_capacity(masked.len());
    for word in masked.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The replacement of one volatile match in `text` (the match itself when it is not volatile
/// after all).
fn mask(text: &str, c: &Captures<'_>) -> String {
    let all = &c[0];
    let start = c.get(0).map_or(0, |m| m.start());
    // `/tmp/` inside another path (`/home/u/tmp/x`) is not a temp dir.
    let inside_word = text[..start]
        .chars()
        .next_back()
        .is_some_and(|p| p.is_alphanumeric() || "_.-/~".contains(p));
    let kind = ["uuid", "ts", "clock", "tmp", "tmpname", "dur", "hex", "num"]
        .into_iter()
        .find(|k| c.name(k).is_some())
        .unwrap_or("num");
    match kind {
        "uuid" => "<id>".to_string(),
        "ts" | "clock" => "<time>".to_string(),
        "tmp" if inside_word => all.to_string(),
        "tmp" | "tmpname" => "<tmp>".to_string(),
        "dur" => "<dur>".to_string(),
        // A word made of the letters a–f ("defaced") is a word, not an id.
        "hex" if all.bytes().all(|b| b.is_ascii_alphabetic()) => all.to_string(),
        // One token for every masked number, so an id of digits only and one with letters
        // (a commit, a byte count of 6 or 7 digits) never make two keys.
        "hex" => "<n>".to_string(),
        // A decimal is a measurement; a dotted version (1.80.0) is kept.
        _ if all.matches('.').count() == 1 => "<n>".to_string(),
        _ => all.to_string(),
    }
}

/// Integers of four digits or more (pids, ports, byte counts, epochs) vary between runs of the
/// same command; shorter ones are counts and are kept. Masked after the shapes above.
static LONG_INT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9]{4,}(?-u:\b)").expect("fold pattern compiles"));

/// The fold key of a chunk's text: the first 8 bytes of the sha256 of [`normalize`] (stable
/// across builds, unlike `std`'s hasher).
pub fn fold_key(text: &str) -> u64 {
    key_of(&normalize(text))
}

fn key_of(norm: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(norm.as_bytes());
    u64::from_le_bytes(d[..8].try_into().expect("sha256 is 32 bytes"))
}

/// The set of word 3-grams of a masked text, hashed, sorted, distinct (a text of fewer than
/// three words is one shingle). Hashes are only compared within one process.
fn shingles(norm: &str) -> Vec<u64> {
    let words: Vec<&str> = norm.split(' ').collect();
    let hash = |w: &[&str]| {
        let mut h = std::hash::DefaultHasher::new();
        w.hash(&mut h);
        h.finish()
    };
    let mut out: Vec<u64> = if words.len() < 3 {
        vec![hash(&words)]
    } else {
        words.windows(3).map(hash).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// Jaccard of two sorted distinct sets, in [0, 1]; two empty sets are equal (1).
fn jaccard(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    both as f32 / (a.len() + b.len() - both) as f32
}

/// Cosine of two vectors of one space; 0 when either is zero or their lengths differ.
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut ab, mut aa, mut bb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

/// The word 3-gram Jaccard of two texts after masking ([`normalize`]): what [`TEXT_MIN`]
/// bounds. Public for the threshold sweep (`engine/examples/fold_sweep.rs`).
pub fn text_similarity(a: &str, b: &str) -> f32 {
    jaccard(&shingles(&normalize(a)), &shingles(&normalize(b)))
}

/// What the similarity test compares of one candidate: its project, fold key, shingles and
/// model vector (with its space's key), computed once per candidate.
#[derive(Debug, Clone)]
pub(crate) struct Sig {
    project: u32,
    key: u64,
    shingles: Vec<u64>,
    vector: Option<(String, Vec<f32>)>,
    /// Its decision sentences, masked, hashed (0: none). Two turns that decide differently on
    /// one subject ("we use LRU" / "we use LFU") are alike in words and vector, but the later
    /// supersedes the earlier: folding would hide one of them.
    decisions: u64,
}

impl Sig {
    /// The signature of `text` of `project`, with its model vector when it has one.
    pub(crate) fn new(project: u32, text: &str, vector: Option<(String, Vec<f32>)>) -> Self {
        let norm = normalize(text);
        Self {
            project,
            key: key_of(&norm),
            shingles: shingles(&norm),
            vector,
            decisions: decisions_of(text),
        }
    }
}

/// [`Sig::decisions`] of `text`: its sentences that state a decision, masked, in order.
fn decisions_of(text: &str) -> u64 {
    let sentences: Vec<String> = text
        .split(['\n', '.', '!', '?'])
        .filter(|s| crate::patterns::DECISION_RE.is_match(s))
        .map(normalize)
        .collect();
    if sentences.is_empty() {
        0
    } else {
        key_of(&sentences.join("\n"))
    }
}

/// Whether two candidates fold: the same project, and the same fold key or near-identical on
/// text and vector ([`TEXT_MIN`], [`VECTOR_MIN`]; [`TEXT_ALONE_MIN`] without both vectors in one
/// space) with the same decisions ([`Sig::decisions`]). Symmetric.
pub(crate) fn near(a: &Sig, b: &Sig) -> bool {
    if a.project != b.project {
        return false;
    }
    if a.key == b.key {
        return true;
    }
    if a.decisions != b.decisions {
        return false;
    }
    let vectors = match (&a.vector, &b.vector) {
        (Some((sa, va)), Some((sb, vb))) if sa == sb => Some((va, vb)),
        _ => None,
    };
    let need = if vectors.is_some() {
        TEXT_MIN
    } else {
        TEXT_ALONE_MIN
    };
    // Jaccard is at most the ratio of the set sizes: most pairs stop here.
    let (small, big) = (
        a.shingles.len().min(b.shingles.len()),
        a.shingles.len().max(b.shingles.len()),
    );
    if (small as f32) < need * big as f32 || jaccard(&a.shingles, &b.shingles) < need {
        return false;
    }
    vectors.is_none_or(|(va, vb)| cosine(va, vb) >= VECTOR_MIN)
}

/// Candidates grouped as they come, best first: each new one joins every earlier one it is
/// [`near`] (connected components, so the grouping of a set does not depend on its order); the
/// representative of a group is its earliest member.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    sigs: Vec<Sig>,
    parent: Vec<usize>,
    roots: usize,
}

impl Groups {
    /// Add candidate `sig` (index `self.len()`), joining the groups it is near.
    pub(crate) fn push(&mut self, sig: Sig) {
        let i = self.sigs.len();
        self.parent.push(i);
        self.roots += 1;
        for j in 0..i {
            if near(&self.sigs[j], &sig) {
                self.union(i, j);
            }
        }
        self.sigs.push(sig);
    }

    /// Number of groups.
    pub(crate) fn count(&self) -> usize {
        self.roots
    }

    /// The representative (earliest member) of candidate `i`'s group.
    pub(crate) fn representative(&self, mut i: usize) -> usize {
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.representative(a), self.representative(b));
        if ra != rb {
            // The smaller index is the root: the root is the earliest member.
            let (keep, other) = (ra.min(rb), ra.max(rb));
            self.parent[other] = keep;
            self.roots -= 1;
        }
    }
}

/// The copies folded into one shown chunk: their ids (rank order) and the span of start times
/// over the shown chunk and its copies.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Copies {
    /// Chunk ids of the other copies (the shown chunk is not among them).
    pub ids: Vec<u64>,
    /// Earliest start time (RFC 3339) over the shown chunk and its copies.
    pub first: Option<String>,
    /// Latest start time over the shown chunk and its copies.
    pub last: Option<String>,
}

impl Copies {
    /// No copies yet, for a shown chunk that started at `started`.
    pub fn of(started: Option<&str>) -> Self {
        Self {
            ids: Vec::new(),
            first: started.map(str::to_string),
            last: started.map(str::to_string),
        }
    }

    /// Fold in chunk `id`, started at `started`.
    pub fn add(&mut self, id: u64, started: Option<&str>) {
        self.ids.push(id);
        if let Some(t) = started {
            if self.first.as_deref().is_none_or(|f| t < f) {
                self.first = Some(t.to_string());
            }
            if self.last.as_deref().is_none_or(|l| t > l) {
                self.last = Some(t.to_string());
            }
        }
    }

    /// The shown chunk and its copies.
    pub fn count(&self) -> usize {
        1 + self.ids.len()
    }

    /// `×3, first 2026-11-20 10:02, last 2026-11-27 09:14`; `None` without copies.
    pub fn label(&self) -> Option<String> {
        if self.ids.is_empty() {
            return None;
        }
        let at = |t: &Option<String>| {
            t.as_deref()
                .and_then(|t| t.get(..16))
                .map_or_else(|| "-".to_string(), |t| t.replace('T', " "))
        };
        Some(format!(
            "×{}, first {}, last {}",
            self.count(),
            at(&self.first),
            at(&self.last)
        ))
    }
}

/// The shown results of a list, per project, for lists built in an order of their own (a
/// restore's lines, recall's gated turns): a candidate is a copy of the first shown result it
/// is [`near`] (the same fold key first, by lookup; then text and vector). A project's copies
/// fold, another project's near-identical turn is its own memory.
#[derive(Debug, Default)]
pub(crate) struct Folder {
    by_key: HashMap<(u32, u64), usize>,
    shown: Vec<(usize, Sig)>,
}

impl Folder {
    /// The index of the shown result `sig` is a copy of, if any; else records it as result
    /// `index` and answers `None`.
    pub(crate) fn copy_of(&mut self, sig: Sig, index: usize) -> Option<usize> {
        if let Some(i) = self.find(&sig) {
            return Some(i);
        }
        self.by_key.insert((sig.project, sig.key), index);
        self.shown.push((index, sig));
        None
    }

    /// The index of the shown result `sig` is a copy of, recording nothing.
    pub(crate) fn find(&self, sig: &Sig) -> Option<usize> {
        if let Some(i) = self.by_key.get(&(sig.project, sig.key)) {
            return Some(*i);
        }
        self.shown
            .iter()
            .find(|(_, s)| near(s, sig))
            .map(|(i, _)| *i)
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
