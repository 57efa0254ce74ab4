//! Assemble restore blocks and compaction instructions from the store.
//!
//! Work is bounded by design (hooks run this): the latest turns come from a reverse range scan
//! of the session's turn keys, and "key turns" come from retrieval (int8 vector scan + BM25 over
//! the project) seeded by the latest turns, never from reading a whole session. No model is
//! loaded: the query vector is the mean of stored vectors of the latest chunks.

use super::{RestoreBudget, RestoreLine, build};
use crate::clock::unix_now;
// The wrapper keeps PreCompact output out of the archive too: Claude Code echoes it into the
// `/compact` line's command output, and the parser strips `<memctl-context ...>` blocks.
use crate::core::Core;
use crate::embed::{Embedder, EmbedderId, l2_normalize};
use crate::error::EngineError;
use crate::patterns::{COMMAND_RE, DECISION_RE};
use crate::rank::{RankParams, importance};
use crate::retrieve::{Retrieval, Retriever};
use crate::search::{FusionParams, SearchMode};
use crate::store::{ChunkId, ChunkRecord, SessionRecord, StoreReader};
use std::collections::HashSet;

/// Restore settings (all configurable; defaults are the product's).
#[derive(Debug, Clone)]
pub struct RestoreConfig {
    /// Budget of the SessionStart block (default 4000 chars, never above 10 000).
    pub budget: RestoreBudget,
    /// Budget of the PreCompact instructions (default 2000 chars).
    pub precompact_chars: usize,
    /// Latest turns of the session always considered.
    pub recent_turns: usize,
    /// Retrieval candidates per retriever.
    pub candidates: usize,
    /// Key turns of the session at most.
    pub key_turns: usize,
    /// Turns from earlier sessions at most.
    pub related_turns: usize,
    /// Ranking parameters.
    pub rank: RankParams,
    /// Project memory files injected first (own sub-budget, see [`crate::memory`]).
    pub memory: crate::memory::MemoryConfig,
}

impl Default for RestoreConfig {
    fn default() -> Self {
        Self {
            budget: RestoreBudget::default(),
            precompact_chars: 2000,
            recent_turns: 6,
            candidates: 40,
            key_turns: 8,
            related_turns: 6,
            rank: RankParams::default(),
            memory: crate::memory::MemoryConfig::default(),
        }
    }
}

/// Why a session (re)started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreKind {
    /// After compaction: this session's own memory first.
    Compact,
    /// `--resume` / `--continue`.
    Resume,
    /// After `/clear`: the new session is empty; restore the previous session of the project.
    Clear,
    /// A fresh start (opt-in): the previous session of the project.
    Startup,
}

/// A built restore block and the chunks it shows (for access boosts).
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// The text (empty when there is nothing to restore).
    pub text: String,
    /// Chunks whose lines made it into the text.
    pub chunk_ids: Vec<ChunkId>,
    /// Session the "this session" sections came from.
    pub focus_session: Option<String>,
}

/// The most recently updated session of `project` other than `except` that has turns.
fn previous_session(
    r: &StoreReader,
    project: &str,
    except: &str,
) -> Result<Option<(String, SessionRecord)>, EngineError> {
    Ok(r.sessions()?
        .into_iter()
        .filter(|(id, s)| id != except && s.project == project && s.turns > 0)
        .max_by(|a, b| {
            a.1.last_ts
                .cmp(&b.1.last_ts)
                .then(a.1.updated_at.cmp(&b.1.updated_at))
        }))
}

/// The latest `n` chunks of a session, newest first.
fn latest_chunks(
    r: &StoreReader,
    session: &str,
    n: usize,
) -> Result<Vec<(ChunkId, ChunkRecord)>, EngineError> {
    let mut out = Vec::new();
    for (_, id) in r.session_turns_rev(session, n)? {
        if let Some(rec) = r.chunk(id)? {
            out.push((id, rec));
        }
    }
    Ok(out)
}

/// The most telling error line of a chunk's text: tool-output lines only (not the prompt or the
/// assistant's prose), with the `[error: Tool]` / `[result: Tool]` label and Claude Code's
/// `Exit code N` preamble skipped; strong markers (`error:`, `panicked`, `Traceback`, `FAILED`,
/// `Exception`) win over a bare "error"/"failed".
fn first_error_line(text: &str) -> Option<String> {
    let candidates = text
        .lines()
        .filter(|l| {
            !(l.starts_with("[tool:") || l.starts_with("User:") || l.starts_with("Assistant:"))
        })
        .map(|l| {
            let l = l.trim();
            match (
                l.starts_with("[error: ") || l.starts_with("[result: "),
                l.find("] "),
            ) {
                (true, Some(i)) => l[i + 2..].trim(),
                _ => l,
            }
        })
        .filter(|l| !l.is_empty() && !is_exit_code_line(l));
    let mut weak = None;
    for l in candidates {
        let lower = l.to_ascii_lowercase();
        let strong = lower.contains("error:")
            || lower.contains("error[")
            || lower.contains("panicked")
            || lower.contains("traceback")
            || l.contains("FAILED")
            || l.contains("Exception");
        if strong {
            return Some(l.chars().take(200).collect());
        }
        if weak.is_none() && (lower.contains("error") || lower.contains("failed")) {
            weak = Some(l.chars().take(200).collect());
        }
    }
    weak
}

/// A turn that is only a slash command (`/compact`, `/clear`) with no answer: nothing to restore.
pub(crate) fn is_bare_command(text: &str) -> bool {
    text.starts_with("User: /") && !text.lines().any(|l| l.starts_with("Assistant:"))
}

fn is_exit_code_line(l: &str) -> bool {
    l.strip_prefix("Exit code ")
        .is_some_and(|rest| rest.trim().chars().all(|c| c.is_ascii_digit() || c == '-'))
}

/// Exact identifiers worth keeping from a chunk: commands run and the first error line.
fn identifiers(rec: &ChunkRecord) -> (Vec<String>, Option<String>) {
    let mut cmds = Vec::new();
    for line in rec
        .chunk
        .text
        .lines()
        .filter(|l| l.starts_with("[tool: Bash]"))
    {
        if let Some(c) = COMMAND_RE.captures(line).and_then(|c| c.get(1)) {
            let cmd = c.as_str().replace("\\\"", "\"").replace("\\n", " ");
            if !cmds.contains(&cmd) {
                cmds.push(cmd);
            }
        }
    }
    let error = first_error_line(&rec.chunk.text);
    (cmds, error)
}

pub(crate) fn short_time(ts: Option<&str>) -> String {
    // RFC 3339: keep "MM-DD HH:MM".
    ts.and_then(|t| t.get(5..16))
        .map(|t| t.replace('T', " "))
        .unwrap_or_default()
}

/// One restore line for a chunk.
fn chunk_line(rec: &ChunkRecord, with_session: bool) -> String {
    let c = &rec.chunk;
    let mut s = String::new();
    if with_session {
        s.push_str(&format!(
            "[session {} ",
            c.session_id.get(..8).unwrap_or(&c.session_id)
        ));
    } else {
        s.push('[');
    }
    s.push_str(&format!("turn {}", c.turn_index));
    let t = short_time(c.started_at.as_deref());
    if !t.is_empty() {
        s.push_str(&format!(", {t}"));
    }
    s.push_str("] ");
    s.push_str(&c.summary);
    if !c.files.is_empty() {
        let files: Vec<&str> = c.files.iter().take(6).map(String::as_str).collect();
        s.push_str(&format!(" · files: {}", files.join(", ")));
    }
    let (cmds, err) = identifiers(rec);
    if !cmds.is_empty() {
        let cmds: Vec<String> = cmds.iter().take(3).map(|c| format!("`{c}`")).collect();
        s.push_str(&format!(" · ran: {}", cmds.join(", ")));
    }
    if let Some(e) = err {
        s.push_str(&format!(" · error: {e}"));
    }
    s
}

/// Mean of the stored vectors of `ids` in the first embedding space they all share (model
/// space preferred, hash space always present).
fn seed_vector(
    r: &StoreReader,
    recs: &[(ChunkId, ChunkRecord)],
) -> Result<Option<(EmbedderId, Vec<f32>)>, EngineError> {
    let spaces = [
        EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            "fp32",
            crate::embed::onnx::MINILM_DIMS,
        ),
        crate::embed::HashEmbedder::new().id().clone(),
    ];
    for emb in spaces {
        let mut acc: Option<Vec<f32>> = None;
        let mut n = 0;
        for (id, _) in recs.iter().take(3) {
            if let Some(v) = r.vector(*id, &emb)? {
                match &mut acc {
                    None => acc = Some(v),
                    Some(a) => a.iter_mut().zip(&v).for_each(|(x, y)| *x += y),
                }
                n += 1;
            }
        }
        if let Some(mut v) = acc
            && n > 0
        {
            l2_normalize(&mut v);
            return Ok(Some((emb, v)));
        }
    }
    Ok(None)
}

fn word_set(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

/// Near-duplicate check (Jaccard of words ≥ 0.8) for diversity.
fn near_duplicate(a: &HashSet<String>, seen: &[HashSet<String>]) -> bool {
    seen.iter().any(|b| {
        let inter = a.intersection(b).count();
        let union = a.len() + b.len() - inter;
        union > 0 && inter as f32 / union as f32 >= 0.8
    })
}

/// True when the compaction summary already holds every identifier of the line.
fn covered_by(summary: &str, rec: &ChunkRecord) -> bool {
    let (cmds, _) = identifiers(rec);
    let ids: Vec<&str> = rec
        .chunk
        .files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f))
        .chain(cmds.iter().map(String::as_str))
        .collect();
    !ids.is_empty() && ids.iter().all(|i| summary.contains(i))
}

/// Title of the restore section that lists swapped tool outputs.
pub const SWAP_INVENTORY_TITLE: &str =
    "Stored tool outputs (retrieve exactly with `memctl swap show <id>`)";
/// Swapped outputs listed at most (the budget may cut more).
const SWAP_INVENTORY_MAX: usize = 20;

/// Keep the words of `text` whose terms are informative in this project (document frequency at
/// most 1/16 of the documents, or 64), at most 12: common words would make BM25 read postings
/// lists as long as the history, for little ranking value. Bounds restore work on long sessions.
fn informative_words(
    lex: &crate::store::StoreLexical<'_>,
    text: &str,
) -> Result<String, EngineError> {
    let cap = (lex.docs() / 16).max(64);
    let mut kept = Vec::new();
    let mut seen = HashSet::new();
    for word in text.split_whitespace() {
        let terms = crate::index::lexical::query_terms(word);
        if terms.is_empty() || !seen.insert(word.to_string()) {
            continue;
        }
        let mut ok = true;
        for t in &terms {
            if lex.df(t)? > cap {
                ok = false;
                break;
            }
        }
        if ok {
            kept.push(word);
        }
        if kept.len() >= 12 {
            break;
        }
    }
    Ok(kept.join(" "))
}

/// Build the SessionStart restore block for `session_id` in `project`.
pub(crate) fn restore_block(
    engine: &Core,
    session_id: &str,
    project: &str,
    kind: RestoreKind,
    cfg: &RestoreConfig,
    exclude: &HashSet<ChunkId>,
) -> Result<Restored, EngineError> {
    let r = engine.store().read()?;
    let own = r.session(session_id)?.filter(|s| s.turns > 0);
    let (focus, focus_rec, focus_is_self) = match (kind, own) {
        (RestoreKind::Compact | RestoreKind::Resume, Some(s)) => (session_id.to_string(), s, true),
        _ => match previous_session(&r, project, session_id)? {
            Some((id, s)) => (id, s, false),
            None => return Ok(memory_only(project, cfg)),
        },
    };
    let Some(pid) = r.project_id(project)?.or(Some(focus_rec.project_id)) else {
        return Ok(memory_only(project, cfg));
    };
    let now = unix_now();
    let compact_summary = focus_rec.compact_summary.clone().unwrap_or_default();
    let recent = latest_chunks(&r, &focus, cfg.recent_turns)?;
    let mut lines: Vec<RestoreLine> = Vec::new();
    let mut shown: HashSet<ChunkId> = HashSet::new();
    let mut seen_words: Vec<HashSet<String>> = Vec::new();
    let mut ids = Vec::new();
    let mut turns_shown: HashSet<u32> = HashSet::new();
    for (rank, (id, rec)) in recent.iter().enumerate() {
        if exclude.contains(id) {
            shown.insert(*id); // already in the live context (an earlier block)
            continue;
        }
        if rec.chunk.is_compact_summary || is_bare_command(&rec.chunk.text) {
            continue; // Claude already has its own summary; bare commands say nothing.
        }
        if !turns_shown.insert(rec.chunk.turn_index) {
            shown.insert(*id); // another part of a turn already listed
            continue;
        }
        shown.insert(*id);
        seen_words.push(word_set(&rec.chunk.summary));
        let mut value = 3.0 - rank as f32 * 0.1;
        if !compact_summary.is_empty() && covered_by(&compact_summary, rec) {
            value *= 0.3;
        }
        lines.push(RestoreLine {
            section: 0,
            order: u64::from(rec.chunk.turn_index) * 1000 + u64::from(rec.chunk.part),
            value,
            text: chunk_line(rec, false),
        });
        ids.push(*id);
    }

    // Retrieval seeded by the latest turns: dense (stored vectors) + BM25 (latest prompts).
    let query_text: String = recent
        .iter()
        .take(2)
        .map(|(_, r)| {
            r.chunk
                .text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("User: ")
                .to_string()
                + " "
                + &r.chunk.summary
        })
        .collect::<Vec<_>>()
        .join(" ");
    let seed = seed_vector(&r, &recent)?;
    let lexical = r.lexical(&[pid])?;
    let query_text = informative_words(&lexical, &query_text)?;
    let ranked = Retriever::new(&r).rank(&Retrieval {
        text: &query_text,
        vector: seed.as_ref().map(|(e, v)| (e, v.as_slice())),
        project_ids: &[pid],
        candidates: cfg.candidates,
        mode: SearchMode::Hybrid,
        fusion: FusionParams::default(),
    })?;
    let mut key_n = 0;
    let mut related_n = 0;
    for h in ranked.hits {
        if shown.contains(&h.id) || exclude.contains(&h.id) {
            continue;
        }
        let Some(rec) = r.chunk(h.id)? else { continue };
        if rec.chunk.is_compact_summary || is_bare_command(&rec.chunk.text) {
            continue;
        }
        let same_session = rec.chunk.session_id == focus;
        if (same_session && key_n >= cfg.key_turns)
            || (!same_session && related_n >= cfg.related_turns)
        {
            continue;
        }
        let words = word_set(&rec.chunk.summary);
        if near_duplicate(&words, &seen_words) {
            continue;
        }
        let age_days = (now - rec.ingested_at).max(0) as f32 / 86_400.0;
        let imp = importance(
            age_days,
            rec.access_count,
            !rec.chunk.tools.is_empty(),
            !rec.chunk.files.is_empty(),
            &cfg.rank,
        );
        let mut value = h.score * imp * rec.confidence.max(0.1);
        if !compact_summary.is_empty() && covered_by(&compact_summary, &rec) {
            value *= 0.3;
        }
        let section = if same_session {
            key_n += 1;
            1
        } else {
            related_n += 1;
            2
        };
        seen_words.push(words);
        shown.insert(h.id);
        lines.push(RestoreLine {
            section,
            order: u64::from(rec.chunk.turn_index) * 1000 + u64::from(rec.chunk.part),
            value,
            text: chunk_line(&rec, !same_session),
        });
        ids.push(h.id);
    }
    // Tool outputs swapped whole by PostToolUse (focus session, and this one when it differs):
    // an inventory of ids to fetch exactly. Pointers, not content: valued below the latest
    // turns, newest first.
    let mut swapped = Vec::new();
    for s in std::iter::once(focus.as_str()).chain((focus != session_id).then_some(session_id)) {
        match crate::swap::inventory(&r, s) {
            Ok(v) => swapped.extend(v),
            Err(e) => tracing::warn!(error = %e, "swap inventory unavailable"),
        }
    }
    swapped.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    let mut listed = HashSet::new();
    swapped.retain(|e| listed.insert(e.id.clone()));
    for (rank, e) in swapped.iter().take(SWAP_INVENTORY_MAX).enumerate() {
        let accessed = if e.access_count > 0 { 0.1 } else { 0.0 };
        lines.push(RestoreLine {
            section: 3,
            order: rank as u64,
            value: 2.0 - rank as f32 * 0.05 + accessed,
            text: e.inventory_line(),
        });
    }
    let who = if focus_is_self {
        "this session".to_string()
    } else {
        format!(
            "previous session {} (last active {})",
            focus.get(..8).unwrap_or(&focus),
            short_time(focus_rec.last_ts.as_deref())
        )
    };
    let t0 = format!("Latest turns of {who}");
    let t1 = format!("Key earlier turns of {who}");
    let t2 = "Related turns from other sessions of this project".to_string();
    let t3 = SWAP_INVENTORY_TITLE;
    // Project memory files (.memctl/memory) print first, within their own sub-budget.
    for l in &mut lines {
        l.section += 1;
    }
    lines.extend(memory_lines(project, cfg));
    let (text, kept) = super::build_kept(
        super::RESTORE_FRAME,
        &[crate::memory::SECTION_TITLE, &t0, &t1, &t2, t3],
        &lines,
        cfg.budget,
    );
    // Only chunks whose line survived the budget count as restored: `ids[i]` is the chunk of
    // `lines[i]` (chunk lines are pushed first, then swap and memory lines).
    let chunk_ids = kept
        .into_iter()
        .filter_map(|i| ids.get(i).copied())
        .collect();
    Ok(Restored {
        text,
        chunk_ids,
        focus_session: Some(focus),
    })
}

/// Restore lines (section 0) for the project's memory files.
fn memory_lines(project: &str, cfg: &RestoreConfig) -> Vec<RestoreLine> {
    crate::memory::restore_lines(project, &cfg.memory)
        .into_iter()
        .enumerate()
        .map(|(i, m)| RestoreLine {
            section: 0,
            order: i as u64,
            value: m.value,
            text: m.text,
        })
        .collect()
}

/// A block with the project's memory files only (no archived session to restore from).
fn memory_only(project: &str, cfg: &RestoreConfig) -> Restored {
    let lines = memory_lines(project, cfg);
    Restored {
        text: build(&[crate::memory::SECTION_TITLE], &lines, cfg.budget),
        ..Restored::default()
    }
}

/// Plain-text instructions for Claude's summariser (PreCompact stdout): the open task, decisions,
/// exact identifiers, within `cfg.precompact_chars`. Empty when the session has no turns.
pub(crate) fn compaction_instructions(
    engine: &Core,
    session_id: &str,
    custom: Option<&str>,
    cfg: &RestoreConfig,
) -> Result<String, EngineError> {
    let r = engine.store().read()?;
    let recent = latest_chunks(&r, session_id, 30)?;
    let Some((_, last)) = recent
        .iter()
        .find(|(_, c)| !c.chunk.is_compact_summary && !is_bare_command(&c.chunk.text))
    else {
        return Ok(String::new());
    };
    let task: String = last
        .chunk
        .text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("User: ")
        .trim_end_matches(" (continued)")
        .chars()
        .take(300)
        .collect();
    let mut decisions: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut cmds: Vec<String> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for (_, rec) in &recent {
        for line in rec
            .chunk
            .text
            .lines()
            .filter(|l| l.starts_with("Assistant: "))
        {
            let text = line
                .trim_start_matches("Assistant: ")
                .replace("! ", ". ")
                .replace("? ", ". ");
            for sentence in text.split_inclusive(". ") {
                let s = sentence.trim();
                if DECISION_RE.is_match(s) && s.len() > 12 && decisions.len() < 8 {
                    let s: String = s.chars().take(220).collect();
                    if !decisions.contains(&s) {
                        decisions.push(s);
                    }
                }
            }
        }
        for f in &rec.chunk.files {
            if !files.contains(f) && files.len() < 15 {
                files.push(f.clone());
            }
        }
        let (c, e) = identifiers(rec);
        for c in c {
            if !cmds.contains(&c) && cmds.len() < 8 {
                cmds.push(c);
            }
        }
        if let Some(e) = e
            && !errors.contains(&e)
            && errors.len() < 5
        {
            errors.push(e);
        }
    }
    let mut lines = vec![RestoreLine {
        section: 0,
        order: 0,
        value: 10.0,
        text: format!("Open task (latest request): {task}"),
    }];
    let groups: [(&Vec<String>, &str, f32); 4] = [
        (&decisions, "Decision", 5.0),
        (&files, "File", 4.0),
        (&cmds, "Command", 3.0),
        (&errors, "Error", 2.0),
    ];
    for (list, label, base) in groups {
        for (i, item) in list.iter().enumerate() {
            let item = if label == "Command" {
                format!("`{item}`")
            } else {
                item.clone()
            };
            lines.push(RestoreLine {
                section: 0,
                order: lines.len() as u64,
                value: base - i as f32 * 0.01,
                text: format!("{label}: {item}"),
            });
        }
    }
    if let Some(c) = custom.filter(|c| !c.trim().is_empty()) {
        lines.push(RestoreLine {
            section: 0,
            order: 1,
            value: 9.0,
            text: format!("The user asked to focus on: {c}"),
        });
    }
    let frame = super::Frame {
        open: "<memctl-context kind=\"compaction-instructions\">",
        label: "memctl, for the summary: keep these exact details verbatim (they come from the archived conversation and are easy to lose).",
        close: super::WRAP_CLOSE,
    };
    Ok(super::build_framed(
        frame,
        &["Details to keep"],
        &lines,
        RestoreBudget {
            max_chars: cfg.precompact_chars,
            max_line_chars: 300,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_line_skips_labels_and_exit_codes() {
        let text = "User: build it\n[tool: Bash] {\"command\":\"cargo build\"}\n[error: Bash] Exit code 1\ncompiling quasar v0.7\nerror: linking failed: undefined reference to quasar_init_v7_k9\nAssistant: the error is in the linker";
        assert_eq!(
            first_error_line(text).as_deref(),
            Some("error: linking failed: undefined reference to quasar_init_v7_k9")
        );
        let label_only = "[error: Read] File does not exist.";
        assert_eq!(first_error_line(label_only), None);
        let weak = "[result: Bash] 3 tests failed";
        assert_eq!(first_error_line(weak).as_deref(), Some("3 tests failed"));
        let prose_only = "User: fix the error\nAssistant: the error was fixed";
        assert_eq!(first_error_line(prose_only), None);
    }

    #[test]
    fn slash_command_turns_are_trivial() {
        assert!(is_bare_command("User: /compact keep notes"));
        assert!(is_bare_command("User: /clear"));
        assert!(!is_bare_command(
            "User: /review\nAssistant: The diff looks fine."
        ));
        assert!(!is_bare_command("User: fix the /tmp path"));
    }
}
