//! Assemble restore blocks from the store.
//!
//! Work is bounded by design (hooks run this): the latest turns come from a reverse range scan
//! of the session's turn keys, "key turns" come from retrieval (int8 vector scan + BM25 over
//! the project) seeded by the latest turns, decisions and open items from the extractive
//! summary of the latest turns, never from reading a whole session. No model is loaded: the
//! query vector is the mean of stored vectors of the latest chunks. What a turn's line says is
//! decided by the pure functions of [`super::lines`].

use super::fetch::{
    informative_words, latest_chunks, near_duplicate, previous_session, seed_vector, turn_text,
    word_set,
};
use super::lines::{LineHead, turn_line, turn_parts};
use super::reinjected::{Reinjected, is_reinjected_path, normalize};
use super::sources::{RestoreMode, RestoreSources};
use super::{RestoreBudget, RestoreLine, build};
use crate::clock::{short_time, unix_now};
use crate::core::Core;
use crate::error::EngineError;
use crate::fold::{Copies, Folder, Sig};
use crate::rank::{RankParams, importance};
use crate::retrieve::{Retrieval, Retriever};
use crate::search::{FusionParams, SearchMode};
use crate::store::{ChunkId, ChunkRecord, SessionRecord, StoreReader};
use std::collections::HashSet;
use std::path::PathBuf;

/// Restore settings (all configurable; defaults are the product's).
#[derive(Debug, Clone)]
pub struct RestoreConfig {
    /// Budget of the SessionStart block (default 4000 chars, never above 10 000).
    pub budget: RestoreBudget,
    /// Budget of the PreCompact instructions (default 2000 chars).
    pub precompact_chars: usize,
    /// Latest turns of the session always considered (at the default budget; more with a
    /// larger one, see [`Caps`]).
    pub recent_turns: usize,
    /// Retrieval candidates per retriever (at the default budget).
    pub candidates: usize,
    /// Key turns of the session at most (at the default budget).
    pub key_turns: usize,
    /// Turns from earlier sessions at most (at the default budget).
    pub related_turns: usize,
    /// Ranking parameters.
    pub rank: RankParams,
    /// Project memory files injected first (own sub-budget, see [`crate::memory`]).
    pub memory: crate::memory::MemoryConfig,
    /// What each SessionStart source restores.
    pub sources: RestoreSources,
    /// Claude Code's config folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`): where its
    /// auto-memory lives, which it re-injects itself (see [`super::reinjected`]).
    pub claude_dir: Option<PathBuf>,
    /// Fold near-identical turns into one line with a count (default); `false` gives each
    /// copy its own line (`memctl restore --no-fold`).
    pub fold: bool,
    /// The restore's own time (Unix seconds): what the lines' ages ("3 days ago") and the
    /// turns' importance are relative to; `None` = the engine's clock when the block is built.
    pub now: Option<i64>,
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
            sources: RestoreSources::default(),
            claude_dir: None,
            fold: true,
            now: None,
        }
    }
}

/// The counts of a restore, scaled to its budget: the configured counts are sized for the
/// default 4000 chars, and a larger budget with the same counts would stay half empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caps {
    pub(crate) recent: usize,
    pub(crate) key: usize,
    pub(crate) related: usize,
    pub(crate) candidates: usize,
    pub(crate) decisions: usize,
    pub(crate) open_items: usize,
}

impl Caps {
    /// The configured counts times `budget / 4000` (never below the configured counts).
    pub(crate) fn for_config(cfg: &RestoreConfig) -> Self {
        let default = RestoreBudget::default().max_chars;
        let scale = |n: usize| (n * cfg.budget.max_chars.max(default)).div_ceil(default);
        Self {
            recent: scale(cfg.recent_turns).min(30),
            key: scale(cfg.key_turns),
            related: scale(cfg.related_turns),
            candidates: scale(cfg.candidates),
            decisions: scale(5),
            open_items: scale(3),
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
    /// Chunks whose lines made it into the text, and the copies folded into those lines.
    pub chunk_ids: Vec<ChunkId>,
    /// Session the "this session" sections came from.
    pub focus_session: Option<String>,
}

/// A turn that is only a slash command (`/compact`, `/clear`) with no answer: nothing to restore.
pub(crate) fn is_bare_command(text: &str) -> bool {
    text.starts_with("User: /") && !text.lines().any(|l| l.starts_with("Assistant:"))
}

/// True when the compaction summary already holds every identifier of the line.
fn covered_by(summary: &str, rec: &ChunkRecord) -> bool {
    let cmds = turn_parts(&rec.chunk.text).commands;
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

/// Section titles of a full block, in print order (the indexes of [`RestoreLine::section`]).
const MEMORY: usize = 0;
const LATEST: usize = 1;
const DECISIONS: usize = 2;
const KEY: usize = 3;
const RELATED: usize = 4;
const SWAPPED: usize = 5;

/// Build the SessionStart restore block for `session_id` in `project`, as much as
/// `cfg.sources` says a restore of `kind` gets.
pub(crate) fn restore_block(
    engine: &Core,
    session_id: &str,
    project: &str,
    kind: RestoreKind,
    cfg: &RestoreConfig,
    exclude: &HashSet<ChunkId>,
) -> Result<Restored, EngineError> {
    let mode = cfg.sources.mode(kind);
    if mode == RestoreMode::Off {
        return Ok(Restored::default());
    }
    let r = engine.store().read()?;
    let reinjected = Reinjected::load(project, cfg.claude_dir.as_deref());
    let own = r.session(session_id)?.filter(|s| s.turns > 0);
    let (focus, focus_rec, focus_is_self) = match (kind, own) {
        (RestoreKind::Compact | RestoreKind::Resume, Some(s)) => (session_id.to_string(), s, true),
        _ => match previous_session(&r, project, session_id)? {
            Some((id, s)) => (id, s, false),
            None => return Ok(memory_only(project, cfg, &reinjected)),
        },
    };
    if mode == RestoreMode::Brief {
        return Ok(brief_restore(
            kind,
            focus,
            &focus_rec,
            project,
            cfg,
            &reinjected,
        ));
    }
    let Some(pid) = r.project_id(project)?.or(Some(focus_rec.project_id)) else {
        return Ok(memory_only(project, cfg, &reinjected));
    };
    let caps = Caps::for_config(cfg);
    let compact_summary = focus_rec.compact_summary.clone().unwrap_or_default();

    // Decisions and open items first: turn lines leave those sentences out (said once). After
    // a compaction they come from the summary PreCompact stored (see `current_or_build`).
    let mut picked = Picked {
        fold: cfg.fold,
        ..Picked::default()
    };
    let summary = crate::summary::current_or_build(
        &r,
        &focus,
        &crate::summary::SummaryConfig {
            max_turns: 80,
            decisions: caps.decisions,
            open_items: caps.open_items,
            ..Default::default()
        },
    )?;
    let said = push_decisions(&mut picked, summary.as_ref(), project, &reinjected);
    let known = |s: &str| reinjected.covers(s) || said.contains(&normalize(s));
    let ctx = LineContext {
        r: &r,
        session_id,
        now: cfg.now.unwrap_or_else(unix_now),
        project,
        reinjected: &reinjected,
        known: &known,
        compact_summary: &compact_summary,
        exclude,
    };
    let recent = latest_chunks(&r, &focus, caps.recent)?;
    add_latest(&ctx, &mut picked, &recent)?;
    let ranked = related(&r, pid, &recent, caps.candidates)?;
    add_ranked(&ctx, &mut picked, &ranked, &focus, &caps, &cfg.rank)?;
    for line in swap_lines(&r, &focus, session_id) {
        picked.push(line, None);
    }
    for line in memory_lines(project, cfg, &reinjected) {
        picked.push(line, None);
    }
    let titles = section_titles(focus_is_self, &focus, &focus_rec);
    let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
    // A small budget shows more turns, each shorter, rather than two long ones.
    let budget = RestoreBudget {
        max_line_chars: cfg
            .budget
            .max_line_chars
            .min((cfg.budget.max_chars / 4).max(160)),
        ..cfg.budget
    };
    let lines = picked.labelled_lines();
    let (text, kept) = super::build_kept(super::RESTORE_FRAME, &titles, &lines, budget);
    // Only chunks whose line survived the budget count as restored, with the copies folded
    // into those lines (shown as a count, they are in the context as much as their twin).
    let chunk_ids = kept
        .into_iter()
        .flat_map(|i| {
            let copies = picked.copies.get(i).map_or(&[][..], |c| &c.ids[..]);
            picked
                .ids
                .get(i)
                .copied()
                .flatten()
                .into_iter()
                .chain(copies.iter().copied())
        })
        .collect();
    Ok(Restored {
        text,
        chunk_ids,
        focus_session: Some(focus),
    })
}

/// Push the focus session's decision and open-item lines; returns every decision and open
/// item of its summary, normalized (turn lines leave those sentences out: said once).
fn push_decisions(
    picked: &mut Picked,
    summary: Option<&crate::summary::SessionSummary>,
    project: &str,
    reinjected: &Reinjected,
) -> HashSet<String> {
    let mut said: HashSet<String> = HashSet::new();
    if let Some(s) = summary {
        for line in decision_lines(s, project, reinjected) {
            said.insert(normalize(line.text.split_once(": ").map_or("", |x| x.1)));
            picked.push(line, None);
        }
    }
    for d in summary
        .iter()
        .flat_map(|s| s.decisions.iter().chain(&s.open_items))
    {
        said.insert(normalize(d));
    }
    said
}

/// The lines a restore picked so far; `ids[i]` is the chunk of `lines[i]` (None for a line of
/// no chunk), and what is shown already, so that no turn or near-duplicate is listed twice.
/// `copies[i]` are the near-identical turns folded into `lines[i]` ([`crate::fold`]): they take
/// no line and no budget; the line says how many there are.
#[derive(Debug, Default)]
struct Picked {
    lines: Vec<RestoreLine>,
    ids: Vec<Option<ChunkId>>,
    copies: Vec<Copies>,
    folder: Folder,
    fold: bool,
    shown: HashSet<ChunkId>,
    seen_words: Vec<HashSet<String>>,
    turns_shown: HashSet<u32>,
}

impl Picked {
    fn push(&mut self, line: RestoreLine, id: Option<ChunkId>) {
        self.lines.push(line);
        self.ids.push(id);
        self.copies.push(Copies::default());
    }

    /// Push the line of chunk `id` (`rec`, signature `sig` when folding), recording it for
    /// the copies to come.
    fn push_turn(&mut self, line: RestoreLine, id: ChunkId, rec: &ChunkRecord, sig: Option<Sig>) {
        if let Some(sig) = sig {
            self.folder.copy_of(sig, self.lines.len());
        }
        self.push(line, Some(id));
        if let Some(c) = self.copies.last_mut() {
            *c = Copies::of(rec.chunk.started_at.as_deref());
        }
    }

    /// Whether chunk `id` (`rec`) is a copy of a listed turn; if so it is folded into it.
    fn folded(
        &mut self,
        r: &StoreReader,
        id: ChunkId,
        rec: &ChunkRecord,
    ) -> Result<Folded, EngineError> {
        if !self.fold {
            return Ok(Folded::New(None));
        }
        let sig = crate::retrieve::fold_sig(r, id, rec)?;
        let Some(i) = self.folder.find(&sig) else {
            return Ok(Folded::New(Some(sig)));
        };
        self.copies[i].add(id, rec.chunk.started_at.as_deref());
        Ok(Folded::Copy)
    }

    /// The lines, each with its copies' count and dates in its head (`[turn 4, …; ×3, first …,
    /// last …]`), where the budget's clipping of the line's end cannot cut it.
    fn labelled_lines(&self) -> Vec<RestoreLine> {
        let mut lines = self.lines.clone();
        for (line, copies) in lines.iter_mut().zip(&self.copies) {
            if let (Some(label), Some(end)) = (copies.label(), line.text.find("] ")) {
                line.text.insert_str(end, &format!("; {label}"));
            }
        }
        lines
    }
}

/// [`Picked::folded`]: a copy of a listed turn, or a new turn (its signature when folding).
enum Folded {
    Copy,
    New(Option<Sig>),
}

/// What turning a chunk into a restore line needs.
struct LineContext<'a> {
    r: &'a StoreReader,
    /// The session the block is for: turns of other sessions show their age.
    session_id: &'a str,
    /// The restore's time (Unix seconds).
    now: i64,
    project: &'a str,
    reinjected: &'a Reinjected,
    /// Sentences said already (decisions, open items, re-injected memory).
    known: &'a dyn Fn(&str) -> bool,
    /// Claude Code's own compaction summary: a line it covers is worth less.
    compact_summary: &'a str,
    /// Chunks in the live context already.
    exclude: &'a HashSet<ChunkId>,
}

impl LineContext<'_> {
    fn line(
        &self,
        rec: &ChunkRecord,
        session: Option<&str>,
    ) -> Result<Option<String>, EngineError> {
        let now = jiff::Timestamp::from_second(self.now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let age = crate::retrieve::when::line_age(
            rec.chunk.started_at.as_deref(),
            rec.chunk.session_id != self.session_id,
            now,
        );
        chunk_line(
            self.r,
            rec,
            session,
            age.as_deref(),
            self.project,
            self.reinjected,
            self.known,
        )
    }

    /// `value`, lowered when Claude Code's compaction summary covers the chunk.
    fn discounted(&self, value: f32, rec: &ChunkRecord) -> f32 {
        if !self.compact_summary.is_empty() && covered_by(self.compact_summary, rec) {
            value * 0.3
        } else {
            value
        }
    }
}

/// The latest turns of the focus session, newest valued most.
fn add_latest(
    ctx: &LineContext<'_>,
    picked: &mut Picked,
    recent: &[(ChunkId, ChunkRecord)],
) -> Result<(), EngineError> {
    for (rank, (id, rec)) in recent.iter().enumerate() {
        picked.shown.insert(*id);
        if ctx.exclude.contains(id) || !picked.turns_shown.insert(rec.chunk.turn_index) {
            continue; // already in the live context, or another part of a listed turn
        }
        let Folded::New(sig) = picked.folded(ctx.r, *id, rec)? else {
            continue; // an older run of a turn listed already
        };
        let Some(text) = ctx.line(rec, None)? else {
            continue;
        };
        picked.seen_words.push(word_set(&rec.chunk.summary));
        let line = RestoreLine {
            section: LATEST,
            order: turn_order(rec),
            value: ctx.discounted(3.0 - rank as f32 * 0.1, rec),
            text,
        };
        picked.push_turn(line, *id, rec, sig);
    }
    Ok(())
}

/// Retrieval seeded by the latest turns: dense (their stored vectors) + BM25 (their prompts and
/// summaries, informative words only).
fn related(
    r: &StoreReader,
    pid: u32,
    recent: &[(ChunkId, ChunkRecord)],
    candidates: usize,
) -> Result<crate::retrieve::Ranked, EngineError> {
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
    let seed = seed_vector(r, recent)?;
    let lexical = r.lexical(&[pid])?;
    let query_text = informative_words(&lexical, &query_text)?;
    Ok(Retriever::for_hook(r).rank(&Retrieval {
        text: &query_text,
        vector: seed.as_ref().map(|(e, v)| (e, v.as_slice())),
        project_ids: &[pid],
        candidates,
        mode: SearchMode::Hybrid,
        fusion: FusionParams::default(),
        lexical: None,
    })?)
}

/// Key earlier turns of the focus session and related turns of other sessions, from the ranked
/// hits, up to their caps, skipping what is shown or nearly duplicates it.
fn add_ranked(
    ctx: &LineContext<'_>,
    picked: &mut Picked,
    ranked: &crate::retrieve::Ranked,
    focus: &str,
    caps: &Caps,
    rank: &RankParams,
) -> Result<(), EngineError> {
    let now = ctx.now;
    let (mut key_n, mut related_n) = (0, 0);
    for h in &ranked.hits {
        if picked.shown.contains(&h.id) || ctx.exclude.contains(&h.id) {
            continue;
        }
        let Some(rec) = ctx.r.chunk(h.id)? else {
            continue;
        };
        let Folded::New(sig) = picked.folded(ctx.r, h.id, &rec)? else {
            picked.shown.insert(h.id);
            continue;
        };
        let same_session = rec.chunk.session_id == focus;
        if (same_session && key_n >= caps.key) || (!same_session && related_n >= caps.related) {
            continue;
        }
        if same_session && picked.turns_shown.contains(&rec.chunk.turn_index) {
            continue;
        }
        let words = word_set(&rec.chunk.summary);
        if near_duplicate(&words, &picked.seen_words) {
            continue;
        }
        let session = (!same_session).then_some(rec.chunk.session_id.as_str());
        let Some(text) = ctx.line(&rec, session)? else {
            continue;
        };
        let age_days = (now - rec.ingested_at).max(0) as f32 / 86_400.0;
        let imp = importance(
            age_days,
            rec.access_count,
            !rec.chunk.tools.is_empty(),
            !rec.chunk.files.is_empty(),
            rank,
        );
        let value = ctx.discounted(h.score * imp * rec.confidence.max(0.1), &rec);
        let section = if same_session {
            key_n += 1;
            picked.turns_shown.insert(rec.chunk.turn_index);
            KEY
        } else {
            related_n += 1;
            RELATED
        };
        picked.seen_words.push(words);
        picked.shown.insert(h.id);
        let line = RestoreLine {
            section,
            order: turn_order(&rec),
            value,
            text,
        };
        picked.push_turn(line, h.id, &rec, sig);
    }
    Ok(())
}

/// The restore's section titles, in section order.
fn section_titles(focus_is_self: bool, focus: &str, focus_rec: &SessionRecord) -> [String; 6] {
    let who = if focus_is_self {
        "this session".to_string()
    } else {
        format!(
            "previous session {} (last active {})",
            focus.get(..8).unwrap_or(focus),
            short_time(focus_rec.last_ts.as_deref())
        )
    };
    [
        crate::memory::SECTION_TITLE.to_string(),
        format!("Latest turns of {who}"),
        format!("Decisions and open items of {who}"),
        format!("Key earlier turns of {who}"),
        "Related turns from other sessions of this project".to_string(),
        SWAP_INVENTORY_TITLE.to_string(),
    ]
}

/// A brief restore: memory lines and one pointer to the archived session (no turns).
fn brief_restore(
    kind: RestoreKind,
    focus: String,
    focus_rec: &SessionRecord,
    project: &str,
    cfg: &RestoreConfig,
    reinjected: &Reinjected,
) -> Restored {
    let mut lines = memory_lines(project, cfg, reinjected);
    lines.push(RestoreLine {
        section: 1,
        order: 0,
        value: 1.0,
        text: brief_pointer(
            kind,
            &focus,
            focus_rec.turns,
            &short_time(focus_rec.last_ts.as_deref()),
        ),
    });
    Restored {
        text: build(
            &[crate::memory::SECTION_TITLE, "Archived conversation"],
            &lines,
            cfg.budget,
        ),
        chunk_ids: Vec::new(),
        focus_session: Some(focus),
    }
}

/// Print order of a chunk's line inside its section: turn order.
fn turn_order(rec: &ChunkRecord) -> u64 {
    u64::from(rec.chunk.turn_index) * 1000 + u64::from(rec.chunk.part)
}

/// The line of a chunk's turn (all its parts read: the prompt is in the first, the answer in
/// the last), with its `age` when given, or None when there is nothing to restore: a compaction summary (Claude has its
/// own), a bare slash command, a trivial turn, or a turn that only read or wrote files Claude
/// Code re-injects itself.
fn chunk_line(
    r: &StoreReader,
    rec: &ChunkRecord,
    session: Option<&str>,
    age: Option<&str>,
    project: &str,
    reinjected: &Reinjected,
    known: &dyn Fn(&str) -> bool,
) -> Result<Option<String>, EngineError> {
    let c = &rec.chunk;
    if c.is_compact_summary || is_bare_command(&c.text) {
        return Ok(None);
    }
    let text = turn_text(r, rec)?;
    let parts = turn_parts(&text);
    let root = project.trim_end_matches('/');
    let files: Vec<String> = c
        .files
        .iter()
        .filter(|f| !is_reinjected_path(f) && f.trim_end_matches('/') != root)
        .cloned()
        .collect();
    if !c.files.is_empty() && files.is_empty() && parts.error.is_none() {
        return Ok(None); // it only read or wrote CLAUDE.md / MEMORY.md
    }
    let time = short_time(c.started_at.as_deref());
    let head = LineHead {
        session,
        turn: c.turn_index,
        time: &time,
        age,
    };
    let known = |s: &str| known(s) || reinjected.covers(s);
    Ok(turn_line(head, &parts, &files, project, &known))
}

/// `Decision:` and `Open:` lines from the focus session's summary (newest valued most), paths
/// relative, without what Claude Code re-injects.
fn decision_lines(
    s: &crate::summary::SessionSummary,
    project: &str,
    reinjected: &Reinjected,
) -> Vec<RestoreLine> {
    let mut out = Vec::new();
    // The newest open item and decision rank between the latest turns, older ones fall
    // behind them: a small budget keeps the latest work and what is still open.
    let groups = [
        ("Open", &s.open_items, 2.75),
        ("Decision", &s.decisions, 2.65),
    ];
    for (g, (label, items, base)) in groups.into_iter().enumerate() {
        let n = items.len();
        for (i, item) in items.iter().enumerate() {
            if reinjected.covers(item) {
                continue;
            }
            out.push(RestoreLine {
                section: DECISIONS,
                order: (g * 1000 + i) as u64,
                value: base - (n - 1 - i) as f32 * 0.1,
                text: super::lines::relativize(&format!("{label}: {item}"), project),
            });
        }
    }
    out
}

/// The swapped-output inventory lines (focus session, and this one when it differs): ids to
/// fetch exactly; pointers, not content, valued below the latest turns, newest first.
fn swap_lines(r: &StoreReader, focus: &str, session_id: &str) -> Vec<RestoreLine> {
    let mut swapped = Vec::new();
    for s in std::iter::once(focus).chain((focus != session_id).then_some(session_id)) {
        match crate::swap::inventory(r, s) {
            Ok(v) => swapped.extend(v),
            Err(e) => tracing::warn!(error = %e, "swap inventory unavailable"),
        }
    }
    swapped.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    let mut listed = HashSet::new();
    swapped.retain(|e| listed.insert(e.id.clone()));
    swapped
        .iter()
        .take(SWAP_INVENTORY_MAX)
        .enumerate()
        .map(|(rank, e)| RestoreLine {
            section: SWAPPED,
            order: rank as u64,
            value: 2.0 - rank as f32 * 0.05 + if e.access_count > 0 { 0.1 } else { 0.0 },
            text: e.inventory_line(),
        })
        .collect()
}

/// The one line of a brief restore: which session is archived and how to get it back, so the
/// model and the user know it exists without its turns filling the fresh context.
fn brief_pointer(kind: RestoreKind, session: &str, turns: u32, last: &str) -> String {
    let (why, var) = match kind {
        RestoreKind::Clear => ("/clear asked for a fresh context", "CLEAR"),
        RestoreKind::Compact => ("this restore is brief", "COMPACT"),
        RestoreKind::Resume => ("this restore is brief", "RESUME"),
        RestoreKind::Startup => ("this restore is brief", "STARTUP"),
    };
    let when = if last.is_empty() {
        String::new()
    } else {
        format!(", last active {last}")
    };
    format!(
        "Session {} ({turns} turn{}{when}) is archived, not restored: {why}. A prompt about it \
         recalls its turns; `memctl restore {session}` prints them; \
         MEMCTL_RESTORE_ON_{var}=full restores them here.",
        session.get(..8).unwrap_or(session),
        if turns == 1 { "" } else { "s" },
    )
}

/// Restore lines (section 0) for the project's memory files, without lines Claude Code
/// re-injects itself (a memory file copied from CLAUDE.md or MEMORY.md).
fn memory_lines(project: &str, cfg: &RestoreConfig, reinjected: &Reinjected) -> Vec<RestoreLine> {
    crate::memory::restore_lines(project, &cfg.memory)
        .into_iter()
        .filter(|m| {
            let body = m.text.split_once("] ").map_or(m.text.as_str(), |x| x.1);
            !reinjected.covers(body)
        })
        .enumerate()
        .map(|(i, m)| RestoreLine {
            section: MEMORY,
            order: i as u64,
            value: m.value,
            text: m.text,
        })
        .collect()
}

/// A block with the project's memory files only (no archived session to restore from).
fn memory_only(project: &str, cfg: &RestoreConfig, reinjected: &Reinjected) -> Restored {
    let lines = memory_lines(project, cfg, reinjected);
    Restored {
        text: build(&[crate::memory::SECTION_TITLE], &lines, cfg.budget),
        ..Restored::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_command_turns_are_trivial() {
        assert!(is_bare_command("User: /compact keep notes"));
        assert!(is_bare_command("User: /clear"));
        assert!(!is_bare_command(
            "User: /review\nAssistant: The diff looks fine."
        ));
        assert!(!is_bare_command("User: fix the /tmp path"));
    }

    #[test]
    fn caps_grow_with_the_budget_and_never_shrink_below_the_defaults() {
        let mut cfg = RestoreConfig::default();
        let base = Caps::for_config(&cfg);
        assert_eq!(base.recent, cfg.recent_turns);
        cfg.budget.max_chars = 8000;
        let big = Caps::for_config(&cfg);
        assert!(big.recent > base.recent && big.key > base.key && big.candidates > base.candidates);
        cfg.budget.max_chars = 500;
        assert_eq!(Caps::for_config(&cfg).key, base.key);
    }

    #[test]
    fn brief_pointer_names_the_session_and_the_way_back() {
        let p = brief_pointer(RestoreKind::Clear, "0123456789abcdef", 42, "10-03 14:22");
        assert!(p.contains("01234567") && p.contains("42 turns") && p.contains("/clear"));
        assert!(p.contains("memctl restore 0123456789abcdef"));
        assert!(p.contains("MEMCTL_RESTORE_ON_CLEAR=full"));
        let s = brief_pointer(RestoreKind::Startup, "abc", 1, "");
        assert!(s.contains("MEMCTL_RESTORE_ON_STARTUP=full") && s.contains("(1 turn)"));
    }
}
