//! Team memory on PostgreSQL + pgvector: `memctl sync`, `memctl search --team`, `memctl team
//! init|add-member|share|unshare|status`, and the MCP `search` tool's team scope.
//!
//! The client is rust-postgres' blocking `postgres` crate with the `pgvector` crate's types:
//! no async runtime on the CLI path, parameters bound as binary (vectors included), and
//! nothing of it is reached from `memctl-hook` — a hook only starts `memctl sync --background`
//! when a team store is configured ([`config::configured`], no network).

pub mod config;
pub mod schema;
pub mod search;
pub mod sync;
pub mod tls;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use memctl_engine::{Engine, Settings};
use postgres::{Client, NoTls};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `memctl sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Started by a hook or the background archiver: exit at once when another background
    /// sync runs, log instead of printing, and do nothing when no team store is configured.
    #[arg(long)]
    pub background: bool,
    /// Do not embed pending chunks first (they wait for a later sync).
    #[arg(long)]
    pub no_embed: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `memctl team …`.
#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create or migrate the team schema (as a database administrator): the pgvector
    /// extension, the `memctl_team` group role, tables, indexes and row-level security.
    Init,
    /// Create a member (a PostgreSQL login role in `memctl_team`) or reset their password
    /// (administrator). The password is read from --password-file, else generated and printed.
    AddMember {
        /// The role name (the teammate's name in search results).
        name: String,
        /// A file holding the password (first line).
        #[arg(long)]
        password_file: Option<PathBuf>,
    },
    /// Share a project (default: the current directory) with every member, or only --with
    /// these; `memctl sync` pushes only shared projects.
    Share {
        /// The project path (as archived: the directory Claude Code ran in).
        project: Option<String>,
        /// Members to share with (default: everyone in the team).
        #[arg(long = "with")]
        with: Vec<String>,
    },
    /// Stop sharing a project: its rows are deleted from the team store (your local archive
    /// keeps everything).
    Unshare {
        /// The project path (default: the current directory).
        project: Option<String>,
    },
    /// Who you are on the team store, your shared projects and what you can read.
    Status,
}

/// Connect with the configured connection (plain or TLS per `sslmode`, see [`tls`]: with
/// `require` and above the connection fails rather than going unencrypted).
pub fn connect(s: &Settings, data_dir: &Path) -> Result<(Client, String)> {
    let config::Team { cfg, tls, origin } = config::require(s, data_dir)?;
    let server = format!(
        "{:?}:{:?}/{}@{}",
        cfg.get_hosts(),
        cfg.get_ports(),
        cfg.get_dbname().unwrap_or(""),
        cfg.get_user().unwrap_or("")
    );
    let from = match origin {
        config::Origin::Setting => "MEMCTL_TEAM_URL".to_string(),
        config::Origin::File(f) => f.display().to_string(),
        config::Origin::PgEnv => "PGHOST".to_string(),
    };
    let connected = match tls.client_config()? {
        None => cfg.connect(NoTls),
        Some(rc) => cfg.connect(tokio_postgres_rustls::MakeRustlsConnect::new(rc)),
    };
    let client = connected.map_err(|e| {
        // rustls' refusal sits deep in the chain: say it in words on the first line.
        let chain = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(": ");
        let why = if chain.contains("invalid peer certificate") {
            format!(
                "the team server's TLS certificate is not trusted ({}): ",
                tls.describe()
            )
        } else {
            String::new()
        };
        anyhow::Error::new(e).context(format!("{why}connecting to the team store ({from})"))
    })?;
    Ok((client, server))
}

/// `memctl sync`.
pub fn sync_cmd(engine: &Engine, s: &Settings, a: &SyncArgs, out: &mut dyn Write) -> Result<()> {
    let data_dir = engine.data_dir().to_path_buf();
    if a.background {
        return background(engine, s, !a.no_embed);
    }
    // No team store configured: say so before spending minutes embedding.
    config::require(s, &data_dir)?;
    if !a.no_embed {
        engine
            .embed_pending(usize::MAX)
            .context("embedding pending chunks before the sync (--no-embed skips it)")?;
    }
    let (mut c, server) = connect(s, &data_dir)?;
    let rep = sync::sync(engine, &mut c, &server)?;
    if a.json {
        writeln!(out, "{}", serde_json::to_string(&rep)?)?;
    } else {
        sync::print(&rep, out)?;
    }
    Ok(())
}

pub use memctl_hooks::background::team_sync_running as background_running;

/// A background sync: one per data dir at a time, nothing when no team store is configured;
/// every failure (server down included) is logged and left for the next hook to retry.
pub fn background(engine: &Engine, s: &Settings, embed: bool) -> Result<()> {
    let data_dir = engine.data_dir().to_path_buf();
    if !config::configured(s, &data_dir) {
        return Ok(());
    }
    let dir = data_dir.join("team");
    memctl_engine::ensure_private_dir(&dir)?;
    let Some(_lock) =
        memctl_engine::try_lock_file(&memctl_hooks::background::team_sync_lock(&data_dir))?
    else {
        tracing::debug!("another background sync runs; leaving it to that one");
        return Ok(());
    };
    if embed && let Err(e) = engine.embed_pending(2_000) {
        tracing::info!(error = %e, "no model vectors for pending chunks yet; they sync later");
    }
    let result =
        connect(s, &data_dir).and_then(|(mut c, server)| sync::sync(engine, &mut c, &server));
    match result {
        Ok(rep) => tracing::info!(
            sent = rep.sent,
            inserted = rep.inserted,
            waiting = rep.waiting_for_vectors,
            forgotten = rep.forgotten,
            "team sync done"
        ),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "team sync failed; the next hook retries")
        }
    }
    Ok(())
}

/// The project argument as archived (default: the current directory).
fn project_arg(p: Option<String>) -> Result<String> {
    let p = match p {
        Some(p) => p,
        None => std::env::current_dir()
            .context("the current directory")?
            .display()
            .to_string(),
    };
    let n = memctl_engine::normalize_project(&p);
    if n.is_empty() {
        bail!("an empty project path");
    }
    Ok(n)
}

/// `memctl team …`.
pub fn team_cmd(
    data_dir: &Path,
    s: &Settings,
    cmd: TeamCommand,
    out: &mut dyn Write,
) -> Result<()> {
    let (mut c, _) = connect(s, data_dir)?;
    match cmd {
        TeamCommand::Init => {
            let r = schema::init(&mut c)?;
            if r.from == r.to {
                writeln!(out, "team schema is up to date (version {})", r.to)?;
            } else {
                writeln!(out, "team schema: version {} → {}", r.from, r.to)?;
            }
        }
        TeamCommand::AddMember {
            name,
            password_file,
        } => {
            let (password, generated) = match password_file {
                Some(f) => {
                    let t = std::fs::read_to_string(&f)
                        .with_context(|| format!("reading {}", f.display()))?;
                    let p = t.lines().next().unwrap_or("").trim().to_string();
                    if p.is_empty() {
                        bail!("{} holds no password", f.display());
                    }
                    (p, false)
                }
                None => (generate_password()?, true),
            };
            let created = schema::add_member(&mut c, &name, &password)?;
            writeln!(
                out,
                "{} member {name}",
                if created { "created" } else { "updated" }
            )?;
            if generated {
                writeln!(out, "password: {password}")?;
            }
        }
        TeamCommand::Share { project, with } => {
            schema::check(&mut c)?;
            let name = project_arg(project)?;
            let members = if with.is_empty() {
                vec!["*".to_string()]
            } else {
                with
            };
            let mut tx = c.transaction()?;
            tx.execute(
                "INSERT INTO memctl.projects (name) VALUES ($1) ON CONFLICT (owner, name) DO NOTHING",
                &[&name],
            )?;
            let id: i64 = tx
                .query_one(
                    "SELECT id FROM memctl.projects WHERE owner = current_user AND name = $1",
                    &[&name],
                )?
                .get(0);
            tx.execute(
                "INSERT INTO memctl.shares (project_id, member) SELECT $1, unnest($2::text[]) \
                 ON CONFLICT DO NOTHING",
                &[&id, &members],
            )?;
            tx.commit()?;
            writeln!(
                out,
                "shared {name} with {} (run `memctl sync` to push it now)",
                if members == ["*"] {
                    "the whole team".to_string()
                } else {
                    members.join(", ")
                }
            )?;
        }
        TeamCommand::Unshare { project } => {
            schema::check(&mut c)?;
            let name = project_arg(project)?;
            let n = c.execute(
                "DELETE FROM memctl.projects WHERE owner = current_user AND name = $1",
                &[&name],
            )?;
            if n == 0 {
                writeln!(out, "{name} was not shared")?;
            } else {
                writeln!(
                    out,
                    "unshared {name}: its synced turns were deleted from the team store"
                )?;
            }
        }
        TeamCommand::Status => {
            schema::check(&mut c)?;
            let me: String = c.query_one("SELECT current_user::text", &[])?.get(0);
            writeln!(out, "member: {me}")?;
            for r in c.query(
                "SELECT p.owner, p.name, (SELECT count(*) FROM memctl.chunks c WHERE c.project_id = p.id), \
                        coalesce((SELECT string_agg(member, ',' ORDER BY member) FROM memctl.shares s WHERE s.project_id = p.id), '') \
                 FROM memctl.projects p ORDER BY p.owner = current_user DESC, p.owner, p.name",
                &[],
            )? {
                let (owner, name, n, with): (String, String, i64, String) =
                    (r.get(0), r.get(1), r.get(2), r.get(3));
                writeln!(out, "  {owner:<12} {name}  {n} chunk(s)  shared with {with}")?;
            }
        }
    }
    Ok(())
}

/// A random password for a new member (from the OS's generator).
fn generate_password() -> Result<String> {
    use std::io::Read;
    let mut b = [0u8; 18];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom")?;
    Ok(hex::encode(b))
}

/// `memctl search --team`: embed the query with the local model (lexical only without one),
/// run it on the team store, print who each hit came from.
pub fn search_cmd(
    engine: &Engine,
    s: &Settings,
    query: &str,
    k: usize,
    project: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let t0 = std::time::Instant::now();
    let (hits, sql_ms) = team_search_timed(engine, s, query, k, project)?;
    if json {
        // `ms`: embedding the query, connecting and the search; `sql_ms`: the one statement.
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        writeln!(
            out,
            "{}",
            serde_json::json!({ "scope": "team", "ms": ms, "sql_ms": sql_ms, "results": hits })
        )?;
        return Ok(());
    }
    if hits.is_empty() {
        writeln!(out, "no team results")?;
    }
    for (i, h) in hits.iter().enumerate() {
        writeln!(
            out,
            "{:>2}. [{}] {} · session {} turn {} · {}  ({:.4})",
            i + 1,
            h.author,
            h.project,
            h.session.get(..8).unwrap_or(&h.session),
            h.turn,
            h.started_at.as_deref().unwrap_or("-"),
            h.score
        )?;
        let gist: String = if h.summary.is_empty() {
            &h.text
        } else {
            &h.summary
        }
        .chars()
        .take(200)
        .collect();
        writeln!(out, "    {}", gist.replace('\n', " "))?;
    }
    Ok(())
}

/// A team query from the CLI or the MCP server.
pub fn team_search(
    engine: &Engine,
    s: &Settings,
    query: &str,
    k: usize,
    project: Option<&str>,
) -> Result<Vec<search::TeamHit>> {
    Ok(team_search_timed(engine, s, query, k, project)?.0)
}

/// [`team_search`] and the milliseconds of its search statement (the benchmark's figure).
pub fn team_search_timed(
    engine: &Engine,
    s: &Settings,
    query: &str,
    k: usize,
    project: Option<&str>,
) -> Result<(Vec<search::TeamHit>, f64)> {
    config::require(s, engine.data_dir())?;
    let vector = match engine.embed_active(&[query]) {
        // Only the model's vectors share the synced rows' space (a hash vector does not).
        Ok(mut e) if e.embedder.model == memctl_engine::MINILM_NAME => {
            e.vectors.pop().filter(|v| v.len() == sync::DIMS)
        }
        Ok(_) => None,
        Err(e) => {
            tracing::info!(error = %e, "no query vector; team search is lexical only");
            None
        }
    };
    let (mut c, _) = connect(s, engine.data_dir())?;
    let version = schema::check(&mut c)?;
    search::prepare_session(&mut c)?;
    let t0 = std::time::Instant::now();
    let hits = search::search(
        &mut c,
        &search::TeamQuery {
            text: query,
            vector,
            k,
            project,
        },
        version,
    )?;
    Ok((hits, t0.elapsed().as_secs_f64() * 1000.0))
}

/// The turn references of chunks about to be forgotten (see [`sync::turn_ref`]).
pub fn forgotten_refs(engine: &Engine, ids: &[u64]) -> Result<Vec<String>> {
    let mut refs = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(rec) = engine.chunk(*id)? {
            let c = &rec.chunk;
            refs.push(sync::turn_ref(
                &c.session_id,
                c.turn_index,
                c.part,
                &c.sha256,
            ));
        }
    }
    Ok(refs)
}

/// After a local forget: queue its turns for deletion on the team store and try now (the
/// connection gives up after [`config::CONNECT_TIMEOUT`]; the next sync retries). Never
/// fails the forget, which is done: problems are logged and printed as a warning.
pub fn after_forget(engine: &Engine, s: &Settings, refs: Vec<String>) {
    if let Err(e) = sync::queue_forgotten(engine.data_dir(), refs) {
        eprintln!("memctl: warning: could not queue the forgotten turns for the team store: {e:#}");
        return;
    }
    let now =
        connect(s, engine.data_dir()).and_then(|(mut c, _)| sync::delete_forgotten(engine, &mut c));
    match now {
        Ok(n) => tracing::info!(rows = n, "forgotten turns deleted from the team store"),
        Err(e) => eprintln!(
            "memctl: warning: the team store was not reached ({e:#}); the next `memctl sync` deletes the forgotten turns there"
        ),
    }
}
