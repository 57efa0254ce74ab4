//! Agent event handling, in-process and agent-neutral: the events an adapter hands the engine
//! and the reply it gets ([`event`]), one handler per event, the engine's part of the hook
//! policy (backlog hand-off) in [`policy`], one background job per transcript in [`jobs`], and
//! the spool's draining. Agent adapters (Claude Code's in the `memctl-hooks` crate) parse
//! payloads and render replies.

mod event;
mod handle;
pub mod jobs;
pub mod policy;
mod prepared;
pub(crate) mod spool;

pub use event::{AgentEvent, EventKind, Reply, StartKind, ToolUse};
pub use handle::{
    HookAnswer, HookConfig, HookEffects, handle, handle_without_store, may_recall,
    note_compactions, reads_only,
};
pub use spool::rescue;
