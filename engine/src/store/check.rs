//! `memctl check`: is the store whole? redb's own integrity check, then the invariants that
//! tie memctl's tables together.
//!
//! Why a checker: a write transaction keeps the tables consistent only if every code path that
//! writes them does, and a crash, a failed fsync or a bug in one path would show up much later
//! as a turn search cannot find or a restore that quotes a deleted chunk. The checker states
//! every cross-table rule in one place and is the oracle of the fault trials (kill -9 of hooks
//! and ingests, I/O errors injected under redb): after any of them, it must find nothing.
//!
//! It reads one snapshot (a read transaction); other processes may keep writing meanwhile.
//! redb's integrity check needs the writer lock for a moment (it waits for a commit in progress)
//! and is skipped on a store this process cannot write.

use super::create;
use super::handle::Handle;
use super::schema::*;
use super::{BLOCK_VECTORS, ChunkId, ChunkRecord, session_from};
use crate::error::StoreError;
use crate::index::quant::BlockView;
use redb::{ReadTransaction, ReadableTable};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Prefix of the hash embedder's keys (`hash-ngram@v1/384`): vectors every chunk gets at
/// ingest, with or without the model.
const HASH_MODEL_PREFIX: &str = "hash-";

/// What redb's own check said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Integrity {
    /// The file passed redb's integrity check.
    Clean,
    /// redb found damage and repaired it (reported, not a violation: redb recovers from
    /// crashes by design; the table rules below then judge what is left).
    Repaired,
    /// Not run: the store cannot be written by this process (read-only file or mount).
    NotChecked,
}

/// The rule a [`Violation`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Rule {
    /// A stored value does not decode.
    Decode,
    /// The meta table: schema version, next chunk id.
    Meta,
    /// A chunk's project is not the project table's.
    Project,
    /// A turn entry names a missing chunk, or a chunk of another session.
    Turn,
    /// A chunk no turn entry resolves to.
    OrphanChunk,
    /// A session link without its turn entry, or a turn entry without its link.
    SessionLink,
    /// A session record missing, of the wrong project, or counting fewer turns than stored.
    Session,
    /// A posting of a missing chunk, of the wrong length, or postings not adding up.
    Posting,
    /// Lexical stats that are not the sum of the project's chunks.
    LexStats,
    /// A chunk's re-scoring vectors are not the spaces it lists, a vector of a missing chunk,
    /// or a space's kept count that is not its rows.
    Vector,
    /// A pending mark of a missing chunk, or a chunk neither pending nor model-embedded.
    Pending,
    /// Int8 blocks: unreadable, not contiguous, a tail that disagrees, a vector missing or
    /// twice.
    Block,
    /// A dedup hash of a missing chunk or of another text.
    Hash,
    /// Stored tool outputs: entries, refs, blobs, order, vectors and totals disagree.
    Swap,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Which rule.
    pub rule: Rule,
    /// What exactly (ids, keys, the two values that disagree).
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rule = serde_json::to_value(self.rule)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        write!(f, "{rule}: {}", self.detail)
    }
}

/// What was checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckCounts {
    /// Chunk records.
    pub chunks: u64,
    /// Turn entries.
    pub turns: u64,
    /// Session records.
    pub sessions: u64,
    /// Postings.
    pub postings: u64,
    /// Re-scoring (f16) vectors.
    pub vectors: u64,
    /// Vectors in int8 blocks (dead ones included: they wait for a compaction).
    pub block_vectors: u64,
    /// Stored tool outputs (entries).
    pub swap_entries: u64,
}

/// The result of [`check_store`]: violations empty means consistent.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The store file.
    pub path: PathBuf,
    /// redb's own check.
    pub integrity: Integrity,
    /// Rows checked.
    pub counts: CheckCounts,
    /// Every broken rule, one per problem (capped per rule, see [`MAX_PER_RULE`]).
    pub violations: Vec<Violation>,
    /// Violations not listed because of the cap.
    pub not_listed: u64,
}

impl CheckReport {
    /// No rule broken.
    pub fn is_consistent(&self) -> bool {
        self.violations.is_empty()
    }
}

/// At most this many violations are listed per rule (a damaged table breaks a rule per row).
pub const MAX_PER_RULE: usize = 50;

/// Violations found so far (capped per rule).
pub(super) struct Findings {
    list: Vec<Violation>,
    per_rule: BTreeMap<Rule, usize>,
    not_listed: u64,
}

impl Findings {
    fn add(&mut self, rule: Rule, detail: String) {
        let n = self.per_rule.entry(rule).or_default();
        *n += 1;
        if *n > MAX_PER_RULE {
            self.not_listed += 1;
        } else {
            self.list.push(Violation { rule, detail });
        }
    }
}

/// Check the store at `path` (which must exist: the checker never creates one).
pub fn check_store(path: &Path) -> Result<CheckReport, StoreError> {
    if !path.is_file() {
        return Err(create::open_err(path, "no store file there"));
    }
    // The database must outlive the read transaction: a dropped handle closes the file.
    let (db, integrity) = if create::exists_read_only(path) {
        let db = create::builder()
            .open_read_only(path)
            .map_err(|e| create::open_err(path, e))?;
        (Handle::ReadOnly(db), Integrity::NotChecked)
    } else {
        let mut db = create::builder()
            .open(path)
            .map_err(|e| create::open_err(path, e))?;
        let i = if db.check_integrity()? {
            Integrity::Clean
        } else {
            Integrity::Repaired
        };
        (Handle::ReadWrite(db), i)
    };
    let tx = db.begin_read()?;
    // An older schema is not damage: its records have another layout. Say what to run.
    if let Some(meta) = open_table(&tx, META)?
        && let Some(v) = meta.get(META_SCHEMA)?
        && let Ok(b) = <[u8; 4]>::try_from(v.value())
        && u32::from_le_bytes(b) < SCHEMA_VERSION
    {
        return Err(StoreError::NeedsMigration {
            path: path.to_path_buf(),
            found: u32::from_le_bytes(b),
            supported: SCHEMA_VERSION,
        });
    }
    let mut found = Findings {
        list: Vec::new(),
        per_rule: BTreeMap::new(),
        not_listed: 0,
    };
    let mut counts = CheckCounts::default();
    check_tables(&tx, &mut found, &mut counts)?;
    Ok(CheckReport {
        path: path.to_path_buf(),
        integrity,
        counts,
        violations: found.list,
        not_listed: found.not_listed,
    })
}

/// A table that does not exist (a store made before it was added) reads as empty.
pub(super) fn open_table<K: redb::Key + 'static, V: redb::Value + 'static>(
    tx: &ReadTransaction,
    def: redb::TableDefinition<'static, K, V>,
) -> Result<Option<redb::ReadOnlyTable<K, V>>, StoreError> {
    match tx.open_table(def) {
        Ok(t) => Ok(Some(t)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn open_multi<K: redb::Key + 'static, V: redb::Key + 'static>(
    tx: &ReadTransaction,
    def: redb::MultimapTableDefinition<'static, K, V>,
) -> Result<Option<redb::ReadOnlyMultimapTable<K, V>>, StoreError> {
    match tx.open_multimap_table(def) {
        Ok(t) => Ok(Some(t)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn check_tables(
    tx: &ReadTransaction,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    // Meta: the schema version and the next chunk id.
    let mut next_id = None;
    if let Some(meta) = open_table(tx, META)? {
        match meta.get(META_SCHEMA)? {
            Some(v) if v.value() == SCHEMA_VERSION.to_le_bytes() => {}
            Some(v) => found.add(Rule::Meta, format!("schema version bytes {:?}", v.value())),
            None => found.add(Rule::Meta, "no schema version".into()),
        }
        if let Some(v) = meta.get(META_NEXT_CHUNK)? {
            match <[u8; 8]>::try_from(v.value()) {
                Ok(b) => next_id = Some(u64::from_le_bytes(b)),
                Err(_) => found.add(Rule::Meta, "next chunk id of the wrong length".into()),
            }
        }
    } else {
        found.add(Rule::Meta, "no meta table".into());
    }

    // Projects.
    let mut projects: BTreeMap<String, u32> = BTreeMap::new();
    if let Some(t) = open_table(tx, PROJECTS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            projects.insert(k.value().to_string(), v.value());
        }
    }

    // Chunks.
    let mut chunks: BTreeMap<ChunkId, ChunkRecord> = BTreeMap::new();
    if let Some(t) = open_table(tx, CHUNKS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            match crate::codec::decode_record::<ChunkRecord>(v.value()) {
                Ok(rec) => {
                    chunks.insert(k.value(), rec);
                }
                Err(e) => found.add(Rule::Decode, format!("chunk {}: {e}", k.value())),
            }
        }
    }
    counts.chunks = chunks.len() as u64;
    if let (Some(next), Some((&max, _))) = (next_id, chunks.last_key_value())
        && next <= max
    {
        found.add(
            Rule::Meta,
            format!("next chunk id {next} is not above the highest stored id {max}"),
        );
    }
    for (id, rec) in &chunks {
        if projects.get(&rec.chunk.project) != Some(&rec.project_id) {
            found.add(
                Rule::Project,
                format!(
                    "chunk {id}: project {:?} is id {:?} in the project table, the chunk says {}",
                    rec.chunk.project,
                    projects.get(&rec.chunk.project),
                    rec.project_id
                ),
            );
        }
    }

    check_turns(tx, &chunks, found, counts)?;
    check_sessions(tx, &projects, found, counts)?;
    check_lexical(tx, &chunks, found, counts)?;
    super::check_vectors::check(tx, &chunks, found, counts)?;
    super::check_vectors::check_swap(tx, found, counts)?;
    Ok(())
}

/// Turn entries, session links and who points at each chunk.
fn check_turns(
    tx: &ReadTransaction,
    chunks: &BTreeMap<ChunkId, ChunkRecord>,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let mut from_turns: BTreeSet<(String, ChunkId)> = BTreeSet::new();
    let mut referenced: BTreeSet<ChunkId> = BTreeSet::new();
    if let Some(t) = open_table(tx, TURNS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (session, turn, part) = k.value();
            let id = v.value();
            counts.turns += 1;
            referenced.insert(id);
            from_turns.insert((session.to_string(), id));
            match chunks.get(&id) {
                None => found.add(
                    Rule::Turn,
                    format!("turn ({session}, {turn}, {part}) names missing chunk {id}"),
                ),
                Some(rec)
                    if rec.chunk.session_id != session
                        && !rec.shared_with.iter().any(|s| s == session) =>
                {
                    found.add(
                        Rule::Turn,
                        format!(
                            "turn ({session}, {turn}, {part}) names chunk {id} of session {} \
                             that does not list it as sharing",
                            rec.chunk.session_id
                        ),
                    );
                }
                Some(_) => {}
            }
        }
    }
    let mut links: BTreeSet<(String, ChunkId)> = BTreeSet::new();
    if let Some(t) = open_multi(tx, SESSION_CHUNKS)? {
        use redb::ReadableMultimapTable;
        for row in t.iter()? {
            let (k, vs) = row?;
            for v in vs {
                links.insert((k.value().to_string(), v?.value()));
            }
        }
    }
    for (s, id) in links.difference(&from_turns) {
        found.add(
            Rule::SessionLink,
            format!("session {s} links chunk {id} but no turn of it resolves to it"),
        );
    }
    for (s, id) in from_turns.difference(&links) {
        found.add(
            Rule::SessionLink,
            format!("a turn of session {s} resolves to chunk {id} without a session link"),
        );
    }
    for id in chunks.keys() {
        if !referenced.contains(id) {
            found.add(
                Rule::OrphanChunk,
                format!("chunk {id}: no turn entry resolves to it"),
            );
        }
    }
    Ok(())
}

/// Session records against the turns stored for them.
fn check_sessions(
    tx: &ReadTransaction,
    projects: &BTreeMap<String, u32>,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let mut max_turn: BTreeMap<String, u32> = BTreeMap::new();
    if let Some(t) = open_table(tx, TURNS)? {
        for row in t.iter()? {
            let (k, _) = row?;
            let (s, turn, _) = k.value();
            let m = max_turn.entry(s.to_string()).or_default();
            *m = (*m).max(turn);
        }
    }
    let mut records = BTreeMap::new();
    if let Some(t) = open_table(tx, SESSIONS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            match session_from(v.value()) {
                Ok(rec) => {
                    records.insert(k.value().to_string(), rec);
                }
                Err(e) => found.add(Rule::Decode, format!("session {}: {e}", k.value())),
            }
        }
    }
    counts.sessions = records.len() as u64;
    for (s, rec) in &records {
        if projects.get(&rec.project) != Some(&rec.project_id) {
            found.add(
                Rule::Session,
                format!(
                    "session {s}: project {:?} is id {:?}, the record says {}",
                    rec.project,
                    projects.get(&rec.project),
                    rec.project_id
                ),
            );
        }
    }
    for (s, max) in &max_turn {
        match records.get(s) {
            None => found.add(
                Rule::Session,
                format!("session {s} has turns but no record"),
            ),
            Some(rec) if rec.turns <= *max => found.add(
                Rule::Session,
                format!(
                    "session {s}: the record counts {} turns, turn {max} is stored",
                    rec.turns
                ),
            ),
            Some(_) => {}
        }
    }
    if let Some(t) = open_table(tx, CURSORS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            if let Err(e) = crate::codec::decode_record::<super::CursorRecord>(v.value()) {
                found.add(Rule::Decode, format!("cursor of {}: {e}", k.value()));
            }
        }
    }
    Ok(())
}

/// Postings, lexical stats and dedup hashes against the chunks.
fn check_lexical(
    tx: &ReadTransaction,
    chunks: &BTreeMap<ChunkId, ChunkRecord>,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let mut posted: BTreeMap<ChunkId, u64> = BTreeMap::new();
    if let Some(t) = open_table(tx, POSTING_LISTS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (project, term, base) = k.value();
            let entries = match super::postings::decode_segment(base, v.value()) {
                Ok(e) => e,
                Err(e) => {
                    found.add(
                        Rule::Decode,
                        format!("posting list ({project}, {term:?}, {base}): {e}"),
                    );
                    continue;
                }
            };
            if entries.first().is_some_and(|e| e.0 < base) || entries.is_empty() {
                found.add(
                    Rule::Posting,
                    format!("posting list ({project}, {term:?}, {base}): empty or below its base"),
                );
            }
            for (id, tf, doc_len) in entries {
                counts.postings += 1;
                *posted.entry(id).or_default() += u64::from(tf);
                match chunks.get(&id) {
                    None => found.add(
                        Rule::Posting,
                        format!("posting ({project}, {term:?}) names missing chunk {id}"),
                    ),
                    Some(rec) if rec.project_id != project || rec.doc_len != doc_len => found.add(
                        Rule::Posting,
                        format!(
                            "posting ({project}, {term:?}) of chunk {id}: project/length \
                             {project}/{doc_len}, the chunk says {}/{}",
                            rec.project_id, rec.doc_len
                        ),
                    ),
                    Some(_) => {}
                }
            }
        }
    }
    let mut want: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for (id, rec) in chunks {
        let got = posted.get(id).copied().unwrap_or(0);
        if got != u64::from(rec.doc_len) {
            found.add(
                Rule::Posting,
                format!(
                    "chunk {id}: postings add up to {got} terms, its length is {}",
                    rec.doc_len
                ),
            );
        }
        let w = want.entry(rec.project_id).or_default();
        w.0 += 1;
        w.1 += u64::from(rec.doc_len);
    }
    let mut stats: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    if let Some(t) = open_table(tx, LEX_STATS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            stats.insert(k.value(), v.value());
        }
    }
    let all: BTreeSet<u32> = want.keys().chain(stats.keys()).copied().collect();
    for p in all {
        let w = want.get(&p).copied().unwrap_or((0, 0));
        let s = stats.get(&p).copied().unwrap_or((0, 0));
        if w != s {
            found.add(
                Rule::LexStats,
                format!(
                    "project {p}: stats say {} documents / {} terms, the chunks {} / {}",
                    s.0, s.1, w.0, w.1
                ),
            );
        }
    }
    if let Some(t) = open_table(tx, HASHES)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (project, sha) = k.value();
            let id = v.value();
            match chunks.get(&id) {
                Some(rec) if rec.project_id == project && rec.chunk.sha256 == sha => {}
                Some(_) => found.add(
                    Rule::Hash,
                    format!("hash ({project}, {sha}) names chunk {id} of another text"),
                ),
                None => found.add(
                    Rule::Hash,
                    format!("hash ({project}, {sha}) names missing chunk {id}"),
                ),
            }
        }
    }
    Ok(())
}

/// Is `key` a space of the semantic model (not the hash fallback)?
pub(super) fn is_model_key(key: &str) -> bool {
    !key.starts_with(HASH_MODEL_PREFIX)
}

/// Vectors a full int8 block holds (the ones before the tail are full).
pub(super) const FULL_BLOCK: usize = BLOCK_VECTORS;

/// Record one violation (for the sibling module).
pub(super) fn add(found: &mut Findings, rule: Rule, detail: String) {
    found.add(rule, detail);
}

/// Parse an int8 block, recording a violation when it does not parse.
pub(super) fn parse_block<'a>(
    found: &mut Findings,
    key: (u32, &str, u64),
    bytes: &'a [u8],
) -> Option<BlockView<'a>> {
    match BlockView::parse(bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            found.add(Rule::Block, format!("block {key:?} does not parse: {e}"));
            None
        }
    }
}
