//! I/O faults injected under redb (the fault trials): a storage backend around redb's own
//! `FileBackend` that fails the n-th write (torn: half the bytes written, then ENOSPC), the n-th
//! `sync_data` (EIO), the n-th read (EIO, or a short read: half the buffer, then EOF) or the
//! n-th `set_len` (ENOSPC), with n drawn from a seeded RNG over the operations a fault-free run
//! makes. Real store work runs through it: the engine's own ingest of a transcript that grows
//! turn by turn, one commit per step. Then the file is reopened with the normal backend and:
//! it opens; [`check_store`] finds no violation; every turn of the last ingest that returned
//! Ok is there, unchanged; no turn is there in part; and one more ingest to completion stores
//! every turn exactly once.
//!
//! `MEMCTL_FAULT_TRIALS` sets the trials per fault kind (default 10); `MEMCTL_TRIAL_SEED` the
//! first seed (printed).

use super::check::check_store;
use super::handle::{Handle, Opened};
use super::{Store, create};
use crate::{Engine, EngineOptions, IngestOptions};
use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Where the fault is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    /// A write that puts half its bytes down, then fails with ENOSPC.
    TornWrite,
    /// An fsync (`sync_data`) failing with EIO.
    Sync,
    /// A read failing with EIO.
    ReadError,
    /// A read that fills half the buffer, then reports EOF.
    ShortRead,
    /// Growing the file failing with ENOSPC.
    SetLen,
}

const KINDS: [Fault; 5] = [
    Fault::TornWrite,
    Fault::Sync,
    Fault::ReadError,
    Fault::ShortRead,
    Fault::SetLen,
];

/// Operations seen, per kind (reads count for both read faults).
#[derive(Debug, Default)]
struct Counters {
    writes: AtomicU64,
    syncs: AtomicU64,
    reads: AtomicU64,
    set_lens: AtomicU64,
}

impl Counters {
    fn of(&self, f: Fault) -> &AtomicU64 {
        match f {
            Fault::TornWrite => &self.writes,
            Fault::Sync => &self.syncs,
            Fault::ReadError | Fault::ShortRead => &self.reads,
            Fault::SetLen => &self.set_lens,
        }
    }
}

#[derive(Debug)]
struct Faulty {
    inner: FileBackend,
    fault: Fault,
    /// The operation (0-based, of the fault's kind) that fails; `u64::MAX`: none.
    fail_at: u64,
    counts: Arc<Counters>,
    fired: Arc<AtomicBool>,
}

impl Faulty {
    /// Does this operation of kind `op` fail?
    fn hit(&self, op: Fault) -> bool {
        let n = self.counts.of(op).fetch_add(1, Ordering::SeqCst);
        let hit = op == self.fault && n == self.fail_at;
        if hit {
            self.fired.store(true, Ordering::SeqCst);
        }
        hit
    }
}

fn enospc() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOSPC)
}

type Lock = Result<bool, BackendError>;

impl StorageBackend for Faulty {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        // Both read faults share one counter: count once, then pick the configured fault.
        let n = self.counts.reads.fetch_add(1, Ordering::SeqCst);
        let hit = matches!(self.fault, Fault::ReadError | Fault::ShortRead) && n == self.fail_at;
        if !hit {
            return self.inner.read(offset, out);
        }
        self.fired.store(true, Ordering::SeqCst);
        if self.fault == Fault::ReadError {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
        let half = out.len() / 2;
        self.inner.read(offset, &mut out[..half])?;
        out[half..].fill(0);
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "injected: short read",
        ))
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        if self.hit(Fault::SetLen) {
            return Err(enospc());
        }
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> Result<(), std::io::Error> {
        if self.hit(Fault::Sync) {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        if self.hit(Fault::TornWrite) {
            self.inner.write(offset, &data[..data.len() / 2])?;
            return Err(enospc());
        }
        self.inner.write(offset, data)
    }
    fn close(&self) -> Result<(), std::io::Error> {
        self.inner.close()
    }
    fn try_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.try_lock_range(s, e)
    }
    fn try_lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.try_lock_shared_range(s, e)
    }
    fn lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(s, e)
    }
    fn lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(s, e)
    }
    fn unlock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(s, e)
    }
    fn query_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Lock {
        self.inner.query_lock_range(s, e)
    }
}

impl Store {
    /// The store at `path` (already created) opened over `backend`: the seam through which
    /// the engine's real write path meets injected faults.
    fn over_backend(path: &Path, backend: impl StorageBackend) -> Result<Self, StoreError> {
        let opened = Opened::open(path, || {
            create::builder()
                .create_with_backend(backend)
                .map(Handle::ReadWrite)
                .map_err(|e| create::open_err(path, e))
        })?;
        Ok(Self {
            opened: RwLock::new(Arc::new(opened)),
            path: path.to_path_buf(),
            write_timeout: std::time::Duration::from_secs(5),
            deadline: None,
        })
    }
}

use crate::error::StoreError;

/// Turns of the generated session; every third is long enough to be stored in several parts.
const STEPS: u32 = 9;
const SID: &str = "5eed0014-0000-4000-8000-00000000fa17";

/// The lines of turn `k`: a prompt and an answer that name `module-{k}-x` (the marker that says
/// which step a stored turn came from).
fn turn_lines(k: u32, cwd: &str) -> String {
    let filler = if k % 3 == 2 {
        " The build log repeats the same linker warning about libfoo and the cache. ".repeat(90)
    } else {
        String::new()
    };
    let user = serde_json::json!({"type": "user", "sessionId": SID, "cwd": cwd,
        "uuid": format!("u-{k}"), "timestamp": format!("2026-01-01T00:{:02}:00Z", k % 60),
        "message": {"role": "user", "content":
            format!("Step {k}: why does module-{k}-x fail to link on CI?{filler}")}});
    let asst = serde_json::json!({"type": "assistant", "sessionId": SID, "cwd": cwd,
        "uuid": format!("a-{k}"), "timestamp": format!("2026-01-01T00:{:02}:30Z", k % 60),
        "message": {"role": "assistant", "content": [{"type": "text", "text":
            format!("Because module-{k}-x needs the cache warmed first; run the warm-up step.")}]}});
    format!("{user}\n{asst}\n")
}

/// (part, parts, sha256 of the text) of one stored part.
type Part = (u16, u16, String);

/// turn index → its parts, in part order, for the session (read through `store`).
fn stored_turns(store: &Store) -> Result<BTreeMap<u32, Vec<Part>>, StoreError> {
    let r = store.read()?;
    let mut out: BTreeMap<u32, Vec<Part>> = BTreeMap::new();
    for ((turn, part), id) in r.session_turns(SID)? {
        let rec = r
            .chunk(id)?
            .ok_or_else(|| StoreError::Decode(format!("turn {turn} names missing chunk {id}")))?;
        out.entry(turn)
            .or_default()
            .push((part, rec.chunk.parts, rec.chunk.sha256.clone()));
    }
    Ok(out)
}

/// Which step's marker each stored turn's text holds (part 0), turn index → step.
fn markers(store: &Store) -> BTreeMap<u32, Vec<u32>> {
    let r = store.read().unwrap_or_else(|e| panic!("read: {e}"));
    let mut out: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for ((turn, part), id) in r.session_turns(SID).unwrap_or_else(|e| panic!("{e}")) {
        if part != 0 {
            continue;
        }
        let text = r
            .chunk(id)
            .ok()
            .flatten()
            .map(|c| c.chunk.text)
            .unwrap_or_default();
        let steps = (0..STEPS)
            .filter(|k| text.contains(&format!("module-{k}-x ")))
            .collect();
        out.insert(turn, steps);
    }
    out
}

fn options(data_dir: PathBuf) -> EngineOptions {
    EngineOptions {
        onnx: crate::embed::OnnxConfig::discover(Some(&data_dir)),
        data_dir,
        model_disabled: true,
        resident: Default::default(),
    }
}

fn ingest_opts() -> IngestOptions {
    IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    }
}

/// What one trial saw.
#[derive(Debug, Default)]
struct Outcome {
    fired: bool,
    /// Steps whose ingest returned Ok before the fault.
    ok_steps: u32,
    /// The fault stopped the open over the faulty backend.
    failed_open: bool,
    /// The step whose ingest returned the error.
    failed_step: Option<u32>,
    /// The failed step's turn was found whole after reopening (its commit reached the disk
    /// although it reported an error).
    failed_step_durable: bool,
    repaired: bool,
}

/// Every turn closed when an ingest last reported Ok is there unchanged (the newest may
/// still grow), and no turn is stored in part.
fn assert_committed_turns_survive(
    what: &str,
    committed: &BTreeMap<u32, Vec<Part>>,
    now: &BTreeMap<u32, Vec<Part>>,
) {
    let newest = committed.keys().next_back().copied();
    for (turn, parts) in committed {
        if Some(*turn) == newest {
            continue; // still open when committed: a later ingest may extend it
        }
        assert_eq!(
            now.get(turn),
            Some(parts),
            "{what}: turn {turn}, committed before the fault, is not there unchanged"
        );
    }
    for (turn, parts) in now {
        let want = parts.first().map_or(0, |p| p.1);
        let have: Vec<u16> = parts.iter().map(|p| p.0).collect();
        assert_eq!(
            have,
            (0..want).collect::<Vec<u16>>(),
            "{what}: turn {turn} is there in part"
        );
    }
}

/// One trial: the fault `fault` at operation `fail_at`; returns the counts of a fault-free run
/// when `fail_at` is `u64::MAX`.
fn trial(fault: Fault, fail_at: u64, what: &str) -> (Outcome, Arc<Counters>) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let opts = options(dir.path().join("data"));
    let path = opts.store_path();
    crate::paths::ensure_private_dir(&opts.data_dir).unwrap_or_else(|e| panic!("{e}"));
    drop(Store::open(&path).unwrap_or_else(|e| panic!("{what}: create: {e}")));
    let t = dir.path().join(format!("{SID}.jsonl"));
    let cwd = dir.path().display().to_string();
    std::fs::write(&t, "").unwrap_or_else(|e| panic!("{e}"));
    let append = |k: u32| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&t)
            .unwrap_or_else(|e| panic!("{e}"));
        f.write_all(turn_lines(k, &cwd).as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    };
    let counts = Arc::new(Counters::default());
    let fired = Arc::new(AtomicBool::new(false));
    let mut out = Outcome::default();
    // The last state an ingest reported Ok for: closed turns (all but the newest) must survive.
    let mut committed: BTreeMap<u32, Vec<Part>> = BTreeMap::new();
    let mut appended = 0;
    {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{e}"));
        let backend = Faulty {
            inner: FileBackend::new(file).unwrap_or_else(|e| panic!("backend: {e}")),
            fault,
            fail_at,
            counts: Arc::clone(&counts),
            fired: Arc::clone(&fired),
        };
        match Store::over_backend(&path, backend) {
            Err(e) => {
                println!("{what}: open failed: {e}");
                out.failed_open = true;
            }
            Ok(store) => {
                let engine = Engine::with_store(opts.clone(), store);
                for k in 0..STEPS {
                    append(k);
                    appended = k + 1;
                    let step = engine
                        .ingest_transcript(&t, &ingest_opts())
                        .map(drop)
                        .and_then(|()| Ok(stored_turns(engine.store())?));
                    match step {
                        Ok(turns) => {
                            committed = turns;
                            out.ok_steps = k + 1;
                        }
                        Err(e) => {
                            println!("{what}: step {k} failed: {e}");
                            out.failed_step = Some(k);
                            break;
                        }
                    }
                }
            }
        }
    }
    out.fired = fired.load(Ordering::SeqCst);

    // Reopened with the normal backend: it opens, and every rule holds.
    let report = check_store(&path).unwrap_or_else(|e| panic!("{what}: check: {e}"));
    assert!(
        report.is_consistent(),
        "{what}: the store breaks rules after the fault: {:#?}",
        report.violations
    );
    out.repaired = report.integrity == super::check::Integrity::Repaired;
    let engine = Engine::open(opts).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
    let now = stored_turns(engine.store()).unwrap_or_else(|e| panic!("{what}: read: {e}"));
    assert_committed_turns_survive(what, &committed, &now);
    if let Some(k) = out.failed_step {
        out.failed_step_durable = markers(engine.store())
            .values()
            .any(|steps| steps.contains(&k));
    }

    // One more ingest to completion: every turn exactly once.
    for k in appended..STEPS {
        append(k);
    }
    engine
        .ingest_transcript(&t, &ingest_opts())
        .unwrap_or_else(|e| panic!("{what}: the ingest after the fault: {e}"));
    let m = markers(engine.store());
    for k in 0..STEPS {
        let holders: Vec<&u32> = m
            .iter()
            .filter(|(_, steps)| steps.contains(&k))
            .map(|(turn, _)| turn)
            .collect();
        assert_eq!(
            holders.len(),
            1,
            "{what}: step {k} stored as turns {holders:?}"
        );
    }
    drop(engine);
    let report = check_store(&path).unwrap_or_else(|e| panic!("{what}: check: {e}"));
    assert!(report.is_consistent(), "{what}: {:#?}", report.violations);
    (out, counts)
}

/// xorshift64*: fault points reproducible from the printed seed.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
fn injected_io_faults_never_leave_a_broken_or_half_written_store() {
    let trials = env_u64("MEMCTL_FAULT_TRIALS", 10);
    let seed = env_u64("MEMCTL_TRIAL_SEED", 0x1414_0004);
    println!("fault trials: {trials} per kind, seed {seed:#x} (MEMCTL_TRIAL_SEED)");
    // A fault-free run: how many operations of each kind the work makes.
    let (clean, counts) = trial(Fault::Sync, u64::MAX, "fault-free run");
    assert_eq!(clean.ok_steps, STEPS, "{clean:?}");
    println!(
        "fault-free run: {} writes, {} fsyncs, {} reads, {} set_len",
        counts.writes.load(Ordering::SeqCst),
        counts.syncs.load(Ordering::SeqCst),
        counts.reads.load(Ordering::SeqCst),
        counts.set_lens.load(Ordering::SeqCst)
    );
    let mut rng = seed;
    println!("kind       trials fired open-failed step-failed failed-but-durable repaired");
    for kind in KINDS {
        let ops = counts.of(kind).load(Ordering::SeqCst).max(1);
        let mut row = [0u64; 5];
        for i in 0..trials {
            let fail_at = next(&mut rng) % ops;
            let what = format!("{kind:?} #{i} (seed {seed:#x}, op {fail_at} of {ops})");
            let (o, _) = trial(kind, fail_at, &what);
            row[0] += u64::from(o.fired);
            row[1] += u64::from(o.failed_open);
            row[2] += u64::from(o.failed_step.is_some());
            row[3] += u64::from(o.failed_step_durable);
            row[4] += u64::from(o.repaired);
            // A fault that fired was reported: an Ok run after a failed write would be silent
            // data loss.
            if o.fired {
                assert!(
                    o.failed_open || o.failed_step.is_some() || o.ok_steps == STEPS,
                    "{what}: {o:?}"
                );
            }
        }
        println!(
            "{:<10} {trials:>6} {:>5} {:>11} {:>11} {:>18} {:>8}",
            format!("{kind:?}"),
            row[0],
            row[1],
            row[2],
            row[3],
            row[4]
        );
    }
}
