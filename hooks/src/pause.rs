//! UserPromptSubmit pauses the background embedder while it runs (issue 17).
//!
//! Why: the embedder (`memctl embed-pending --background`, or a deferred archive embedding
//! what it stored) runs ONNX for minutes after a big backlog. It runs at nice 19 (and now
//! with a long slice, `memctl_engine::embed::lower_priority`), but Claude Code starts every hook in
//! a session of its own, and with autogroups (Linux, processes in the root CPU cgroup) the
//! scheduler shares the CPU between sessions before it looks at a task's policy: beside an
//! embedder under `SCHED_IDLE`, a hook's p95 was 1.32–1.53× of
//! idle (`bench_embedder_contention.py`, hooks in their own sessions). Frozen from outside
//! for the whole call, 0.92–0.98×. So the hook stops it for as much of its life as it can:
//! from its settings load until [`AFTER_EXIT`] after its process has ended (a guardian, below),
//! which measured 1.17× where the pause from the payload parse to the end of `main` measured
//! 1.32× (same run; README "The pause covers the whole hook"). A hook is a few milliseconds;
//! the embedder loses nothing but that time.
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
//! - **Always resumed, even when the hook is killed.** Before it stops the embedder, the hook
//!   forks a *guardian*: a child that holds the read end of a pipe whose write end only the
//!   hook holds (close-on-exec, so the processes it starts do not). When the hook process
//!   ends, however it ends (exit, SIGKILL, a client's SIGTERM), the kernel closes the write
//!   end; the guardian sees it, waits [`AFTER_EXIT`] so that the hook's exit and its caller's
//!   wake-up run beside a stopped embedder too, sends SIGCONT and exits. It sends it after
//!   [`LEASE`] at the latest, and ends without a signal when the hook resumed the embedder
//!   itself (a byte on the pipe: before it opens the store, [`EmbedderPause::resume`], also
//!   on drop). Should the fork fail, there is no pause (nothing would bound it).
//!   The older recovery stays for what the guardian cannot cover (a guardian killed itself):
//!   the next hook that opens the store resumes a stopped embedder first
//!   ([`EmbedderPause::resume_before_store`]), and so does every `memctl` command the user
//!   runs ([`resume_recorded`]; not `--background` ones nor `statusline`, which run beside
//!   hooks). The pause starts once the settings are loaded when the command line names
//!   UserPromptSubmit, else once the payload is parsed; the lease bounds the stdin read in
//!   between (a client that never closes the pipe).
//! - **Two hooks at once** each pause and resume on their own: one's resume can end the
//!   other's pause early (a little speed lost), and a store-path hook can find the embedder
//!   stopped again by another prompt's hook for that hook's few milliseconds (its store
//!   waits are bounded by its deadline, like any busy store).
//! - Linux only (pidfd, `/proc`); elsewhere a pause does nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The longest a pause can last whatever happens to the hook: its guardian resumes the
/// embedder then (a hook is a few milliseconds; its deadline is 2 s).
pub const LEASE: Duration = Duration::from_secs(1);

/// How long after the hook process has ended its guardian lets the embedder go on: longer
/// than the rest of the exit and the caller's wake-up (≈ 1 ms here), short for the embedder.
pub const AFTER_EXIT: Duration = Duration::from_millis(5);

/// A paused background embedder, resumed by [`EmbedderPause::resume`], on drop, or by its
/// guardian process once this process has ended ([`EmbedderPause::resume_after_exit`]).
#[derive(Debug, Default)]
pub struct EmbedderPause {
    #[cfg(target_os = "linux")]
    target: Option<linux::Target>,
    /// The write end of the guardian's pipe: a byte says "resumed already, just go"; its
    /// closing (this process ending, however) says "resume after [`AFTER_EXIT`]".
    #[cfg(target_os = "linux")]
    guardian: std::sync::Mutex<Option<std::os::fd::OwnedFd>>,
    resumed: AtomicBool,
}

impl EmbedderPause {
    /// No pause (the setting is off, or nothing runs).
    pub fn none() -> Self {
        Self::default()
    }

    /// Stop the data dir's recorded background embedder, if one runs and is who its record
    /// says, and fork its guardian. Costs a small file read, a `/proc` read, a pipe, a fork
    /// and a few syscalls; never fails (a problem, a failed fork included, means no pause,
    /// logged at debug).
    pub fn pause(data_dir: &Path) -> Self {
        #[cfg(target_os = "linux")]
        {
            let Some(target) = linux::Target::recorded(data_dir) else {
                return Self::default();
            };
            // The guardian first, then the stop: a hook killed between the two must not
            // leave the embedder stopped with nobody to resume it. No guardian, no pause
            // (nothing would bound it).
            let guardian = match target.guard(LEASE, AFTER_EXIT) {
                Ok(fd) => fd,
                Err(e) => {
                    tracing::debug!(pid = target.pid, error = %e, "no guardian; no pause");
                    return Self::default();
                }
            };
            let pause = Self {
                target: Some(target),
                guardian: std::sync::Mutex::new(Some(guardian)),
                resumed: AtomicBool::new(false),
            };
            let stopped = pause
                .target
                .as_ref()
                .is_some_and(|t| t.signal(rustix::process::Signal::STOP));
            if !stopped {
                // Tell the guardian to go without a signal; nothing was paused.
                pause.resume();
                return Self::default();
            }
            pause
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

    /// Let the embedder go on now, and its guardian end without signalling (idempotent;
    /// safe from any thread).
    pub fn resume(&self) {
        if self.resumed.swap(true, Ordering::AcqRel) {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(t) = &self.target {
            if t.signal(rustix::process::Signal::CONT) {
                tracing::debug!(pid = t.pid, "resumed the background embedder");
            }
            if let Some(fd) = self.guardian.lock().ok().and_then(|mut g| g.take()) {
                use std::io::Write;
                // A failed write still closes the pipe: the guardian then sends one more
                // SIGCONT after [`AFTER_EXIT`], which changes nothing for a running process.
                if let Err(e) = std::fs::File::from(fd).write_all(b"x") {
                    tracing::debug!(pid = t.pid, error = %e, "guardian not told; it resumes once more");
                }
            }
        }
    }

    /// Let the embedder go on once this process has ended: its guardian resumes it
    /// [`AFTER_EXIT`] after that. Why: what a hook costs its caller ends when the caller has
    /// seen it exit, and the exit (the runtime's teardown, the kernel's, the caller's
    /// wake-up) is work a running embedder slows as much as the rest. (A pause always has a
    /// guardian; only a poisoned lock on it makes this resume now.) Idempotent with
    /// [`Self::resume`].
    pub fn resume_after_exit(&self) {
        if self.resumed.swap(true, Ordering::AcqRel) {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(t) = &self.target {
            let guardian = self.guardian.lock().ok().and_then(|mut g| g.take());
            match guardian {
                Some(fd) => {
                    // Left open on purpose: the kernel closes it when this process ends,
                    // which is what the guardian waits for.
                    std::mem::forget(fd);
                    tracing::debug!(
                        pid = t.pid,
                        "the background embedder resumes after this hook"
                    );
                }
                None => {
                    if t.signal(rustix::process::Signal::CONT) {
                        tracing::debug!(pid = t.pid, "resumed the background embedder");
                    }
                }
            }
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
    use std::os::fd::{AsRawFd, FromRawFd, RawFd};
    use std::path::Path;
    use std::time::Duration;

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

        /// Fork the pause's guardian: a child that sends SIGCONT through this pidfd when the
        /// pipe's write end (returned) is closed, `after_exit` later, or when `lease` has
        /// passed, whichever comes first, and ends without a signal when a byte arrives (the
        /// hook resumed the embedder itself). The write end is close-on-exec, so processes
        /// the hook starts do not hold it open.
        ///
        /// The one `unsafe` of the crate: `pipe2` and `fork` have no safe wrapper among its
        /// dependencies, and the child of a multi-threaded process may only make
        /// async-signal-safe calls: it makes raw syscalls only (no allocation, no lock, no
        /// Rust I/O) and ends with `_exit`.
        #[allow(unsafe_code)]
        pub(super) fn guard(
            &self,
            lease: Duration,
            after_exit: Duration,
        ) -> std::io::Result<OwnedFd> {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: pipe2 writes two descriptors into the array it is given.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: both descriptors are fresh from pipe2 and owned by nobody else.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            let child = Guardian {
                pidfd: self.fd.as_raw_fd(),
                read: read.as_raw_fd(),
                write: write.as_raw_fd(),
                lease_ms: libc::c_int::try_from(lease.as_millis()).unwrap_or(libc::c_int::MAX),
                after_exit: libc::timespec {
                    tv_sec: libc::time_t::try_from(after_exit.as_secs())
                        .unwrap_or(libc::time_t::MAX),
                    tv_nsec: libc::c_long::from(after_exit.subsec_nanos()),
                },
            };
            // SAFETY: the child runs `Guardian::run` only, which makes async-signal-safe
            // syscalls on values computed before the fork and ends in `_exit`.
            match unsafe { libc::fork() } {
                0 => unsafe { child.run() },
                pid if pid < 0 => Err(std::io::Error::last_os_error()),
                pid => {
                    // Also from here (whichever runs first): out of the hook's process group
                    // before the embedder is stopped. ESRCH/EACCES (it already moved) is fine.
                    // SAFETY: setpgid on our own child, integers only.
                    unsafe { libc::setpgid(pid, pid) };
                    tracing::debug!(pid = self.pid, guardian = pid, "pause guarded");
                    Ok(write)
                }
            }
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

    /// What the guardian child needs, computed before the fork.
    struct Guardian {
        pidfd: RawFd,
        read: RawFd,
        write: RawFd,
        lease_ms: libc::c_int,
        after_exit: libc::timespec,
    }

    impl Guardian {
        /// The guardian's life (in the forked child; never returns).
        ///
        /// # Safety
        /// Only in the child of `fork`: it closes descriptors it does not own any more
        /// and ends the process.
        #[allow(unsafe_code)]
        unsafe fn run(&self) -> ! {
            // SAFETY: raw syscalls on integers and on pointers to locals only.
            unsafe {
                // Out of the hook's process group (a client ending the group does not end
                // the guardian).
                libc::setpgid(0, 0);
                // Every descriptor but the pidfd and the pipe's read end: the hook's stdio
                // (its caller waits for their end), the write end (else the guardian would
                // keep its own pipe open), and whatever else the hook or its host had open.
                let (lo, hi) = (self.pidfd.min(self.read), self.pidfd.max(self.read));
                let all_closed = close_range(0, lo.saturating_sub(1))
                    && close_range(lo.saturating_add(1), hi.saturating_sub(1))
                    && close_range(hi.saturating_add(1), libc::c_int::MAX);
                if !all_closed {
                    // A kernel without close_range (before 5.9): the ones that matter.
                    libc::close(0);
                    libc::close(1);
                    libc::close(2);
                    libc::close(self.write);
                }
                let deadline = now_ms().saturating_add(i64::from(self.lease_ms));
                let mut pfd = libc::pollfd {
                    fd: self.read,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // A signal may cut the wait short: wait for what is left of the lease.
                let ready = loop {
                    let left = deadline.saturating_sub(now_ms()).max(0);
                    let n = libc::poll(&mut pfd, 1, libc::c_int::try_from(left).unwrap_or(0));
                    if n >= 0 || *libc::__errno_location() != libc::EINTR {
                        break n;
                    }
                };
                if ready > 0 {
                    let mut byte = 0u8;
                    let n = loop {
                        let n = libc::read(self.read, (&raw mut byte).cast(), 1);
                        if n >= 0 || *libc::__errno_location() != libc::EINTR {
                            break n;
                        }
                    };
                    if n == 1 {
                        // Resumed by the hook itself.
                        libc::_exit(0);
                    }
                    // End of file: the hook has ended (or is ending). Let it finish.
                    let mut req = self.after_exit;
                    let mut rem = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    };
                    for _ in 0..64 {
                        if libc::nanosleep(&req, &mut rem) == 0 {
                            break;
                        }
                        req = rem;
                    }
                }
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    self.pidfd,
                    libc::SIGCONT,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
                libc::_exit(0)
            }
        }
    }

    /// `close_range(first, last)`; true when done (an empty range is done). Async-signal-safe.
    #[allow(unsafe_code)]
    fn close_range(first: RawFd, last: RawFd) -> bool {
        if first > last {
            return true;
        }
        let (Ok(first), Ok(last)) = (libc::c_uint::try_from(first), libc::c_uint::try_from(last))
        else {
            return true;
        };
        // SAFETY: a syscall with integer arguments; closing descriptors in the guardian child.
        unsafe { libc::syscall(libc::SYS_close_range, first, last, 0 as libc::c_uint) == 0 }
    }

    /// CLOCK_MONOTONIC in milliseconds. Async-signal-safe.
    #[allow(unsafe_code)]
    // `time_t` and `c_long` are i64 here but narrower on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    fn now_ms() -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the local it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        i64::from(ts.tv_sec)
            .saturating_mul(1000)
            .saturating_add(i64::from(ts.tv_nsec) / 1_000_000)
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
