//! UserPromptSubmit pauses the background embedder while it runs.
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
//! 1.32× (same run; docs/perf/embedder-contention.md). A hook is a few milliseconds;
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
//!   starts a *guardian*: a child process (sharing the hook's memory, not a copy of it:
//!   see `Target::guard`) that holds the read end of a pipe whose write end only the
//!   hook holds (close-on-exec, so the processes it starts do not). When the hook process
//!   ends, however it ends (exit, SIGKILL, a client's SIGTERM), the kernel closes the write
//!   end; the guardian sees it, waits [`AFTER_EXIT`] so that the hook's exit and its caller's
//!   wake-up run beside a stopped embedder too, sends SIGCONT and exits. It sends it after
//!   [`LEASE`] at the latest, and ends without a signal when the hook resumed the embedder
//!   itself (a byte on the pipe: before it opens the store, [`EmbedderPause::resume`], also
//!   on drop). Should the clone fail, there is no pause (nothing would bound it).
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
use std::time::{Duration, Instant};

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
    /// When the embedder was stopped (for the hook's debug line).
    stopped_at: Option<Instant>,
}

impl EmbedderPause {
    /// No pause (the setting is off, or nothing runs).
    pub fn none() -> Self {
        Self::default()
    }

    /// Stop the data dir's recorded background embedder, if one runs and is who its record
    /// says, and start its guardian. Costs a small file read, a `/proc` read, a pipe, a
    /// clone and a few syscalls; never fails (a problem, a failed clone included, means no pause,
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
            let mut pause = Self {
                target: Some(target),
                guardian: std::sync::Mutex::new(Some(guardian)),
                resumed: AtomicBool::new(false),
                stopped_at: None,
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
            pause.stopped_at = Some(Instant::now());
            pause
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = data_dir;
            Self::default()
        }
    }

    /// When this pause stopped the embedder (None: nothing was stopped).
    pub fn stopped_at(&self) -> Option<Instant> {
        self.stopped_at
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

pub use crate::progress::{own_start_ticks, start_ticks};

#[cfg(target_os = "linux")]
mod linux {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::fd::OwnedFd;
    use rustix::io::Errno;
    use rustix::pipe::{PipeFlags, pipe_with};
    use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
    use rustix::thread::{NanosleepRelativeResult, nanosleep};
    use rustix::time::{ClockId, clock_gettime};
    use std::os::fd::{AsRawFd, RawFd};
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
            if crate::progress::start_ticks(record.pid) != Some(want) {
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
        /// The one `unsafe` of the crate: `clone` and the guardian's stack mapping have no
        /// safe wrapper among its dependencies.
        ///
        /// Why `clone(CLONE_VM)` and not `fork`: a fork copies this process's page tables and
        /// then makes every page the hook writes afterwards fault and be copied, on the
        /// prompt's path; a pause through `fork` cost a fail-open hook 0.45 ms at p50 with
        /// nothing running to pause (0.15 ms now; docs/perf/embedder-contention.md). A child that shares the address space costs neither.
        /// It runs on a stack mapping of its own that is never unmapped (it still runs there
        /// after the hook has exited; the address space lives on while it does), and, sharing
        /// the hook's thread-local storage, it must not touch it: it makes rustix syscalls
        /// only (the raw Linux backend: no `errno`, no allocation, no lock, no panic path)
        /// and returns, which ends it. What sharing costs: a hook that dumps core takes the
        /// guardian with it (the kernel ends every process of a dumping address space), and
        /// the older recovery (module doc) resumes the embedder then; a SIGKILL does not
        /// (tested).
        #[allow(unsafe_code)]
        pub(super) fn guard(
            &self,
            lease: Duration,
            after_exit: Duration,
        ) -> std::io::Result<OwnedFd> {
            let (read, write) = pipe_with(PipeFlags::CLOEXEC)?;
            let max_fd = rustix::process::getrlimit(rustix::process::Resource::Nofile)
                .current
                .unwrap_or(u64::MAX)
                .min(MAX_CLOSED_FD);
            let guardian = Guardian {
                pidfd: self.fd.as_raw_fd(),
                read: read.as_raw_fd(),
                write: write.as_raw_fd(),
                max_fd: RawFd::try_from(max_fd).unwrap_or(RawFd::MAX),
                // Read here, not first in the child: rustix finds the vDSO on the first call.
                deadline: clock_gettime(ClockId::Monotonic)
                    .checked_add(timespec(lease))
                    .unwrap_or(FAR),
                after_exit: timespec(after_exit),
            };
            // SAFETY: a fresh anonymous mapping; nothing else refers to it.
            let stack = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    GUARDIAN_STACK,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if stack == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let arg = stack.cast::<Guardian>();
            // SAFETY: the mapping is page-aligned and far larger than a `Guardian`; the
            // arguments sit at its bottom, the stack grows down from its top (16-aligned).
            let pid = unsafe {
                arg.write(guardian);
                let top = stack.cast::<u8>().add(GUARDIAN_STACK).cast();
                libc::clone(
                    guardian_main,
                    top,
                    libc::CLONE_VM | libc::SIGCHLD,
                    arg.cast(),
                )
            };
            if pid < 0 {
                let e = std::io::Error::last_os_error();
                // SAFETY: the mapping made above; no child runs on it.
                unsafe { libc::munmap(stack, GUARDIAN_STACK) };
                return Err(e);
            }
            // Out of the hook's process group before the embedder is stopped (the child does
            // it too, whichever runs first); ESRCH/EACCES (it already moved) is fine.
            let _ = rustix::process::setpgid(Pid::from_raw(pid), Pid::from_raw(pid));
            tracing::debug!(pid = self.pid, guardian = pid, "pause guarded");
            drop(read);
            Ok(write)
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

    /// The guardian's stack: ample for its few frames (no allocation, no formatting).
    const GUARDIAN_STACK: usize = 64 * 1024;

    /// The guardian closes every descriptor up to the soft `RLIMIT_NOFILE`, at most up to
    /// this one: one close per slot (rustix has no `close_range`, and libc's would write
    /// `errno` into the hook's thread-local storage), on the guardian's core, not timed. A
    /// descriptor above it (a host's, inherited without close-on-exec) stays open for the
    /// guardian's few milliseconds, at most its lease; stdio and the pipe are closed by name.
    const MAX_CLOSED_FD: u64 = 1023;

    /// A time no lease reaches (the guardian's deadline when the sum would overflow).
    const FAR: Timespec = Timespec {
        tv_sec: i64::MAX,
        tv_nsec: 0,
    };

    fn timespec(d: Duration) -> Timespec {
        Timespec::try_from(d).unwrap_or(FAR)
    }

    /// What the guardian child needs, computed before the clone; it lives at the bottom of
    /// the guardian's stack mapping.
    struct Guardian {
        pidfd: RawFd,
        read: RawFd,
        write: RawFd,
        max_fd: RawFd,
        /// CLOCK_MONOTONIC at the end of the lease.
        deadline: Timespec,
        after_exit: Timespec,
    }

    /// The guardian's entry point: runs [`Guardian::run`] and returns, which ends the child
    /// (glibc's `clone` makes the exit syscall with the return value).
    extern "C" fn guardian_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `guard` passes a pointer to a `Guardian` written at the bottom of the
        // child's own stack mapping, which nothing else writes to or unmaps.
        #[allow(unsafe_code)]
        let g = unsafe { &*arg.cast::<Guardian>() };
        g.run();
        0
    }

    impl Guardian {
        /// The guardian's life: rustix calls only (see [`Target::guard`] for why).
        #[allow(unsafe_code)]
        fn run(&self) {
            // Out of the hook's process group (a client ending the group does not end the
            // guardian).
            let _ = rustix::process::setpgid(None, None);
            // Every descriptor but the pidfd and the pipe's read end: the hook's stdio (its
            // caller waits for their end) and the write end (else the guardian would keep
            // its own pipe open) first, then whatever else the hook or its host had open.
            for fd in [0, 1, 2, self.write]
                .into_iter()
                .chain(3..=self.max_fd)
                .filter(|&fd| fd != self.pidfd && fd != self.read)
            {
                // SAFETY: this child's own copy of the descriptor table; nothing in it uses
                // these descriptors. `try_close`, not `close`: a free slot's EBADF is an
                // error to ignore, where `close` would assert in a debug build (a panic
                // here would run the hook's panic machinery on memory the hook is using).
                let _ = unsafe { rustix::io::try_close(fd) };
            }
            // SAFETY: the descriptors were open in the hook at the clone and are this
            // child's own copies, kept open above; they live as long as the child.
            let (read, pidfd) = unsafe {
                (
                    rustix::fd::BorrowedFd::borrow_raw(self.read),
                    rustix::fd::BorrowedFd::borrow_raw(self.pidfd),
                )
            };
            // A signal may cut the wait short: wait for what is left of the lease.
            let ready = loop {
                // What is left of the lease; none once it is over (never negative for poll).
                let left = self
                    .deadline
                    .checked_sub(clock_gettime(ClockId::Monotonic))
                    .filter(|t| t.tv_sec >= 0)
                    .unwrap_or(Timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    });
                let mut fds = [PollFd::new(&read, PollFlags::IN)];
                match poll(&mut fds, Some(&left)) {
                    Err(Errno::INTR) => continue,
                    r => break r.unwrap_or(0) > 0,
                }
            };
            if ready {
                let mut byte = [0u8; 1];
                let n = loop {
                    match rustix::io::read(read, &mut byte) {
                        Err(Errno::INTR) => continue,
                        r => break r.unwrap_or(0),
                    }
                };
                if n == 1 {
                    // Resumed by the hook itself.
                    return;
                }
                // End of file: the hook has ended (or is ending). Let it finish.
                let mut req = self.after_exit;
                for _ in 0..64 {
                    match nanosleep(&req) {
                        NanosleepRelativeResult::Interrupted(rem) => req = rem,
                        _ => break,
                    }
                }
            }
            let _ = pidfd_send_signal(pidfd, Signal::CONT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_record_means_no_pause_and_resume_is_harmless() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = EmbedderPause::pause(d.path());
        assert!(!p.is_paused());
        p.resume();
        resume_recorded(d.path());
    }
}
