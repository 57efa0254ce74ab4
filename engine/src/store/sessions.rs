//! Sessions and cursors: per-session facts (project, times, turns, summaries' text,
//! compactions) and where incremental ingest of each transcript stopped.
//!
//! Tables: `sessions`, `session_chunks`, `cursors`.

use super::TurnRef;
use super::schema::*;
use super::{StoreError, StoreReader, StoreWriter, decode_opt};
use crate::chunk::Chunk;
use crate::codec::{self, encode_record};
use redb::ReadableTable;
use serde::{Deserialize, Serialize};

/// Per-session facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Project (cwd).
    pub project: String,
    /// Project namespace id.
    pub project_id: u32,
    /// Transcript file, when known.
    pub transcript_path: Option<String>,
    /// Timestamp of the first archived line.
    pub first_ts: Option<String>,
    /// Timestamp of the last archived line.
    pub last_ts: Option<String>,
    /// Highest turn index seen + 1.
    pub turns: u32,
    /// Unix seconds of the last update.
    pub updated_at: i64,
    /// Extractive session summary, when one was made.
    pub summary: Option<String>,
    /// Claude Code's own compaction summary (PostCompact), to avoid restoring what it says.
    pub compact_summary: Option<String>,
    /// Compactions seen in the transcript (compact-summary turns archived).
    pub compactions: u32,
    /// The agent that wrote the session (record version 2; older records are Claude Code's).
    pub agent: crate::agent::Agent,
}

/// [`SessionRecord`] as record version 1 holds it: every field but `agent`.
#[derive(Deserialize)]
struct SessionRecordV1 {
    project: String,
    project_id: u32,
    transcript_path: Option<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    turns: u32,
    updated_at: i64,
    summary: Option<String>,
    compact_summary: Option<String>,
    compactions: u32,
}

impl From<SessionRecordV1> for SessionRecord {
    fn from(old: SessionRecordV1) -> Self {
        Self {
            project: old.project,
            project_id: old.project_id,
            transcript_path: old.transcript_path,
            first_ts: old.first_ts,
            last_ts: old.last_ts,
            turns: old.turns,
            updated_at: old.updated_at,
            summary: old.summary,
            compact_summary: old.compact_summary,
            compactions: old.compactions,
            agent: crate::agent::Agent::ClaudeCode,
        }
    }
}

/// [`SessionRecord`] as stores written before `compactions` was appended hold it (schema v1
/// without a version bump): same fields, minus the last.
#[derive(Deserialize)]
struct SessionRecordBeforeCompactions {
    project: String,
    project_id: u32,
    transcript_path: Option<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    turns: u32,
    updated_at: i64,
    summary: Option<String>,
    compact_summary: Option<String>,
}

impl SessionRecord {
    /// Count `chunk` (stored now) in its session's facts.
    pub(super) fn touch(&mut self, chunk: &Chunk, now: i64) {
        self.turns = self.turns.max(chunk.turn_index + 1);
        if chunk.is_compact_summary && chunk.part == 0 {
            self.compactions += 1;
        }
        if self.first_ts.is_none() {
            self.first_ts.clone_from(&chunk.started_at);
        }
        if chunk.ended_at.is_some() {
            self.last_ts.clone_from(&chunk.ended_at);
        }
        self.updated_at = now;
    }
}

impl crate::codec::Record for SessionRecord {
    const WHAT: &'static str = "session record";
    const VERSION: u8 = 2;

    fn decode_body(version: u8, body: &[u8]) -> Result<Self, crate::error::CodecError> {
        match version {
            1 => codec::decode_exact::<SessionRecordV1>(body, Self::WHAT).map(Self::from),
            2 => codec::decode_exact(body, Self::WHAT),
            v => Err(crate::error::CodecError::Decode(format!(
                "{}: unknown format version {v}",
                Self::WHAT
            ))),
        }
    }
}

/// Decode a session record of schema 1 (no version byte), of either of its layouts (the
/// migration to schema 2 uses it). Records of the older layout read with `compactions` 0
/// (compactions are counted again from the next archived summary on).
pub(super) fn decode_session(b: &[u8]) -> Result<SessionRecord, crate::error::CodecError> {
    use crate::codec::decode_prefix;
    match decode_prefix::<SessionRecordV1>(b, "session record")
        .map(|(r, n)| (SessionRecord::from(r), n))
    {
        Ok((rec, used)) if used == b.len() => Ok(rec),
        current => {
            let Ok((old, used)) =
                decode_prefix::<SessionRecordBeforeCompactions>(b, "session record (v1)")
            else {
                return current.map(|(rec, _)| rec);
            };
            if used != b.len() {
                return current.map(|(rec, _)| rec);
            }
            Ok(SessionRecordV1 {
                project: old.project,
                project_id: old.project_id,
                transcript_path: old.transcript_path,
                first_ts: old.first_ts,
                last_ts: old.last_ts,
                turns: old.turns,
                updated_at: old.updated_at,
                summary: old.summary,
                compact_summary: old.compact_summary,
                compactions: 0,
            }
            .into())
        }
    }
}

/// Where incremental ingest of one transcript stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CursorRecord {
    /// Byte offset up to which lines were consumed.
    pub offset: u64,
    /// File identity (device, inode) when it was read: a new identity means a new file.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// sha256 (hex) of the first bytes of the file: a rewrite changes it.
    pub head_sha: String,
    /// How many head bytes `head_sha` covers.
    pub head_len: u64,
    /// Serialized chunker state to resume with.
    pub state: Vec<u8>,
    /// Session the transcript belongs to.
    pub session_id: String,
}

impl crate::codec::Record for CursorRecord {
    const WHAT: &'static str = "cursor record";
    const VERSION: u8 = 1;
}

/// A stored session record.
pub(crate) fn session_from(b: &[u8]) -> Result<SessionRecord, StoreError> {
    Ok(codec::decode_record(b)?)
}

impl StoreWriter {
    /// A session record, read inside the write transaction.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        t.get(id)?.map(|g| session_from(g.value())).transpose()
    }

    pub(super) fn touch_session(
        &mut self,
        chunk: &Chunk,
        project_id: u32,
        now: i64,
    ) -> Result<(), StoreError> {
        let mut t = self.tx.open_table(SESSIONS)?;
        let mut rec: SessionRecord = match t.get(chunk.session_id.as_str())? {
            Some(v) => session_from(v.value())?,
            None => SessionRecord {
                project: chunk.project.clone(),
                project_id,
                ..SessionRecord::default()
            },
        };
        rec.touch(chunk, now);
        t.insert(chunk.session_id.as_str(), encode_record(&rec)?.as_slice())?;
        Ok(())
    }

    /// Update a session record in place (creating it with `project` when missing).
    pub fn update_session(
        &mut self,
        session_id: &str,
        project: &str,
        f: impl FnOnce(&mut SessionRecord),
    ) -> Result<(), StoreError> {
        let project_id = self.project_id(project)?;
        let mut t = self.tx.open_table(SESSIONS)?;
        let mut rec: SessionRecord = match t.get(session_id)? {
            Some(v) => session_from(v.value())?,
            None => SessionRecord {
                project: project.to_string(),
                project_id,
                ..SessionRecord::default()
            },
        };
        f(&mut rec);
        t.insert(session_id, encode_record(&rec)?.as_slice())?;
        Ok(())
    }

    /// The ingest cursor of a transcript.
    pub fn cursor(&self, transcript: &str) -> Result<Option<CursorRecord>, StoreError> {
        let t = self.tx.open_table(CURSORS)?;
        decode_opt(t.get(transcript)?)
    }

    /// Save the ingest cursor of a transcript.
    pub fn set_cursor(&mut self, transcript: &str, c: &CursorRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(CURSORS)?
            .insert(transcript, encode_record(c)?.as_slice())?;
        Ok(())
    }
}

impl StoreReader {
    /// A session record.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        t.get(id)?.map(|g| session_from(g.value())).transpose()
    }

    /// Every session record.
    pub fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), session_from(v.value())?));
        }
        Ok(out)
    }

    /// Chunk ids of a session (including duplicates it shares with other sessions).
    #[cfg(test)]
    pub fn session_chunk_ids(&self, session: &str) -> Result<Vec<super::ChunkId>, StoreError> {
        let t = self.tx.open_multimap_table(SESSION_CHUNKS)?;
        let mut out = Vec::new();
        for v in t.get(session)? {
            out.push(v?.value());
        }
        Ok(out)
    }

    /// Every (session, turn, part) → chunk id of a session, in turn order.
    pub fn session_turns(&self, session: &str) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::new();
        for row in t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))? {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The (turn, part) entries of a session with `from <= turn <= to`, in turn order.
    pub fn session_turn_range(
        &self,
        session: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::new();
        for row in t.range((session, from, 0u16)..=(session, to, u16::MAX))? {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The last `n` (turn, part) entries of a session, newest first.
    pub fn session_turns_rev(&self, session: &str, n: usize) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::with_capacity(n);
        for row in t
            .range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))?
            .rev()
            .take(n)
        {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The ingest cursor of a transcript.
    pub fn cursor(&self, transcript: &str) -> Result<Option<CursorRecord>, StoreError> {
        let t = self.tx.open_table(CURSORS)?;
        decode_opt(t.get(transcript)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Clone, Copy)]
    struct Old<'a> {
        project: &'a str,
        project_id: u32,
        transcript_path: Option<&'a str>,
        first_ts: Option<&'a str>,
        last_ts: Option<&'a str>,
        turns: u32,
        updated_at: i64,
        summary: Option<&'a str>,
        compact_summary: Option<&'a str>,
    }

    /// Regression: `compactions` was appended after schema v1 shipped, and a store written before
    /// then passed the version check and failed to decode every session.
    #[test]
    fn session_record_written_before_compactions_existed_still_decodes() {
        let old = Old {
            project: "/home/dev/src/quill-notes",
            project_id: 3,
            transcript_path: Some("/t.jsonl"),
            first_ts: Some("2025-10-24T11:41:50.695Z"),
            last_ts: None,
            turns: 41,
            updated_at: 1_760_000_000,
            summary: None,
            compact_summary: Some("the summary"),
        };
        let bytes = crate::codec::encode(&old).unwrap_or_else(|e| panic!("encode: {e}"));
        let rec = decode_session(&bytes).unwrap_or_else(|e| panic!("legacy decode: {e}"));
        assert_eq!(rec.project, old.project);
        assert_eq!(rec.turns, 41);
        assert_eq!(rec.compact_summary.as_deref(), Some("the summary"));
        assert_eq!(rec.compactions, 0);
        // Schema 1's later layout (with `compactions`) decodes too.
        let v1 = (Old { ..old }, 2u32);
        let bytes = crate::codec::encode(&v1).unwrap_or_else(|e| panic!("encode: {e}"));
        let rec = decode_session(&bytes).unwrap_or_else(|e| panic!("v1 decode: {e}"));
        assert_eq!(
            (rec.compactions, rec.agent),
            (2, crate::agent::Agent::ClaudeCode)
        );
        assert!(decode_session(&[0xff; 3]).is_err(), "garbage is an error");
    }

    /// A version-1 record (no agent) reads as Claude Code's; version 2 keeps the agent.
    #[test]
    fn session_records_of_version_one_read_as_claude_code() {
        let old = Old {
            project: "/p",
            project_id: 1,
            transcript_path: None,
            first_ts: None,
            last_ts: None,
            turns: 3,
            updated_at: 7,
            summary: None,
            compact_summary: None,
        };
        let mut bytes = vec![1u8];
        bytes.extend(crate::codec::encode(&(old, 1u32)).unwrap_or_else(|e| panic!("encode: {e}")));
        let rec: SessionRecord = codec::decode_record(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((rec.turns, rec.compactions), (3, 1));
        assert_eq!(rec.agent, crate::agent::Agent::ClaudeCode);
        let codex = SessionRecord {
            agent: crate::agent::Agent::Codex,
            ..rec
        };
        let bytes = encode_record(&codex).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bytes[0], 2);
        assert_eq!(
            codec::decode_record::<SessionRecord>(&bytes).ok(),
            Some(codex)
        );
    }
}
