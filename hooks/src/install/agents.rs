//! `memctl install --agent codex|gemini` / `uninstall --agent …`: memctl's hooks and MCP server
//! in Codex's or Gemini CLI's config files, with the guarantees of the Claude Code install
//! (unknown keys and other hooks preserved, our entries recognised by the `memctl-hook`
//! command, idempotent, atomic writes, uninstall removes only ours).
//!
//! Files: Codex reads `hooks.json` and `config.toml` (its MCP servers) beside each config
//! layer: `<project>/.codex/` or, with `--user`, `$CODEX_HOME` (`~/.codex`). Gemini CLI reads
//! `settings.json` (hooks and `mcpServers`): `<project>/.gemini/` or `~/.gemini/`.
//!
//! Machine paths: the project files are shared through the repository, and neither agent has
//! an untracked variant (Claude Code's `settings.local.json`). So a project install writes only
//! bare command names (`memctl-hook`, `memctl`, found on PATH) and is refused when the binaries
//! are not on PATH or a `--data-dir` is given; absolute paths go only into `--user` files.

use super::command::{InstallArgs, InstallEnv};
use super::{HookSpec, load_json, merge_table, remove_from_table, write_atomic};
use crate::agent::Agent;
use crate::codex::CodexEventName;
use crate::gemini::GeminiEventName;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The name our MCP server is registered under.
const MCP_NAME: &str = "memctl";

/// Codex's `hooks.json` or Gemini CLI's `settings.json`, as far as memctl reads or writes it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct JsonConfig {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    hooks: Map<String, Value>,
    #[serde(
        rename = "mcpServers",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    mcp_servers: Option<Map<String, Value>>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

impl JsonConfig {
    fn text(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }
}

/// How the agent starts `memctl mcp`: a program and its arguments (no shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct McpServer {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
}

/// Whether an MCP server entry's command is a `memctl` binary (any path).
fn is_our_mcp(command: Option<&str>) -> bool {
    command
        .and_then(|c| Path::new(c).file_name())
        .is_some_and(|n| n == "memctl")
}

/// Where one agent's install writes, for one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFiles {
    /// The hooks file (`hooks.json`, `settings.json`).
    pub hooks: PathBuf,
    /// The file that registers MCP servers (Codex's `config.toml`; Gemini CLI's is the hooks
    /// file itself).
    pub mcp: PathBuf,
}

impl InstallEnv {
    /// The files of `agent` (Codex or Gemini CLI) for the user scope or the project's.
    pub fn agent_files(&self, agent: Agent, user: bool) -> Result<AgentFiles> {
        let dir = match (agent, user) {
            (Agent::Codex, true) => self
                .codex_home
                .clone()
                .context("HOME is not set and CODEX_HOME neither: no Codex config dir")?,
            (Agent::Gemini, true) => self
                .gemini_dir
                .clone()
                .context("HOME is not set: no Gemini CLI settings dir")?,
            (Agent::Codex, false) => self.project_dir.join(".codex"),
            (Agent::Gemini, false) => self.project_dir.join(".gemini"),
            (Agent::ClaudeCode, _) => bail!("Claude Code's settings files are not agent files"),
        };
        Ok(match agent {
            Agent::Codex => AgentFiles {
                hooks: dir.join("hooks.json"),
                mcp: dir.join("config.toml"),
            },
            _ => AgentFiles {
                hooks: dir.join("settings.json"),
                mcp: dir.join("settings.json"),
            },
        })
    }

    /// How the agent runs `memctl mcp`: the bare name when a shell with this `PATH` finds this
    /// very binary, else its absolute path; plus `--data-dir` when one was given.
    pub(crate) fn mcp_server(&self) -> Result<McpServer> {
        let path = self.bin_dir.join("memctl");
        if !path.is_file() {
            bail!(
                "{} not found: build or install memctl first",
                path.display()
            );
        }
        let command = if self.resolves_to("memctl", &path) {
            "memctl".to_string()
        } else {
            path.display().to_string()
        };
        let mut args = Vec::new();
        if let Some(d) = &self.data_dir {
            args.extend(["--data-dir".to_string(), d.display().to_string()]);
        }
        args.push("mcp".into());
        Ok(McpServer { command, args })
    }
}

/// The hook entries of `agent`, from its policy: `memctl-hook --agent <agent> <Event>` with the
/// policy's timeout (Codex: seconds; Gemini CLI: milliseconds) and tool matcher.
pub(crate) fn specs(agent: Agent) -> Vec<HookSpec> {
    let args = |event: &str| format!("--agent {agent} {event}");
    match agent {
        Agent::Codex => CodexEventName::ALL
            .iter()
            .map(|ev| HookSpec {
                event: ev.as_str(),
                matcher: ev.tool_matcher(),
                timeout: ev.install_timeout_secs(),
                args: args(ev.as_str()),
            })
            .collect(),
        Agent::Gemini => GeminiEventName::ALL
            .iter()
            .map(|ev| HookSpec {
                event: ev.as_str(),
                matcher: ev.tool_matcher(),
                timeout: ev.install_timeout_ms(),
                args: args(ev.as_str()),
            })
            .collect(),
        Agent::ClaudeCode => Vec::new(),
    }
}

/// The events `agent`'s install writes.
pub fn event_names(agent: Agent) -> Vec<&'static str> {
    specs(agent).into_iter().map(|s| s.event).collect()
}

/// Add (or update) our MCP server in a JSON `mcpServers` table; a `memctl` entry that runs
/// something else is left alone (returned as a warning).
fn merge_json_mcp(c: &mut JsonConfig, server: &McpServer) -> Option<String> {
    let servers = c.mcp_servers.get_or_insert_with(Map::new);
    if let Some(old) = servers.get(MCP_NAME)
        && !is_our_mcp(old.get("command").and_then(Value::as_str))
    {
        return Some(format!(
            "mcpServers.{MCP_NAME} runs something else ({old}); left as it is"
        ));
    }
    let mut entry = match servers.remove(MCP_NAME) {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    };
    entry.insert("command".into(), server.command.clone().into());
    entry.insert("args".into(), server.args.clone().into());
    servers.insert(MCP_NAME.into(), Value::Object(entry));
    None
}

/// Remove our MCP server from a JSON `mcpServers` table (and the table when that left it
/// empty; an empty one the user wrote stays).
fn remove_json_mcp(c: &mut JsonConfig) {
    let Some(servers) = c.mcp_servers.as_mut() else {
        return;
    };
    if servers
        .get(MCP_NAME)
        .is_some_and(|s| is_our_mcp(s.get("command").and_then(Value::as_str)))
    {
        servers.remove(MCP_NAME);
        if servers.is_empty() {
            c.mcp_servers = None;
        }
    }
}

/// Read Codex's `config.toml` (missing: empty); invalid TOML is an error, never overwritten.
fn load_toml(path: &Path) -> Result<toml_edit::DocumentMut> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .parse()
            .with_context(|| format!("{} is not valid TOML; not touching it", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Add (or update) `[mcp_servers.memctl]` in Codex's `config.toml`, keeping every other key,
/// comment and layout; a `memctl` entry that runs something else is left alone (a warning).
fn merge_toml_mcp(doc: &mut toml_edit::DocumentMut, server: &McpServer) -> Result<Option<String>> {
    let parent = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        // No bare `[mcp_servers]` header: only `[mcp_servers.memctl]` is written.
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let parent_inline = parent.is_inline_table();
    let servers = parent
        .as_table_like_mut()
        .context("mcp_servers in config.toml is not a table; not touching it")?;
    let mut entry = match servers.get(MCP_NAME) {
        None => toml_edit::Table::new(),
        Some(old) if !is_our_mcp(old.get("command").and_then(|c| c.as_str())) => {
            return Ok(Some(format!(
                "mcp_servers.{MCP_NAME} runs something else; left as it is"
            )));
        }
        Some(_) => {
            let entry = servers
                .get_mut(MCP_NAME)
                .and_then(|e| e.as_table_like_mut())
                .context("mcp_servers.memctl is not a table; not touching it")?;
            entry.insert("command", toml_edit::value(server.command.as_str()));
            entry.insert("args", toml_edit::value(toml_array(&server.args)));
            return Ok(None);
        }
    };
    entry.insert("command", toml_edit::value(server.command.as_str()));
    entry.insert("args", toml_edit::value(toml_array(&server.args)));
    // Written as the user writes the other servers: a `[mcp_servers.memctl]` table, or an
    // inline table inside an inline `mcp_servers` or beside inline siblings.
    let siblings_inline = servers.iter().any(|(_, v)| v.is_inline_table());
    let item = if parent_inline || siblings_inline {
        toml_edit::Item::Value(toml_edit::Value::InlineTable(entry.into_inline_table()))
    } else {
        toml_edit::Item::Table(entry)
    };
    servers.insert(MCP_NAME, item);
    Ok(None)
}

fn toml_array(items: &[String]) -> toml_edit::Array {
    items.iter().map(String::as_str).collect()
}

/// Remove our `[mcp_servers.memctl]` from Codex's `config.toml` (and `mcp_servers` when that
/// left it empty; an empty one the user wrote stays).
fn remove_toml_mcp(doc: &mut toml_edit::DocumentMut) {
    let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(|s| s.as_table_like_mut())
    else {
        return;
    };
    let ours = servers
        .get(MCP_NAME)
        .is_some_and(|s| is_our_mcp(s.get("command").and_then(|c| c.as_str())));
    if ours {
        servers.remove(MCP_NAME);
        if servers.is_empty() {
            doc.remove("mcp_servers");
        }
    }
}

/// One file's text before and after the edit.
struct Edit {
    path: PathBuf,
    before: String,
    after: String,
}

/// The edits of one install or uninstall run for `agent` (files read once, in order).
fn plan(
    a: &InstallArgs,
    add: bool,
    env: &InstallEnv,
    warnings: &mut Vec<String>,
) -> Result<Vec<Edit>> {
    let files = env.agent_files(a.agent, a.user)?;
    let (hook, server) = if add {
        (
            Some(env.invocation(super::HOOK_BIN)?),
            Some(env.mcp_server()?),
        )
    } else {
        (None, None)
    };
    if let (false, Some(hook), Some(server)) = (a.user, &hook, &server)
        && !(hook.portable() && !server.command.contains('/') && env.data_dir.is_none())
    {
        bail!(
            "{} is shared through the repository, and these commands name paths of this \
             machine ({}; {} {}): put memctl and memctl-hook on PATH (cargo install --locked \
             --path cli && cargo install --locked --path hooks) without --data-dir, or install \
             with --user",
            files.hooks.display(),
            hook.command("<Event>"),
            server.command,
            server.args.join(" ")
        );
    }
    let mut json: JsonConfig = load_json(&files.hooks)?;
    let before = json.text()?;
    match &hook {
        Some(hook) => merge_table(&mut json.hooks, &specs(a.agent), hook)?,
        None => remove_from_table(&mut json.hooks)?,
    }
    let mut edits = Vec::new();
    if a.agent == Agent::Gemini {
        match &server {
            Some(s) => warnings.extend(merge_json_mcp(&mut json, s)),
            None => remove_json_mcp(&mut json),
        }
    } else {
        let mut doc = load_toml(&files.mcp)?;
        let before = doc.to_string();
        match &server {
            Some(s) => warnings.extend(merge_toml_mcp(&mut doc, s)?),
            None => remove_toml_mcp(&mut doc),
        }
        edits.push(Edit {
            path: files.mcp.clone(),
            before,
            after: doc.to_string(),
        });
    }
    edits.insert(
        0,
        Edit {
            path: files.hooks,
            before,
            after: json.text()?,
        },
    );
    Ok(edits)
}

/// Run `memctl install --agent codex|gemini` (`add`) or `uninstall`.
pub fn run(a: &InstallArgs, add: bool, env: &InstallEnv, out: &mut dyn Write) -> Result<()> {
    let claude_only = [
        (a.local, "--local"),
        (a.statusline, "--statusline"),
        (a.claude_md, "--claude-md"),
        (a.force, "--force"),
    ];
    if let Some((_, flag)) = claude_only.iter().find(|(on, _)| *on) {
        bail!(
            "{flag} is for Claude Code only; not with --agent {}",
            a.agent
        );
    }
    let mut warnings = Vec::new();
    let edits = plan(a, add, env, &mut warnings)?;
    for w in &warnings {
        eprintln!("memctl: warning: {w}");
    }
    if a.dry_run {
        for e in &edits {
            let verb = if e.after == e.before {
                "unchanged"
            } else {
                "would write"
            };
            eprintln!("memctl: dry run: {verb} {}", e.path.display());
            writeln!(out, "--- {}", e.path.display())?;
            write!(out, "{}", e.after)?;
        }
        return Ok(());
    }
    for e in &edits {
        let changed = e.after != e.before;
        if changed {
            write_atomic(&e.path, &e.after)?;
        }
        let what = match (add, changed) {
            (true, true) => "installed memctl",
            (true, false) => "already installed",
            (false, true) => "removed memctl",
            (false, false) => "already clean",
        };
        writeln!(out, "{}: {what}", e.path.display())?;
    }
    if add {
        writeln!(out, "{}", trust_note(a.agent))?;
        writeln!(
            out,
            "history: `memctl ingest --agent {}` archives the sessions {} already wrote",
            a.agent,
            agent_name(a.agent)
        )?;
    }
    Ok(())
}

/// The agent's product name, for messages.
fn agent_name(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "Claude Code",
        Agent::Codex => "Codex",
        Agent::Gemini => "Gemini CLI",
    }
}

/// What the user must still do before the agent runs the new hooks.
fn trust_note(agent: Agent) -> &'static str {
    match agent {
        Agent::Codex => {
            "note: Codex runs new or changed hooks only once you trust them: open /hooks in \
             Codex and trust memctl's; a project's .codex/ files load only in a trusted project"
        }
        _ => "note: Gemini CLI runs a project's hooks only in a folder you trust",
    }
}

/// memctl's hooks of one agent in one file (for `memctl doctor`).
#[derive(Debug, Clone)]
pub struct AgentHooks {
    /// Which agent.
    pub agent: Agent,
    /// The hooks file.
    pub path: PathBuf,
    /// (event, command) of each of our entries; an error when the file cannot be read.
    pub hooks: Result<Vec<(String, String)>, String>,
}

/// Our hooks in every Codex and Gemini CLI file (user and project), installed or not.
pub fn scan(env: &InstallEnv) -> Vec<AgentHooks> {
    let mut found = Vec::new();
    for agent in [Agent::Codex, Agent::Gemini] {
        for user in [true, false] {
            let Ok(files) = env.agent_files(agent, user) else {
                continue;
            };
            let hooks = load_json::<JsonConfig>(&files.hooks)
                .and_then(|c| super::ours_in_table(&c.hooks, &event_names(agent)))
                .map_err(|e| format!("{e:#}"));
            found.push(AgentHooks {
                agent,
                path: files.hooks,
                hooks,
            });
        }
    }
    found
}

/// The Codex or Gemini CLI hook command of an installed file, for a test or a check.
pub fn installed(path: &Path, agent: Agent) -> Result<Vec<(String, String)>> {
    let c: JsonConfig = load_json(path)?;
    super::ours_in_table(&c.hooks, &event_names(agent))
}
