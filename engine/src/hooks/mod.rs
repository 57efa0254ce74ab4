//! Claude Code hook handling, in-process: typed payloads, one handler per event, and the
//! adapter's policy (event names, deadlines, swapped tools, backlog hand-off) in [`policy`],
//! one background job per transcript in [`jobs`].

mod handle;
pub mod jobs;
mod payload;
pub mod policy;
mod prepared;
pub(crate) mod spool;

pub use handle::{
    HookAnswer, HookConfig, HookEffects, handle, handle_without_store, may_recall, reads_only,
};
pub use payload::{HookOutput, HookPayload};
pub use policy::HookEventName;
pub use spool::rescue;
