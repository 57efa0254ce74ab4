//! The CLI's search filters, parsed strictly against the store ([`memctl_engine::filter`]): a
//! value that cannot match anything is an error (exit 1) naming what the flag takes, never a
//! silent empty result.

use anyhow::Result;

use memctl_engine::{Engine, SearchRequest};

/// The filter flags as given on the command line.
#[derive(Debug, Default, Clone)]
pub struct FilterArgs<'a> {
    /// `--session`: a session id or a unique prefix of one.
    pub session: Option<&'a str>,
    /// `--tool`: any case.
    pub tool: Option<&'a str>,
    /// `--file`: a substring of a touched path.
    pub file: Option<&'a str>,
    /// `--since` / `--until`: RFC 3339, a date, an age (`7d`) or today / yesterday.
    pub since: Option<&'a str>,
    /// See `since`.
    pub until: Option<&'a str>,
}

/// Put the parsed filters into `req`.
pub fn apply(engine: &Engine, f: &FilterArgs<'_>, req: &mut SearchRequest) -> Result<()> {
    let now = jiff::Timestamp::now();
    req.since = f
        .since
        .map(|v| memctl_engine::parse_time("since", v, now))
        .transpose()?;
    req.until = f
        .until
        .map(|v| memctl_engine::parse_time("until", v, now))
        .transpose()?;
    req.session = f.session.map(|p| session_id(engine, p)).transpose()?;
    req.tool = f.tool.map(|t| t.trim().to_string());
    req.file = f.file.map(str::to_string);
    Ok(())
}

/// The archived session a full id or a unique prefix names: every command that takes a session
/// accepts the 8-character ids `sessions` and `search` print; an ambiguous prefix is an error
/// listing candidates.
pub fn session_id(engine: &Engine, prefix: &str) -> Result<String> {
    let sessions = engine.sessions()?;
    Ok(memctl_engine::resolve_session(
        prefix,
        sessions.iter().map(|(id, _)| id.as_str()),
    )?)
}

/// The archived project `value` names (trailing slash and `.` components ignored), or an error
/// that lists known projects.
pub fn project(engine: &Engine, value: &str) -> Result<String> {
    let sessions = engine.sessions()?;
    let mut known: Vec<&str> = sessions.iter().map(|(_, s)| s.project.as_str()).collect();
    known.sort_unstable();
    known.dedup();
    Ok(memctl_engine::resolve_project(value, known)?)
}
