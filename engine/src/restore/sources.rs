//! What a SessionStart restores, per source (`compact`, `resume`, `clear`, `startup`).
//!
//! Why per source: the four sources mean different things to the user. After a compaction or a
//! resume of a compacted session the context lost what the user still works on: restore it all.
//! A `/clear` is a deliberate reset: the user wants the old conversation *out* of the context,
//! so re-injecting its turns would undo the command; what stays true across tasks (the
//! project's memory files) and a pointer to the archived session are enough, and prompt-time
//! recall ([`crate::recall`]) still brings a specific old turn back when a prompt asks for it.
//! A fresh start restores nothing unless asked for.

use super::RestoreKind;
use std::str::FromStr;

/// How much a SessionStart restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreMode {
    /// The whole budgeted block: memory files, latest and key turns, decisions and open items,
    /// related sessions, stored tool outputs.
    Full,
    /// Project memory files and one line naming the archived session (how to get it back).
    Brief,
    /// Nothing.
    Off,
}

impl RestoreMode {
    /// The accepted values, for error messages.
    pub const EXPECTED: &'static str =
        "full, brief, off (or a switch: 1/true/yes/on = full, 0/false/no/off = off)";
}

impl FromStr for RestoreMode {
    type Err = ();

    /// `full` / `brief` / `off`, any case; a switch word is accepted too (`1` = `full`), so the
    /// older `MEMCTL_RESTORE_ON_STARTUP=1` keeps its meaning.
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Self::Full),
            "brief" => Ok(Self::Brief),
            "off" | "none" => Ok(Self::Off),
            other => match crate::text::parse_bool(other) {
                Some(true) => Ok(Self::Full),
                Some(false) => Ok(Self::Off),
                None => Err(()),
            },
        }
    }
}

/// The mode of each SessionStart source (`MEMCTL_RESTORE_ON_{COMPACT,RESUME,CLEAR,STARTUP}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreSources {
    /// After a compaction (default full: the context just lost the work in progress).
    pub compact: RestoreMode,
    /// `--resume` / `--continue` of a compacted session (default full, same reason; an
    /// uncompacted resume restores nothing whatever this says: the CLI reloads it whole).
    pub resume: RestoreMode,
    /// After `/clear` (default brief: see the module doc).
    pub clear: RestoreMode,
    /// A new session (default off: a fresh session starts fresh).
    pub startup: RestoreMode,
}

impl Default for RestoreSources {
    fn default() -> Self {
        Self {
            compact: RestoreMode::Full,
            resume: RestoreMode::Full,
            clear: RestoreMode::Brief,
            startup: RestoreMode::Off,
        }
    }
}

impl RestoreSources {
    /// The mode for a restore of `kind`.
    pub fn mode(&self, kind: RestoreKind) -> RestoreMode {
        match kind {
            RestoreKind::Compact => self.compact,
            RestoreKind::Resume => self.resume,
            RestoreKind::Clear => self.clear,
            RestoreKind::Startup => self.startup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_words_and_switches() {
        for (s, m) in [
            ("full", RestoreMode::Full),
            (" Brief ", RestoreMode::Brief),
            ("OFF", RestoreMode::Off),
            ("1", RestoreMode::Full),
            ("yes", RestoreMode::Full),
            ("0", RestoreMode::Off),
            ("false", RestoreMode::Off),
        ] {
            assert_eq!(s.parse::<RestoreMode>(), Ok(m), "{s}");
        }
        assert!("some".parse::<RestoreMode>().is_err());
        assert!("".parse::<RestoreMode>().is_err());
    }

    #[test]
    fn defaults_keep_compact_and_resume_and_make_clear_brief() {
        let d = RestoreSources::default();
        assert_eq!(d.mode(RestoreKind::Compact), RestoreMode::Full);
        assert_eq!(d.mode(RestoreKind::Resume), RestoreMode::Full);
        assert_eq!(d.mode(RestoreKind::Clear), RestoreMode::Brief);
        assert_eq!(d.mode(RestoreKind::Startup), RestoreMode::Off);
    }
}
