//! The Claude Code adapter: Claude Code's hook payloads ([`payload`]) and their translation
//! into the engine's agent-neutral [`memctl_engine::AgentEvent`], its event names, deadlines
//! and tool matchers ([`policy`]), and the rendering of the engine's
//! [`memctl_engine::Reply`] in the exact output Claude Code reads ([`output`]).
//!
//! Another agent's adapter (Codex CLI, Gemini CLI) is a sibling module of this one: its own
//! payloads, policy and output over the same engine calls.

pub mod output;
pub mod payload;
pub mod policy;

#[cfg(test)]
mod fuzz_tests;

pub use output::HookOutput;
pub use payload::{CommonFields, HookEvent, HookPayload, PayloadError, SessionSource};
pub use policy::{HookEventName, deadline};
