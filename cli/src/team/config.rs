//! Where the team database is and who we are on it: the connection string comes from
//! `MEMCTL_TEAM_URL` (environment or the user's config file), else from a file that only its
//! owner can read (`MEMCTL_TEAM_URL_FILE`, default `<data dir>/team.url`), else from libpq's
//! own `PG*` variables. Never from a project file (the settings refuse the keys there): a
//! repository is cloned by everyone, credentials are not.

use anyhow::{Context, Result, bail};
use memctl_engine::Settings;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::tls::{self, SslMode, TlsOptions};

/// How long a connection attempt may take: a background sync against a server that is down
/// gives up after this and the next hook tries again.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub use memctl_hooks::background::{
    default_team_url_file as default_url_file, team_configured as configured,
};

/// Where the connection came from (for messages; never the string itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `MEMCTL_TEAM_URL`.
    Setting,
    /// A 0600 file.
    File(PathBuf),
    /// libpq's `PG*` variables.
    PgEnv,
}

/// A resolved team connection: rust-postgres' settings, the TLS options and where they came
/// from.
#[derive(Debug, Clone)]
pub struct Team {
    pub cfg: postgres::Config,
    pub tls: TlsOptions,
    pub origin: Origin,
}

/// The connection settings, or None when no team store is configured. The CA file is the
/// connection string's `sslrootcert` (or libpq's `PGSSLROOTCERT`), else `MEMCTL_TEAM_CA_FILE`.
pub fn resolve(s: &Settings, data_dir: &Path) -> Result<Option<Team>> {
    let Some((cfg, mut tls, origin)) = resolve_parts(s, data_dir)? else {
        return Ok(None);
    };
    if tls.ca_file.is_none() {
        tls.ca_file = s.team.ca_file.clone();
    }
    Ok(Some(Team { cfg, tls, origin }))
}

type Parts = (postgres::Config, TlsOptions, Origin);

fn resolve_parts(s: &Settings, data_dir: &Path) -> Result<Option<Parts>> {
    if let Some(url) = &s.team.url {
        let (cfg, tls) = parse(url).context("MEMCTL_TEAM_URL")?;
        return Ok(Some((cfg, tls, Origin::Setting)));
    }
    let file = match &s.team.url_file {
        Some(f) => Some(f.clone()),
        None => Some(default_url_file(data_dir)).filter(|f| f.is_file()),
    };
    if let Some(f) = file {
        let url = read_private(&f)?;
        let (cfg, tls) =
            parse(&url).with_context(|| format!("the connection string in {}", f.display()))?;
        return Ok(Some((cfg, tls, Origin::File(f))));
    }
    if let Some((cfg, tls)) = from_pg_env(|k| std::env::var(k).ok())? {
        return Ok(Some((cfg, tls, Origin::PgEnv)));
    }
    Ok(None)
}

/// Like [`resolve`], failing with how to configure one when there is none.
pub fn require(s: &Settings, data_dir: &Path) -> Result<Team> {
    resolve(s, data_dir)?.context(
        "no team store configured: set MEMCTL_TEAM_URL (postgresql://USER@HOST/DB), or put the \
         connection string in <data dir>/team.url (chmod 600), or set libpq's PGHOST/PGUSER/...",
    )
}

/// Parse a libpq connection string (URL or `key=value` form; `sslmode`, `sslrootcert`,
/// `connect_timeout` and the rest are libpq's own options, passed through).
pub fn parse(url: &str) -> Result<(postgres::Config, TlsOptions)> {
    let (rest, mode, ca_file) = tls::split_options(url)?;
    let mode = mode.unwrap_or_default();
    let mut cfg: postgres::Config = rest
        .parse()
        .map_err(|e| anyhow::anyhow!("not a PostgreSQL connection string: {e}"))?;
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    if cfg.get_application_name().is_none() {
        cfg.application_name("memctl");
    }
    cfg.ssl_mode(mode.postgres());
    Ok((cfg, TlsOptions { mode, ca_file }))
}

/// The connection from libpq's variables (`PGHOST` must be set).
pub fn from_pg_env(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<(postgres::Config, TlsOptions)>> {
    let Some(host) = get("PGHOST") else {
        return Ok(None);
    };
    let mut cfg = postgres::Config::new();
    cfg.host(&host);
    if let Some(p) = get("PGPORT") {
        cfg.port(
            p.parse()
                .with_context(|| format!("PGPORT={p} is not a port"))?,
        );
    }
    if let Some(u) = get("PGUSER") {
        cfg.user(&u);
    }
    if let Some(p) = get("PGPASSWORD") {
        cfg.password(p);
    }
    if let Some(d) = get("PGDATABASE") {
        cfg.dbname(&d);
    }
    let mode = match get("PGSSLMODE") {
        Some(m) => SslMode::parse(&m).context("PGSSLMODE")?,
        None => SslMode::default(),
    };
    cfg.ssl_mode(mode.postgres());
    cfg.connect_timeout(CONNECT_TIMEOUT);
    cfg.application_name("memctl");
    let ca_file = get("PGSSLROOTCERT").map(PathBuf::from);
    Ok(Some((cfg, TlsOptions { mode, ca_file })))
}

/// A credentials file: refused when its group or others may read it (as ssh and libpq's
/// `.pgpass` do), so that a password is never left world-readable by accident.
fn read_private(path: &Path) -> Result<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta =
            std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            bail!(
                "{} holds team credentials but is readable by others (mode {mode:o}): run chmod 600 {}",
                path.display(),
                path.display()
            );
        }
    }
    let text = memctl_engine::read_regular_string(path, 64 * 1024)
        .with_context(|| format!("reading {}", path.display()))?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .with_context(|| format!("{} holds no connection string", path.display()))?;
    Ok(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_readable_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("team.url");
        std::fs::write(&f, "postgresql://alice@127.0.0.1/db\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = read_private(&f).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_private(&f).unwrap(), "postgresql://alice@127.0.0.1/db");
    }

    #[test]
    fn libpq_variables_and_bad_strings() {
        let env = |k: &str| match k {
            "PGHOST" => Some("127.0.0.1".to_string()),
            "PGPORT" => Some("6543".to_string()),
            "PGUSER" => Some("bob".to_string()),
            _ => None,
        };
        let (cfg, tls) = from_pg_env(env).unwrap().unwrap();
        assert_eq!(tls, TlsOptions::default());
        assert_eq!(cfg.get_ports(), &[6543]);
        assert_eq!(cfg.get_user(), Some("bob"));
        assert!(from_pg_env(|_| None).unwrap().is_none());
        assert!(parse("postgresql://a@h:notaport/db").is_err());
        let (c, tls) = parse("postgresql://a@h/db?sslmode=require").unwrap();
        assert_eq!(c.get_ssl_mode(), postgres::config::SslMode::Require);
        assert_eq!(tls.mode, SslMode::Require);
        let (c, tls) = parse("postgresql://a@h/db?sslmode=verify-full&sslrootcert=/c.pem").unwrap();
        assert_eq!(c.get_ssl_mode(), postgres::config::SslMode::Require);
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.ca_file.as_deref(), Some(Path::new("/c.pem")));
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
    }
}
