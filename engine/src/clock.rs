//! The one wall clock of the engine.
//!
//! Why one: retention, decay, prune and access bookkeeping compare times written by different
//! modules; five private copies of "now" could drift apart (one in milliseconds, one in
//! seconds) without any test noticing. Code that needs a fixed time takes `now` as a parameter
//! and calls this only at the edge.

/// Unix time in seconds (0 if the clock is before 1970).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A stored RFC 3339 time as restore and recall lines show it: "MM-DD HH:MM" (empty when
/// there is none).
pub(crate) fn short_time(ts: Option<&str>) -> String {
    ts.and_then(|t| t.get(5..16))
        .map(|t| t.replace('T', " "))
        .unwrap_or_default()
}
