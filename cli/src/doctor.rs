//! `memctl doctor`: is this installation whole, and would the agent reach it?
//!
//! One check per line (or `--json`: a [`Report`]), each `ok`, `warn` or `error`; any error makes
//! the command exit 1, so a script (or the plugin's checks) can rely on the exit status. Errors
//! are what breaks memctl: no runtime or model (or not the pinned bytes), a model that does not
//! load, a store that does not open, hooks whose binary is gone, hooks installed twice with
//! different commands, and an agent that cannot run `memctl`. Warnings degrade it: no hooks at
//! all, a memctl on PATH of another version, no int8 query model.

use crate::setup::manifest::Manifest;
use crate::setup::sha256_file;
use anyhow::{Result, bail};
use memctl_engine::{Embedder, Engine, EngineOptions, OnnxEmbedder};
use memctl_hooks::agent::Agent;
use memctl_hooks::install::InstallEnv;
use memctl_hooks::install::sources::Found;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `memctl doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// One JSON object: version, data dir, ok, and every check (name, status, detail).
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Works, worse than it could.
    Warn,
    /// Broken: `memctl doctor` exits 1.
    Error,
}

/// One check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    /// Stable name (`runtime`, `model`, `hooks.project`, `agent`, ...).
    pub name: String,
    /// Outcome.
    pub status: Status,
    /// What was found, and what to do when it is not ok.
    pub detail: String,
}

/// `memctl doctor --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// This binary's version.
    pub version: String,
    /// The data dir checked.
    pub data_dir: PathBuf,
    /// No check is an error.
    pub ok: bool,
    /// Number of errors.
    pub errors: usize,
    /// Number of warnings.
    pub warnings: usize,
    /// Every check, in order.
    pub checks: Vec<Check>,
}

#[derive(Default)]
struct Checks(Vec<Check>);

impl Checks {
    fn push(&mut self, name: impl Into<String>, status: Status, detail: impl Into<String>) {
        self.0.push(Check {
            name: name.into(),
            status,
            detail: detail.into(),
        });
    }
}

/// Run `memctl doctor` with the engine options (data dir, runtime, model) and the install
/// environment (settings files, PATH).
pub fn run(
    a: &DoctorArgs,
    opts: EngineOptions,
    env: &InstallEnv,
    out: &mut dyn Write,
) -> Result<()> {
    let report = gather(opts, env)?;
    print(a, &report, out)
}

/// Every check, without printing: `memctl doctor` and the viewer's health page (`memctl ui`).
pub fn gather(opts: EngineOptions, env: &InstallEnv) -> Result<Report> {
    let manifest = Manifest::embedded()?;
    let mut c = Checks::default();
    let data_dir = opts.data_dir.clone();
    // A model switched off on purpose is not a fault: what it needs is then only a warning.
    let need = if opts.model_disabled {
        Status::Warn
    } else {
        Status::Error
    };
    runtime(&mut c, &opts, &manifest, need);
    model(&mut c, &opts, &manifest, need);
    embedder(&mut c, &opts, need);
    store(&mut c, opts);
    let found = Found::scan(env);
    let others = other_agents_hooks(&mut c, env, &data_dir);
    hooks(&mut c, &found, env, &data_dir, others);
    agent(&mut c, &found, env);
    status_line(&mut c, env);

    let errors = c.0.iter().filter(|x| x.status == Status::Error).count();
    let report = Report {
        version: env!("CARGO_PKG_VERSION").into(),
        data_dir,
        ok: errors == 0,
        errors,
        warnings: c.0.iter().filter(|x| x.status == Status::Warn).count(),
        checks: c.0,
    };
    Ok(report)
}

fn print(a: &DoctorArgs, report: &Report, out: &mut dyn Write) -> Result<()> {
    if a.json {
        serde_json::to_writer_pretty(&mut *out, report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "memctl {}, data dir {}",
            report.version,
            report.data_dir.display()
        )?;
        for x in &report.checks {
            let st = match x.status {
                Status::Ok => "ok",
                Status::Warn => "warn",
                Status::Error => "ERROR",
            };
            writeln!(out, "{st:<5} {:<14} {}", x.name, x.detail)?;
        }
        writeln!(
            out,
            "doctor: {} error(s), {} warning(s)",
            report.errors, report.warnings
        )?;
    }
    out.flush()?;
    if !report.ok {
        let names: Vec<&str> = report
            .checks
            .iter()
            .filter(|x| x.status == Status::Error)
            .map(|x| x.name.as_str())
            .collect();
        bail!(
            "doctor found {} problem(s): {}",
            report.errors,
            names.join(", ")
        );
    }
    Ok(())
}

/// The sha256 check of one pinned file: `Ok(None)` when it matches.
fn pinned(path: &Path, pin: &str) -> Result<Option<String>, String> {
    match sha256_file(path) {
        Ok(got) if got == pin => Ok(None),
        Ok(got) => Ok(Some(format!(
            "sha256 {got}, pinned {pin}: run `memctl setup --force`"
        ))),
        Err(e) => Err(format!("{e:#}")),
    }
}

fn runtime(c: &mut Checks, opts: &EngineOptions, m: &Manifest, need: Status) {
    let p = &opts.onnx.dylib_path;
    let rt = &m.onnxruntime;
    let (status, detail) = if !p.is_file() {
        (
            need,
            format!(
                "{} missing: run `memctl setup` (once per machine, every data dir finds it; or set ORT_DYLIB_PATH)",
                p.display()
            ),
        )
    } else if p.file_name().is_some_and(|n| *n == *rt.file) {
        match pinned(p, &rt.sha256) {
            Ok(None) => (
                Status::Ok,
                format!("{} (onnxruntime {}, sha256 ok)", p.display(), rt.version),
            ),
            Ok(Some(why)) => (Status::Error, format!("{}: {why}", p.display())),
            Err(e) => (Status::Error, e),
        }
    } else {
        (
            Status::Warn,
            format!(
                "{} is not the pinned {} (set by ORT_DYLIB_PATH?)",
                p.display(),
                rt.file
            ),
        )
    };
    c.push("runtime", status, detail);
}

fn model(c: &mut Checks, opts: &EngineOptions, m: &Manifest, need: Status) {
    let file = opts.onnx.model_path();
    let tok = opts.onnx.tokenizer_path();
    if let Some(p) = [&file, &tok].into_iter().find(|p| !p.is_file()) {
        return c.push(
            "model",
            need,
            format!(
                "{} missing: run `memctl setup` (once per machine, every data dir finds it; or set MEMCTL_MODEL_DIR)",
                p.display()
            ),
        );
    }
    let sha = match sha256_file(&file) {
        Ok(s) => s,
        Err(e) => return c.push("model", Status::Error, format!("{e:#}")),
    };
    let Some(entry) = m.model_for(&file, Some(&sha)) else {
        return c.push(
            "model",
            Status::Warn,
            format!("{} is not a model of models/manifest.toml", file.display()),
        );
    };
    let mut problems = Vec::new();
    if sha != entry.sha256 {
        problems.push(format!(
            "{}: sha256 {sha}, pinned {}",
            file.display(),
            entry.sha256
        ));
    }
    match pinned(&tok, &entry.tokenizer_sha256) {
        Ok(None) => {}
        Ok(Some(why)) => problems.push(format!("{}: {why}", tok.display())),
        Err(e) => problems.push(e),
    }
    if !problems.is_empty() {
        return c.push(
            "model",
            Status::Error,
            format!("{}; run `memctl setup --force`", problems.join("; ")),
        );
    }
    let role = if entry.default {
        String::new()
    } else {
        ", the int8 model as the main model (`memctl setup` without --int8-only adds the fp32 one)"
            .into()
    };
    c.push(
        "model",
        Status::Ok,
        format!("{} ({}, sha256 ok{role})", file.display(), entry.id),
    );
    let query = opts.onnx.query_config().model_dir;
    if query != opts.onnx.model_dir {
        c.push("query_model", Status::Ok, query.display().to_string());
    } else if entry.default {
        c.push(
            "query_model",
            Status::Warn,
            format!(
                "no int8 model beside {}: prompt-time recall loads the fp32 model (slower); `memctl setup` installs it",
                opts.onnx.model_dir.display()
            ),
        );
    }
}

fn embedder(c: &mut Checks, opts: &EngineOptions, need: Status) {
    if opts.model_disabled {
        return c.push(
            "embedder",
            Status::Warn,
            "model off (MEMCTL_EMBEDDER=hash): hash vectors and BM25 only",
        );
    }
    let loaded = OnnxEmbedder::load(&opts.onnx).and_then(|e| {
        let v = e.embed("memctl doctor")?;
        Ok((e, v.len()))
    });
    match loaded {
        Ok((e, dims)) => c.push(
            "embedder",
            Status::Ok,
            format!(
                "{} (ONNX, active: loads and embeds, {dims} dims; {})",
                e.id(),
                e.info().build_info
            ),
        ),
        Err(e) => c.push(
            "embedder",
            need,
            format!("hash FALLBACK: the model does not load: {e}"),
        ),
    }
}

fn store(c: &mut Checks, opts: EngineOptions) {
    let path = opts.store_path();
    // Checking must not create: a store appears with the first archived turn, and a fresh
    // install without one is as it should be.
    if !path.exists() {
        c.push(
            "store",
            Status::Ok,
            format!(
                "no store yet at {} (the first hook or `memctl ingest` creates it)",
                path.display()
            ),
        );
        return;
    }
    let status = Engine::open(opts).and_then(|e| e.status());
    match status {
        Ok(st) => c.push(
            "store",
            Status::Ok,
            format!(
                "{} ({} chunks, {} sessions, {} bytes, {} pending embeddings)",
                path.display(),
                st.chunks,
                st.sessions,
                st.file_bytes,
                st.pending
            ),
        ),
        Err(e) => c.push(
            "store",
            Status::Error,
            format!("{} does not open: {e}", path.display()),
        ),
    }
}

/// The binary and `--data-dir` of a command written by `memctl install`.
fn parse_command(command: &str) -> Option<(String, Option<PathBuf>)> {
    let words = shlex::split(command)?;
    let bin = words.first()?.clone();
    let data_dir = words
        .iter()
        .position(|w| w == "--data-dir")
        .and_then(|i| words.get(i + 1))
        .map(PathBuf::from);
    Some((bin, data_dir))
}

/// `others`: another agent's hooks are installed ([`other_agents_hooks`]), so hooks installed
/// nowhere for Claude Code is no warning.
fn hooks(c: &mut Checks, found: &Found, env: &InstallEnv, data_dir: &Path, others: bool) {
    for (path, e) in &found.unreadable {
        c.push(
            "hooks",
            Status::Error,
            format!("{} cannot be read: {e}", path.display()),
        );
    }
    for f in &found.files {
        let name = format!("hooks.{}", f.scope.name());
        if f.hooks.is_empty() {
            c.push(
                name,
                Status::Ok,
                format!("not installed ({})", f.path.display()),
            );
            continue;
        }
        let HookCommands {
            problems,
            other_dirs,
        } = hook_commands(&f.hooks, env, data_dir);
        let missing: Vec<&str> = memctl_hooks::install::EVENTS
            .iter()
            .map(|e| e.as_str())
            .filter(|e| !f.hooks.iter().any(|(h, _)| h == e))
            .collect();
        if !problems.is_empty() {
            c.push(
                name,
                Status::Error,
                format!("{}: {}", f.path.display(), problems.join("; ")),
            );
        } else if !missing.is_empty() {
            c.push(
                name,
                Status::Warn,
                format!(
                    "{}: events missing: {} (run memctl install again)",
                    f.path.display(),
                    missing.join(", ")
                ),
            );
        } else if !other_dirs.is_empty() {
            c.push(
                name,
                Status::Warn,
                format!(
                    "{}: the hooks use {}, not the data dir checked here (run doctor with the hooks' --data-dir)",
                    f.path.display(),
                    other_dirs.join(", "),
                ),
            );
        } else {
            c.push(
                name,
                Status::Ok,
                format!(
                    "{} ({})",
                    f.path.display(),
                    f.hooks.first().map_or("", |(_, cmd)| cmd.as_str())
                ),
            );
        }
    }
    for p in &found.plugins {
        let (status, how) = match launcher_finds(env, memctl_hooks::install::HOOK_BIN) {
            Some(bin) => (Status::Ok, format!("its launcher runs {}", bin.display())),
            None => (
                Status::Error,
                "its launcher finds no memctl-hook (PATH, $MEMCTL_BIN_DIR, ~/.cargo/bin): cargo install --locked --path cli && cargo install --locked --path hooks".into(),
            ),
        };
        c.push(
            "hooks.plugin",
            status,
            format!("{} enabled in {}; {how}", p.key, p.path.display()),
        );
    }
    match found.double_install() {
        Some(d) => c.push(
            "hooks.twice",
            if d.identical {
                Status::Warn
            } else {
                Status::Error
            },
            d.message(),
        ),
        None if found.installed().next().is_none() && found.plugins.is_empty() && !others => c.push(
            "hooks",
            Status::Warn,
            "memctl's hooks are installed nowhere, so nothing is archived: run `memctl install` (or enable the plugin)",
        ),
        None => {}
    }
}

/// Codex CLI and Gemini CLI: one line per agent whose hooks are installed (`hooks.codex`,
/// `hooks.gemini`): where, and whether the binary their commands name exists. A file that
/// cannot be read is a warning (the user may not use that agent with memctl at all). Returns
/// whether any agent's hooks are installed.
fn other_agents_hooks(c: &mut Checks, env: &InstallEnv, data_dir: &Path) -> bool {
    let found = memctl_hooks::install::agents::scan(env);
    let mut any = false;
    for agent in [Agent::Codex, Agent::Gemini] {
        let (mut places, mut problems) = (Vec::new(), Vec::new());
        for f in found.iter().filter(|f| f.agent == agent) {
            match &f.hooks {
                Err(e) => c.push(
                    format!("hooks.{agent}"),
                    Status::Warn,
                    format!("{} cannot be read: {e}", f.path.display()),
                ),
                Ok(h) if h.is_empty() => {}
                Ok(h) => {
                    places.push(f.path.display().to_string());
                    for p in hook_commands(h, env, data_dir).problems {
                        if !problems.contains(&p) {
                            problems.push(p);
                        }
                    }
                }
            }
        }
        if places.is_empty() {
            continue;
        }
        any = true;
        let (status, how) = if problems.is_empty() {
            (Status::Ok, "the binary they name exists".to_string())
        } else {
            (Status::Error, problems.join("; "))
        };
        c.push(
            format!("hooks.{agent}"),
            status,
            format!("installed in {}; {how}", places.join(", ")),
        );
    }
    any
}

/// What the hook commands of one settings file say: commands that cannot run, and data dirs
/// other than the one this doctor checks.
#[derive(Debug, Default)]
struct HookCommands {
    problems: Vec<String>,
    other_dirs: Vec<String>,
}

fn hook_commands(hooks: &[(String, String)], env: &InstallEnv, data_dir: &Path) -> HookCommands {
    let mut problems = Vec::new();
    let mut other_dirs = Vec::new();
    for (event, command) in hooks {
        let Some((bin, dd)) = parse_command(command) else {
            problems.push(format!("{event}: cannot parse {command:?}"));
            continue;
        };
        let runs = if bin.contains('/') {
            Path::new(&bin).is_file()
        } else {
            env.which(&bin).is_some()
        };
        if !runs && !problems.iter().any(|p: &String| p.contains(&bin)) {
            problems.push(format!(
                "binary missing: {bin} (install memctl again: cargo install --locked --path cli && cargo install --locked --path hooks, then memctl install)"
            ));
        }
        // A hook without --data-dir uses the default data dir: not the one checked when
        // this doctor was given --data-dir.
        let other = match dd {
            Some(d) if d != data_dir => Some(d.display().to_string()),
            None if env.data_dir.is_some() => Some("the default data dir".to_string()),
            _ => None,
        };
        if let Some(d) = other
            && !other_dirs.contains(&d)
        {
            other_dirs.push(d);
        }
    }
    HookCommands {
        problems,
        other_dirs,
    }
}

/// Whether the plugin's launcher (`plugin/bin/memctl-run`) finds `name`: it looks in
/// `$MEMCTL_BIN_DIR`, on PATH and in `~/.cargo/bin`.
fn launcher_finds(env: &InstallEnv, name: &str) -> Option<PathBuf> {
    env.launcher_dirs
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .or_else(|| env.which(name))
}

/// Can the agent run `memctl`? Restore blocks and the skill tell the model to run `memctl ...`
/// through its Bash tool, which runs with the user's PATH.
fn agent(c: &mut Checks, found: &Found, env: &InstallEnv) {
    let this = env.bin_dir.join("memctl");
    let ours = format!("memctl {}", env!("CARGO_PKG_VERSION"));
    let fix = format!(
        "cargo install --locked --path cli && cargo install --locked --path hooks (puts memctl in ~/.cargo/bin; have that on PATH), or add {} to PATH",
        env.bin_dir.display()
    );
    let Some(found_bin) = env.which("memctl") else {
        let via_plugin = !found.plugins.is_empty() && launcher_finds(env, "memctl").is_some();
        let (status, what) = if via_plugin {
            (
                Status::Warn,
                "the plugin's MCP tools reach memctl through its launcher, but",
            )
        } else {
            (Status::Error, "")
        };
        return c.push(
            "agent",
            status,
            format!(
                "{what} `memctl` is not on PATH, so the agent cannot run the `memctl ...` commands restore blocks name: {fix}"
            )
            .trim_start()
            .to_string(),
        );
    };
    if env.resolves_to("memctl", &this) {
        return c.push(
            "agent",
            Status::Ok,
            format!("`memctl` on PATH is this binary ({})", found_bin.display()),
        );
    }
    let version = std::process::Command::new(&found_bin)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match version {
        Some(v) if v == ours => c.push(
            "agent",
            Status::Ok,
            format!(
                "`memctl` on PATH is {} ({v}, this version)",
                found_bin.display()
            ),
        ),
        Some(v) => c.push(
            "agent",
            Status::Warn,
            format!(
                "`memctl` on PATH is {} ({v}), not this {ours}: the agent runs that one; {fix}",
                found_bin.display()
            ),
        ),
        None => c.push(
            "agent",
            Status::Error,
            format!(
                "`memctl` on PATH ({}) does not run (`--version` failed): {fix}",
                found_bin.display()
            ),
        ),
    }
}

fn status_line(c: &mut Checks, env: &InstallEnv) {
    let Ok(path) = env.settings_file(memctl_hooks::install::command::Scope::User) else {
        return;
    };
    let detail = match memctl_hooks::install::load(&path) {
        Ok(s) => match s.status_command() {
            Some(cmd) if memctl_hooks::install::is_our_statusline(cmd) => cmd.to_string(),
            Some(cmd) => format!("another status line ({cmd})"),
            None => "not set (memctl install --statusline sets it)".into(),
        },
        // The hooks check reports an unreadable file.
        Err(_) => return,
    };
    c.push("statusline", Status::Ok, detail);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_written_by_install_parse_back() {
        assert_eq!(
            parse_command("memctl-hook --data-dir '/d/my data' Stop"),
            Some(("memctl-hook".into(), Some(PathBuf::from("/d/my data"))))
        );
        assert_eq!(
            parse_command("/opt/bin/memctl-hook PreCompact"),
            Some(("/opt/bin/memctl-hook".into(), None))
        );
        assert_eq!(parse_command("'unterminated"), None);
    }

    #[test]
    fn codex_and_gemini_hooks_get_one_line_each_with_their_binary_checked() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let env = InstallEnv {
            claude_dir: None,
            codex_home: Some(tmp.path().join("codex")),
            gemini_dir: Some(tmp.path().join("gemini")),
            project_dir: tmp.path().join("proj"),
            path_var: Some(tmp.path().join("empty").into_os_string()),
            bin_dir: tmp.path().join("bin"),
            data_dir: None,
            launcher_dirs: Vec::new(),
        };
        let data_dir = tmp.path().join("data");
        let mut c = Checks::default();
        assert!(!other_agents_hooks(&mut c, &env, &data_dir));
        assert!(c.0.is_empty(), "nothing installed, nothing said");
        let hook = tmp.path().join("bin/memctl-hook");
        let file = |cmd: &str| {
            format!(
                r#"{{"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"{cmd}"}}]}}]}}}}"#
            )
        };
        std::fs::create_dir_all(tmp.path().join("codex")).expect("codex dir");
        std::fs::write(
            tmp.path().join("codex/hooks.json"),
            file(&format!("{} --agent codex Stop", hook.display())),
        )
        .expect("hooks.json");
        assert!(other_agents_hooks(&mut c, &env, &data_dir));
        assert_eq!(c.0.len(), 1);
        assert_eq!(
            (c.0[0].name.as_str(), c.0[0].status),
            ("hooks.codex", Status::Error)
        );
        assert!(
            c.0[0].detail.contains("binary missing"),
            "{}",
            c.0[0].detail
        );
        std::fs::create_dir_all(tmp.path().join("bin")).expect("bin");
        std::fs::write(&hook, "").expect("hook binary");
        let mut c = Checks::default();
        other_agents_hooks(&mut c, &env, &data_dir);
        assert_eq!(c.0[0].status, Status::Ok, "{}", c.0[0].detail);
        assert!(
            c.0[0].detail.contains("codex/hooks.json"),
            "{}",
            c.0[0].detail
        );
    }
}
