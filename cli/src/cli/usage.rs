//! Usage errors and help text that clap alone gets wrong for us.
//!
//! clap suggests the flag most similar to a mistyped one, however far it is (`search --foo`
//! suggested `--tool`): a far-fetched tip sends the user the wrong way, so a suggestion is kept
//! only within a few edits of what was typed. The `--data-dir` help names the path the default
//! resolves to here, which depends on the environment and so cannot be a literal.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Whether `suggested` is close enough to `typed` (flags, dashes included) to offer it: at
/// most one edit per three characters of the longer one.
pub fn close_enough(typed: &str, suggested: &str) -> bool {
    let (a, b) = (
        typed.trim_start_matches('-'),
        suggested.trim_start_matches('-'),
    );
    let longer = a.chars().count().max(b.chars().count());
    3 * strsim::damerau_levenshtein(a, b) <= longer
}

/// `e` without a suggested flag that is not [`close_enough`] to the one typed.
/// `cmd`: the command that parsed (for the error's styles, help flag and usage line);
/// `subcommand`: the subcommand named on the command line.
pub fn without_far_suggestion(
    e: clap::Error,
    cmd: &mut clap::Command,
    subcommand: Option<&str>,
) -> clap::Error {
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let typed = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => return e,
    };
    let far = match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => !close_enough(&typed, s),
        _ => false,
    };
    if !far {
        return e;
    }
    let mut kept = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(cmd);
    for (kind, value) in e.context() {
        match kind {
            ContextKind::SuggestedArg => {}
            // clap's usage line was built around the suggested flag: the plain one instead.
            ContextKind::Usage => {
                let usage = subcommand
                    .and_then(|name| cmd.find_subcommand_mut(name))
                    .map_or_else(
                        || value.clone(),
                        |sub| ContextValue::StyledStr(sub.render_usage()),
                    );
                kept.insert(kind, usage);
            }
            _ => {
                kept.insert(kind, value.clone());
            }
        }
    }
    kept
}

/// The `--data-dir` help: the rule and what it resolves to in this environment.
pub fn data_dir_help(resolved: &std::path::Path) -> String {
    format!(
        "Data directory (default: $MEMCTL_HOME, else $XDG_DATA_HOME/memctl, else \
         ~/.local/share/memctl; here: {})",
        resolved.display()
    )
}

#[cfg(test)]
mod tests {
    use super::close_enough;

    #[test]
    fn near_typos_are_suggested_and_far_ones_are_not() {
        assert!(close_enough("--limt", "--limit"));
        assert!(close_enough("--sesion", "--session"));
        assert!(close_enough("--all-project", "--all-projects"));
        assert!(!close_enough("--foo", "--tool"));
        assert!(!close_enough("--x", "--k"));
    }
}
