//! Deterministic feature-hashing embedder.
//!
//! Why: hooks must work before the model is installed and when the runtime is broken. Hashing
//! word unigrams, bigrams and character trigrams into 384 signed buckets gives a lexical-ish
//! vector space where texts sharing words and sub-words are close, at microseconds per chunk,
//! with no dependency and no state. It is *not* semantic; chunks embedded with it are
//! re-embedded when the model becomes available (their [`EmbedderId`] says so).

use super::{Embedder, EmbedderId, l2_normalize};
use crate::error::EmbedError;
use crate::text::lower_into;

/// Dimension shared with all-MiniLM-L6-v2, so storage layouts are uniform.
pub const HASH_DIMS: usize = 384;

/// Feature-hashing embedder (see the module doc).
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    id: EmbedderId,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

impl HashEmbedder {
    /// The one hash embedder (v1, 384 dims).
    pub fn new() -> Self {
        Self {
            id: EmbedderId::new("hash-ngram", "v1", HASH_DIMS),
        }
    }

    /// Embed one text without the `Result` (hashing cannot fail). The vectors are stored
    /// and compared with query vectors, so the words, hashes and weights must never change;
    /// the lowercased word and the padded trigram input live in buffers reused from word to
    /// word (one allocation per word each was a visible share of a first archive).
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; HASH_DIMS];
        let mut prev: Option<u64> = None;
        let mut word = String::new();
        let mut padded: Vec<u8> = Vec::new();
        for raw in raw_words(text) {
            lower_into(&mut word, raw);
            let w = fnv1a(word.as_bytes(), 0x9e37_79b9);
            add(&mut v, w, 1.0);
            if let Some(p) = prev {
                add(&mut v, p.rotate_left(17) ^ w, 0.5);
            }
            prev = Some(w);
            // Character trigrams of the padded word give partial credit to shared stems.
            padded.clear();
            padded.push(b'#');
            padded.extend_from_slice(word.as_bytes());
            padded.push(b'#');
            if padded.len() > 4 {
                for tri in padded.windows(3) {
                    add(&mut v, fnv1a(tri, 0x85eb_ca6b), 0.25);
                }
            }
        }
        l2_normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    /// Spread over the cores (rayon): a first archive hashes thousands of chunks, and this
    /// was a core's work while the other idled.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        use rayon::prelude::*;
        Ok(texts.par_iter().map(|t| self.embed_one(t)).collect())
    }
}

/// Alphanumeric words (`_` included), not yet lowercased.
fn raw_words(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

fn add(v: &mut [f32], h: u64, weight: f32) {
    let idx = (h % HASH_DIMS as u64) as usize;
    let sign = if (h >> 63) == 1 { -1.0 } else { 1.0 };
    v[idx] += sign * weight;
}

/// FNV-1a with a seed, then a murmur-style finalizer so the top bit (the sign) is well mixed.
fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::dot;
    use proptest::prelude::*;

    #[test]
    fn similar_texts_are_closer_than_unrelated() {
        let e = HashEmbedder::new();
        let a = e.embed_one("cargo test fails with a linker error in engine");
        let b = e.embed_one("the linker error when running cargo test in the engine crate");
        let c = e.embed_one("we should paint the kitchen blue next spring");
        assert!(
            dot(&a, &b) > dot(&a, &c) + 0.2,
            "{} vs {}",
            dot(&a, &b),
            dot(&a, &c)
        );
    }

    /// The embedder as it was before its buffers were reused (a `String` per word, a `Vec`
    /// per padded word): stored hash vectors were made with it, so the output must be
    /// bit-identical.
    fn reference_embed(text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; HASH_DIMS];
        let mut prev: Option<u64> = None;
        for word in raw_words(text).map(str::to_lowercase) {
            let w = fnv1a(word.as_bytes(), 0x9e37_79b9);
            add(&mut v, w, 1.0);
            if let Some(p) = prev {
                add(&mut v, p.rotate_left(17) ^ w, 0.5);
            }
            prev = Some(w);
            let padded: Vec<u8> = std::iter::once(b'#')
                .chain(word.bytes())
                .chain(std::iter::once(b'#'))
                .collect();
            if padded.len() > 4 {
                for tri in padded.windows(3) {
                    add(&mut v, fnv1a(tri, 0x85eb_ca6b), 0.25);
                }
            }
        }
        l2_normalize(&mut v);
        v
    }

    #[test]
    fn same_vectors_as_the_allocating_embedder() {
        let e = HashEmbedder::new();
        for text in [
            "cargo test fails with a linker error in engine",
            "HTTPServer_Config ÉTÉ Straße ΣΑΣ über naïve 42 x",
        ] {
            assert_eq!(e.embed_one(text), reference_embed(text), "{text}");
        }
    }

    #[test]
    fn empty_text_is_zero_vector() {
        let v = HashEmbedder::new().embed_one("  ,, ");
        assert_eq!(v.len(), HASH_DIMS);
        assert!(v.iter().all(|x| *x == 0.0));
    }

    proptest! {
        #[test]
        fn deterministic_and_normalized(s in "\\PC{0,200}") {
            let e = HashEmbedder::new();
            let a = e.embed_one(&s);
            let b = e.embed_one(&s);
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(&a, &reference_embed(&s));
            prop_assert_eq!(a.len(), HASH_DIMS);
            let n: f32 = a.iter().map(|x| x * x).sum();
            prop_assert!(n == 0.0 || (n - 1.0).abs() < 1e-4, "norm^2 = {}", n);
        }

        #[test]
        fn batch_equals_single(v in proptest::collection::vec("[a-z ]{0,40}", 0..8)) {
            let e = HashEmbedder::new();
            let refs: Vec<&str> = v.iter().map(String::as_str).collect();
            let batch = e.embed_batch(&refs).unwrap();
            for (t, b) in refs.iter().zip(&batch) {
                prop_assert_eq!(&e.embed_one(t), b);
            }
        }
    }
}
