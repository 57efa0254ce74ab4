//! Config files: where they are, and their TOML turned into `(variable, value)` pairs that go
//! through the same parsers as the environment.
//!
//! A file holds top-level `key = value` lines; a key is the variable without `MEMCTL_` in lower
//! case (`restore_chars = 3000`, `recall = false`, `restore_on_clear = "brief"`,
//! `ort_dylib_path = "~/lib/libonnxruntime.so"`). A value is a string, an integer, a float or a
//! boolean, written as text for the parsers (`true` → `"true"`). An unknown key, an array, a
//! table or bad TOML is an error naming the file, the line and the key; the rest of the file
//! still applies (bad TOML: nothing of it does).

use super::error::SettingsError;
use super::keys::{self, ProjectRule};
use super::source::Source;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Largest config file read (a full one is ~2 KB): a huge or endless file in a cloned
/// repository must not stall a hook.
pub const MAX_CONFIG_BYTES: u64 = 64 << 10;

/// The project's config file, relative to the project directory.
pub const PROJECT_FILE: &str = ".memctl/config.toml";

/// Which of the two config files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileScope {
    /// The user's file (all keys).
    User,
    /// The project's file (no key that runs a command or loads code, see [`ProjectRule`]).
    Project,
}

/// A config file memctl looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Where.
    pub path: PathBuf,
    /// User or project.
    pub scope: FileScope,
    /// Named by `MEMCTL_CONFIG` (then it must exist).
    pub from_env: bool,
    /// Whether it existed when the settings were loaded.
    pub exists: bool,
}

/// A value set by a source, with its place in a file for error messages.
#[derive(Debug, Clone)]
pub(super) struct Value {
    pub value: OsString,
    pub source: Source,
    pub at: Option<At>,
}

/// Where a file value was written.
#[derive(Debug, Clone)]
pub(super) struct At {
    pub line: usize,
    pub key: String,
    /// The value in TOML syntax.
    pub literal: String,
}

fn get<'a>(env: &'a HashMap<String, OsString>, name: &str) -> Option<&'a OsString> {
    env.get(name).filter(|v| !v.is_empty())
}

/// The files to read for this environment and working directory: the user file
/// (`MEMCTL_CONFIG`, else `$XDG_CONFIG_HOME/memctl/config.toml` when that is absolute, else
/// `$HOME/.config/memctl/config.toml`) and the project file (`<project>/.memctl/config.toml`,
/// project = `CLAUDE_PROJECT_DIR`, else `cwd`). Also returns the project directory.
///
/// Why never a parent directory of the project: a `.memctl/config.toml` found above the
/// project (a shared `/tmp`, the folder a repository was cloned into, another user's home)
/// belongs to someone else, and would configure memctl for a project it was never written for.
pub(super) fn locate(
    env: &HashMap<String, OsString>,
    cwd: Option<&Path>,
) -> (Vec<ConfigFile>, Option<PathBuf>) {
    let user = match get(env, "MEMCTL_CONFIG") {
        Some(p) => Some((PathBuf::from(p), true)),
        None => get(env, "XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|x| x.is_absolute())
            .or_else(|| get(env, "HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|c| (c.join("memctl/config.toml"), false)),
    };
    let project_dir = get(env, "CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .or_else(|| cwd.map(Path::to_path_buf));
    let mut files = Vec::new();
    if let Some((path, from_env)) = user {
        files.push(ConfigFile {
            exists: path.exists(),
            path,
            scope: FileScope::User,
            from_env,
        });
    }
    if let Some(dir) = &project_dir {
        let path = dir.join(PROJECT_FILE);
        // The same file twice (`MEMCTL_CONFIG` naming the project's file) is the user's
        // choice to trust it: read it once, as the user file.
        let same = files.first().is_some_and(|u| same_file(&u.path, &path));
        if !same {
            files.push(ConfigFile {
                exists: path.exists(),
                path,
                scope: FileScope::Project,
                from_env: false,
            });
        }
    }
    (files, project_dir)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The pairs of one file (keyed by variable); problems go to `errors`. A missing file at a
/// default place is no file; a missing `MEMCTL_CONFIG` file is an error.
pub(super) fn read(
    file: &ConfigFile,
    home: Option<&Path>,
    project_dir: Option<&Path>,
    errors: &mut Vec<SettingsError>,
) -> Vec<(&'static str, Value)> {
    let what = match (file.scope, file.from_env) {
        (FileScope::User, true) => "MEMCTL_CONFIG",
        (FileScope::User, false) => "user file",
        (FileScope::Project, _) => "project file",
    };
    let text = match crate::paths::read_regular(&file.path, MAX_CONFIG_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                errors.push(SettingsError::BadToml {
                    path: file.path.clone(),
                    line: None,
                    message: "the file is not UTF-8".into(),
                });
                return Vec::new();
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !file.from_env => {
            return Vec::new();
        }
        // A default place this user cannot even look into (run in a directory of another
        // user, e.g. `sudo -u` from a private checkout): no file this user can see, the same
        // as none. A file that exists and cannot be read is still an error below.
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                && !file.from_env
                && std::fs::symlink_metadata(&file.path)
                    .is_err_and(|m| m.kind() == std::io::ErrorKind::PermissionDenied) =>
        {
            tracing::warn!(path = %file.path.display(), "config file location not accessible; read as no file");
            return Vec::new();
        }
        Err(e) => {
            errors.push(SettingsError::Unreadable {
                path: file.path.clone(),
                what,
                message: e.to_string(),
            });
            return Vec::new();
        }
    };
    let ctx = Ctx {
        file,
        home,
        project_dir,
        text: &text,
    };
    ctx.pairs(errors)
}

/// One file being read.
struct Ctx<'a> {
    file: &'a ConfigFile,
    home: Option<&'a Path>,
    project_dir: Option<&'a Path>,
    text: &'a str,
}

type Doc = BTreeMap<toml::Spanned<String>, toml::Spanned<toml::Value>>;

impl Ctx<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn path(&self) -> PathBuf {
        self.file.path.clone()
    }

    fn pairs(&self, errors: &mut Vec<SettingsError>) -> Vec<(&'static str, Value)> {
        let doc: Doc = match toml::from_str(self.text) {
            Ok(d) => d,
            Err(e) => {
                // The message only: toml's Display quotes the offending line, and a file
                // someone pointed memctl at may hold anything.
                errors.push(SettingsError::BadToml {
                    path: self.path(),
                    line: e.span().map(|s| self.line(s.start)),
                    message: e.message().trim().to_string(),
                });
                return Vec::new();
            }
        };
        let mut entries: Vec<_> = doc.into_iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        let source = match self.file.scope {
            FileScope::User => Source::UserFile(self.path()),
            FileScope::Project => Source::ProjectFile(self.path()),
        };
        let mut out = Vec::new();
        for (k, v) in entries {
            let line = self.line(k.span().start);
            let name = k.into_inner();
            match self.pair(&name, v.into_inner(), line) {
                Ok(Some((var, value, literal))) => out.push((
                    var,
                    Value {
                        value,
                        source: source.clone(),
                        at: Some(At {
                            line,
                            key: name,
                            literal,
                        }),
                    },
                )),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        out
    }

    /// One `key = value`: its variable, value and literal; `None` for an empty value (the
    /// same as unset, like an empty environment variable).
    fn pair(
        &self,
        name: &str,
        v: toml::Value,
        line: usize,
    ) -> Result<Option<(&'static str, OsString, String)>, SettingsError> {
        let Some(key) = keys::KEYS.iter().find(|k| k.name == name) else {
            return Err(SettingsError::UnknownKey {
                path: self.path(),
                line,
                key: name.to_string(),
                suggestion: keys::suggestion(name),
            });
        };
        let (text, literal) = match v {
            toml::Value::String(s) => {
                let lit = format!("{s:?}");
                (s, lit)
            }
            toml::Value::Integer(i) => (i.to_string(), i.to_string()),
            toml::Value::Float(f) => (f.to_string(), f.to_string()),
            toml::Value::Boolean(b) => (b.to_string(), b.to_string()),
            other => {
                let found = match other {
                    toml::Value::Array(_) => "an array",
                    toml::Value::Table(_) => "a table",
                    _ => "a date-time",
                };
                return Err(SettingsError::NotAScalar {
                    path: self.path(),
                    line,
                    key: name.to_string(),
                    found,
                });
            }
        };
        let not_here = |why| SettingsError::NotInProjectFile {
            path: self.path(),
            line,
            key: key.name,
            why,
        };
        let project = self.file.scope == FileScope::Project;
        if project && let ProjectRule::Refused(why) = key.project {
            return Err(not_here(why));
        }
        if text.is_empty() {
            return Ok(None);
        }
        if !key.path {
            return Ok(Some((key.var, text.into(), literal)));
        }
        let bad_path = |rule| SettingsError::BadPath {
            path: self.path(),
            line,
            key: key.name,
            value: text.clone(),
            rule,
        };
        let resolved = if project {
            // Only `InsideProject` keys get here (the others were refused above).
            let rel = Path::new(&text);
            let inside = rel
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            match (inside, self.project_dir) {
                (true, Some(dir)) => dir.join(rel),
                _ => {
                    return Err(bad_path(
                        "a project file may only name a relative path inside the project (no `..`)",
                    ));
                }
            }
        } else if let Some(rest) = text.strip_prefix("~/") {
            match self.home {
                Some(h) => h.join(rest),
                None => return Err(bad_path("`~/` needs HOME, which is not set")),
            }
        } else if Path::new(&text).is_absolute() {
            PathBuf::from(&text)
        } else {
            // Relative to what? The directory memctl happens to run in differs per hook.
            return Err(bad_path(
                "a path in a config file must be absolute or start with ~/",
            ));
        };
        Ok(Some((key.var, resolved.into_os_string(), literal)))
    }
}
