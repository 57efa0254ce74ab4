//! memctl's embedded memory engine.
//!
//! Claude Code transcript JSONL → turn chunks → embeddings → redb store + indexes → ranking →
//! budgeted restore text. See `ARCHITECTURE.md` at the repository root for the folder map.
//!
//! ```no_run
//! use memctl_engine::{Engine, EngineOptions, SearchRequest, Settings};
//! let settings = Settings::from_vars(std::env::vars_os())?;
//! let engine = Engine::open(EngineOptions::from_settings(&settings))?;
//! let found = engine.search(&SearchRequest::new("linker error in cargo test", 5))?;
//! for r in &found.results {
//!     println!("{:.3} {}", r.scores.score, r.record.chunk.summary);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod autopilot;
pub mod chunk;
pub mod claim;
pub mod clock;
pub mod codec;
mod core;
pub mod embed;
mod engine;
pub mod error;
pub(crate) mod evidence;
pub mod export;
pub mod filter;
pub mod forget;
pub mod hooks;
pub mod index;
mod ingest;
pub mod memory;
pub mod paths;
pub(crate) mod patterns;
pub mod prune;
pub mod rank;
pub mod recall;
pub mod redact;
pub mod resident;
pub mod restore;
pub mod retrieve;
pub mod search;
pub mod settings;
pub(crate) mod spool;
pub mod store;
pub mod summary;
pub mod swap;
#[cfg(target_os = "linux")]
mod sys;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub(crate) mod text;
pub mod transcript;

pub use chunk::Chunk;
pub use engine::{ActiveEmbedder, Engine, EngineOptions};
pub use error::{CodecError, EmbedError, EngineError, IndexError, StoreError};
pub use ingest::{IngestOptions, IngestProgress, IngestReport};
pub use retrieve::explain;
pub use retrieve::{SearchOutcome, SearchRequest, SearchResult};
pub use settings::{Loaded, Settings, SettingsError};
pub use store::SCHEMA_VERSION;
pub use store::migrate::{BackupReport, MigrateReport};
