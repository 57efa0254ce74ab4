//! The workspace's one audited `unsafe` module: Linux syscalls that neither libc nor rustix
//! wraps safely, for lowering a background thread's priority ([`crate::embed::lower_priority`]).
//!
//! Why here and not a crate: rustix has no `sched_setattr`/`sched_getattr` (needed for the
//! custom slice of `SCHED_BATCH`) nor `ioprio_set`/`ioprio_get`; the `ioprio` crate pulls an
//! unmaintained `nix` 0.21, and `thread-priority` does not set a slice. Every call below acts
//! on the calling thread (pid 0), passes integers or a pointer to a struct that lives across
//! the call, and reports failure as an `io::Error`; nothing else in the workspace may use
//! `unsafe` (`.ci/run` checks it).
#![allow(unsafe_code)]

/// `struct sched_attr` (include/uapi/linux/sched/types.h), its first version
/// (`SCHED_ATTR_SIZE_VER0`); the kernel reads `size` to know which fields are present.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SchedAttr {
    pub size: u32,
    pub policy: u32,
    pub flags: u64,
    pub nice: i32,
    pub priority: u32,
    /// For `SCHED_OTHER`/`SCHED_BATCH` on Linux ≥ 6.12: the custom slice in nanoseconds.
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
}

impl SchedAttr {
    /// Attributes of `policy` at nice `nice` with slice `runtime_ns` (0: the default slice).
    pub(crate) fn new(policy: i32, nice: i32, runtime_ns: u64) -> Self {
        Self {
            size: std::mem::size_of::<Self>() as u32,
            policy: policy as u32,
            nice,
            runtime: runtime_ns,
            ..Self::default()
        }
    }
}

fn check(rc: libc::c_long) -> std::io::Result<libc::c_long> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `sched_getattr(0, …)`: the calling thread's scheduling attributes.
pub(crate) fn sched_getattr() -> std::io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as libc::c_uint;
    // SAFETY: the kernel writes at most `size` bytes into `attr`, which lives across the call;
    // pid 0 is the calling thread; flags must be 0.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0 as libc::pid_t,
            &mut attr as *mut SchedAttr,
            size,
            0 as libc::c_uint,
        )
    })?;
    Ok(attr)
}

/// `sched_setattr(0, attr, 0)`: set the calling thread's scheduling attributes.
pub(crate) fn sched_setattr(attr: &SchedAttr) -> std::io::Result<()> {
    // SAFETY: the kernel reads `attr.size` bytes from `attr`, which lives across the call;
    // pid 0 is the calling thread; flags must be 0.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0 as libc::pid_t,
            attr as *const SchedAttr,
            0 as libc::c_uint,
        )
    })
    .map(drop)
}

/// `IOPRIO_WHO_PROCESS`: with who = 0, the calling thread.
const IOPRIO_WHO_PROCESS: libc::c_long = 1;
/// The class sits above the 13 bits of class data in an I/O priority value.
const IOPRIO_CLASS_SHIFT: u32 = 13;
/// `IOPRIO_CLASS_IDLE`: I/O only when the disk is otherwise idle.
pub(crate) const IOPRIO_CLASS_IDLE: i64 = 3;

/// `ioprio_set(IOPRIO_WHO_PROCESS, 0, class << 13)`: the calling thread's I/O class.
pub(crate) fn ioprio_set_class(class: i64) -> std::io::Result<()> {
    // SAFETY: a syscall with integer arguments only, on the calling thread.
    check(unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            (class << IOPRIO_CLASS_SHIFT) as libc::c_long,
        )
    })
    .map(drop)
}

/// `ioprio_get(IOPRIO_WHO_PROCESS, 0)`: the calling thread's I/O class (tests check it).
#[cfg(test)]
pub(crate) fn ioprio_get_class() -> std::io::Result<i64> {
    // SAFETY: a syscall with integer arguments only, on the calling thread.
    let v = check(unsafe {
        libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0 as libc::c_long)
    })?;
    Ok(i64::from(v as i32) >> IOPRIO_CLASS_SHIFT)
}
