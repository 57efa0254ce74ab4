//! Claude Code hook handling, in-process: typed payloads, one handler per event.

mod handle;
mod payload;
mod spool;

pub use handle::{HookConfig, HookEffects, handle};
pub use payload::{CommonFields, HookEvent, HookOutput, HookPayload, PayloadError};
pub use spool::rescue;
