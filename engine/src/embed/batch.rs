//! Cutting a list of tokenized texts into inference batches, and counting what they cost.
//!
//! Why by token count and a token budget: every text of a batch is padded to the batch's
//! longest, and the model computes the padding too. Sorting by bytes (what we did first) puts
//! texts of very different token counts side by side (code and paths tokenize into many more
//! pieces per byte than prose), and fixed batches of 32 let one long text pad 31 short ones.
//! Sorted by token count and cut where `texts × longest` would pass a budget, each batch is
//! nearly rectangular and no batch is bigger than the budget (bounded memory and latency per
//! inference call, which lets a polite background embedder yield between calls).

use std::sync::atomic::{AtomicU64, Ordering};

/// Texts of each batch (indices into the input), shortest batch first.
///
/// `lens` are token counts (after truncation). A batch holds at most `max_batch` texts and at
/// most `token_budget` padded cells (`texts × longest`), except that a single text always
/// makes a batch of its own however long it is.
pub fn plan_batches(lens: &[usize], max_batch: usize, token_budget: usize) -> Vec<Vec<usize>> {
    let max_batch = max_batch.max(1);
    let mut order: Vec<usize> = (0..lens.len()).collect();
    // Stable on equal lengths: the input order decides ties, so a plan is deterministic.
    order.sort_by_key(|&i| lens[i]);
    let mut plan: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for i in order {
        // Sorted ascending: the new text is the longest of the batch it joins.
        let cells = (cur.len() + 1).saturating_mul(lens[i].max(1));
        if !cur.is_empty() && (cur.len() >= max_batch || cells > token_budget) {
            plan.push(std::mem::take(&mut cur));
        }
        cur.push(i);
    }
    if !cur.is_empty() {
        plan.push(cur);
    }
    plan
}

/// What embedding cost so far: texts, real tokens, and padded cells the model computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbedStats {
    /// Texts embedded.
    pub texts: u64,
    /// Inference calls.
    pub batches: u64,
    /// Real tokens (attention mask set), after truncation.
    pub tokens: u64,
    /// Cells computed: for each batch, texts × the batch's longest text.
    pub cells: u64,
}

impl EmbedStats {
    /// The share of computed cells that were padding (0 when nothing was embedded).
    pub fn padding_fraction(&self) -> f64 {
        if self.cells == 0 {
            0.0
        } else {
            1.0 - self.tokens as f64 / self.cells as f64
        }
    }

    /// What was spent between `earlier` and `self` (two snapshots of one counter).
    pub fn since(&self, earlier: &EmbedStats) -> EmbedStats {
        EmbedStats {
            texts: self.texts.saturating_sub(earlier.texts),
            batches: self.batches.saturating_sub(earlier.batches),
            tokens: self.tokens.saturating_sub(earlier.tokens),
            cells: self.cells.saturating_sub(earlier.cells),
        }
    }
}

/// [`EmbedStats`] shared by the threads of one embedder.
#[derive(Debug, Default)]
pub(crate) struct StatsCounter {
    texts: AtomicU64,
    batches: AtomicU64,
    tokens: AtomicU64,
    cells: AtomicU64,
}

impl StatsCounter {
    /// Count one inference call over texts of these token counts.
    pub(crate) fn add_batch(&self, lens: &[usize]) {
        let longest = lens.iter().copied().max().unwrap_or(0);
        let tokens: usize = lens.iter().sum();
        self.texts.fetch_add(lens.len() as u64, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.tokens.fetch_add(tokens as u64, Ordering::Relaxed);
        self.cells
            .fetch_add((lens.len() * longest) as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> EmbedStats {
        EmbedStats {
            texts: self.texts.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            tokens: self.tokens.load(Ordering::Relaxed),
            cells: self.cells.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(plan: &[Vec<usize>], lens: &[usize]) -> usize {
        plan.iter()
            .map(|b| b.len() * b.iter().map(|&i| lens[i]).max().unwrap_or(0))
            .sum()
    }

    #[test]
    fn every_text_is_in_exactly_one_batch_within_the_limits() {
        let lens: Vec<usize> = (0..200).map(|i| 3 + (i * 37) % 254).collect();
        let plan = plan_batches(&lens, 32, 4096);
        let mut seen: Vec<usize> = plan.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
        for b in &plan {
            assert!(!b.is_empty() && b.len() <= 32, "batch of {}", b.len());
            let longest = b.iter().map(|&i| lens[i]).max().unwrap_or(0);
            assert!(b.len() * longest <= 4096, "{} × {longest}", b.len());
        }
    }

    #[test]
    fn sorting_by_tokens_pads_less_than_fixed_batches_in_input_order() {
        // Alternating short and long texts: fixed batches in input order pad every short one.
        let lens: Vec<usize> = (0..64).map(|i| if i % 2 == 0 { 10 } else { 250 }).collect();
        let fixed: Vec<Vec<usize>> = (0..64)
            .collect::<Vec<_>>()
            .chunks(32)
            .map(<[usize]>::to_vec)
            .collect();
        let planned = plan_batches(&lens, 32, 8192);
        let real: usize = lens.iter().sum();
        assert_eq!(cells(&fixed, &lens), 64 * 250);
        assert_eq!(cells(&planned, &lens), real, "no padding left: {planned:?}");
    }

    #[test]
    fn a_text_longer_than_the_budget_gets_a_batch_of_its_own() {
        let plan = plan_batches(&[5, 9000, 5], 32, 100);
        assert_eq!(plan, vec![vec![0, 2], vec![1]]);
        assert!(plan_batches(&[], 32, 100).is_empty());
    }

    #[test]
    fn stats_count_padding_and_differences() {
        let c = StatsCounter::default();
        c.add_batch(&[2, 4]);
        let first = c.snapshot();
        assert_eq!(
            first,
            EmbedStats {
                texts: 2,
                batches: 1,
                tokens: 6,
                cells: 8
            }
        );
        assert!((first.padding_fraction() - 0.25).abs() < 1e-12);
        c.add_batch(&[3]);
        let d = c.snapshot().since(&first);
        assert_eq!(
            d,
            EmbedStats {
                texts: 1,
                batches: 1,
                tokens: 3,
                cells: 3
            }
        );
        assert_eq!(EmbedStats::default().padding_fraction(), 0.0);
    }
}
