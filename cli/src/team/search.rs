//! Shared search: the same hybrid idea as the local side (a dense list and a lexical list,
//! fused) run by PostgreSQL in one statement, so one round trip answers a query; RLS has
//! already removed every row of a project not shared with the caller. Reciprocal-rank fusion
//! merges the lists (the local engine's score-based fusion needs BM25 statistics the server
//! does not keep; RRF needs only ranks).
//!
//! - **Dense**: pgvector's HNSW index gives the nearest `embedding <=> query` rows
//!   (`hnsw.iterative_scan` keeps the scan going past rows RLS filters out).
//! - **Lexical, bounded**: ranking every full-text match cost a `ts_rank` per match, and a few
//!   common words match nearly every row. `memctl.lexical` (schema version 2) takes at most
//!   [`LEXICAL_CAP`] rows holding every word (`websearch_to_tsquery`) from the GIN index, and
//!   only when fewer than the list's length do, up to as many more holding any one word,
//!   shared out per word (a turn with most of the words must still count, as with BM25).
//!   Only those are ranked: rows with every word first (by `ts_rank` of the words ORed), then
//!   the others by the weight of the words they were found by (rare words weigh most). A rare
//!   word (an identifier, an error code) brings all its rows, whatever the cap.
//! - A version 1 store (not migrated yet) runs the unbounded statement of version 1.

use anyhow::Result;
use pgvector::Vector;
use postgres::Client;
use serde::Serialize;

/// RRF's damping constant (the usual 60).
const RRF_K: f64 = 60.0;

/// One hit, with where it came from.
#[derive(Debug, Clone, Serialize)]
pub struct TeamHit {
    /// The teammate (PostgreSQL role) who synced it.
    pub author: String,
    /// Their project (its path on their machine).
    pub project: String,
    /// Their session id.
    pub session: String,
    /// Turn index in that session.
    pub turn: i32,
    /// When the turn started (RFC 3339), when known.
    pub started_at: Option<String>,
    /// Fused score (higher is better).
    pub score: f64,
    /// Rank in the dense list (None: not in it).
    pub dense_rank: Option<i64>,
    /// Rank in the lexical list (None: not in it).
    pub lexical_rank: Option<i64>,
    /// The turn's one-line summary.
    pub summary: String,
    /// The chunk's text.
    pub text: String,
}

/// A team query.
#[derive(Debug, Clone)]
pub struct TeamQuery<'a> {
    /// The words.
    pub text: &'a str,
    /// The model's vector of the words (None: lexical only).
    pub vector: Option<Vec<f32>>,
    /// Results wanted.
    pub k: usize,
    /// Only projects whose name contains this.
    pub project: Option<&'a str>,
}

/// Lexical candidates ranked at most per tier (see the module doc): enough that the rows with
/// every word are rarely cut when a query holds a rare word, few enough that ranking them stays
/// a few milliseconds (`ts_rank` reads each row's `tsvector`).
pub const LEXICAL_CAP: i32 = 500;

/// Candidates taken from each list before fusion.
fn candidates(k: usize) -> i64 {
    (k.max(1) * 4).max(40) as i64
}

/// Settings of the session for vector search: pgvector's iterative scan keeps an HNSW scan
/// going when RLS filters out the first candidates (else a member with few readable rows
/// gets fewer than k hits). A beam of 200: at 1e5 rows of clustered vectors 100 recalled
/// 0.91–0.99 of the exact top 10 from run to run (docs/perf/team.md).
pub fn prepare_session(c: &mut Client) -> Result<()> {
    c.batch_execute("SET hnsw.ef_search = 200; SET hnsw.iterative_scan = relaxed_order")?;
    Ok(())
}

/// Version 2's statement. The query vector and tsqueries are expressions of the parameters
/// (not read from a CTE row): only then can the planner use the HNSW index, and hand the
/// function constant queries. `fused` is materialised so that the final rows are read by
/// primary key (else the planner may join them to a sequential scan of the table).
const STATEMENT: &str = "
    WITH dense AS (
        SELECT d.id, row_number() OVER (ORDER BY d.dist) AS r FROM (
            SELECT c.id, c.embedding <=> $1::vector AS dist
            FROM memctl.chunks c
            WHERE $1::vector IS NOT NULL
              AND ($5::text IS NULL OR c.project_id IN
                   (SELECT id FROM memctl.projects WHERE name LIKE $5))
            ORDER BY c.embedding <=> $1::vector LIMIT $3) d),
    cand AS MATERIALIZED (
        SELECT t.id, t.tier, t.weight FROM memctl.lexical(
            websearch_to_tsquery('english', $2),
            tsvector_to_array(to_tsvector('english', $2)),
            CASE WHEN $5::text IS NOT NULL
                 THEN ARRAY(SELECT id FROM memctl.projects WHERE name LIKE $5) END,
            $7, $3::integer) t),
    lex AS (
        SELECT l.id, row_number() OVER (ORDER BY l.tier, l.weight DESC, l.rank DESC, l.id) AS r
        FROM (
            SELECT c.id, t.tier, t.weight,
                   ts_rank(c.tsv, replace(websearch_to_tsquery('english', $2)::text,
                                          ' & ', ' | ')::tsquery) AS rank
            FROM cand t JOIN memctl.chunks c ON c.id = t.id
            ORDER BY t.tier, t.weight DESC, rank DESC, c.id LIMIT $3) l),
    fused AS MATERIALIZED (
        SELECT coalesce(d.id, l.id) AS id,
               coalesce(1.0 / ($6::float8 + d.r), 0) + coalesce(1.0 / ($6::float8 + l.r), 0) AS score,
               d.r AS dr, l.r AS lr
        FROM dense d FULL OUTER JOIN lex l ON d.id = l.id)
    SELECT c.author, p.name, c.session_id, c.turn, c.started_at, f.score::float8,
           f.dr, f.lr, c.summary, c.text
    FROM fused f
    JOIN memctl.chunks c ON c.id = f.id
    JOIN memctl.projects p ON p.id = c.project_id
    ORDER BY f.score DESC, c.id
    LIMIT $4";

/// Version 1's statement: every full-text match ranked (a sequential scan under RLS).
const STATEMENT_V1: &str = "
    WITH dense AS (
        SELECT d.id, row_number() OVER (ORDER BY d.dist) AS r FROM (
            SELECT c.id, c.embedding <=> $1::vector AS dist
            FROM memctl.chunks c
            WHERE $1::vector IS NOT NULL
              AND ($5::text IS NULL OR c.project_id IN
                   (SELECT id FROM memctl.projects WHERE name LIKE $5))
            ORDER BY c.embedding <=> $1::vector LIMIT $3) d),
    lex AS (
        SELECT l.id, row_number() OVER (ORDER BY l.rank DESC, l.id) AS r FROM (
            SELECT c.id, ts_rank(c.tsv, replace(websearch_to_tsquery('english', $2)::text,
                                                ' & ', ' | ')::tsquery) AS rank
            FROM memctl.chunks c
            WHERE c.tsv @@ replace(websearch_to_tsquery('english', $2)::text,
                                   ' & ', ' | ')::tsquery
              AND ($5::text IS NULL OR c.project_id IN
                   (SELECT id FROM memctl.projects WHERE name LIKE $5))
            ORDER BY rank DESC, c.id LIMIT $3) l),
    fused AS (
        SELECT coalesce(d.id, l.id) AS id,
               coalesce(1.0 / ($6::float8 + d.r), 0) + coalesce(1.0 / ($6::float8 + l.r), 0) AS score,
               d.r AS dr, l.r AS lr
        FROM dense d FULL OUTER JOIN lex l ON d.id = l.id)
    SELECT c.author, p.name, c.session_id, c.turn, c.started_at, f.score::float8,
           f.dr, f.lr, c.summary, c.text
    FROM fused f
    JOIN memctl.chunks c ON c.id = f.id
    JOIN memctl.projects p ON p.id = c.project_id
    ORDER BY f.score DESC, c.id
    LIMIT $4";

/// Run a query (one statement) on a store of schema `version` (see [`super::schema::check`]).
pub fn search(c: &mut Client, q: &TeamQuery<'_>, version: i32) -> Result<Vec<TeamHit>> {
    let n = candidates(q.k);
    let k = q.k as i64;
    let vector = q.vector.clone().map(Vector::from);
    let project = q
        .project
        .map(|p| format!("%{}%", p.replace('%', "\\%").replace('_', "\\_")));
    let rows = if version >= 2 {
        c.query(
            STATEMENT,
            &[&vector, &q.text, &n, &k, &project, &RRF_K, &LEXICAL_CAP],
        )?
    } else {
        c.query(STATEMENT_V1, &[&vector, &q.text, &n, &k, &project, &RRF_K])?
    };
    Ok(rows
        .into_iter()
        .map(|r| TeamHit {
            author: r.get(0),
            project: r.get(1),
            session: r.get(2),
            turn: r.get(3),
            started_at: r.get(4),
            score: r.get(5),
            dense_rank: r.get(6),
            lexical_rank: r.get(7),
            summary: r.get(8),
            text: r.get(9),
        })
        .collect())
}
