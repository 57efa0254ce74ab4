//! The `memctl` command line and the surfaces only it serves: the agent's MCP tools
//! ([`mcp`]), the local viewer ([`ui`]), the team store on PostgreSQL ([`team`]), model
//! set-up ([`setup`]) and diagnostics ([`doctor`]).
//!
//! The binary in `src/main.rs` is one call into [`cli::main`], so every behaviour is testable
//! in-process. The Claude Code hook is a separate, lean binary (`memctl-hooks`).

pub mod background;
pub mod cli;
pub mod doctor;
pub mod filters;
pub mod forget;
pub mod lifecycle;
pub mod mcp;
pub mod open;
pub mod setup;
pub mod team;
pub mod ui;
