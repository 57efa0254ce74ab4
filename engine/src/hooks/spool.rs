//! Draining the spool ([`crate::spool`] has its layout): work a hook could not finish (store
//! busy, deadline passed) is finished by the next hook that gets the store.
//!
//! Claims: a drainer renames what it takes (`transcripts.draining-<pid>`,
//! `<name>.claimed-<pid>`), so two hooks never process the same entry; claims of processes
//! that died are taken over, and a claim that cannot be read is kept aside as `<claim>.bad`,
//! never deleted ([`crate::claim`]).

use super::event::AgentEvent;
use crate::engine::Engine;
use crate::error::{EngineError, StoreError};
use crate::ingest::IngestOptions;
use crate::spool::{
    SpooledTool, TOOL_MAX_BYTES, spool_tool, spool_transcript, tools_dir, transcripts_path,
};
use std::path::Path;
use std::time::Instant;

/// Hooks never load the model: new chunks get hash vectors and wait for `embed-pending`.
pub(super) fn hook_ingest_options() -> IngestOptions {
    IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    }
}

/// What a hook that ran out of time leaves for the next one: its transcript (every event that
/// archives) or its tool call (a tool output). Called by the binary's watchdog; never fails
/// loudly (it logs).
pub fn rescue(data_dir: &Path, p: &AgentEvent) {
    let project = p.project();
    let res = match p.tool_call(&project) {
        Some(call) => spool_tool(data_dir, &call),
        None => match p.transcript() {
            Some(t) if t.is_file() => spool_transcript(data_dir, t),
            _ => Ok(()),
        },
    };
    let event = p.kind.label();
    match res {
        Ok(()) => tracing::warn!(
            event,
            "deadline passed; the work is spooled for the next hook"
        ),
        Err(e) => {
            tracing::error!(event, error = %e, "deadline passed and spooling failed")
        }
    }
}

/// Finish spooled work (transcripts, then tool calls under `swap`), bounded by `deadline`.
pub(crate) fn drain(engine: &Engine, deadline: Instant, swap: &crate::swap::SwapConfig) {
    drain_transcripts(engine, deadline);
    drain_tools(engine, deadline, swap);
}

fn drain_transcripts(engine: &Engine, deadline: Instant) {
    let data_dir = engine.data_dir();
    let path = transcripts_path(data_dir);
    let mut claims = crate::claim::claim_all(&path, "draining");
    if claims.is_empty() {
        return;
    }
    let mut text = String::new();
    // Only claims that were read are deleted below; an unreadable one is kept aside.
    claims.retain(|c| match read_claimed(c) {
        Ok(t) => {
            text.push_str(&t);
            true
        }
        Err(e) => {
            crate::claim::set_aside(c, &e);
            false
        }
    });
    let mut paths: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    paths.sort_unstable();
    paths.dedup();
    let mut left = Vec::new();
    for p in paths {
        if Instant::now() >= deadline {
            left.push(p);
            continue;
        }
        if let Err(e) = engine.ingest_transcript(Path::new(p), &hook_ingest_options()) {
            tracing::warn!(transcript = p, error = %e, "spooled transcript could not be archived");
            if matches!(e, EngineError::Store(StoreError::Busy { .. })) {
                left.push(p);
            }
        }
    }
    for p in left {
        if let Err(e) = spool_transcript(data_dir, Path::new(p)) {
            tracing::error!(transcript = p, error = %e, "re-spooling failed");
        }
    }
    for c in &claims {
        if let Err(e) = std::fs::remove_file(c) {
            tracing::warn!(file = %c.display(), error = %e, "removing the drained spool failed");
        }
    }
}

/// The text of a claimed spool file, newline-terminated (a bounded, regular-file read). Why a
/// `Result`: an unreadable spool once read as empty and was then deleted with its entries.
fn read_claimed(path: &Path) -> std::io::Result<String> {
    let mut t = crate::paths::read_regular_string(path, crate::paths::SPOOL_MAX_BYTES)?;
    if !t.is_empty() && !t.ends_with('\n') {
        t.push('\n');
    }
    Ok(t)
}

fn drain_tools(engine: &Engine, deadline: Instant, swap: &crate::swap::SwapConfig) {
    let dir = tools_dir(engine.data_dir());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        if Instant::now() >= deadline {
            return;
        }
        let path = dir.join(&name);
        let claimed = if name.ends_with(".json") {
            match crate::claim::claim_own(&path, "claimed") {
                Some(c) => c,
                None => continue, // another hook took it
            }
        } else if name.contains(".claimed-") {
            match crate::claim::claim_orphans(&path, "claimed").pop() {
                Some(c) => c,
                None => continue,
            }
        } else {
            continue; // a `.tmp` being written
        };
        store_claimed_tool(engine, &claimed, swap);
    }
}

fn store_claimed_tool(engine: &Engine, claimed: &Path, cfg: &crate::swap::SwapConfig) {
    let rec = crate::paths::read_regular(claimed, TOOL_MAX_BYTES)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<SpooledTool>(&b).map_err(|e| e.to_string()));
    let rec = match rec {
        Ok(r) => r,
        Err(e) => {
            crate::claim::set_aside(claimed, &e);
            return;
        }
    };
    let call = crate::swap::ToolCall {
        session_id: &rec.session_id,
        project: &rec.project,
        tool_name: &rec.tool_name,
        tool_input: &rec.tool_input,
        tool_response: &rec.tool_response,
        tool_use_id: rec.tool_use_id.as_deref(),
        failed: rec.failed,
    };
    match engine.swap_tool_output(&call, cfg, crate::clock::unix_now()) {
        Err(EngineError::Store(StoreError::Busy { .. })) => {
            // Back into the queue under a fresh name; the next hook tries again.
            let back = claimed.with_extension("json");
            if let Err(e) = std::fs::rename(claimed, &back) {
                tracing::error!(file = %claimed.display(), error = %e, "re-queueing a spooled tool call failed");
            }
            return;
        }
        Err(e) => {
            tracing::warn!(tool = rec.tool_name, error = %e, "spooled tool output not swapped")
        }
        Ok(_) => tracing::debug!(tool = rec.tool_name, "spooled tool output stored"),
    }
    if let Err(e) = std::fs::remove_file(claimed) {
        tracing::warn!(file = %claimed.display(), error = %e, "removing a drained tool call failed");
    }
}

#[cfg(test)]
#[path = "spool_tests.rs"]
mod tests;
