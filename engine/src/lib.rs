//! memctl's embedded memory engine.
//!
//! Claude Code transcript JSONL → turn chunks → embeddings → redb store + indexes → ranking →
//! budgeted restore text; agent events in, neutral replies out (an agent's adapter, such as
//! `memctl-hooks` for Claude Code, parses its payloads and renders the replies). See `ARCHITECTURE.md` at the repository root for the folder map.
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

mod agent;
mod ann;
mod autopilot;
mod chunk;
mod claim;
mod clock;
mod codec;
mod core;
mod embed;
mod engine;
mod error;
mod evidence;
mod export;
mod filter;
mod fold;
mod forget;
#[cfg(test)]
mod fuzz;
mod hooks;
mod index;
mod ingest;
mod memory;
mod paths;
mod patterns;
mod prune;
mod rank;
mod recall;
mod redact;
mod resident;
mod restore;
mod retrieve;
mod search;
mod settings;
mod spool;
mod store;
mod summary;
mod swap;
#[cfg(target_os = "linux")]
mod sys;
mod telemetry;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod text;
mod transcript;

// The engine and what it is opened with, asked and answers. Every other crate reaches the
// engine through this list: the modules themselves are private.
pub use agent::Agent;
pub use ann::{
    AnnAnswer, AnnHit, BlockCursor, DenseService, FeedEntry, Followed, IndexSettings, ann_dir,
};
pub use chunk::Chunk;
pub use engine::{ActiveEmbedder, Engine, EngineOptions};
pub use error::{CodecError, EmbedError, EngineError, IndexError, StoreError};
pub use ingest::{IngestOptions, IngestProgress, IngestReport};
pub use retrieve::when::{
    EventRelation, EventTurn, TimeEvent, TimeOrder, TimeScope, age, time_scope,
};
pub use retrieve::{ColdScan, SearchOutcome, SearchRequest, SearchResult};
pub use settings::{Loaded, Settings, SettingsError};
pub use store::migrate::{BackupReport, MigrateReport};
pub use store::{FileCompaction, SCHEMA_VERSION};
// Settings and configuration.
pub use settings::{ConfigEntry, FileScope, ProjectRule, Source as SettingSource};
// Search, ranking and the explanation of a hit.
pub use filter::{normalize_project, parse_time, resolve_project, resolve_session};
pub use fold::{Copies, TEXT_ALONE_MIN, TEXT_MIN, VECTOR_MIN, fold_key, text_similarity};
pub use rank::usage::is_strong;
pub use rank::{RankParams, importance};
pub use retrieve::explain::{highlight_spans, index_terms, matched_lines, term_spans};
pub use search::{FusionParams, SearchMode};
// Restore and prompt-time recall.
pub use recall::{
    CONFIDENT as RECALL_CONFIDENT, ContextState, GateParams, RecallConfig, Recalled, Thresholds,
    chunk_identifiers, gate as recall_gate, load_state as load_recall_state, prompt_kind,
};
pub use restore::{MAX_RESTORE_CHARS, RestoreConfig, RestoreKind, RestoreMode};
pub use summary::SummaryConfig;
pub use summary::external::ExternalConfig as ExternalSummaryConfig;
// Agent events: what an adapter hands the engine and gets back, and the deferred jobs.
pub use hooks::jobs::{INGEST as JOB_INGEST, Job, MIGRATE as JOB_MIGRATE, request as request_job};
pub use hooks::{
    AgentEvent, EventKind, HookAnswer, HookConfig, HookEffects, Reply, StartKind, ToolUse,
    handle as handle_event, handle_without_store as handle_event_without_store,
    may_recall as event_may_recall, note_compactions, reads_only as event_reads_only,
    rescue as rescue_event,
};
// The store, its records and its checks.
pub use codec::{decode_record, encode_record};
pub use store::check::{CheckReport, Integrity, check_store};
pub use store::{ChunkRecord, SessionRecord, TurnRef};
// Swapped tool outputs.
pub use swap::inplace::line_span;
pub use swap::{
    SWAPPED_TOOLS, SwapConfig, SwapContent, SwapEntry, SwapOutcome, ToolCall, content_id,
    human_bytes, short_id,
};
// Export, import and forget.
pub use export::format::VectorRec;
pub use export::{
    ExportError, ExportOptions, ExportReport, ImportOptions, ImportReport, KindCounts,
    Phase as ExportPhase, Progress as ExportProgress,
};
pub use forget::{BackupsReport, ForgetError, ForgetReport, ForgetRequest, Interrupted};
// Embedding and the resident service.
pub use embed::onnx::{MINILM_NAME, ORT_LIB_FILE};
pub use embed::{
    Embedded, Embedder, EmbedderId, HashEmbedder, OnnxConfig, OnnxEmbedder, dot, l2_normalize,
    lower_priority,
};
pub use resident::{
    Bulk, BulkWork, ResidentError, ServeEnd, embed_query, notify_pending, serve as serve_resident,
    socket_path as resident_socket_path,
};
// Memory files (CLAUDE.md and the memory folder).
pub use memory::claude_md::{remove as remove_claude_md_block, upsert as upsert_claude_md_block};
pub use memory::note::{NoteKind, append_note};
pub use memory::{
    FILES as MEMORY_FILES, MAX_FILE_BYTES as MEMORY_MAX_FILE_BYTES, MEMORY_DIR, MemoryConfig,
    SESSION_STATE_FILE, SessionState, collect as collect_memory, find_dir as find_memory_dir,
    init as init_memory,
};
// Telemetry and the context autopilot.
pub use autopilot::{
    AutopilotConfig, Estimate, MemTokens, StatusInput, TokenSource, estimate_transcript,
    format_count, format_statusline, format_tokens, load_state as load_autopilot_state,
    report as autopilot_report,
};
pub use telemetry::{
    ContextFill, ContextSample, Counts as TelemetryCounts, DIR as TELEMETRY_DIR, FillSource,
    HookCounts, HookInjection, Injection, Record as TelemetryRecord, SessionReport,
    TelemetryReport, read_file as read_telemetry_file, read_session as read_session_telemetry,
    record_context, record_hook, report as telemetry_report,
    session_report as session_telemetry_report, summarize as summarize_telemetry,
};
// Transcripts, redaction, files and time.
pub use clock::unix_now;
pub use paths::{
    ensure_private_dir, read_regular, read_regular_string, resolves_inside, restrict_file,
    try_lock_file, write_private_atomic,
};
pub use redact::{Redacted, redact, redact_json};
pub use transcript::{Batch as TranscriptBatch, ChunkerConfig, chunk_transcript, ellipsize};
// Index building blocks (benchmarks and the index conformance suite).
pub use index::lexical::term_frequencies;
pub use index::quant::{
    QuantQuery, dot_i8, encode_block, quantize, quantize_into, rescore, scan_blocks,
};
pub use index::synth::TextGen;
pub use index::{Hit, MemLexicalIndex, TopK, VectorIndex, checked_normalized};
