//! What the resident service's bulk thread and its query thread share: a wake-up for new
//! pending chunks, whether a query is being answered, and the time of the last activity.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest a bulk thread waits for a query to be answered before it starts its next batch
/// anyway (a query takes milliseconds; a stuck client is cut off after 2 s by the server).
const YIELD_AT_MOST: Duration = Duration::from_secs(3);

/// How often a yielding bulk thread looks whether the query is answered.
const YIELD_POLL: Duration = Duration::from_millis(2);

/// The bulk thread's side of the service (cheap to clone). The query thread marks each answer
/// ([`Bulk::query_started`]), a [`super::Op::Pending`] request wakes the bulk thread
/// ([`Bulk::wake`]), and both record activity so the service does not idle out mid-work.
#[derive(Debug, Clone)]
pub struct Bulk {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    woken: Mutex<bool>,
    wake: Condvar,
    queries: AtomicUsize,
    /// Batches running now (0 or 1): the service is not idle while one runs, however long.
    batches: AtomicUsize,
    /// Milliseconds since `epoch` of the last request or bulk batch.
    last: AtomicU64,
    epoch: Instant,
}

/// Marks a bulk batch as running until dropped.
#[derive(Debug)]
pub struct BatchGuard<'a>(&'a Bulk);

impl Drop for BatchGuard<'_> {
    fn drop(&mut self) {
        // No `touch`: a batch that found nothing to embed is no activity (the bulk thread
        // touches when it embedded something).
        self.0.shared.batches.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Marks a query as being answered until dropped.
#[derive(Debug)]
pub struct QueryGuard<'a>(&'a Bulk);

impl Drop for QueryGuard<'_> {
    fn drop(&mut self) {
        self.0.shared.queries.fetch_sub(1, Ordering::AcqRel);
        self.0.touch();
    }
}

impl Default for Bulk {
    fn default() -> Self {
        Self::new()
    }
}

impl Bulk {
    /// Fresh signals: nothing woken, no query, activity now.
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                woken: Mutex::new(false),
                wake: Condvar::new(),
                queries: AtomicUsize::new(0),
                batches: AtomicUsize::new(0),
                last: AtomicU64::new(0),
                epoch: Instant::now(),
            }),
        }
    }

    /// New pending chunks: wake the bulk thread if it waits.
    pub fn wake(&self) {
        let mut w = self.shared.woken.lock().unwrap_or_else(|p| p.into_inner());
        *w = true;
        self.shared.wake.notify_all();
    }

    /// Wait until woken or `timeout` passes; true when woken (the wake-up is consumed).
    pub fn wait_for_wake(&self, timeout: Duration) -> bool {
        let w = self.shared.woken.lock().unwrap_or_else(|p| p.into_inner());
        let (mut w, _) = self
            .shared
            .wake
            .wait_timeout_while(w, timeout, |woken| !*woken)
            .unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *w)
    }

    /// A query is being answered until the guard drops.
    pub fn query_started(&self) -> QueryGuard<'_> {
        self.shared.queries.fetch_add(1, Ordering::AcqRel);
        QueryGuard(self)
    }

    /// Whether a query is being answered now.
    pub fn query_in_flight(&self) -> bool {
        self.shared.queries.load(Ordering::Acquire) > 0
    }

    /// Before a batch: wait while a query is being answered (at most a few seconds), so that a
    /// batch never starts beside a prompt's query. Returns how long it waited.
    pub fn yield_to_queries(&self) -> Duration {
        let start = Instant::now();
        while self.query_in_flight() && start.elapsed() < YIELD_AT_MOST {
            std::thread::sleep(YIELD_POLL);
        }
        start.elapsed()
    }

    /// A bulk batch runs until the guard drops: the service does not idle out meanwhile (a
    /// batch at nice 19 on a busy machine may take longer than the idle limit).
    pub fn batch_started(&self) -> BatchGuard<'_> {
        self.shared.batches.fetch_add(1, Ordering::AcqRel);
        BatchGuard(self)
    }

    /// Record activity now (a request answered, a batch embedded).
    pub fn touch(&self) {
        let ms = self.shared.epoch.elapsed().as_millis() as u64;
        self.shared.last.store(ms, Ordering::Relaxed);
    }

    /// How long since the last activity (zero while a batch runs).
    pub fn quiet_for(&self) -> Duration {
        if self.shared.batches.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        self.shared
            .epoch
            .elapsed()
            .saturating_sub(Duration::from_millis(
                self.shared.last.load(Ordering::Relaxed),
            ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_is_seen_once_and_a_timeout_is_not_one() {
        let b = Bulk::new();
        assert!(!b.wait_for_wake(Duration::from_millis(5)));
        b.wake();
        assert!(b.wait_for_wake(Duration::from_millis(5)));
        assert!(!b.wait_for_wake(Duration::from_millis(5)));
        let other = b.clone();
        let t = std::thread::spawn(move || other.wait_for_wake(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(20));
        b.wake();
        assert!(t.join().expect("waiter"));
    }

    #[test]
    fn a_batch_waits_for_the_query_being_answered() {
        let b = Bulk::new();
        assert!(b.yield_to_queries() < Duration::from_millis(5));
        let q = b.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _g = q.query_started();
            tx.send(()).expect("send");
            std::thread::sleep(Duration::from_millis(60));
        });
        rx.recv().expect("query started");
        assert!(b.query_in_flight());
        assert!(b.yield_to_queries() >= Duration::from_millis(30));
        t.join().expect("query");
        assert!(!b.query_in_flight());
        assert!(b.quiet_for() < Duration::from_secs(5));
    }

    #[test]
    fn the_service_is_not_quiet_while_a_batch_runs() {
        let b = Bulk::new();
        std::thread::sleep(Duration::from_millis(30));
        assert!(b.quiet_for() >= Duration::from_millis(30));
        let g = b.batch_started();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(b.quiet_for(), Duration::ZERO);
        drop(g);
        assert!(
            b.quiet_for() >= Duration::from_millis(60),
            "an empty batch is no activity"
        );
        b.touch();
        assert!(b.quiet_for() < Duration::from_millis(30));
    }
}
