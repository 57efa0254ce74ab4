//! [`SettingsError`]: a value, a key or a config file memctl cannot use.

use std::path::PathBuf;

/// A value, key or config file memctl cannot use. Values from a config file are reported as
/// [`SettingsError::InFile`] (file, line and key), wrapping the same error the environment
/// would give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A switch that is not one of `1/0/true/false/yes/no/on/off`.
    #[error("invalid {var}={value:?}: not a boolean (use 1/0, true/false, yes/no or on/off)")]
    NotBool {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A number that does not parse.
    #[error("invalid {var}={value:?}: not a number")]
    NotNumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A number outside the accepted range.
    #[error("invalid {var}={value:?}: out of range (allowed: {allowed})")]
    OutOfRange {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The accepted range, for the message.
        allowed: &'static str,
    },
    /// A word that is not one of the accepted values.
    #[error("invalid {var}={value:?}: expected one of {expected}")]
    UnknownValue {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The accepted values, for the message.
        expected: &'static str,
    },
    /// A non-path value that is not UTF-8.
    #[error("invalid {var}: the value is not UTF-8")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
    /// A bad value in a config file: where it is, and what is wrong with it.
    #[error("{}:{line}: invalid {key} = {value}: {}", path.display(), problem.reason())]
    InFile {
        /// The file.
        path: PathBuf,
        /// 1-based line of the value.
        line: usize,
        /// The key as written.
        key: String,
        /// The value as written (TOML syntax).
        value: String,
        /// What is wrong (the error the environment variable would give).
        problem: Box<SettingsError>,
    },
    /// A config file that exists (or was named by `MEMCTL_CONFIG`) but cannot be read.
    #[error("cannot read the config file {} ({what}): {message}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Which file it is (`user file`, `MEMCTL_CONFIG`, `project file`).
        what: &'static str,
        /// The I/O error.
        message: String,
    },
    /// A config file that is not valid TOML (nothing in it is used).
    #[error("{}{}: not valid TOML: {message}", path.display(), line_suffix(*line))]
    BadToml {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error, when the parser gives one.
        line: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// A key memctl does not know (in a file a typo must not pass silently).
    #[error("{}:{line}: unknown key {key:?}{}", path.display(), hint(suggestion))]
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key as written.
        key: String,
        /// The key it probably meant.
        suggestion: Option<&'static str>,
    },
    /// A value that is an array, a table or a date: memctl's values are strings, numbers and
    /// booleans.
    #[error("{}:{line}: {key} is {found}; a value must be a string, a number or a boolean", path.display())]
    NotAScalar {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key as written.
        key: String,
        /// What was found (`an array`, `a table`, `a date-time`).
        found: &'static str,
    },
    /// A key a project file may not set (see [`super::ProjectRule`]).
    #[error("{}:{line}: {key} cannot be set in a project file ({why}); set it in your user config file or the environment", path.display())]
    NotInProjectFile {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key.
        key: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A path in a config file that is not absolute (and not `~/...`): relative to what would
    /// depend on where memctl happens to run.
    #[error("{}:{line}: {key} = {value:?}: {rule}", path.display())]
    BadPath {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
        /// What a path there must be.
        rule: &'static str,
    },
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

fn hint(suggestion: &Option<&'static str>) -> String {
    match suggestion {
        Some(s) => format!(" (did you mean {s}?)"),
        None => " (`memctl config` lists the keys)".to_string(),
    }
}

impl SettingsError {
    /// The variable the error is about, when it is about one (a config file's syntax or an
    /// unknown key is about no variable).
    pub fn var(&self) -> Option<&'static str> {
        match self {
            Self::NotBool { var, .. }
            | Self::NotNumber { var, .. }
            | Self::OutOfRange { var, .. }
            | Self::UnknownValue { var, .. }
            | Self::NotUnicode { var } => Some(var),
            Self::InFile { problem, .. } => problem.var(),
            Self::NotInProjectFile { key, .. } | Self::BadPath { key, .. } => {
                super::keys::find(key).map(|k| k.var)
            }
            Self::Unreadable { .. }
            | Self::BadToml { .. }
            | Self::UnknownKey { .. }
            | Self::NotAScalar { .. } => None,
        }
    }

    /// The file and line the error is about (none for an environment variable).
    pub fn place(&self) -> Option<(&std::path::Path, usize)> {
        match self {
            Self::InFile { path, line, .. }
            | Self::UnknownKey { path, line, .. }
            | Self::NotAScalar { path, line, .. }
            | Self::NotInProjectFile { path, line, .. }
            | Self::BadPath { path, line, .. } => Some((path, *line)),
            Self::BadToml { path, line, .. } => Some((path, line.unwrap_or(0))),
            Self::Unreadable { path, .. } => Some((path, 0)),
            _ => None,
        }
    }

    /// What is wrong with the value, without naming the variable (for [`Self::InFile`]).
    fn reason(&self) -> String {
        match self {
            Self::NotBool { .. } => {
                "not a boolean (use true/false, or 1/0, yes/no, on/off)".to_string()
            }
            Self::NotNumber { .. } => "not a number".to_string(),
            Self::OutOfRange { allowed, .. } => format!("out of range (allowed: {allowed})"),
            Self::UnknownValue { expected, .. } => format!("expected one of {expected}"),
            Self::NotUnicode { .. } => "not UTF-8".to_string(),
            other => other.to_string(),
        }
    }
}
