//! memctl's binaries as a library: `memctl` (the CLI) and `memctl-hook` (Claude Code hooks).
//!
//! The binaries in `src/bin/` are one-line calls into [`cli::main`] and [`hook::main`], so
//! every behaviour is testable in-process.

pub mod background;
pub mod cli;
pub mod doctor;
pub mod filters;
pub mod forget;
pub mod hook;
pub mod install;
pub mod lifecycle;
pub mod logging;
pub mod mcp;
pub mod no_telemetry;
pub mod open;
pub mod pause;
pub mod plugin;
pub mod progress;
pub mod setup;
pub mod team;
pub mod ui;
