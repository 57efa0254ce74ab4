//! Realistic synthetic Claude Code transcripts (JSONL), deterministic by seed.
//!
//! A Rust port of the reference generator (`scripts/gen_transcript.py`, which the peer
//! benchmarks keep using), so that the tests and benches of a fresh clone need nothing outside
//! the repository and no Python. Same line kinds and the same proportions, not the same bytes:
//! the stream comes from our own PRNG ([`rng::Rng`]).
//!
//! A *turn* is one real user prompt followed by the assistant's agentic loop (0..6 tool_use /
//! tool_result round trips) ending in a text-only assistant message (`stop_reason: end_turn`).
//! Lines written:
//! * `file-history-snapshot` before each prompt;
//! * `user` prompts (string content, sometimes `[{"type":"text"}]` blocks);
//! * `assistant` messages (`[thinking?, text?, tool_use]` with `usage`), one line per message
//!   ([`Layout::Combined`]) or one per content block sharing `message.id` ([`Layout::Split`]);
//! * `user` tool results (`tool_result` blocks plus the top-level `toolUseResult`);
//! * `system`/`compact_boundary` + `user` `isCompactSummary` when the simulated context passes
//!   [`GenConfig::compact_at`];
//! * rarely a slash command (`<command-name>` + an `isMeta` `<local-command-stdout>`) and
//!   `[Request interrupted by user]`;
//! * with [`GenConfig::extras`], what newer CLIs add: `queue-operation`, `attachment` lines in
//!   the chain (`hook_success`, `hook_additional_context`: a hook's output, never conversation),
//!   `last-prompt`, and a `future-line-kind` no parser knows (it must be skipped, not fatal).
//!   They come from a second stream, so turning them off leaves every other byte unchanged.

mod append;
mod content;
mod extras;
pub mod lines;
pub mod rng;
mod tools;
pub mod vocab;

use lines::*;
use rng::{Rng, days_from_civil, iso};
use serde::Serialize;
use std::collections::HashMap;
use vocab::{BRANCHES, FEATURES, Lang, MODEL, PROJECTS, VERSIONS};

/// How assistant messages are laid out in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One line per API message holding all its content blocks.
    #[default]
    Combined,
    /// One line per content block, sharing `message.id` / `requestId` (what Claude Code's
    /// streaming writer does in practice).
    Split,
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Number of turns (user prompts).
    pub turns: u64,
    /// Picks the project, the session id, every text: same seed, same bytes.
    pub seed: u64,
    /// How assistant messages are split into lines (the parser must handle both).
    pub layout: Layout,
    /// Auto-compact when the simulated context reaches this many tokens; `None`: never.
    pub compact_at: Option<u64>,
    /// Write the CLI bookkeeping lines of newer clients (see the module doc).
    pub extras: bool,
}

impl Default for GenConfig {
    fn default() -> Self {
        Self {
            turns: 100,
            seed: 1,
            layout: Layout::Combined,
            compact_at: Some(160_000),
            extras: true,
        }
    }
}

/// What the generator wrote, counted as it wrote it (the oracle of the tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Real user prompts: each opens a turn.
    pub prompts: u64,
    /// Slash commands (`<command-name>` lines): each opens a turn too.
    pub commands: u64,
    /// Compaction summaries (`isCompactSummary`): each opens a turn too.
    pub compact_summaries: u64,
    /// `[Request interrupted by user]` markers (part of the turn they end).
    pub interrupts: u64,
    /// Lines written.
    pub lines: u64,
}

/// Why an existing transcript cannot be continued.
#[derive(Debug)]
pub enum AppendError {
    /// No line with a `uuid` and a `sessionId` to chain onto.
    NoChainedLine,
    /// The last chained line has no parseable `timestamp`.
    BadTimestamp(String),
}

impl std::fmt::Display for AppendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoChainedLine => write!(f, "append: no chained line (uuid + sessionId) found"),
            Self::BadTimestamp(t) => write!(f, "append: unparseable timestamp {t:?}"),
        }
    }
}

impl std::error::Error for AppendError {}

/// The whole transcript for `cfg`.
pub fn generate(cfg: &GenConfig) -> Vec<u8> {
    let mut g = Generator::new(cfg);
    g.turns(cfg.turns);
    g.take_output()
}

/// [`generate`] as a `String` (the output is always UTF-8).
pub fn generate_string(cfg: &GenConfig) -> String {
    String::from_utf8_lossy(&generate(cfg)).into_owned()
}

/// `cfg.turns` new turns continuing `existing` (like `--append-to`): only the new lines,
/// chained onto its last line, same session, cwd, version, branch, later timestamps, and the
/// context size of its last assistant message.
pub fn append(existing: &[u8], cfg: &GenConfig) -> Result<Vec<u8>, AppendError> {
    let mut g = Generator::continuing(existing, cfg)?;
    g.turns(cfg.turns);
    Ok(g.take_output())
}

/// The generator's state; [`Generator::turn`] writes one turn into an internal buffer that
/// [`Generator::take_output`] drains (the binary streams long transcripts that way).
#[derive(Debug)]
pub struct Generator {
    rng: Rng,
    /// The extras' own stream: with `extras` off, `rng` draws exactly the same numbers.
    xrng: Rng,
    layout: Layout,
    compact_at: Option<u64>,
    extras: bool,
    project: &'static str,
    lang: Lang,
    cwd: String,
    session: String,
    version: String,
    branch: String,
    /// The clock, in milliseconds since the epoch.
    t: i64,
    parent: Option<String>,
    /// Simulated context size in tokens (drives `usage` and auto-compaction).
    context: u64,
    /// System prompt + tools + CLAUDE.md: what is left after a compaction.
    base_context: u64,
    file_cache: HashMap<&'static str, Vec<String>>,
    out: Vec<u8>,
    stats: GenStats,
}

impl Generator {
    /// A new session for `cfg.seed` (`cfg.turns` is not used here).
    pub fn new(cfg: &GenConfig) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let (project, lang) = PROJECTS[(cfg.seed % PROJECTS.len() as u64) as usize];
        let session = rng.uuid();
        let version = rng.pick(VERSIONS).to_owned();
        let branch = rng.pick(BRANCHES).to_owned();
        let start = days_from_civil(2025, 10, 1) * 86_400_000 + 9 * 3_600_000;
        let t = start + rng.below(60 * 24 * 30) as i64 * 60_000;
        let context = 15_500 + rng.below(3000);
        Self {
            rng,
            xrng: Rng::named(&format!("extras:{}", cfg.seed)),
            layout: cfg.layout,
            compact_at: cfg.compact_at,
            extras: cfg.extras,
            project,
            lang,
            cwd: format!("/home/dev/src/{project}"),
            session,
            version,
            branch,
            t,
            parent: None,
            context,
            base_context: context,
            file_cache: HashMap::new(),
            out: Vec::new(),
            stats: GenStats::default(),
        }
    }

    /// Write `n` turns.
    pub fn turns(&mut self, n: u64) {
        for _ in 0..n {
            self.turn();
        }
    }

    /// The lines written since the last call.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Counts of what was written so far.
    pub fn stats(&self) -> &GenStats {
        &self.stats
    }

    /// The session id (the `sessionId` of every line).
    pub fn session_id(&self) -> &str {
        &self.session
    }

    fn emit<T: Serialize>(&mut self, line: &T) {
        serde_json::to_writer(&mut self.out, line)
            .expect("generated lines are plain structs with string keys: serialising cannot fail");
        self.out.push(b'\n');
        self.stats.lines += 1;
    }

    /// Advance the clock by `lo..hi` milliseconds.
    fn tick(&mut self, lo_ms: u64, hi_ms: u64) -> String {
        self.t += self.rng.range(lo_ms, hi_ms) as i64;
        iso(self.t)
    }

    /// A chained line of `kind` around `body`: takes the next uuid and becomes the parent.
    fn chained<B: Serialize>(&mut self, kind: &'static str, body: B) {
        let uuid = self.rng.uuid();
        let timestamp = self.tick(50, 2500);
        let line = self.envelope(kind, body, uuid, timestamp, None);
        self.emit(&line);
    }

    fn envelope<B>(
        &mut self,
        kind: &'static str,
        body: B,
        uuid: String,
        timestamp: String,
        entrypoint: Option<&'static str>,
    ) -> Chained<B> {
        let parent = self.parent.replace(uuid.clone());
        Chained {
            parent_uuid: parent,
            logical_parent_uuid: None,
            is_sidechain: false,
            user_type: "external",
            entrypoint,
            cwd: self.cwd.clone(),
            session_id: self.session.clone(),
            version: self.version.clone(),
            git_branch: self.branch.clone(),
            kind,
            body,
            uuid,
            timestamp,
        }
    }

    fn usage(&mut self, out_tokens: u64, new_tokens: u64) -> Usage {
        Usage {
            input_tokens: self.rng.range(1, 12),
            cache_creation_input_tokens: new_tokens,
            cache_read_input_tokens: self.context,
            cache_creation: CacheCreation {
                ephemeral_5m_input_tokens: new_tokens,
                ephemeral_1h_input_tokens: 0,
            },
            output_tokens: out_tokens,
            service_tier: "standard",
        }
    }

    fn write_assistant(
        &mut self,
        blocks: Vec<AssistantBlock>,
        stop_reason: &'static str,
        pending: u64,
    ) {
        let out_tokens: u64 = blocks
            .iter()
            .map(|b| content::approx_tokens(&serde_json::to_string(b).unwrap_or_default()))
            .sum();
        let usage = self.usage(out_tokens, pending);
        self.context += pending + out_tokens;
        let id = self.rng.id("msg_01", 22);
        let request_id = self.rng.id("req_011C", 18);
        let groups: Vec<Vec<AssistantBlock>> = match self.layout {
            Layout::Combined => vec![blocks],
            Layout::Split => blocks.into_iter().map(|b| vec![b]).collect(),
        };
        let n = groups.len();
        for (i, content) in groups.into_iter().enumerate() {
            let message = AssistantMessage {
                id: id.clone(),
                kind: "message",
                role: "assistant",
                model: MODEL,
                content,
                stop_reason: (i + 1 == n).then_some(stop_reason),
                stop_sequence: None,
                usage: usage.clone(),
            };
            self.chained(
                "assistant",
                AssistantBody {
                    message,
                    request_id: request_id.clone(),
                },
            );
        }
    }

    fn write_user_prompt(&mut self, text: &str) -> u64 {
        let snapshot = FileHistorySnapshot {
            message_id: self.rng.uuid(),
            snapshot: Snapshot {
                message_id: self.rng.uuid(),
                tracked_file_backups: Default::default(),
                timestamp: iso(self.t),
            },
            is_snapshot_update: false,
        };
        self.emit(&snapshot);
        self.t += self.rng.range(8, 900) as i64 * 1000;
        self.extras_before_prompt(text);
        let content = if self.rng.chance(0.8) {
            UserContent::Text(text.to_owned())
        } else {
            UserContent::Blocks(vec![UserBlock::Text {
                text: text.to_owned(),
            }])
        };
        self.chained("user", UserBody::new(content));
        self.stats.prompts += 1;
        self.extras_after_prompt();
        content::approx_tokens(text)
    }

    fn maybe_compact(&mut self) {
        match self.compact_at {
            Some(at) if self.context >= at => {}
            _ => return,
        }
        let pre = self.context;
        let timestamp = self.tick(20_000, 90_000);
        let uuid = self.rng.uuid();
        let logical = self.parent.take();
        let body = CompactBoundaryBody {
            subtype: "compact_boundary",
            content: "Conversation compacted",
            is_meta: false,
            level: "info",
            compact_metadata: CompactMetadata {
                trigger: "auto",
                pre_tokens: pre,
            },
        };
        let mut line = self.envelope("system", body, uuid, timestamp, None);
        line.logical_parent_uuid = logical;
        self.emit(&line);
        let summary = self.compact_summary();
        let mut body = UserBody::new(UserContent::Text(summary.clone()));
        body.is_visible_in_transcript_only = Some(true);
        body.is_compact_summary = Some(true);
        self.chained("user", body);
        self.stats.compact_summaries += 1;
        self.context = self.base_context + content::approx_tokens(&summary);
    }

    /// The shape of Claude Code's auto-compaction summary.
    fn compact_summary(&mut self) -> String {
        let intent = self
            .user_prompt()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        let concepts: Vec<String> = self
            .rng
            .sample(FEATURES, 4)
            .iter()
            .map(|f| format!("   - {f}"))
            .collect();
        let files: Vec<String> = self
            .rng
            .sample(self.lang.files(), 5)
            .iter()
            .map(|f| format!("   - {}: {}", self.abspath(f), self.ident()))
            .collect();
        let error = self
            .error_text(None)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        let pending = self.rng.pick(FEATURES);
        let rel = self.rng.pick(self.lang.files());
        let mut current = self.assistant_mid(rel);
        if current.is_empty() {
            current = "n/a".into();
        }
        format!(
            "This session is being continued from a previous conversation that ran out of context. \
             The conversation is summarized below:\nAnalysis:\nThe user is working on {} ({}).\n\nSummary:\n\
             1. Primary Request and Intent:\n   {intent}\n2. Key Technical Concepts:\n{}\n3. Files and Code Sections:\n{}\n\
             4. Errors and fixes:\n   - {error}\n5. Pending Tasks:\n   - {pending}\n6. Current Work:\n   {current}\n\
             Please continue the conversation from where we left it off without asking the user any further questions.",
            self.project,
            self.lang.name(),
            concepts.join("\n"),
            files.join("\n"),
        )
    }

    /// One turn: maybe a compaction, maybe a slash command, the prompt, the tool loop, the answer.
    pub fn turn(&mut self) {
        self.maybe_compact();
        if self.rng.chance(0.01) {
            let cmd = self.rng.pick(&["/cost", "/context", "/model"]);
            let text = format!(
                "<command-name>{cmd}</command-name>\n<command-message>{}</command-message>\n<command-args></command-args>",
                &cmd[1..]
            );
            self.chained("user", UserBody::new(UserContent::Text(text)));
            self.stats.commands += 1;
            let cost = self.rng.unit() * 40.0;
            let mut out = UserBody::new(UserContent::Text(format!(
                "<local-command-stdout>Total cost: ${cost:.2}</local-command-stdout>"
            )));
            out.is_meta = Some(true);
            self.chained("user", out);
        }
        let prompt = self.user_prompt();
        let mut pending = self.write_user_prompt(&prompt);
        let rel = self.rng.pick(self.lang.files());
        let n_tools = self.rng.pick(&[0, 1, 1, 2, 2, 3, 3, 3, 4, 5, 6]);
        let mut touched = Vec::new();
        for step in 0..n_tools {
            let mut blocks = Vec::new();
            if step == 0 && self.rng.chance(0.25) {
                let goal = self.rng.pick(&[
                    "fix the failure",
                    "add the feature",
                    "refactor this",
                    "investigate",
                ]);
                let id = self.ident();
                blocks.push(AssistantBlock::Thinking {
                    thinking: format!(
                        "The user wants me to {goal}. First I should inspect {rel} and check how `{id}` is used."
                    ),
                    signature: self.rng.id("Eq", 120),
                });
            }
            let lead = if step == 0 {
                self.assistant_lead(rel)
            } else {
                self.assistant_mid(rel)
            };
            if !lead.is_empty() && self.rng.chance(0.85) {
                blocks.push(AssistantBlock::Text { text: lead });
            }
            let target = if self.rng.chance(0.7) {
                rel
            } else {
                self.rng.pick(self.lang.files())
            };
            let call = self.tool_call(target, step);
            let id = self.rng.id("toolu_01", 22);
            blocks.push(AssistantBlock::ToolUse {
                id: id.clone(),
                name: call.name,
                input: call.input,
            });
            self.write_assistant(blocks, "tool_use", pending);
            self.tick(200, 25_000);
            pending = content::approx_tokens(&call.body);
            let mut body = UserBody::new(UserContent::Blocks(vec![UserBlock::ToolResult {
                tool_use_id: id,
                content: call.body,
                is_error: call.is_error.then_some(true),
            }]));
            body.tool_use_result = Some(call.result);
            self.chained("user", body);
            touched.extend(call.touched);
        }
        if self.rng.chance(0.01) {
            let text = "[Request interrupted by user]".to_owned();
            self.chained(
                "user",
                UserBody::new(UserContent::Blocks(vec![UserBlock::Text { text }])),
            );
            self.stats.interrupts += 1;
        } else {
            if touched.is_empty() {
                touched.push(rel);
            }
            let text = self.assistant_final(&touched);
            self.write_assistant(vec![AssistantBlock::Text { text }], "end_turn", pending);
        }
        self.extras_after_turn(&prompt);
    }
}
