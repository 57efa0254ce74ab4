//! Claude Code hook handling, in-process: typed payloads, one handler per event.

mod payload;

pub use payload::{CommonFields, HookEvent, HookOutput, HookPayload, PayloadError};
