//! What an import accepts beyond a record's JSON shape: every number within the range memctl
//! itself writes, every id a plain bounded string, every vector finite and of its space's size.
//!
//! Why here, in the check pass: an import file is input from anyone (a colleague's export, a
//! download). A value that memctl would never write (turn 4294967295, a tool output claiming
//! 2^62 bytes, a NaN vector, a time in year 30000) either breaks `memctl check` once stored or
//! skews eviction, expiry and ranking for every later hook. Refusing it before anything is
//! written keeps "nothing half-imported" and names the line.

use super::format::{ChunkRec, MemoryFileRec, Record, SessionRec, SwapOutputRec, TombstoneKind};

/// Highest turn index accepted + 1 (a session record's `turns` is at most this). Real sessions
/// have thousands of turns; the store needs `turns` (a u32) above every stored turn index.
pub(crate) const MAX_TURNS: u32 = 1 << 24;
/// Highest use count accepted (chunk accesses, tool output views, compactions).
const MAX_COUNT: u32 = 1 << 24;
/// How far in the future a unix time may be (seconds): clocks of two machines disagree a bit,
/// a time years ahead would keep an entry from ever expiring.
const FUTURE_SLACK: i64 = 7 * 86_400;
/// Longest session id, turn uuid, tool name or embedder key (uuids are 36 bytes).
const MAX_ID_BYTES: usize = 256;
/// Longest project path or file path (Linux `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;
/// Longest RFC 3339 time string.
const MAX_TIME_BYTES: usize = 64;
/// Model vectors per chunk (one per embedding space; a store holds one or two).
const MAX_VECTORS: usize = 8;
/// Model vectors are L2-normalized: no component is above 1 (f16 storage rounds a little).
const MAX_VECTOR_COMPONENT: f32 = 1.001;

/// Checks one record; `now` is the import's unix time.
pub(super) struct Bounds {
    now: i64,
}

type Checked = Result<(), String>;

fn id(what: &str, s: &str) -> Checked {
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if s.len() > MAX_ID_BYTES {
        return Err(format!(
            "{what} is {} bytes (at most {MAX_ID_BYTES})",
            s.len()
        ));
    }
    Ok(())
}

fn opt_id(what: &str, s: &str) -> Checked {
    if s.is_empty() { Ok(()) } else { id(what, s) }
}

fn path(what: &str, s: &str) -> Checked {
    if s.len() > MAX_PATH_BYTES {
        return Err(format!(
            "{what} is {} bytes (at most {MAX_PATH_BYTES})",
            s.len()
        ));
    }
    Ok(())
}

fn time_str(what: &str, s: &Option<String>) -> Checked {
    match s {
        Some(t) if t.len() > MAX_TIME_BYTES => Err(format!(
            "{what} is {} bytes, not a time (at most {MAX_TIME_BYTES})",
            t.len()
        )),
        _ => Ok(()),
    }
}

fn count(what: &str, n: u32) -> Checked {
    if n > MAX_COUNT {
        return Err(format!("{what} {n} is over {MAX_COUNT}"));
    }
    Ok(())
}

fn turn(what: &str, n: u32) -> Checked {
    if n >= MAX_TURNS {
        return Err(format!(
            "{what} {n} is over the highest turn index {}",
            MAX_TURNS - 1
        ));
    }
    Ok(())
}

/// The dimension an embedder key names (`model@version/384`).
fn key_dims(key: &str) -> Option<usize> {
    key.rsplit_once('/').and_then(|(_, d)| d.parse().ok())
}

impl Bounds {
    pub(super) fn new(now: i64) -> Self {
        Self { now }
    }

    fn unix(&self, what: &str, t: i64) -> Checked {
        if t < 0 || t > self.now.saturating_add(FUTURE_SLACK) {
            return Err(format!(
                "{what} {t} is not a plausible unix time (0 to now + {} days)",
                FUTURE_SLACK / 86_400
            ));
        }
        Ok(())
    }

    fn opt_unix(&self, what: &str, t: Option<i64>) -> Checked {
        t.map_or(Ok(()), |t| self.unix(what, t))
    }

    /// Why `r` is refused, if it is.
    pub(super) fn check(&self, r: &Record) -> Checked {
        match r {
            Record::Header(_) => Err("a second header".into()),
            Record::Project(p) => path("project path", &p.path),
            Record::Tombstone(t) => {
                self.unix("forgotten_at", t.forgotten_at)?;
                match t.what {
                    TombstoneKind::Turn => id("turn tombstone", &t.key),
                    TombstoneKind::Text
                        if t.key.len() != 64 || !t.key.bytes().all(|b| b.is_ascii_hexdigit()) =>
                    {
                        Err(format!("text tombstone {:?} is not a sha256", t.key))
                    }
                    TombstoneKind::Text => Ok(()),
                }
            }
            Record::Chunk(c) => self.chunk(c),
            Record::TurnLink(l) => {
                id("session", &l.session)?;
                path("project", &l.project)?;
                turn("turn", l.turn)
            }
            Record::Session(s) => self.session(s),
            Record::SwapOutput(s) => self.swap(s),
            Record::MemoryFile(m) => memory_file(m),
            Record::Trailer(_) => Ok(()),
        }
    }

    fn chunk(&self, c: &ChunkRec) -> Checked {
        id("session", &c.session)?;
        path("project", &c.project)?;
        opt_id("turn_uuid", &c.turn_uuid)?;
        turn("turn", c.turn)?;
        if c.parts == 0 || c.part >= c.parts {
            return Err(format!("part {} of {} parts", c.part, c.parts));
        }
        time_str("started_at", &c.started_at)?;
        time_str("ended_at", &c.ended_at)?;
        self.unix("ingested_at", c.ingested_at)?;
        self.opt_unix("last_access", c.last_access)?;
        count("access_count", c.access_count)?;
        if !(0.0..=1.0).contains(&c.confidence) {
            return Err(format!("confidence {} is not within 0..1", c.confidence));
        }
        if c.vectors.len() > MAX_VECTORS {
            return Err(format!(
                "{} vectors (at most {MAX_VECTORS})",
                c.vectors.len()
            ));
        }
        for v in &c.vectors {
            id("vector embedder", &v.embedder)?;
            let values = v.values()?;
            if let Some(d) = key_dims(&v.embedder)
                && d != values.len()
            {
                return Err(format!(
                    "vector of {}: {} values, its space has {d}",
                    v.embedder,
                    values.len()
                ));
            }
            if let Some(x) = values
                .iter()
                .find(|x| !x.is_finite() || x.abs() > MAX_VECTOR_COMPONENT)
            {
                return Err(format!(
                    "vector of {}: value {x} (model vectors are unit length)",
                    v.embedder
                ));
            }
        }
        Ok(())
    }

    fn session(&self, s: &SessionRec) -> Checked {
        id("session id", &s.id)?;
        path("project", &s.project)?;
        if let Some(t) = &s.transcript_path {
            path("transcript_path", t)?;
        }
        time_str("first_ts", &s.first_ts)?;
        time_str("last_ts", &s.last_ts)?;
        if s.turns > MAX_TURNS {
            return Err(format!("turns {} is over {MAX_TURNS}", s.turns));
        }
        count("compactions", s.compactions)?;
        self.unix("updated_at", s.updated_at)?;
        if let Some(st) = &s.structured_summary
            && st.session_id != s.id
        {
            // It is stored under its own id: it would replace another session's summary.
            return Err(format!(
                "session {}: its structured summary is of session {:?}",
                s.id, st.session_id
            ));
        }
        Ok(())
    }

    fn swap(&self, s: &SwapOutputRec) -> Checked {
        let e = &s.entry;
        if crate::swap::content_id(&s.content) != e.id {
            return Err(format!(
                "tool output {}: its content does not match its id (sha256)",
                e.id
            ));
        }
        id("tool output session", &e.session_id)?;
        path("tool output project", &e.project)?;
        id("tool", &e.tool)?;
        if let Some(t) = &e.tool_use_id {
            id("tool_use_id", t)?;
        }
        self.unix("tool output created_at", e.created_at)?;
        self.opt_unix("tool output last_access", e.last_access)?;
        count("tool output access_count", e.access_count)
    }
}

fn memory_file(m: &MemoryFileRec) -> Checked {
    if !MemoryFileRec::name_is_safe(&m.name) {
        return Err(format!(
            "memory file name {:?} is not a plain .md/.json file name",
            m.name
        ));
    }
    path("memory file project", &m.project)?;
    let max = crate::memory::MAX_FILE_BYTES;
    if m.text.len() as u64 > max {
        return Err(format!(
            "memory file {}: {} bytes (memory files are at most {max})",
            m.name,
            m.text.len()
        ));
    }
    Ok(())
}
