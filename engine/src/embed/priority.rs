//! Background work yields to the user's: lowest CPU priority (nice 19, and on Linux the
//! `SCHED_IDLE` policy) and the idle I/O class.
//!
//! Why: the background embedder loads a 90 MB model and runs ONNX on every core it is given;
//! at normal priority it competed with the next hook and with the user's own build, and
//! UserPromptSubmit p95 doubled while it ran (issue 17). At nice 19 the scheduler gives it
//! what the foreground leaves; in the idle I/O class its reads and writes wait for the disk to
//! be otherwise idle. `SCHED_IDLE` goes one step further than nice 19: a waking normal task
//! (a hook) preempts an idle-policy thread at once instead of waiting for its slice to end.
//! Threads created afterwards (ONNX Runtime's intra-op pool) inherit all three, so this is
//! called before the model loads. Background processes also ignore SIGHUP (see below).

/// Lower this process's CPU and I/O priority (Linux; elsewhere only the nice value where the
/// platform has one). Failures are logged, never fatal: a background job at normal priority
/// still does its work.
///
/// The one `unsafe` of the crate (allowed here only): libc's `setpriority` and the raw
/// `ioprio_set` syscall, which no safe crate of the workspace wraps; both take integers only.
#[allow(unsafe_code)]
pub fn lower_priority() {
    #[cfg(unix)]
    {
        // SAFETY: setpriority on this process only; no memory is passed.
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
        if rc != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "setpriority failed");
        }
    }
    #[cfg(unix)]
    {
        // A hook may pause the background embedder (SIGSTOP, `memctl-hooks`' `pause`). When
        // the process group of a stopped process becomes orphaned (its parent, the hook that
        // started it, exits), the kernel sends it SIGHUP then SIGCONT: ignored, it goes on.
        // SAFETY: installs SIG_IGN (no handler code) for SIGHUP.
        let prev = unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
        if prev == libc::SIG_ERR {
            tracing::debug!(error = %std::io::Error::last_os_error(), "SIGHUP not ignored");
        }
    }
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler on the calling thread (0) with a valid parameter struct
        // that lives across the call.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if rc != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "SCHED_IDLE refused");
        }
    }
    #[cfg(target_os = "linux")]
    {
        // ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)); libc has
        // the syscall number but no wrapper.
        const IOPRIO_WHO_PROCESS: libc::c_long = 1;
        const IOPRIO_CLASS_IDLE: libc::c_long = 3;
        const IOPRIO_CLASS_SHIFT: u32 = 13;
        // SAFETY: a syscall with integer arguments only, on this process.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_ioprio_set,
                IOPRIO_WHO_PROCESS,
                0 as libc::c_long,
                IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
            )
        };
        if rc != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "ioprio_set failed");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    #[allow(unsafe_code)]
    fn a_lowered_thread_runs_at_nice_19_sched_idle_in_the_idle_io_class() {
        // In a thread of its own: priorities are per thread on Linux, and the test harness
        // must keep its own. `PRIO_PROCESS, 0` acts on the calling thread.
        std::thread::spawn(|| {
            super::lower_priority();
            // SAFETY: getpriority/ioprio_get read the calling thread's priority.
            let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            assert_eq!(nice, 19);
            let io = unsafe {
                libc::syscall(libc::SYS_ioprio_get, 1 as libc::c_long, 0 as libc::c_long)
            };
            assert_eq!(io >> 13, 3, "I/O class idle, got {io:#x}");
            // SAFETY: sched_getscheduler reads the calling thread's policy.
            let policy = unsafe { libc::sched_getscheduler(0) };
            assert_eq!(policy, libc::SCHED_IDLE);
            // A thread started afterwards (ONNX Runtime's pool) inherits the policy.
            let child = std::thread::spawn(|| unsafe { libc::sched_getscheduler(0) })
                .join()
                .expect("child thread");
            assert_eq!(child, libc::SCHED_IDLE);
        })
        .join()
        .expect("thread");
    }
}
