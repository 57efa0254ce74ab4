//! The typed parsers every value goes through, whatever its source (one rule set).

use super::error::SettingsError;
use super::file::Value;
use super::source::Source;
use crate::restore::{MAX_RESTORE_CHARS, RestoreMode};
use crate::text::parse_bool;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::str::FromStr;

/// The values of interest (the winning one per variable), and the errors found so far.
pub(super) struct Vars {
    pub map: HashMap<String, Value>,
    pub errors: Vec<SettingsError>,
    /// Variables whose value was refused (their knob kept its default).
    pub failed: HashSet<&'static str>,
}

impl Vars {
    /// Report a bad value; one from a config file is wrapped with its file, line and key.
    pub fn error(&mut self, e: SettingsError) {
        let Some(var) = e.var() else {
            self.errors.push(e);
            return;
        };
        self.failed.insert(var);
        let wrapped = match self.map.get(var) {
            Some(Value {
                source: Source::UserFile(path) | Source::ProjectFile(path),
                at: Some(at),
                ..
            }) => SettingsError::InFile {
                path: path.clone(),
                line: at.line,
                key: at.key.clone(),
                value: at.literal.clone(),
                problem: Box::new(e),
            },
            _ => e,
        };
        self.errors.push(wrapped);
    }

    /// The value when set and not empty.
    pub fn os(&self, var: &str) -> Option<PathBuf> {
        self.map
            .get(var)
            .filter(|v| !v.value.is_empty())
            .map(|v| PathBuf::from(&v.value))
    }

    pub fn text(&mut self, var: &'static str) -> Option<String> {
        let v = self.map.get(var).filter(|v| !v.value.is_empty())?;
        match v.value.to_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.error(SettingsError::NotUnicode { var });
                None
            }
        }
    }

    pub fn switch(&mut self, var: &'static str) -> Option<bool> {
        let value = self.text(var)?;
        let b = parse_bool(&value);
        if b.is_none() {
            self.error(SettingsError::NotBool { var, value });
        }
        b
    }

    /// A number in `ok` (described by `allowed` in errors).
    pub fn number<T: FromStr>(
        &mut self,
        var: &'static str,
        ok: impl Fn(&T) -> bool,
        allowed: &'static str,
    ) -> Option<T> {
        let value = self.text(var)?;
        match value.trim().parse::<T>() {
            Ok(n) if ok(&n) => Some(n),
            Ok(_) => {
                self.error(SettingsError::OutOfRange {
                    var,
                    value,
                    allowed,
                });
                None
            }
            Err(_) => {
                self.error(SettingsError::NotNumber { var, value });
                None
            }
        }
    }

    /// `full` / `brief` / `off` (or a switch word).
    pub fn restore_mode(&mut self, var: &'static str) -> Option<RestoreMode> {
        let value = self.text(var)?;
        let m = value.parse::<RestoreMode>().ok();
        if m.is_none() {
            self.error(SettingsError::UnknownValue {
                var,
                value,
                expected: RestoreMode::EXPECTED,
            });
        }
        m
    }

    pub fn chars(&mut self, var: &'static str) -> Option<usize> {
        self.number(var, |n: &usize| *n <= MAX_RESTORE_CHARS, "0..=10000")
    }
}
