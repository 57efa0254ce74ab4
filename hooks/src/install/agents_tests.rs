//! `memctl install --agent codex|gemini` over real files in temp dirs: the files chosen, the
//! merge that keeps everything else, idempotence, uninstall, and the machine-path rule.

use super::agents::installed;
use super::command::InstallArgs;
use super::tests::{Fixture, args};
use crate::agent::Agent;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn codex(user: bool) -> InstallArgs {
    InstallArgs {
        agent: Agent::Codex,
        user,
        ..args()
    }
}

fn gemini(user: bool) -> InstallArgs {
    InstallArgs {
        agent: Agent::Gemini,
        user,
        ..args()
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("file")).expect("json")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

const CODEX_CONFIG: &str = r#"# my Codex config
model = "gpt-5"

[mcp_servers.docs]
command = "docs-server" # keep me
args = ["--port", "1"]
"#;

const CODEX_HOOKS: &str = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify.sh","timeout":3}]}]},"x-custom":1}"#;

#[test]
fn codex_project_install_keeps_the_users_files_and_is_idempotent() {
    let f = Fixture::new(true);
    let dir = f.env.project_dir.join(".codex");
    let (hooks, config) = (dir.join("hooks.json"), dir.join("config.toml"));
    write(&config, CODEX_CONFIG);
    write(&hooks, CODEX_HOOKS);
    let out = f.run(&codex(false), true).expect("install");
    assert!(out.contains("/hooks"), "trust note: {out}");
    let v = read_json(&hooks);
    assert_eq!(v["x-custom"], 1);
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "notify.sh");
    let ours = installed(&hooks, Agent::Codex).expect("ours");
    assert_eq!(ours.len(), 6, "{ours:?}");
    for (event, command) in &ours {
        assert_eq!(command, &format!("memctl-hook --agent codex {event}"));
    }
    let post = &v["hooks"]["PostToolUse"][0];
    assert_eq!(post["matcher"], "Bash");
    assert_eq!(post["hooks"][0]["timeout"], 10);
    assert_eq!(v["hooks"]["PreCompact"][0]["hooks"][0]["timeout"], 30);
    let toml = std::fs::read_to_string(&config).expect("config");
    assert!(
        toml.starts_with(CODEX_CONFIG),
        "user's text kept as is:\n{toml}"
    );
    assert!(
        toml.contains("[mcp_servers.memctl]\ncommand = \"memctl\"\nargs = [\"mcp\"]"),
        "{toml}"
    );

    let before = (
        std::fs::read(&hooks).expect("hooks"),
        std::fs::read(&config).expect("config"),
    );
    let again = f.run(&codex(false), true).expect("again");
    assert_eq!(again.matches("already installed").count(), 2, "{again}");
    let after = (
        std::fs::read(&hooks).expect("hooks"),
        std::fs::read(&config).expect("config"),
    );
    assert_eq!(before, after);

    let out = f.run(&codex(false), false).expect("uninstall");
    assert_eq!(out.matches("removed memctl").count(), 2, "{out}");
    assert!(installed(&hooks, Agent::Codex).expect("none").is_empty());
    let v = read_json(&hooks);
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "notify.sh");
    assert_eq!(v["x-custom"], 1);
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        CODEX_CONFIG
    );
}

#[test]
fn codex_user_install_goes_to_codex_home_with_absolute_paths() {
    let mut f = Fixture::new(false);
    f.env.data_dir = Some(PathBuf::from("/srv/mem"));
    f.run(&codex(true), true).expect("install --user");
    let home = f.env.codex_home.clone().expect("codex home");
    let bin = f.env.bin_dir.clone();
    let ours = installed(&home.join("hooks.json"), Agent::Codex).expect("ours");
    assert!(ours.iter().any(|(e, c)| e == "Stop"
        && c == &format!(
            "{} --data-dir /srv/mem --agent codex Stop",
            bin.join("memctl-hook").display()
        )));
    let doc: toml_edit::DocumentMut = std::fs::read_to_string(home.join("config.toml"))
        .expect("config")
        .parse()
        .expect("toml");
    let server = &doc["mcp_servers"]["memctl"];
    assert_eq!(
        server["command"].as_str(),
        Some(bin.join("memctl").display().to_string().as_str())
    );
    let args: Vec<&str> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert_eq!(args, ["--data-dir", "/srv/mem", "mcp"]);
    assert!(!f.env.project_dir.join(".codex").exists());
}

#[test]
fn a_project_install_never_writes_a_machine_path() {
    let f = Fixture::new(false);
    for a in [codex(false), gemini(false)] {
        let e = f.run(&a, true).expect_err("machine path in a shared file");
        assert!(format!("{e:#}").contains("--user"), "{e:#}");
    }
    assert!(!f.env.project_dir.join(".codex").exists());
    assert!(!f.env.project_dir.join(".gemini").exists());
    let mut f = Fixture::new(true);
    f.env.data_dir = Some(PathBuf::from("/srv/mem"));
    assert!(
        f.run(&gemini(false), true).is_err(),
        "--data-dir is one too"
    );
}

#[test]
fn gemini_install_merges_hooks_and_the_mcp_server_into_settings() {
    let f = Fixture::new(true);
    let settings = f.env.project_dir.join(".gemini/settings.json");
    write(
        &settings,
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},
            "mcpServers":{"other":{"command":"x","args":[]}},
            "hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"check.sh"}]}]}}"#,
    );
    let out = f.run(&gemini(false), true).expect("install");
    assert!(out.contains("trust"), "{out}");
    let v = read_json(&settings);
    assert_eq!(v["security"]["auth"]["selectedType"], "gemini-api-key");
    assert_eq!(v["mcpServers"]["other"]["command"], "x");
    assert_eq!(
        v["mcpServers"]["memctl"],
        serde_json::json!({"command": "memctl", "args": ["mcp"]})
    );
    assert_eq!(
        v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        "check.sh"
    );
    let after_tool = &v["hooks"]["AfterTool"][0];
    assert_eq!(after_tool["matcher"], "run_shell_command");
    assert_eq!(
        after_tool["hooks"][0]["command"],
        "memctl-hook --agent gemini AfterTool"
    );
    assert_eq!(after_tool["hooks"][0]["timeout"], 10_000, "milliseconds");
    assert_eq!(installed(&settings, Agent::Gemini).expect("ours").len(), 6);
    let text = std::fs::read_to_string(&settings).expect("settings");
    f.run(&gemini(false), true).expect("again");
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), text);

    f.run(&gemini(false), false).expect("uninstall");
    let v = read_json(&settings);
    assert!(v["mcpServers"].get("memctl").is_none());
    assert_eq!(v["mcpServers"]["other"]["command"], "x");
    assert!(v["hooks"].get("AfterTool").is_none());
    assert_eq!(
        v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        "check.sh"
    );
}

#[test]
fn someone_elses_memctl_server_and_invalid_files_are_left_alone() {
    let f = Fixture::new(true);
    let settings = f
        .env
        .gemini_dir
        .clone()
        .expect("gemini dir")
        .join("settings.json");
    let foreign = r#"{"mcpServers":{"memctl":{"command":"/opt/other-tool","args":[]}}}"#;
    write(&settings, foreign);
    f.run(&gemini(true), true).expect("install");
    let v = read_json(&settings);
    assert_eq!(v["mcpServers"]["memctl"]["command"], "/opt/other-tool");
    f.run(&gemini(true), false).expect("uninstall");
    assert_eq!(
        read_json(&settings)["mcpServers"]["memctl"]["command"],
        "/opt/other-tool"
    );

    let config = f.env.project_dir.join(".codex/config.toml");
    write(&config, "model = [unclosed");
    let e = f.run(&codex(false), true).expect_err("invalid TOML");
    assert!(format!("{e:#}").contains("not valid TOML"), "{e:#}");
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        "model = [unclosed"
    );
    assert!(!f.env.project_dir.join(".codex/hooks.json").exists());
}

#[test]
fn inline_mcp_tables_stay_inline_and_claude_only_flags_are_refused() {
    let f = Fixture::new(true);
    let config = f.env.project_dir.join(".codex/config.toml");
    write(&config, "mcp_servers = { docs = { command = \"d\" } }\n");
    f.run(&codex(false), true).expect("install");
    let text = std::fs::read_to_string(&config).expect("config");
    let doc: toml_edit::DocumentMut = text.parse().expect("toml");
    assert_eq!(
        doc["mcp_servers"]["memctl"]["command"].as_str(),
        Some("memctl")
    );
    assert!(!text.contains("[mcp_servers"), "{text}");
    f.run(&codex(false), false).expect("uninstall");
    let text = std::fs::read_to_string(&config).expect("config");
    assert!(text.contains("docs") && !text.contains("memctl"), "{text}");

    for a in [
        InstallArgs {
            statusline: true,
            ..codex(true)
        },
        InstallArgs {
            local: true,
            ..gemini(false)
        },
    ] {
        let e = f.run(&a, true).expect_err("Claude Code only");
        assert!(format!("{e:#}").contains("Claude Code only"), "{e:#}");
    }
}

#[test]
fn uninstall_where_nothing_is_installed_changes_nothing() {
    let f = Fixture::new(true);
    let config = f.env.project_dir.join(".codex/config.toml");
    let settings = f.env.project_dir.join(".gemini/settings.json");
    write(&config, "[mcp_servers]\n");
    write(&settings, "{\"mcpServers\": {}}");
    let out = f.run(&codex(false), false).expect("uninstall codex");
    assert!(out.contains("already clean"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        "[mcp_servers]\n"
    );
    f.run(&gemini(false), false).expect("uninstall gemini");
    assert_eq!(read_json(&settings), serde_json::json!({"mcpServers": {}}));
}

#[test]
fn a_dry_run_prints_every_file_and_writes_none() {
    let f = Fixture::new(true);
    let out = f
        .run(
            &InstallArgs {
                dry_run: true,
                ..codex(false)
            },
            true,
        )
        .expect("dry run");
    assert!(
        out.contains("hooks.json") && out.contains("[mcp_servers.memctl]"),
        "{out}"
    );
    assert!(!f.env.project_dir.join(".codex").exists());
}
