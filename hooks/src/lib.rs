//! The agent side of memctl: the adapters between each coding agent and the agent-neutral
//! engine ([`claude`], [`codex`], [`gemini`]: payloads, event policy, output; what their hook
//! protocols share in [`protocol`], the choice among them in [`agent`]), the `memctl-hook` binary's logic
//! ([`hook::main`]), the settings it installs ([`install`], [`plugin`]) and the small process
//! plumbing a hook needs to start and check detached `memctl` processes ([`background`],
//! [`progress`]).
//!
//! This crate links the engine and nothing of the CLI's surfaces (MCP, viewer, team store):
//! a hook runs on every prompt and starts in a few milliseconds. The `memctl` CLI
//! (`memctl-cli`) depends on this crate for the shared pieces, never the other way.

pub mod agent;
pub mod background;
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod hook;
pub mod install;
pub mod logging;
pub mod no_telemetry;
pub mod plugin;
pub mod progress;
pub mod protocol;
