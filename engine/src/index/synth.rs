//! Seeded synthetic text for tests and benches (no unseeded randomness anywhere).
//!
//! Why not uniform random vectors: recall of graph indexes on uniform random 384-d vectors says
//! nothing about text (ef=64 gave 0.14 there). Text embeddings are clustered and
//! anisotropic; this generator imitates the properties that matter: a Zipf-distributed
//! vocabulary of a few thousand words, topic clusters (each sentence draws most words from one
//! of ~60 topics), code-ish identifiers and paths, and varied lengths. Embedded with
//! [`HashEmbedder`](crate::embed::HashEmbedder) it gives realistic-ish neighbour structure at
//! microseconds per sentence.

/// SplitMix64: tiny, fast, seedable, stable across releases (unlike `rand`'s `StdRng`).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; returns 0 for `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr", "ch",
];
const NUCLEI: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"];
const CODAS: &[&str] = &[
    "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "ng",
];
const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "we", "for", "on", "with", "this",
    "should", "when", "then", "but", "so", "not",
];

/// Deterministic sentence generator (see the module doc).
#[derive(Debug, Clone)]
pub struct TextGen {
    rng: SplitMix64,
    vocab: Vec<String>,
    /// Cumulative Zipf weights over `vocab`.
    cdf: Vec<f64>,
    topics: Vec<Vec<usize>>,
}

impl TextGen {
    /// Vocabulary size.
    pub const VOCAB: usize = 4000;
    /// Number of topics.
    pub const TOPICS: usize = 60;
    /// Words per topic.
    pub const TOPIC_WORDS: usize = 60;

    /// A generator; the vocabulary and topics depend only on a fixed internal seed, the sentence
    /// stream on `seed`, so two generators with different seeds speak the same language.
    pub fn new(seed: u64) -> Self {
        let mut vr = SplitMix64::new(0x6d65_6d63_746c); // "memctl": the language itself is fixed
        let mut vocab = Vec::with_capacity(Self::VOCAB);
        let mut seen = std::collections::HashSet::new();
        while vocab.len() < Self::VOCAB {
            let syl = 1 + vr.below(3);
            let mut w = String::new();
            for _ in 0..syl {
                w.push_str(ONSETS[vr.below(ONSETS.len())]);
                w.push_str(NUCLEI[vr.below(NUCLEI.len())]);
                w.push_str(CODAS[vr.below(CODAS.len())]);
            }
            if seen.insert(w.clone()) {
                vocab.push(w);
            }
        }
        let mut acc = 0.0;
        let cdf = (0..vocab.len())
            .map(|r| {
                acc += 1.0 / (r as f64 + 2.0);
                acc
            })
            .collect();
        let topics = (0..Self::TOPICS)
            .map(|_| {
                (0..Self::TOPIC_WORDS)
                    // Topic words come from the mid/rare part of the vocabulary, like real jargon.
                    .map(|_| 200 + vr.below(Self::VOCAB - 200))
                    .collect()
            })
            .collect();
        Self {
            rng: SplitMix64::new(seed),
            vocab,
            cdf,
            topics,
        }
    }

    fn zipf_word(&mut self) -> &str {
        let total = self.cdf.last().copied().unwrap_or(1.0);
        let x = self.rng.unit() * total;
        let i = self
            .cdf
            .partition_point(|c| *c < x)
            .min(self.vocab.len() - 1);
        &self.vocab[i]
    }

    /// One sentence of 6–40 words, mostly from one random topic.
    pub fn sentence(&mut self) -> String {
        let t = self.rng.below(Self::TOPICS);
        self.sentence_in(t)
    }

    /// One sentence mostly about topic `t` (`t < TOPICS`, taken modulo otherwise).
    pub fn sentence_in(&mut self, t: usize) -> String {
        let t = t % Self::TOPICS;
        let len = 6 + self.rng.below(35);
        let mut words: Vec<String> = Vec::with_capacity(len);
        for _ in 0..len {
            let r = self.rng.unit();
            let w = if r < 0.45 {
                let tw = &self.topics[t];
                self.vocab[tw[self.rng.below(tw.len())]].clone()
            } else if r < 0.65 {
                FUNCTION_WORDS[self.rng.below(FUNCTION_WORDS.len())].to_string()
            } else if r < 0.95 {
                self.zipf_word().to_string()
            } else if r < 0.98 {
                // snake_case identifier from topic words
                let tw = &self.topics[t];
                let a = &self.vocab[tw[self.rng.below(tw.len())]];
                let b = &self.vocab[tw[self.rng.below(tw.len())]];
                format!("{a}_{b}")
            } else {
                let tw = &self.topics[t];
                let a = self.vocab[tw[self.rng.below(tw.len())]].clone();
                let b = self.zipf_word().to_string();
                format!("src/{a}/{b}.rs")
            };
            words.push(w);
        }
        words.join(" ")
    }

    /// A "document" of 1–4 sentences on one topic (closer to a conversation turn).
    pub fn document(&mut self) -> String {
        let t = self.rng.below(Self::TOPICS);
        let n = 1 + self.rng.below(4);
        (0..n)
            .map(|_| self.sentence_in(t))
            .collect::<Vec<_>>()
            .join(". ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_by_seed() {
        let a: Vec<String> = {
            let mut g = TextGen::new(7);
            (0..5).map(|_| g.document()).collect()
        };
        let b: Vec<String> = {
            let mut g = TextGen::new(7);
            (0..5).map(|_| g.document()).collect()
        };
        let c: Vec<String> = {
            let mut g = TextGen::new(8);
            (0..5).map(|_| g.document()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_is_in_range() {
        let mut r = SplitMix64::new(1);
        for n in 1..100 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
    }
}
