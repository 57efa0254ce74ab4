//! Background work yields to the user's: lowest CPU priority (nice 19, and on Linux a CPU
//! policy that lets a waking hook in at once, see below) and the idle I/O class.
//!
//! Why: the background embedder loads a 90 MB model and runs ONNX on every core it is given;
//! at normal priority it competed with the next hook and with the user's own build, and
//! UserPromptSubmit p95 doubled while it ran. At nice 19 the scheduler gives it
//! what the foreground leaves; in the idle I/O class its reads and writes wait for the disk to
//! be otherwise idle. Threads created afterwards (ONNX Runtime's intra-op pool) inherit all of
//! it, so this is called before the model loads. Background processes also ignore SIGHUP
//! (see below).
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
    match sched::set_batch_long_slice() {
        Ok(()) => tracing::debug!("SCHED_BATCH with a 100 ms slice"),
        Err(why) => {
            tracing::debug!(why, "no custom slice; SCHED_IDLE");
            sched::set_idle();
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

/// Linux's `sched_setattr` / `sched_getattr`, which libc exposes as syscall numbers only.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) mod sched {
    /// The slice asked for: the kernel's upper bound for a custom slice.
    pub(crate) const SLICE_NS: u64 = 100_000_000;

    /// `struct sched_attr` (include/uapi/linux/sched/types.h), its first version
    /// (`SCHED_ATTR_SIZE_VER0`); the kernel reads `size` to know which fields are present.
    #[repr(C)]
    #[derive(Debug, Default, Clone, Copy)]
    pub(crate) struct SchedAttr {
        pub size: u32,
        pub policy: u32,
        pub flags: u64,
        pub nice: i32,
        pub priority: u32,
        pub runtime: u64,
        pub deadline: u64,
        pub period: u64,
    }

    /// The calling thread's attributes.
    pub(crate) fn get() -> std::io::Result<SchedAttr> {
        let mut attr = SchedAttr::default();
        let size = std::mem::size_of::<SchedAttr>() as libc::c_uint;
        // SAFETY: the kernel writes at most `size` bytes into `attr`, which lives across the
        // call; pid 0 is the calling thread; flags must be 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_getattr,
                0 as libc::pid_t,
                &mut attr as *mut SchedAttr,
                size,
                0 as libc::c_uint,
            )
        };
        if rc == 0 {
            Ok(attr)
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    fn set(attr: &SchedAttr) -> std::io::Result<()> {
        // SAFETY: the kernel reads `attr.size` bytes from `attr`, which lives across the call;
        // pid 0 is the calling thread; flags must be 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_setattr,
                0 as libc::pid_t,
                attr as *const SchedAttr,
                0 as libc::c_uint,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// `SCHED_BATCH`, nice 19, a [`SLICE_NS`] slice; `Err` (and nothing kept but nice 19 and
    /// the batch policy, which [`set_idle`] replaces) when the kernel has no custom slices.
    pub(crate) fn set_batch_long_slice() -> Result<(), String> {
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: libc::SCHED_BATCH as u32,
            nice: 19,
            runtime: SLICE_NS,
            ..SchedAttr::default()
        };
        set(&attr).map_err(|e| format!("sched_setattr: {e}"))?;
        let got = get().map_err(|e| format!("sched_getattr: {e}"))?;
        if got.policy == libc::SCHED_BATCH as u32 && got.runtime == SLICE_NS {
            Ok(())
        } else {
            Err(format!("slice read back as {} ns", got.runtime))
        }
    }

    /// `SCHED_IDLE`: failures are logged only.
    pub(crate) fn set_idle() {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler on the calling thread (0) with a valid parameter struct
        // that lives across the call.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if rc != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "SCHED_IDLE refused");
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
    #[allow(unsafe_code)]
    fn a_lowered_thread_runs_at_nice_19_with_a_long_slice_or_idle_in_the_idle_io_class() {
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
            let expect = |attr: super::sched::SchedAttr| {
                if kernel_has_custom_slices() {
                    assert_eq!(attr.policy, libc::SCHED_BATCH as u32, "{attr:?}");
                    assert_eq!(attr.runtime, super::sched::SLICE_NS, "{attr:?}");
                } else {
                    assert_eq!(attr.policy, libc::SCHED_IDLE as u32, "{attr:?}");
                }
            };
            expect(super::sched::get().expect("sched_getattr"));
            // A thread started afterwards (ONNX Runtime's pool) inherits policy and slice.
            let child = std::thread::spawn(|| super::sched::get().expect("sched_getattr"))
                .join()
                .expect("child thread");
            expect(child);
        })
        .join()
        .expect("thread");
    }
}
