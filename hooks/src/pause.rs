//! UserPromptSubmit pauses the background embedder while it runs (issue 17).
//!
//! Why: the embedder (`memctl embed-pending --background`, or a deferred archive embedding
//! what it stored) runs ONNX on both cores for minutes after a big backlog. Even at nice 19
//! and `SCHED_IDLE` it shares caches and memory bandwidth with the hook, and the hook's p95
//! went from ~8–12 ms idle to ~17 ms beside it (1.4–2.1×). Frozen with SIGSTOP during each
//! call, the same hook stayed within 1.03–1.19× of idle (`bench_embedder_contention.py
//! --stop-embedder`). A hook is a few milliseconds; the embedder loses nothing but that time.
//! What the pause gives (same script, `--no-pause`, README "The hook pauses the embedder"):
//! the median back near idle's, p95 lower in most runs but still 1.07–1.97× of idle, because
//! the hook can only pause once its own process runs (`main` is ≈ 2 of ≈ 6 ms per call).
//!
//! Safety rules (tested here and in `tests/embedder_pause.rs` with a real embedder):
//! - **The right process only.** The embedder records its pid *and* its start time in clock
//!   ticks (`/proc/<pid>/stat` field 22) in its progress record ([`crate::progress`]). The
//!   hook opens a pidfd first, then checks the start time: a pid reused before the pidfd was
//!   opened shows another start time and is left alone; one reused after cannot be reached
//!   through the pidfd (it names the old process).
//! - **Never stopped while the hook needs the store.** A stopped embedder may hold redb's
//!   write lock; the hook resumes it before it opens the store
//!   ([`EmbedderPause::resume_before_store`]), so only the no-store path of
//!   UserPromptSubmit runs beside a stopped embedder.
//! - **Always resumed.** Resuming is idempotent and also runs on drop (every return path of
//!   the hook, including the watchdog's). The pause starts only once the payload is read and
//!   parsed (the stdin read is the one wait outside the hook's watchdog). A hook killed in between (SIGKILL, or a
//!   SIGTERM from the client) leaves the embedder stopped: the next hook that opens the
//!   store resumes it first ([`EmbedderPause::resume_before_store`]), the next
//!   UserPromptSubmit that pauses it resumes it on its way out, and so does every `memctl`
//!   command the user runs ([`resume_recorded`]; not `--background` ones nor `statusline`,
//!   which run beside hooks).
//! - **Two hooks at once** each pause and resume on their own: one's resume can end the
//!   other's pause early (a little speed lost), and a store-path hook can find the embedder
//!   stopped again by another prompt's hook for that hook's few milliseconds (its store
//!   waits are bounded by its deadline, like any busy store).
//! - Linux only (pidfd, `/proc`); elsewhere a pause does nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// A paused background embedder, resumed by [`EmbedderPause::resume`] or on drop.
#[derive(Debug, Default)]
pub struct EmbedderPause {
    #[cfg(target_os = "linux")]
    target: Option<linux::Target>,
    resumed: AtomicBool,
}

impl EmbedderPause {
    /// No pause (the setting is off, or nothing runs).
    pub fn none() -> Self {
        Self::default()
    }

    /// Stop the data dir's recorded background embedder, if one runs and is who its record
    /// says. Costs a small file read, a `/proc` read and two syscalls; never fails (a
    /// problem means no pause, logged at debug).
    pub fn pause(data_dir: &Path) -> Self {
        #[cfg(target_os = "linux")]
        {
            let target = linux::Target::recorded(data_dir);
            if let Some(t) = &target
                && !t.signal(rustix::process::Signal::STOP)
            {
                return Self::default();
            }
            Self {
                target,
                resumed: AtomicBool::new(false),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = data_dir;
            Self::default()
        }
    }

    /// True when an embedder was stopped and not yet resumed.
    pub fn is_paused(&self) -> bool {
        self.paused_pid().is_some()
    }

    /// The pid of the embedder stopped and not yet resumed (for the hook's log).
    pub fn paused_pid(&self) -> Option<u32> {
        self.target_pid()
            .filter(|_| !self.resumed.load(Ordering::Acquire))
    }

    /// The pid of the embedder this pause stopped, resumed since or not.
    fn target_pid(&self) -> Option<u32> {
        #[cfg(target_os = "linux")]
        let pid = self.target.as_ref().map(|t| t.pid);
        #[cfg(not(target_os = "linux"))]
        let pid = None;
        pid
    }

    /// Let the embedder go on (idempotent; safe from any thread).
    pub fn resume(&self) {
        if self.resumed.swap(true, Ordering::AcqRel) {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(t) = &self.target
            && t.signal(rustix::process::Signal::CONT)
        {
            tracing::debug!(pid = t.pid, "resumed the background embedder");
        }
    }

    /// Before a hook opens the store: resume the embedder this hook paused, or, when it
    /// paused none (another event, or the setting off), one that a killed hook left stopped.
    pub fn resume_before_store(&self, data_dir: &Path) {
        if self.target_pid().is_some() {
            self.resume();
        } else {
            resume_recorded(data_dir);
        }
    }
}

impl Drop for EmbedderPause {
    fn drop(&mut self) {
        self.resume();
    }
}

/// Resume the data dir's recorded embedder if it is stopped (a hook killed while it paused
/// it). A no-op for a running one or none. Called at the start of every `memctl` command.
pub fn resume_recorded(data_dir: &Path) {
    #[cfg(target_os = "linux")]
    if let Some(t) = linux::Target::recorded(data_dir) {
        t.signal(rustix::process::Signal::CONT);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = data_dir;
}

/// This process's start time in clock ticks since boot (`/proc/self/stat` field 22): with
/// the pid, an identity that survives pid reuse. None off Linux or when `/proc` is missing.
pub fn own_start_ticks() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        start_ticks(std::process::id())
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The start time (clock ticks since boot) of process `pid`, from `/proc/<pid>/stat`.
/// One `read` into a buffer: the line is a few hundred bytes (the name is at most 16), and
/// `read_to_string` took six reads and a `statx` on this size-0 file (strace of a hook).
#[cfg(target_os = "linux")]
pub fn start_ticks(pid: u32) -> Option<u64> {
    use std::io::Read;
    let mut buf = [0u8; 1024];
    let n = std::fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read(&mut buf)
        .ok()?;
    parse_start_ticks(std::str::from_utf8(&buf[..n]).ok()?)
}

/// Field 22 of a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and
/// may hold spaces and parentheses itself, so fields are counted after its *last* `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After the name: field 3 (state) is the first, so field 22 is the 20th.
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::fd::OwnedFd;
    use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
    use std::path::Path;

    /// The recorded embedder, reached through a pidfd whose identity was checked.
    #[derive(Debug)]
    pub(super) struct Target {
        fd: OwnedFd,
        pub(super) pid: u32,
    }

    impl Target {
        /// The embedder of the data dir's progress record, if it still runs and its start
        /// time matches the record (never a process that only reuses the pid).
        pub(super) fn recorded(data_dir: &Path) -> Option<Self> {
            let record = crate::progress::read(data_dir)?;
            let want = record.start_ticks?;
            if record.pid == std::process::id() {
                return None;
            }
            let pid = Pid::from_raw(i32::try_from(record.pid).ok()?)?;
            // The pidfd first, then the check: see the module doc.
            let fd = pidfd_open(pid, PidfdFlags::empty()).ok()?;
            if super::start_ticks(record.pid) != Some(want) {
                tracing::debug!(
                    pid = record.pid,
                    "progress record names a process that is not the embedder; left alone"
                );
                return None;
            }
            Some(Self {
                fd,
                pid: record.pid,
            })
        }

        /// Send `sig`; false (logged at debug) when it could not be delivered.
        pub(super) fn signal(&self, sig: Signal) -> bool {
            match pidfd_send_signal(&self.fd, sig) {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(pid = self.pid, ?sig, error = %e, "embedder not signalled");
                    false
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_field_22_even_with_parentheses_and_spaces_in_the_name() {
        let fields_after_name: Vec<String> = (3..=52).map(|f| format!("{}", f * 10)).collect();
        let line = format!("4242 (memctl (x) y) {}\n", fields_after_name.join(" "));
        assert_eq!(parse_start_ticks(&line), Some(220));
        assert_eq!(parse_start_ticks("4242 (memctl) S 1 2"), None);
        assert_eq!(parse_start_ticks("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_a_start_time() {
        let a = own_start_ticks().expect("start ticks");
        assert_eq!(own_start_ticks(), Some(a));
    }

    #[test]
    fn no_record_means_no_pause_and_resume_is_harmless() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = EmbedderPause::pause(d.path());
        assert!(!p.is_paused());
        p.resume();
        resume_recorded(d.path());
    }
}
