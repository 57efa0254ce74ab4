//! Scoring maths as pure functions (property-tested): confidence decay, boost on use, pruning
//! rules, importance = recency × frequency × richness.
//!
//! Why pure: these numbers decide what the agent sees after compaction and what is deleted;
//! keeping them free of I/O makes every rule checkable in isolation and every parameter
//! configurable through [`RankParams`].

use serde::{Deserialize, Serialize};

pub mod usage;

/// Every ranking parameter, with the defaults the product ships.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankParams {
    /// Confidence lost per hour since the last access (or since ingest).
    pub decay_per_hour: f32,
    /// Confidence never decays below this.
    pub confidence_floor: f32,
    /// Confidence gained per use: a search result opened, or an injected chunk the agent used
    /// ([`usage`]). Injection alone is not use.
    pub boost_per_use: f32,
    /// Confidence cap.
    pub confidence_cap: f32,
    /// Entries at or below this confidence with zero accesses are pruned.
    pub prune_confidence: f32,
    /// Never-accessed entries older than this (days) are pruned.
    pub retention_days: f32,
    /// Recency half-life in days.
    pub recency_half_life_days: f32,
    /// Richness bonus when the turn used tools.
    pub richness_tools: f32,
    /// Richness bonus when the turn touched files.
    pub richness_files: f32,
    /// Confidence lost once by a chunk memctl injected (restore, recall) that the agent did not
    /// use within [`Self::usage_window_turns`] ([`usage::reinforce`]). Default 0.1: twenty
    /// hours of [`Self::decay_per_hour`], a tenth of a fresh chunk's restore value.
    pub unused_decay: f32,
    /// Later agent turns an injected chunk has to be used in before it counts as unused.
    pub usage_window_turns: u32,
    /// An identifier at least this long (chars) is strong evidence of use on its own
    /// ([`usage::is_strong`]; paths, error codes and hex ids are strong at any length).
    pub usage_strong_len: u32,
    /// Evidence needed to call an injected chunk used: a strong identifier scores 2, another
    /// 1 ([`usage::used`]). Default 2: one strong identifier or two others.
    pub usage_min_score: u32,
}

impl Default for RankParams {
    fn default() -> Self {
        Self {
            decay_per_hour: 0.005,
            confidence_floor: 0.1,
            boost_per_use: 0.03,
            confidence_cap: 1.0,
            prune_confidence: 0.15,
            retention_days: 30.0,
            recency_half_life_days: 7.0,
            richness_tools: 0.5,
            richness_files: 0.3,
            unused_decay: 0.1,
            usage_window_turns: 3,
            usage_strong_len: 12,
            usage_min_score: 2,
        }
    }
}

/// Confidence after `hours` without use: `max(floor, c − rate × hours)`.
pub fn decay(confidence: f32, hours: f32, p: &RankParams) -> f32 {
    (confidence - p.decay_per_hour * hours.max(0.0)).max(p.confidence_floor)
}

/// Confidence after one use: `min(cap, c + boost)`.
pub fn boost(confidence: f32, p: &RankParams) -> f32 {
    (confidence + p.boost_per_use).min(p.confidence_cap)
}

/// Facts the pruning rule looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PruneInput {
    /// Current (decayed) confidence.
    pub confidence: f32,
    /// Times used.
    pub access_count: u32,
    /// Age in days since ingest.
    pub age_days: f32,
    /// Pinned entries are never pruned.
    pub pinned: bool,
}

/// Should this entry be pruned? Pinned: never. Otherwise: (confidence ≤ threshold and never
/// accessed) or (never accessed and older than the retention period).
pub fn should_prune(e: &PruneInput, p: &RankParams) -> bool {
    !e.pinned
        && e.access_count == 0
        && (e.confidence <= p.prune_confidence || e.age_days > p.retention_days)
}

/// Recency factor `exp(−ln2 × age_days / half_life)` in (0, 1].
pub fn recency(age_days: f32, p: &RankParams) -> f32 {
    (-std::f32::consts::LN_2 * age_days.max(0.0) / p.recency_half_life_days.max(1e-3)).exp()
}

/// Frequency factor `log2(access + 1) + 1` (≥ 1).
pub fn frequency(access_count: u32) -> f32 {
    (access_count as f32 + 1.0).log2() + 1.0
}

/// Richness factor `1 + tools bonus + files bonus`.
pub fn richness(has_tools: bool, has_files: bool, p: &RankParams) -> f32 {
    1.0 + if has_tools { p.richness_tools } else { 0.0 }
        + if has_files { p.richness_files } else { 0.0 }
}

/// Importance = recency × frequency × richness.
pub fn importance(
    age_days: f32,
    access_count: u32,
    has_tools: bool,
    has_files: bool,
    p: &RankParams,
) -> f32 {
    recency(age_days, p) * frequency(access_count) * richness(has_tools, has_files, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn defaults_match_the_spec() {
        let p = RankParams::default();
        assert!((decay(1.0, 10.0, &p) - 0.95).abs() < 1e-6);
        assert_eq!(decay(0.2, 1000.0, &p), 0.1);
        assert!((boost(0.5, &p) - 0.53).abs() < 1e-6);
        assert_eq!(boost(0.99, &p), 1.0);
        assert!((recency(7.0, &p) - 0.5).abs() < 1e-6);
        assert_eq!(frequency(0), 1.0);
        assert_eq!(frequency(1), 2.0);
        assert!((richness(true, true, &p) - 1.8).abs() < 1e-6);
        assert!(should_prune(
            &PruneInput {
                confidence: 0.15,
                access_count: 0,
                age_days: 1.0,
                pinned: false
            },
            &p
        ));
        assert!(!should_prune(
            &PruneInput {
                confidence: 0.15,
                access_count: 1,
                age_days: 1.0,
                pinned: false
            },
            &p
        ));
        assert!(should_prune(
            &PruneInput {
                confidence: 0.9,
                access_count: 0,
                age_days: 31.0,
                pinned: false
            },
            &p
        ));
        assert!(!should_prune(
            &PruneInput {
                confidence: 0.1,
                access_count: 0,
                age_days: 99.0,
                pinned: true
            },
            &p
        ));
    }

    proptest! {
        #[test]
        fn decay_is_bounded_and_monotone(c in 0.1f32..1.0, h1 in 0.0f32..10_000.0, h2 in 0.0f32..10_000.0) {
            let p = RankParams::default();
            let (a, b) = (decay(c, h1.min(h2), &p), decay(c, h1.max(h2), &p));
            prop_assert!(a >= b);
            prop_assert!(b >= p.confidence_floor && a <= c.max(p.confidence_floor));
        }

        #[test]
        fn boost_is_capped_and_never_lowers(c in 0.0f32..1.0) {
            let p = RankParams::default();
            let b = boost(c, &p);
            prop_assert!(b >= c && b <= p.confidence_cap);
        }

        #[test]
        fn pinned_never_pruned(c in 0.0f32..1.0, n in 0u32..10, age in 0.0f32..1000.0) {
            let p = RankParams::default();
            let pinned = PruneInput { confidence: c, access_count: n, age_days: age, pinned: true };
            prop_assert!(!should_prune(&pinned, &p));
            let used = PruneInput { pinned: false, ..pinned };
            if n > 0 {
                prop_assert!(!should_prune(&used, &p));
            }
        }

        #[test]
        fn importance_monotone(age in 0.0f32..365.0, extra in 0.0f32..30.0, n in 0u32..100) {
            let p = RankParams::default();
            let base = importance(age, n, false, false, &p);
            prop_assert!(importance(age + extra, n, false, false, &p) <= base);
            prop_assert!(importance(age, n + 1, false, false, &p) >= base);
            prop_assert!(importance(age, n, true, false, &p) >= base);
            prop_assert!(importance(age, n, false, true, &p) >= base);
            prop_assert!(base > 0.0 && base.is_finite());
        }
    }
}
