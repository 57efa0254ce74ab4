//! The Gemini CLI adapter (as recorded with 0.61.0, `scripts/record_agent_hooks.py`): Gemini
//! CLI's hook payloads and their [`memctl_engine::AgentEvent`] ([`payload`]), its event
//! names, install timeouts, deadlines and tool matchers ([`policy`]), and the rendering of a
//! [`memctl_engine::Reply`] in the output Gemini CLI reads ([`output`]).
//!
//! What differs from Claude Code: other event names (BeforeAgent, AfterTool, AfterAgent,
//! PreCompress), AfterTool's `tool_response` is an object whose `llmContent` is what the model
//! gets, and PreCompress fires before every model call whether it compresses or not, so it
//! only archives.

pub mod output;
pub mod payload;
pub mod policy;

pub use payload::{GeminiEvent, GeminiPayload};
pub use policy::GeminiEventName;
