//! The Claude Code plugin in `plugin/`: its `hooks/hooks.json` is derived from the same hook
//! policy as `memctl install` (events, matchers, timeouts), and a test keeps the checked-in file
//! equal to [`hooks_json`], so the plugin and `memctl install` cannot drift apart.

use crate::install::EVENTS;
use serde::Serialize;
use std::collections::BTreeMap;

/// How the plugin runs a binary: its launcher, which finds the installed binaries (see
/// `plugin/bin/memctl-run`).
pub const LAUNCHER: &str = "\"${CLAUDE_PLUGIN_ROOT}/bin/memctl-run\"";

#[derive(Debug, Serialize)]
struct HooksFile {
    description: &'static str,
    hooks: BTreeMap<&'static str, Vec<Group>>,
}

#[derive(Debug, Serialize)]
struct Group {
    #[serde(skip_serializing_if = "Option::is_none")]
    matcher: Option<String>,
    hooks: Vec<Entry>,
}

#[derive(Debug, Serialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: &'static str,
    command: String,
    timeout: u32,
}

/// The plugin's `hooks/hooks.json`: every event memctl-hook handles, through the launcher.
pub fn hooks_json() -> String {
    let hooks = EVENTS
        .iter()
        .map(|ev| {
            let group = Group {
                matcher: ev.tool_matcher(),
                hooks: vec![Entry {
                    kind: "command",
                    command: format!("{LAUNCHER} memctl-hook {}", ev.as_str()),
                    timeout: ev.install_timeout_secs(),
                }],
            };
            (ev.as_str(), vec![group])
        })
        .collect();
    let file = HooksFile {
        description: "memctl: archive every turn, restore after compaction, store big tool outputs",
        hooks,
    };
    // Serializing plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(&file).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn plugin_file(rel: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../plugin")
            .join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_plugin_hooks_file_is_the_install_policy() {
        let expected = hooks_json();
        let actual = plugin_file("hooks/hooks.json");
        assert_eq!(
            actual, expected,
            "plugin/hooks/hooks.json is stale: write the output of plugin::hooks_json() to it"
        );
        for ev in EVENTS {
            assert!(
                actual.contains(&format!("memctl-hook {}\"", ev.as_str())),
                "{ev}"
            );
        }
    }

    #[test]
    fn the_plugin_mcp_server_runs_memctl_mcp_through_the_launcher() {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct McpFile {
            mcp_servers: BTreeMap<String, Server>,
        }
        #[derive(serde::Deserialize)]
        struct Server {
            command: String,
            args: Vec<String>,
        }
        let f: McpFile = serde_json::from_str(&plugin_file(".mcp.json")).expect("plugin .mcp.json");
        let s = &f.mcp_servers["memctl"];
        assert_eq!(s.command, LAUNCHER.trim_matches('"'));
        assert_eq!(s.args, ["memctl", "mcp"]);
    }
}
