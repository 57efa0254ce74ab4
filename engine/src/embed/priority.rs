//! Background work yields to the user's: lowest CPU priority (nice 19, and on Linux a CPU
//! policy that lets a waking hook in at once, see below) and the idle I/O class.
//!
//! Why: the background embedder loads a 90 MB model and runs ONNX on every core it is given;
//! at normal priority it competed with the next hook and with the user's own build, and
//! UserPromptSubmit p95 doubled while it ran. At nice 19 the scheduler gives it
//! what the foreground leaves; in the idle I/O class its reads and writes wait for the disk to
//! be otherwise idle. Threads created afterwards (ONNX Runtime's intra-op pool) inherit all of
//! it, so this is called before the model loads.
//!
//! The CPU policy: `SCHED_BATCH` with the longest custom slice (100 ms, Linux ≥ 6.12), else
//! `SCHED_IDLE`. Why not `SCHED_IDLE` everywhere: Claude Code starts every hook in a session
//! of its own, and with autogroups (processes in the root CPU cgroup) each session is a task
//! group of its own, which the scheduler weighs against the embedder's group before it looks
//! at a task's policy; so the idle policy does not count, and the hook waits behind the
//! embedder. What decides then is EEVDF's wake-up rule: a waking entity preempts the running
//! one at once only if its deadline is earlier or its slice shorter (`PREEMPT_SHORT`);
//! otherwise it waits for the running one's slice to end, up to a tick (4 ms at HZ 250). A
//! group's slice is the shortest of its tasks' (6.12+), so with a 100 ms slice the embedder's
//! group has the longer slice and, nearly always, the later deadline, so a hook's wake-up
//! cuts in.
//! Measured with `scripts/bench_bg_policy.py` (a fail-open `memctl-hook` spawned 400 times
//! per mode, each in a session of its own, beside a memory-bound busy job in another session):
//! p95 1.27–1.49× of no job under `SCHED_IDLE`, 1.04–1.27× under `SCHED_BATCH` with a 100 ms
//! slice, in three runs each (docs/perf/embedder-contention.md).
//! Within one task group (no autogroups, or a desktop's cgroups) the long slice keeps the same
//! property, and nice 19 (weight 15 against a hook's 1024) keeps the embedder's share nearly as
//! small as `SCHED_IDLE`'s (weight 3). Kernels without custom slices are expected to accept
//! the call and ignore the slice (read back as anything but 100 ms, the idle policy is used
//! instead); only 6.18 was at hand to run it on. The wake-up rule and the group slice are
//! from the kernel's `fair.c`, not measured apart.

/// Lower the calling thread's CPU and I/O priority (Linux; elsewhere only the nice value where
/// the platform has one). On Linux every one of these settings is per thread: the resident
/// service calls this on its bulk-embedding thread only, before that thread loads its model,
/// so that ONNX Runtime's pool threads inherit it while the query thread keeps its priority.
/// Failures are logged, never fatal: background work at normal priority still gets done.
pub fn lower_priority() {
    #[cfg(unix)]
    if let Err(e) = rustix::process::setpriority_process(None, 19) {
        tracing::debug!(error = %e, "setpriority failed");
    }
    #[cfg(target_os = "linux")]
    match sched::set_batch_long_slice() {
        Ok(()) => tracing::debug!("SCHED_BATCH with a 100 ms slice"),
        Err(why) => {
            tracing::debug!(why, "no custom slice; SCHED_IDLE");
            sched::set_idle();
        }
    }
    #[cfg(target_os = "linux")]
    if let Err(e) = crate::sys::ioprio_set_class(crate::sys::IOPRIO_CLASS_IDLE) {
        tracing::debug!(error = %e, "ioprio_set failed");
    }
}

/// The CPU policies, through `sched_setattr` ([`crate::sys`]).
#[cfg(target_os = "linux")]
pub(crate) mod sched {
    use crate::sys::{SchedAttr, sched_getattr, sched_setattr};

    /// The slice asked for: the kernel's upper bound for a custom slice.
    pub(crate) const SLICE_NS: u64 = 100_000_000;

    /// `SCHED_BATCH`, nice 19, a [`SLICE_NS`] slice; `Err` (and nothing kept but nice 19 and
    /// the batch policy, which [`set_idle`] replaces) when the kernel has no custom slices.
    pub(crate) fn set_batch_long_slice() -> Result<(), String> {
        sched_setattr(&SchedAttr::new(libc::SCHED_BATCH, 19, SLICE_NS))
            .map_err(|e| format!("sched_setattr: {e}"))?;
        let got = sched_getattr().map_err(|e| format!("sched_getattr: {e}"))?;
        if got.policy == libc::SCHED_BATCH as u32 && got.runtime == SLICE_NS {
            Ok(())
        } else {
            Err(format!("slice read back as {} ns", got.runtime))
        }
    }

    /// `SCHED_IDLE` at nice 19: failures are logged only.
    pub(crate) fn set_idle() {
        if let Err(e) = sched_setattr(&SchedAttr::new(libc::SCHED_IDLE, 19, 0)) {
            tracing::debug!(error = %e, "SCHED_IDLE refused");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// Custom slices came with Linux 6.12: the oracle is the release, not the code's probe.
    fn kernel_has_custom_slices() -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease");
        let mut parts = release.trim().split(['.', '-']);
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).expect("major");
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).expect("minor");
        (major, minor) >= (6, 12)
    }

    #[test]
    fn a_lowered_thread_runs_at_nice_19_with_a_long_slice_or_idle_in_the_idle_io_class() {
        // In a thread of its own: priorities are per thread on Linux, and the test harness
        // must keep its own. `PRIO_PROCESS, 0` acts on the calling thread.
        let before = rustix::process::getpriority_process(None).expect("getpriority");
        std::thread::spawn(|| {
            super::lower_priority();
            let nice = rustix::process::getpriority_process(None).expect("getpriority");
            assert_eq!(nice, 19);
            let io = crate::sys::ioprio_get_class().expect("ioprio_get");
            assert_eq!(io, crate::sys::IOPRIO_CLASS_IDLE, "I/O class idle");
            let expect = |attr: crate::sys::SchedAttr| {
                if kernel_has_custom_slices() {
                    assert_eq!(attr.policy, libc::SCHED_BATCH as u32, "{attr:?}");
                    assert_eq!(attr.runtime, super::sched::SLICE_NS, "{attr:?}");
                } else {
                    assert_eq!(attr.policy, libc::SCHED_IDLE as u32, "{attr:?}");
                }
            };
            expect(crate::sys::sched_getattr().expect("sched_getattr"));
            // A thread started afterwards (ONNX Runtime's pool) inherits policy and slice.
            let child = std::thread::spawn(|| crate::sys::sched_getattr().expect("sched_getattr"))
                .join()
                .expect("child thread");
            expect(child);
        })
        .join()
        .expect("thread");
        // The other threads of the process keep theirs.
        let after = rustix::process::getpriority_process(None).expect("getpriority");
        assert_eq!(after, before);
        let attr = crate::sys::sched_getattr().expect("sched_getattr");
        assert_eq!(attr.policy, libc::SCHED_OTHER as u32, "{attr:?}");
    }
}
