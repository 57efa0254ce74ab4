//! Store accessors of `memctl export` / `import` ([`crate::export`]): streaming reads of whole
//! tables in one read transaction, and the writes an import needs beyond `put_chunk`.
//!
//! Kept apart from the table families' own files so that export/import has one place to look
//! at when the schema changes: every table it reads or writes is named here.

use super::schema::{CHUNKS, FORGOTTEN, HASHES, SESSIONS, TOMBSTONE_TEXT, TOMBSTONE_TURN, TURNS};
use super::{ChunkId, ChunkRecord, SessionRecord, StoreReader, StoreWriter};
use crate::chunk::Chunk;
use crate::codec;
use crate::error::StoreError;
use redb::ReadableTable;

/// The leading fields of a stored [`ChunkRecord`] (its chunk's identity): decoding only them
/// spares the text when a turn entry only needs to be compared with its chunk's own turn.
#[derive(serde::Deserialize)]
struct ChunkHead {
    session_id: String,
    _project: String,
    turn_index: u32,
    part: u16,
}

/// The head of a stored chunk record: read from the body of the version whose layout it
/// matches (format 1), any other version through the whole record.
fn chunk_head(raw: &[u8]) -> Result<ChunkHead, StoreError> {
    match raw.split_first() {
        Some((&1, body)) => Ok(codec::decode(body, "chunk record head")?),
        _ => {
            let rec: ChunkRecord = codec::decode_record(raw)?;
            Ok(ChunkHead {
                session_id: rec.chunk.session_id,
                _project: rec.chunk.project,
                turn_index: rec.chunk.turn_index,
                part: rec.chunk.part,
            })
        }
    }
}

/// One turn entry as [`StoreReader::for_each_turn`] reports it.
#[derive(Debug)]
pub(crate) struct TurnEntry<'a> {
    /// Session of the entry.
    pub session: &'a str,
    /// Turn index.
    pub turn: u32,
    /// Part.
    pub part: u16,
    /// The chunk it resolves to.
    pub chunk: ChunkId,
    /// True when the chunk is this very turn's own (not another turn's identical copy).
    pub own: bool,
}

impl StoreReader {
    /// Every turn entry, in (session, turn, part) order, streamed; `f` gets whether the chunk
    /// is the entry's own (only the chunk's leading fields are decoded for that).
    pub fn for_each_turn<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(TurnEntry<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let turns = self.tx.open_table(TURNS).map_err(StoreError::from)?;
        let chunks = self.tx.open_table(CHUNKS).map_err(StoreError::from)?;
        for row in turns.iter().map_err(StoreError::from)? {
            let (k, v) = row.map_err(StoreError::from)?;
            let (session, turn, part) = k.value();
            let id = v.value();
            let Some(raw) = chunks.get(id).map_err(StoreError::from)? else {
                continue;
            };
            let head = chunk_head(raw.value())?;
            f(TurnEntry {
                session,
                turn,
                part,
                chunk: id,
                own: head.session_id == session && head.turn_index == turn && head.part == part,
            })?;
        }
        Ok(())
    }

    /// Every tombstone as (is a turn uuid, key, unix seconds), in key order, streamed.
    pub fn for_each_tombstone<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(bool, &str, i64) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = match self.tx.open_table(FORGOTTEN) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
            Err(e) => return Err(StoreError::from(e).into()),
        };
        for row in t.iter().map_err(StoreError::from)? {
            let (k, v) = row.map_err(StoreError::from)?;
            let (kind, key) = k.value();
            f(kind == TOMBSTONE_TURN, key, v.value())?;
        }
        Ok(())
    }
}

impl StoreReader {
    /// Every chunk record in id order, streamed (never collected): `f`'s own error type stops
    /// the walk and comes back as is.
    pub fn for_each_chunk_with<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(ChunkId, ChunkRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = self.tx.open_table(CHUNKS).map_err(StoreError::from)?;
        for row in t.iter().map_err(StoreError::from)? {
            let (k, v) = row.map_err(StoreError::from)?;
            let rec = codec::decode_record(v.value()).map_err(StoreError::from)?;
            f(k.value(), rec)?;
        }
        Ok(())
    }
}

impl StoreWriter {
    /// The chunk a (session, turn, part) resolves to, inside the write transaction.
    pub fn turn_chunk(
        &self,
        session: &str,
        turn: u32,
        part: u16,
    ) -> Result<Option<ChunkId>, StoreError> {
        Ok(self
            .tx
            .open_table(TURNS)?
            .get((session, turn, part))?
            .map(|v| v.value()))
    }

    /// The chunk of `project` whose text has this sha256 (the dedup index).
    pub fn chunk_by_hash(
        &self,
        project_id: u32,
        sha256: &str,
    ) -> Result<Option<(ChunkId, ChunkRecord)>, StoreError> {
        let id = self
            .tx
            .open_table(HASHES)?
            .get((project_id, sha256))?
            .map(|v| v.value());
        match id {
            Some(id) => Ok(self.get_record(id)?.map(|r| (id, r))),
            None => Ok(None),
        }
    }

    /// Number of projects.
    pub fn projects_len(&self) -> Result<u64, StoreError> {
        use redb::ReadableTableMetadata;
        Ok(self.tx.open_table(super::schema::PROJECTS)?.len()?)
    }

    /// Does the session have any turn entry?
    pub fn session_has_turns(&self, session: &str) -> Result<bool, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut range = t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))?;
        Ok(range.next().transpose()?.is_some())
    }

    /// Write a session record as given (an imported session new to this store).
    pub fn put_session(&mut self, id: &str, rec: &SessionRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(SESSIONS)?
            .insert(id, codec::encode_record(rec)?.as_slice())?;
        Ok(())
    }

    /// Record a tombstone unless one exists (the earlier time is kept). Returns whether it was
    /// new.
    pub fn put_tombstone(&self, turn: bool, key: &str, at: i64) -> Result<bool, StoreError> {
        let kind = if turn { TOMBSTONE_TURN } else { TOMBSTONE_TEXT };
        let mut t = self.tx.open_table(FORGOTTEN)?;
        if t.get((kind, key))?.is_some() {
            return Ok(false);
        }
        t.insert((kind, key), at)?;
        Ok(true)
    }
}

/// Where a chunk of an import file stands in the store before it is put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnState {
    /// Its turn or its text was forgotten here.
    Forgotten,
    /// Its (session, turn, part) already names a chunk, with the same text or another.
    Taken {
        /// The chunk named has this chunk's text hash.
        same_text: bool,
    },
    /// Neither: it is stored (or linked to an identical text of the project).
    Free,
}

impl StoreWriter {
    /// For each chunk, [`Self::is_forgotten`], else what its turn part names now (as
    /// [`Self::turn_chunk`] and [`Self::get_record`] tell), with each table opened once.
    pub(crate) fn turn_states(&self, chunks: &[&Chunk]) -> Result<Vec<TurnState>, StoreError> {
        let forgotten = self.tx.open_table(FORGOTTEN)?;
        let turns = self.tx.open_table(TURNS)?;
        let records = self.tx.open_table(CHUNKS)?;
        let mut out = Vec::with_capacity(chunks.len());
        for c in chunks {
            if super::remove::forgotten_in(&forgotten, c)? {
                out.push(TurnState::Forgotten);
                continue;
            }
            let id = turns.get((c.session_id.as_str(), c.turn_index, c.part))?;
            let Some(id) = id.map(|v| v.value()) else {
                out.push(TurnState::Free);
                continue;
            };
            let rec: Option<ChunkRecord> = super::decode_opt(records.get(id)?)?;
            out.push(TurnState::Taken {
                same_text: rec.is_some_and(|r| r.chunk.sha256 == c.sha256),
            });
        }
        Ok(out)
    }

    /// Is there a text tombstone with this key (a sha256 hex)?
    pub fn text_tombstoned(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self
            .tx
            .open_table(FORGOTTEN)?
            .get((TOMBSTONE_TEXT, key))?
            .is_some())
    }
}

impl super::Store {
    /// Run `f` in one write transaction and roll it back (`memctl import --dry-run`: exact
    /// counts, nothing written).
    pub fn write_rolled_back<T>(
        &self,
        f: impl FnOnce(&mut StoreWriter) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let (_opened, tx) = self.begin_write()?;
        let mut w = StoreWriter::new(tx);
        let out = f(&mut w)?;
        w.flush()?;
        w.tx.abort()?;
        Ok(out)
    }
}
