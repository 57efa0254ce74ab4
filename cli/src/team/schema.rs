//! The team store's schema on PostgreSQL, versioned like the local store: `memctl.schema_version`
//! holds the version, [`MIGRATIONS`] carry any earlier one forward in order, each in its own
//! transaction, under an advisory lock so that two admins running `memctl team init` at once
//! cannot apply one twice.
//!
//! **Access control is the database's.** Members are PostgreSQL roles in the group role
//! [`TEAM_ROLE`]; every table has row-level security (forced, so not even a table's owner
//! reads past it by accident), and a member reads a project's rows only when they own it or it
//! is shared with them (or with everyone, `*`). The policies call two `SECURITY DEFINER`
//! functions that look up `projects`/`shares` with the caller's `current_user` passed in:
//! policies that read each other's tables directly would recurse. RLS is forced on `chunks`
//! and `sessions` (their owner reads through it too); not on `projects`/`shares`, which those
//! functions read as their owner.

use anyhow::{Context, Result, bail};
use postgres::Client;

/// The schema version this memctl writes.
pub const VERSION: i32 = 2;

/// The oldest schema version this memctl still reads and writes (a version 1 store searches
/// without the lexical function, slowly at scale, until `memctl team init` migrates it).
pub const OLDEST: i32 = 1;

/// The group role every member is in (granted the table privileges; RLS does the rest).
pub const TEAM_ROLE: &str = "memctl_team";

/// The NOLOGIN role that owns `memctl.lexical` (nobody logs in as it or is granted it, except
/// the administrator who must be able to make it the owner).
pub const SEARCH_ROLE: &str = "memctl_search";

/// Advisory lock key of schema changes (`memctl` in ASCII).
const MIGRATE_LOCK: i64 = 0x6d656d63746c;

/// Version 1: projects, who they are shared with, sessions, chunks (text, `tsvector` + GIN,
/// `vector(384)` + HNSW), and the policies.
const V1: &str = r#"
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE memctl.projects (
    id bigserial PRIMARY KEY,
    owner text NOT NULL DEFAULT current_user,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner, name)
);
CREATE TABLE memctl.shares (
    project_id bigint NOT NULL REFERENCES memctl.projects ON DELETE CASCADE,
    member text NOT NULL,
    PRIMARY KEY (project_id, member)
);
CREATE TABLE memctl.sessions (
    project_id bigint NOT NULL REFERENCES memctl.projects ON DELETE CASCADE,
    id text NOT NULL,
    author text NOT NULL DEFAULT current_user,
    PRIMARY KEY (project_id, id)
);
CREATE TABLE memctl.chunks (
    id bigserial PRIMARY KEY,
    key text NOT NULL UNIQUE,
    project_id bigint NOT NULL REFERENCES memctl.projects ON DELETE CASCADE,
    session_id text NOT NULL,
    author text NOT NULL DEFAULT current_user,
    turn integer NOT NULL,
    part integer NOT NULL,
    started_at text,
    text text NOT NULL,
    summary text NOT NULL DEFAULT '',
    embedding vector(384),
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    synced_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chunks_embedding ON memctl.chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX chunks_tsv ON memctl.chunks USING gin (tsv);
CREATE INDEX chunks_project ON memctl.chunks (project_id);

CREATE FUNCTION memctl.owns(p bigint, who text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
    AS $$ SELECT EXISTS (SELECT 1 FROM memctl.projects WHERE id = p AND owner = who) $$;
CREATE FUNCTION memctl.can_read(p bigint, who text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
    AS $$ SELECT EXISTS (SELECT 1 FROM memctl.projects WHERE id = p AND owner = who)
           OR EXISTS (SELECT 1 FROM memctl.shares WHERE project_id = p AND member IN (who, '*')) $$;
-- The projects `who` may read, as a set: the chunks policy uses it in an uncorrelated
-- sub-select, which PostgreSQL evaluates once per statement (a per-row call of can_read() cost
-- a function call per candidate row of a search).
CREATE FUNCTION memctl.readable(who text) RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
    AS $$ SELECT id FROM memctl.projects WHERE owner = who
          UNION SELECT project_id FROM memctl.shares WHERE member IN (who, '*') $$;
REVOKE ALL ON FUNCTION memctl.owns(bigint, text), memctl.can_read(bigint, text),
    memctl.readable(text) FROM PUBLIC;

ALTER TABLE memctl.projects ENABLE ROW LEVEL SECURITY;
-- `owner = current_user` first: the new row of an INSERT … ON CONFLICT is checked against this
-- policy before it is visible to can_read().
CREATE POLICY read ON memctl.projects FOR SELECT
    USING (owner = current_user OR memctl.can_read(id, current_user));
CREATE POLICY add ON memctl.projects FOR INSERT WITH CHECK (owner = current_user);
CREATE POLICY remove ON memctl.projects FOR DELETE USING (owner = current_user);

ALTER TABLE memctl.shares ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON memctl.shares FOR SELECT USING (memctl.can_read(project_id, current_user));
CREATE POLICY add ON memctl.shares FOR INSERT WITH CHECK (memctl.owns(project_id, current_user));
CREATE POLICY remove ON memctl.shares FOR DELETE USING (memctl.owns(project_id, current_user));

ALTER TABLE memctl.sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memctl.sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY read ON memctl.sessions FOR SELECT
    USING (project_id IN (SELECT memctl.readable(current_user)));
CREATE POLICY add ON memctl.sessions FOR INSERT
    WITH CHECK (author = current_user AND memctl.owns(project_id, current_user));
CREATE POLICY remove ON memctl.sessions FOR DELETE USING (author = current_user);

ALTER TABLE memctl.chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memctl.chunks FORCE ROW LEVEL SECURITY;
CREATE POLICY read ON memctl.chunks FOR SELECT
    USING (project_id IN (SELECT memctl.readable(current_user)));
CREATE POLICY add ON memctl.chunks FOR INSERT
    WITH CHECK (author = current_user AND memctl.owns(project_id, current_user));
CREATE POLICY remove ON memctl.chunks FOR DELETE USING (author = current_user);

GRANT USAGE ON SCHEMA memctl TO memctl_team;
GRANT SELECT, INSERT, DELETE ON memctl.projects, memctl.shares, memctl.sessions, memctl.chunks
    TO memctl_team;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA memctl TO memctl_team;
GRANT EXECUTE ON FUNCTION memctl.owns(bigint, text), memctl.can_read(bigint, text),
    memctl.readable(text) TO memctl_team;
"#;

/// Version 2: `memctl.lexical`, the bounded full-text candidates of a search (see the module
/// doc). The caller is `current_setting('role')` when a `SET ROLE` is in effect, else
/// `session_user`: inside a `SECURITY DEFINER` function `current_user` is the owner, and
/// neither setting names a role the caller could not become anyway. Tier 0: at most `lim`
/// rows holding every word (`q_all`). Only when fewer than `enough` do, tier 1: for each
/// query lexeme (`words`), at most `lim / words` rows holding it, so that every row of a rare
/// word (an identifier) is a candidate however common the others are, with a weight: the sum,
/// over the words it was found by, of 1 / the rows found by that word (a rough inverse
/// document frequency: a word found once weighs 1, one that filled its share next to
/// nothing). Rows come in the index's order: the caller ranks the few it gets.
const V2: &str = r#"
DO $$ BEGIN CREATE ROLE memctl_search NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
-- Making a role a function's owner needs its SET privilege: a non-superuser administrator
-- has only ADMIN on a role they created.
DO $$ BEGIN
    IF NOT pg_has_role(current_user, 'memctl_search', 'SET') THEN
        EXECUTE format('GRANT memctl_search TO %I', current_user);
    END IF;
END $$;
GRANT USAGE ON SCHEMA memctl TO memctl_search;
GRANT SELECT ON memctl.chunks TO memctl_search;
GRANT EXECUTE ON FUNCTION memctl.readable(text) TO memctl_search;
CREATE POLICY search ON memctl.chunks FOR SELECT TO memctl_search USING (true);

CREATE FUNCTION memctl.lexical(q_all tsquery, words text[], scope bigint[], lim integer,
                               enough integer)
    RETURNS TABLE (id bigint, tier integer, weight float8)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
    AS $f$
    WITH mine AS MATERIALIZED (
        SELECT p FROM memctl.readable(CASE current_setting('role')
                                          WHEN 'none' THEN session_user::text
                                          ELSE current_setting('role') END) AS p
        WHERE scope IS NULL OR p = ANY (scope)),
    every_word AS MATERIALIZED (
        SELECT c.id FROM memctl.chunks c
        WHERE c.tsv @@ q_all AND c.project_id IN (SELECT p FROM mine)
        LIMIT lim),
    any_word AS (
        SELECT w.id, sum(1.0 / w.n)::float8 AS weight FROM (
            SELECT x.id, count(*) OVER (PARTITION BY u.lexeme) AS n
            FROM unnest(words) AS u(lexeme) CROSS JOIN LATERAL (
                SELECT c.id FROM memctl.chunks c
                WHERE c.tsv @@ plainto_tsquery('simple', u.lexeme)
                  AND c.project_id IN (SELECT p FROM mine)
                LIMIT greatest(1, lim / greatest(1, cardinality(words)))) x) w
        WHERE (SELECT count(*) FROM every_word) < enough
          AND w.id NOT IN (SELECT id FROM every_word)
        GROUP BY w.id)
    SELECT id, 0, 0::float8 FROM every_word UNION ALL SELECT id, 1, weight FROM any_word
    $f$;
REVOKE ALL ON FUNCTION memctl.lexical(tsquery, text[], bigint[], integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memctl.lexical(tsquery, text[], bigint[], integer, integer)
    TO memctl_team;
ALTER FUNCTION memctl.lexical(tsquery, text[], bigint[], integer, integer)
    OWNER TO memctl_search;
"#;

/// Every migration, `MIGRATIONS[i]` taking version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1, V2];

/// What [`init`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitReport {
    /// The version found (0: none).
    pub from: i32,
    /// The version left.
    pub to: i32,
}

/// Create or migrate the schema (as an administrator: a role that may create extensions,
/// roles and schemas). Idempotent.
pub fn init(c: &mut Client) -> Result<InitReport> {
    let mut tx = c.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
    // Roles are cluster-wide while the advisory lock is per database: two databases being
    // initialised at once may race to create the group role, which is fine.
    tx.batch_execute(&format!(
        "DO $$ BEGIN CREATE ROLE {TEAM_ROLE} NOLOGIN;
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    ))?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS memctl;
         CREATE TABLE IF NOT EXISTS memctl.schema_version (
             version integer NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now());
         GRANT USAGE ON SCHEMA memctl TO memctl_team;
         GRANT SELECT ON memctl.schema_version TO memctl_team;",
    )?;
    let from = current(&mut tx)?;
    if from > VERSION {
        bail!(
            "the team store has schema version {from}, newer than this memctl's {VERSION}: upgrade memctl"
        );
    }
    for (v, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.batch_execute(sql)
            .with_context(|| format!("team schema migration {v} → {}", v + 1))?;
        tx.execute(
            "INSERT INTO memctl.schema_version (version) VALUES ($1)",
            &[&(v as i32 + 1)],
        )?;
    }
    tx.commit()?;
    Ok(InitReport { from, to: VERSION })
}

/// The schema version (0 when none was ever written).
fn current(c: &mut impl postgres::GenericClient) -> Result<i32> {
    let v: Option<i32> = c
        .query_one("SELECT max(version) FROM memctl.schema_version", &[])?
        .get(0);
    Ok(v.unwrap_or(0))
}

/// The store's schema version, or a failure with what to do unless this memctl reads it
/// ([`OLDEST`]..=[`VERSION`]).
pub fn check(c: &mut Client) -> Result<i32> {
    let exists: bool = c
        .query_one(
            "SELECT to_regclass('memctl.schema_version') IS NOT NULL",
            &[],
        )?
        .get(0);
    if !exists {
        bail!("the team store has no memctl schema: an administrator runs `memctl team init`");
    }
    match current(c)? {
        v @ OLDEST..=VERSION => Ok(v),
        v if v < OLDEST => bail!(
            "the team store has schema version {v}, this memctl needs {VERSION}: an administrator runs `memctl team init` to migrate it"
        ),
        v => bail!(
            "the team store has schema version {v}, newer than this memctl's {VERSION}: upgrade memctl"
        ),
    }
}

/// Create a member role (LOGIN, in [`TEAM_ROLE`]) with this password, or set the password of
/// an existing one. The name is quoted as an identifier; the password goes through
/// `quote_literal` on the server (DDL takes no parameters).
pub fn add_member(c: &mut Client, name: &str, password: &str) -> Result<bool> {
    if name.is_empty() || name == "*" || name.len() > 63 {
        bail!("{name:?} is not a role name memctl accepts (1..=63 characters, not `*`)");
    }
    let mut tx = c.transaction()?;
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)",
            &[&name],
        )?
        .get(0);
    let sql: String = tx
        .query_one(
            "SELECT format(CASE WHEN $3 THEN 'ALTER ROLE %I LOGIN PASSWORD %L' \
                                ELSE 'CREATE ROLE %I LOGIN PASSWORD %L' END, $1::text, $2::text)",
            &[&name, &password, &exists],
        )?
        .get(0);
    tx.batch_execute(&sql)?;
    let grant: String = tx
        .query_one(
            "SELECT format('GRANT memctl_team TO %I', $1::text)",
            &[&name],
        )?
        .get(0);
    tx.batch_execute(&grant)?;
    tx.commit()?;
    Ok(!exists)
}
