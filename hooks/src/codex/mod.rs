//! The Codex CLI adapter (as recorded with 0.171.0, `scripts/record_agent_hooks.py`): Codex's
//! hook payloads and their [`memctl_engine::AgentEvent`] ([`payload`]), its event names,
//! install timeouts, deadlines and tool matchers ([`policy`]), and the rendering of a
//! [`memctl_engine::Reply`] in the output Codex reads ([`output`]).
//!
//! Codex copied Claude Code's hook protocol; what differs: PostToolUse's `tool_response` is a
//! string (the command's output), `Stop` ends every turn (memctl archives then), PreCompact
//! carries no user instructions and PostCompact no summary.

pub mod output;
pub mod payload;
pub mod policy;

pub use payload::{CodexEvent, CodexPayload};
pub use policy::CodexEventName;
