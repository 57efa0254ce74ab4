//! `memctl sync`: push this machine's chunks of shared projects to the team store.
//!
//! - **Local first.** Hooks never call this; they start `memctl sync --background` (or the
//!   detached archiver runs it after archiving). Chunks are read through the public
//!   [`Engine`] API, already redacted, with their model vectors.
//! - **Shared projects only.** A project is on the server when its owner ran `memctl team
//!   share`; nothing else is read, let alone sent.
//! - **Idempotent.** Each row's `key` is the sha256 of (author, session, turn, part, text
//!   sha256): `INSERT … ON CONFLICT (key) DO NOTHING` makes a re-push, a crash between the
//!   commit and the cursor write, or eight syncs at once harmless.
//! - **Resumable.** A cursor per project (the last local chunk id pushed) in
//!   `<data dir>/team/sync.json` (0600, written atomically under a lock, merged by max so
//!   concurrent syncs never move it back). A chunk still waiting for its model vector stops
//!   its project's cursor there: the next sync pushes it once embedded.
//! - **Batched.** One multi-row insert (`unnest` of arrays, vectors included) per
//!   [`BATCH`] chunks, one transaction each.
//! - **Forgetting.** `memctl forget` queues the forgotten turns here; the next sync deletes
//!   their rows, and the author's session rows left without a chunk (RLS lets an author
//!   delete only their own).

use anyhow::{Context, Result};
use memctl_engine::Engine;
use pgvector::Vector;
use postgres::Client;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Chunks per insert statement and transaction.
pub const BATCH: usize = 500;

/// Chunks read from the local store per page.
const PAGE: usize = 2_000;

/// Dimension of the `vector` column (all-MiniLM-L6-v2).
pub const DIMS: usize = 384;

/// What one sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    /// Shared projects of this member found on the server.
    pub projects: usize,
    /// Chunks sent (rows offered to the server).
    pub sent: u64,
    /// Of those, rows the server did not have yet.
    pub inserted: u64,
    /// Chunks of shared projects still waiting for a model vector (pushed by a later sync).
    pub waiting_for_vectors: u64,
    /// Rows deleted for turns forgotten locally.
    pub forgotten: u64,
    /// Seconds spent.
    pub seconds: f64,
}

/// The sync state file: cursors and queued forgets.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    /// Which server/role the cursors are for (host, port, database, user): another resets them.
    #[serde(default)]
    server: String,
    /// Per local project path.
    #[serde(default)]
    projects: BTreeMap<String, Cursor>,
    /// Forgotten turns not yet deleted on the server: "session\0turn\0part\0text sha".
    #[serde(default)]
    forgotten: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
struct Cursor {
    /// The server's project id the cursor belongs to (a re-share makes a new one: start over).
    server_id: i64,
    /// Last local chunk id pushed.
    after: u64,
}

fn state_path(data_dir: &Path) -> PathBuf {
    data_dir.join("team").join("sync.json")
}

fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("team").join("sync.lock")
}

/// Run `f` on the state under the state lock and save it (atomically, 0600).
fn update_state<T>(data_dir: &Path, f: impl FnOnce(&mut State) -> T) -> Result<T> {
    let dir = data_dir.join("team");
    memctl_engine::ensure_private_dir(&dir)?;
    let give_up = Instant::now() + Duration::from_secs(30);
    let _lock = loop {
        match memctl_engine::try_lock_file(&lock_path(data_dir))? {
            Some(l) => break l,
            None if Instant::now() < give_up => std::thread::sleep(Duration::from_millis(20)),
            None => anyhow::bail!("the sync state lock stayed taken for 30 s"),
        }
    };
    let mut st = load_state(data_dir)?;
    let out = f(&mut st);
    let bytes = serde_json::to_vec_pretty(&st)?;
    memctl_engine::write_private_atomic(&state_path(data_dir), &bytes)?;
    Ok(out)
}

fn load_state(data_dir: &Path) -> Result<State> {
    let p = state_path(data_dir);
    match memctl_engine::read_regular(&p, 64 << 20) {
        Ok(b) => serde_json::from_slice(&b).with_context(|| format!("reading {}", p.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", p.display())),
    }
}

/// Queue forgotten turns for deletion on the server (called by `memctl forget --yes`).
pub fn queue_forgotten(data_dir: &Path, turns: Vec<String>) -> Result<()> {
    if turns.is_empty() {
        return Ok(());
    }
    update_state(data_dir, |st| {
        st.forgotten.extend(turns);
        st.forgotten.sort();
        st.forgotten.dedup();
    })
}

/// The part of a row's key that does not depend on who pushes it.
pub fn turn_ref(session: &str, turn: u32, part: u16, text_sha: &str) -> String {
    format!("{session}\0{turn}\0{part}\0{text_sha}")
}

/// A row's key: sha256 of the author and the [`turn_ref`].
pub fn row_key(author: &str, turn_ref: &str) -> String {
    hex::encode(Sha256::digest(format!("{author}\0{turn_ref}").as_bytes()))
}

/// One sync pass (see the module doc).
pub fn sync(engine: &Engine, c: &mut Client, server: &str) -> Result<SyncReport> {
    let t0 = Instant::now();
    let data_dir = engine.data_dir().to_path_buf();
    super::schema::check(c)?;
    let me: String = c.query_one("SELECT current_user::text", &[])?.get(0);
    // Forgotten turns first: a forget must not wait behind a long push.
    let mut rep = SyncReport {
        forgotten: delete_forgotten(engine, c)?,
        ..Default::default()
    };

    let shared: BTreeMap<String, i64> = c
        .query(
            "SELECT name, id FROM memctl.projects WHERE owner = current_user",
            &[],
        )?
        .into_iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
        .collect();
    rep.projects = shared.len();
    let cursors = update_state(&data_dir, |st| {
        if st.server != server {
            st.server = server.to_string();
            st.projects.clear();
        }
        st.projects
            .retain(|name, cur| shared.get(name) == Some(&cur.server_id));
        shared
            .iter()
            .map(|(name, id)| {
                let after = st.projects.get(name).map_or(0, |c| c.after);
                (
                    name.clone(),
                    Cursor {
                        server_id: *id,
                        after,
                    },
                )
            })
            .collect::<BTreeMap<_, _>>()
    })?;
    if cursors.is_empty() {
        rep.seconds = t0.elapsed().as_secs_f64();
        return Ok(rep);
    }
    let mut cursors = cursors;
    // Projects whose cursor is stuck behind a chunk without a model vector.
    let mut blocked: BTreeMap<String, ()> = BTreeMap::new();
    let mut batch: Vec<Row> = Vec::with_capacity(BATCH);
    let mut after = cursors.values().map(|c| c.after).min().unwrap_or(0);
    loop {
        let page = engine.chunks_after(after, PAGE)?;
        let Some(&(last, _)) = page.last() else { break };
        for (id, rec) in page {
            let project = &rec.chunk.project;
            let Some(cur) = cursors.get(project) else {
                continue;
            };
            if id <= cur.after {
                continue;
            }
            if blocked.contains_key(project) {
                rep.waiting_for_vectors += 1;
                continue;
            }
            let Some(v) = engine.model_vector(id)?.filter(|v| v.len() == DIMS) else {
                blocked.insert(project.clone(), ());
                rep.waiting_for_vectors += 1;
                continue;
            };
            let ch = &rec.chunk;
            let tref = turn_ref(&ch.session_id, ch.turn_index, ch.part, &ch.sha256);
            batch.push(Row {
                local_id: id,
                project: project.clone(),
                server_project: cur.server_id,
                key: row_key(&me, &tref),
                session: ch.session_id.clone(),
                turn: ch.turn_index as i32,
                part: i32::from(ch.part),
                started_at: ch.started_at.clone(),
                text: ch.text.clone(),
                summary: ch.summary.clone(),
                embedding: Vector::from(v),
            });
            if batch.len() >= BATCH {
                push(c, &data_dir, &mut batch, &mut cursors, &mut rep)?;
            }
        }
        after = last;
    }
    push(c, &data_dir, &mut batch, &mut cursors, &mut rep)?;
    rep.seconds = t0.elapsed().as_secs_f64();
    Ok(rep)
}

/// Delete the queued forgotten turns from the team store (only the caller's own rows: RLS).
pub fn delete_forgotten(engine: &Engine, c: &mut Client) -> Result<u64> {
    let data_dir = engine.data_dir();
    let queued = load_state(data_dir)?.forgotten;
    if queued.is_empty() {
        return Ok(0);
    }
    let me: String = c.query_one("SELECT current_user::text", &[])?.get(0);
    let keys: Vec<String> = queued.iter().map(|t| row_key(&me, t)).collect();
    let mut tx = c.transaction()?;
    let n = tx.execute(
        "DELETE FROM memctl.chunks WHERE key = ANY($1) AND author = current_user",
        &[&keys],
    )?;
    // A session row (id, author, project) is readable by every member of the project: one
    // of ours with no chunk left goes with its last chunk (also one a forget emptied before).
    tx.execute(
        "DELETE FROM memctl.sessions s WHERE s.author = current_user AND NOT EXISTS \
         (SELECT 1 FROM memctl.chunks c WHERE c.project_id = s.project_id AND c.session_id = s.id)",
        &[],
    )?;
    tx.commit()?;
    update_state(data_dir, |st| st.forgotten.retain(|t| !queued.contains(t)))?;
    Ok(n)
}

/// One chunk on its way.
struct Row {
    local_id: u64,
    project: String,
    server_project: i64,
    key: String,
    session: String,
    turn: i32,
    part: i32,
    started_at: Option<String>,
    text: String,
    summary: String,
    embedding: Vector,
}

/// Insert a batch in one transaction (sessions first), then move the cursors past it.
fn push(
    c: &mut Client,
    data_dir: &Path,
    batch: &mut Vec<Row>,
    cursors: &mut BTreeMap<String, Cursor>,
    rep: &mut SyncReport,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut sessions: Vec<(i64, String)> = batch
        .iter()
        .map(|r| (r.server_project, r.session.clone()))
        .collect();
    sessions.sort();
    sessions.dedup();
    let (sp, sid): (Vec<i64>, Vec<String>) = sessions.into_iter().unzip();
    let col = |f: fn(&Row) -> String| batch.iter().map(f).collect::<Vec<String>>();
    let keys = col(|r| r.key.clone());
    let sess = col(|r| r.session.clone());
    let texts = col(|r| r.text.clone());
    let sums = col(|r| r.summary.clone());
    let projects: Vec<i64> = batch.iter().map(|r| r.server_project).collect();
    let turns: Vec<i32> = batch.iter().map(|r| r.turn).collect();
    let parts: Vec<i32> = batch.iter().map(|r| r.part).collect();
    let started: Vec<Option<String>> = batch.iter().map(|r| r.started_at.clone()).collect();
    let vecs: Vec<Vector> = batch.iter().map(|r| r.embedding.clone()).collect();
    let mut tx = c.transaction()?;
    tx.execute(
        "INSERT INTO memctl.sessions (project_id, id) SELECT * FROM unnest($1::bigint[], $2::text[]) \
         ON CONFLICT DO NOTHING",
        &[&sp, &sid],
    )?;
    let n = tx.execute(
        "INSERT INTO memctl.chunks (key, project_id, session_id, turn, part, started_at, text, summary, embedding) \
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[], $5::int[], $6::text[], \
                              $7::text[], $8::text[], $9::vector[]) \
         ON CONFLICT (key) DO NOTHING",
        &[&keys, &projects, &sess, &turns, &parts, &started, &texts, &sums, &vecs],
    )?;
    tx.commit()?;
    rep.sent += batch.len() as u64;
    rep.inserted += n;
    for r in batch.iter() {
        if let Some(cur) = cursors.get_mut(&r.project) {
            cur.after = cur.after.max(r.local_id);
        }
    }
    let snapshot = cursors.clone();
    update_state(data_dir, |st| {
        for (name, cur) in snapshot {
            let e = st.projects.entry(name).or_default();
            if e.server_id != cur.server_id {
                *e = cur;
            } else {
                e.after = e.after.max(cur.after);
            }
        }
    })?;
    batch.clear();
    Ok(())
}

/// Print a report for a person.
pub fn print(rep: &SyncReport, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "synced {} shared project(s): {} chunk(s) sent, {} new on the server, {} waiting for vectors, {} forgotten row(s) deleted ({:.2} s)",
        rep.projects, rep.sent, rep.inserted, rep.waiting_for_vectors, rep.forgotten, rep.seconds
    )?;
    Ok(())
}
