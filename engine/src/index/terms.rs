//! The tokenizer of the lexical index (code + prose): the rules are in the [`super::lexical`]
//! module doc. Its own module because ingest calls it on every chunk of a first archive
//! (megabytes of text), so it is written not to allocate per token.

use crate::text::lower_into;
use rust_stemmers::{Algorithm, Stemmer};
use std::sync::LazyLock;

/// Longest part kept (longer runs are blobs: base64, minified code).
const MAX_PART: usize = 64;
/// Longest whole compound kept (paths can be long, blobs are longer).
const MAX_COMPOUND: usize = 160;

/// Same list as the reference baseline's `STOP`.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "if",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "would",
    "could",
    "ought",
];

static STOP: LazyLock<foldhash::HashSet<&'static str>> =
    LazyLock::new(|| STOPWORDS.iter().copied().collect());
static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '.' | '/' | '-' | ':' | '\\')
}

/// Split one alphanumeric word at camelCase boundaries (`hnswIndex` → `hnsw`, `Index`;
/// `HTTPServer` → `HTTP`, `Server`); digits stick to the letters before them. The parts are
/// pushed onto `parts` (cleared first), a buffer the caller reuses from word to word.
fn camel_parts<'a>(word: &'a str, parts: &mut Vec<&'a str>) {
    parts.clear();
    if word.is_ascii() {
        camel_parts_ascii(word, parts);
    } else {
        camel_parts_chars(word, parts);
    }
}

/// [`camel_parts`] on characters (any script); appends to `parts`.
fn camel_parts_chars<'a>(word: &'a str, parts: &mut Vec<&'a str>) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = chars[i - 1].1;
        // `IDs`, `URLs`: a plural acronym is one word, not `I` + `Ds`.
        let plural_tail = i + 2 == chars.len() && chars[i + 1].1 == 's';
        let next_lower = !plural_tail && chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push(&word[start..pos]);
            start = pos;
        }
    }
    parts.push(&word[start..]);
}

/// [`camel_parts`] of an ASCII word, on bytes: the same rules (for ASCII, `char`'s
/// `is_uppercase`/`is_lowercase`/`is_numeric` are exactly the `is_ascii_*` tests) without
/// collecting the characters into a vector first, which was one allocation per word.
/// Appends to `parts`.
fn camel_parts_ascii<'a>(word: &'a str, parts: &mut Vec<&'a str>) {
    let b = word.as_bytes();
    let mut start = 0;
    for i in 1..b.len() {
        let (c, prev) = (b[i], b[i - 1]);
        let plural_tail = i + 2 == b.len() && b[i + 1] == b's';
        let next_lower = !plural_tail && b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let boundary = c.is_ascii_uppercase()
            && (prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower));
        if boundary {
            parts.push(&word[start..i]);
            start = i;
        }
    }
    parts.push(&word[start..]);
}

/// Stems already computed by this thread, word → stem. Why: a first archive stems the same
/// few thousand words hundreds of thousands of times, and the Snowball stemmer was the largest
/// single CPU cost of ingest. Bounded: cleared past [`STEM_CACHE_MAX`] words. An
/// in-process map, never persisted: a fast seeded hasher instead of SipHash.
const STEM_CACHE_MAX: usize = 50_000;

thread_local! {
    static STEMS: std::cell::RefCell<foldhash::HashMap<String, String>> =
        std::cell::RefCell::new(foldhash::HashMap::default());
}

/// Calls `f` with the stem of `lower` (an ASCII-alphabetic lowercase word).
fn with_stem(lower: &str, f: &mut impl FnMut(&str)) {
    STEMS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(s) = c.get(lower) {
            f(s);
            return;
        }
        let stem = STEMMER.stem(lower).into_owned();
        if c.len() >= STEM_CACHE_MAX {
            c.clear();
        }
        f(&stem);
        c.insert(lower.to_owned(), stem);
    });
}

fn push_part(f: &mut impl FnMut(&str), part: &str, lower: &mut String) {
    if part.len() > MAX_PART {
        return;
    }
    lower_into(lower, part);
    if STOP.contains(lower.as_str()) {
        return;
    }
    if lower.len() > 3 && lower.bytes().all(|b| b.is_ascii_alphabetic()) {
        with_stem(lower, f);
    } else {
        f(lower);
    }
}

/// Tokenize code + prose into index terms (see the module doc). Used identically at ingest and
/// query time.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// Calls `f` with every term [`tokenize`] returns, in the same order, without allocating a
/// `String` per term. Why: a first archive tokenizes megabytes of chunk text, and one
/// allocation per token (plus a lowercased copy per word) was a large share of ingest CPU
/// (docs/perf/first-archive.md). The term is only valid during the call.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut lower = String::new();
    let mut parts: Vec<&str> = Vec::new();
    let is_compound_char = |c: char| c.is_alphanumeric() || is_joiner(c);
    for compound in text.split(|c: char| !is_compound_char(c)) {
        let compound = compound.trim_matches(is_joiner);
        if compound.is_empty() {
            continue;
        }
        let mut n_parts = 0;
        for word in compound.split(is_joiner).filter(|w| !w.is_empty()) {
            camel_parts(word, &mut parts);
            if parts.len() > 1 && word.len() <= MAX_PART {
                lower_into(&mut lower, word);
                f(&lower);
            }
            n_parts += parts.len();
            for p in &parts {
                push_part(&mut f, p, &mut lower);
            }
        }
        if n_parts > 1 && compound.len() <= MAX_COMPOUND && compound.contains(is_joiner) {
            lower_into(&mut lower, compound);
            f(&lower);
        }
        for_each_segment(compound, &mut lower, &mut f);
    }
}

/// Joiners between the pieces of a path or a qualified name (`src/a.rs`, `a::b`, `a.rs:12`),
/// as opposed to those inside one name (`_ . -`).
fn is_separator(c: char) -> bool {
    matches!(c, '/' | ':' | '\\')
}

/// The *segments* of a compound that holds a separator, each once, lowercased: the file name
/// with its line (`billing.test.ts:251` of `/src/test/billing.test.ts:251`) and every piece
/// between separators that is itself a name (`test_runner.py`, `test_render_token` of
/// `tests/test_runner.py::test_render_token`). Why: the whole compound is one term, so a query
/// naming only the file or the function could match nothing but its common parts (`test`,
/// `render`), and the turn holding it exactly was ranked below turns sharing those parts.
/// A piece counts as a name when it holds a joiner and two letters in a row: timestamps
/// (`2025-10-14T17`) and numbers are not names.
fn for_each_segment(compound: &str, lower: &mut String, f: &mut impl FnMut(&str)) {
    if !compound.contains(is_separator) {
        return;
    }
    let last = compound.rsplit(['/', '\\']).next().unwrap_or(compound);
    // Allocates only when a compound has a segment to emit.
    let mut done: Vec<&str> = Vec::new();
    for seg in std::iter::once(last).chain(compound.split(is_separator)) {
        let seg = seg.trim_matches(is_joiner);
        let named = seg.contains(is_joiner) && two_letters(seg);
        // The compound itself is emitted whole already (or is too long to be a term).
        if !named || seg == compound || seg.len() > MAX_COMPOUND || done.contains(&seg) {
            continue;
        }
        done.push(seg);
        lower_into(lower, seg);
        f(lower);
    }
}

/// Whether `s` has two ASCII letters in a row (a name, not a number or a timestamp).
fn two_letters(s: &str) -> bool {
    s.as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic())
}

/// Query terms: the same tokenization as documents, repeats kept (a repeated query word
/// weighs more, as in the reference BM25).
pub fn query_terms(query: &str) -> Vec<String> {
    tokenize(query)
}

/// Distinct terms of `text` with their frequencies, sorted by term: what the store writes as
/// postings at ingest. The BM25 document length is the sum of the frequencies ([`doc_len`]).
pub fn term_frequencies(text: &str) -> Vec<(String, u32)> {
    // In-process counts only (never persisted): a fast hasher, and one `String` per distinct
    // term rather than per occurrence.
    let mut m: foldhash::HashMap<String, u32> =
        foldhash::HashMap::with_capacity_and_hasher(256, Default::default());
    for_each_term(text, |t| match m.get_mut(t) {
        Some(n) => *n += 1,
        None => {
            m.insert(t.to_owned(), 1);
        }
    });
    let mut v: Vec<(String, u32)> = m.into_iter().collect();
    v.sort_unstable();
    v
}

/// Document length (token count) of a [`term_frequencies`] result.
pub fn doc_len(terms: &[(String, u32)]) -> u32 {
    terms.iter().fold(0u32, |a, (_, n)| a.saturating_add(*n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tokenizer written the simple way (one `String` per token, `to_lowercase` per word,
    /// camelCase split on a `Vec<(usize, char)>`): the allocation-free one must give exactly
    /// the same terms.
    fn reference_tokenize(text: &str) -> Vec<String> {
        fn push(out: &mut Vec<String>, part: &str) {
            if part.len() > MAX_PART {
                return;
            }
            let lower = part.to_lowercase();
            if STOP.contains(lower.as_str()) {
                return;
            }
            if lower.len() > 3 && lower.bytes().all(|b| b.is_ascii_alphabetic()) {
                out.push(STEMMER.stem(&lower).into_owned());
            } else {
                out.push(lower);
            }
        }
        let mut out = Vec::new();
        let mut parts = Vec::new();
        for compound in text.split(|c: char| !(c.is_alphanumeric() || is_joiner(c))) {
            let compound = compound.trim_matches(is_joiner);
            if compound.is_empty() {
                continue;
            }
            let mut n_parts = 0;
            for word in compound.split(is_joiner).filter(|w| !w.is_empty()) {
                parts.clear();
                camel_parts_chars(word, &mut parts);
                if parts.len() > 1 && word.len() <= MAX_PART {
                    out.push(word.to_lowercase());
                }
                n_parts += parts.len();
                for p in &parts {
                    push(&mut out, p);
                }
            }
            if n_parts > 1 && compound.len() <= MAX_COMPOUND && compound.contains(is_joiner) {
                out.push(compound.to_lowercase());
            }
            if compound.contains(is_separator) {
                let last = compound.rsplit(['/', '\\']).next().unwrap_or(compound);
                let mut done: Vec<String> = Vec::new();
                for seg in std::iter::once(last).chain(compound.split(is_separator)) {
                    let seg = seg.trim_matches(is_joiner);
                    let named = seg.contains(is_joiner)
                        && seg
                            .as_bytes()
                            .windows(2)
                            .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic());
                    let seg = seg.to_string();
                    if named && seg != compound && seg.len() <= MAX_COMPOUND && !done.contains(&seg)
                    {
                        out.push(seg.to_lowercase());
                        done.push(seg);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn a_path_yields_its_file_name_and_the_names_between_separators() {
        let terms =
            tokenize("FAILED tests/test_runner.py::test_render_token at /src/billing.test.ts:251:");
        for t in [
            "tests/test_runner.py::test_render_token",
            "test_runner.py",
            "test_render_token",
            "src/billing.test.ts:251",
            "billing.test.ts:251",
            "billing.test.ts",
        ] {
            assert!(terms.iter().any(|x| x == t), "{t} not in {terms:?}");
        }
        // A timestamp's pieces are not names.
        let ts = tokenize("at 2025-10-14T17:04:15.249Z done");
        assert!(
            !ts.iter().any(|x| x == "2025-10-14t17" || x == "15.249z"),
            "{ts:?}"
        );
        // Each segment once per compound.
        let once = tokenize("ab_cd/ab_cd");
        assert_eq!(once.iter().filter(|x| *x == "ab_cd").count(), 1, "{once:?}");
    }

    #[test]
    fn same_terms_as_the_allocating_tokenizer() {
        for text in [
            "Fix HnswIndex::load in engine/src/index/hnsw.rs (max_layer, HTTPServer)",
            "URLs and IDs of the sha256 utf8 runs; ÉTÉ Straße ΣΑΣ über-Größe naïveCafé",
            "running runners ran quickly; the cargo test --release -p memctl-engine",
        ] {
            assert_eq!(tokenize(text), reference_tokenize(text), "{text}");
        }
    }

    proptest! {
        #[test]
        fn tokenize_matches_reference(text in "[a-zA-Z0-9_./:\\\\ -ÉéßΣσ]{0,80}") {
            prop_assert_eq!(tokenize(&text), reference_tokenize(&text));
        }

        #[test]
        fn ascii_camel_split_matches_char_split(word in "[a-zA-Z0-9]{1,24}") {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            camel_parts_ascii(&word, &mut a);
            camel_parts_chars(&word, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn term_frequencies_count_every_token(text in "[a-zA-Z0-9_. -]{0,120}") {
            let tf = term_frequencies(&text);
            let toks = tokenize(&text);
            prop_assert_eq!(doc_len(&tf) as usize, toks.len());
            for (t, n) in &tf {
                prop_assert_eq!(toks.iter().filter(|x| *x == t).count(), *n as usize);
            }
            prop_assert!(tf.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }
}
