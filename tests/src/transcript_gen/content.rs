//! What the synthetic user types, what the assistant answers, and what its tools return.
//!
//! File contents come from a stream named by project and path, so a file reads the same every
//! time it is opened in a session (and across sessions of the same project), and an `Edit`
//! changes it for the rest of the session: later `Read`s and `Grep`s see the edit.

use super::Generator;
use super::rng::{Rng, iso};
use super::vocab::{APPROACHES, FEATURES, IDENTS, Lang, REASONS, SHORT_PROMPTS, VERBS};

/// Python's `str.title()` for our identifiers: `retry_policy` → `Retry_Policy`.
pub(super) fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
        start = !c.is_alphabetic();
    }
    out
}

/// Rough token count of a text (3.6 characters a token), at least 1.
pub(super) fn approx_tokens(s: &str) -> u64 {
    ((s.chars().count() as f64 / 3.6) as u64).max(1)
}

/// One made-up source line of a file of `lang` (or of a config/doc file when `data`).
fn source_line(r: &mut Rng, lang: Lang, data: bool) -> String {
    let k = r.unit();
    let fname = format!("{}_{}", r.pick(VERBS), r.pick(IDENTS));
    let id = |r: &mut Rng| r.pick(IDENTS);
    let ty = |r: &mut Rng| title(r.pick(IDENTS));
    if data {
        return match r.index(7) {
            0 => format!("name = \"{fname}\""),
            1 => format!("version = \"0.{}.{}\"", r.below(9), r.below(20)),
            2 => format!("  - run: {}", r.pick(lang.test_cmds())),
            3 => format!("## {}", title(&fname.replace('_', " "))),
            4 => format!("ALTER TABLE {}s ADD COLUMN {fname} TEXT;", id(r)),
            5 => String::new(),
            _ => format!("  \"{}\": \"^{}.{}.0\",", id(r), r.range(1, 9), r.below(20)),
        };
    }
    match lang {
        Lang::Rust if k >= 0.95 => r.pick(&["#[cfg(test)]", "mod tests {"]).to_string(),
        Lang::Rust => match r.index(10) {
            0 => format!(
                "pub fn {fname}(&self, {}: &{}) -> Result<{}> {{",
                id(r),
                ty(r),
                ty(r)
            ),
            1 => format!(
                "    let {} = self.{}.get(&key).ok_or(Error::NotFound)?;",
                id(r),
                id(r)
            ),
            2 => "    // TODO: handle partial writes".into(),
            3 => "}".into(),
            4 => String::new(),
            5 => format!("use crate::{}::{};", id(r), ty(r)),
            6 => "#[derive(Debug, Clone, Serialize, Deserialize)]".into(),
            7 => "    tx.commit()?;".into(),
            8 => format!("    tracing::debug!({} = ?{}, \"{fname}\");", id(r), id(r)),
            _ => format!("impl {} for {} {{", ty(r), ty(r)),
        },
        Lang::Ts => match r.index(9) {
            0 => format!(
                "export async function {fname}({}: {}): Promise<{}> {{",
                id(r),
                ty(r),
                ty(r)
            ),
            1 => format!(
                "  const {} = await db.query(sql`SELECT * FROM {}s WHERE id = ${{id}}`);",
                id(r),
                id(r)
            ),
            2 => "  // TODO: validate currency".into(),
            3 => "}".into(),
            4 => String::new(),
            5 => format!("import {{ {fname} }} from './{}';", id(r)),
            6 => format!("  if (!{}) throw new NotFoundError('{}');", id(r), id(r)),
            7 => format!("  logger.info({{ {} }}, '{fname}');", id(r)),
            _ => format!("  return res.status(200).json({});", id(r)),
        },
        Lang::Python => match r.index(8) {
            0 => format!("def {fname}(self, {}: {}) -> {}:", id(r), ty(r), ty(r)),
            1 => format!("    {} = self._{}.get(key)", id(r), id(r)),
            2 => "    # TODO: handle timeouts".into(),
            3 => String::new(),
            4 => format!("from kiln.{} import {}", id(r), ty(r)),
            5 => format!(
                "    if {} is None:\n        raise KeyError('{}')",
                id(r),
                id(r)
            ),
            6 => format!(
                "    log.debug(\"{fname}\", extra={{\"{}\": {}}})",
                id(r),
                id(r)
            ),
            _ => format!("    return {}", id(r)),
        },
    }
}

impl Generator {
    pub(super) fn abspath(&self, rel: &str) -> String {
        format!("{}/{rel}", self.cwd)
    }

    pub(super) fn ident(&mut self) -> String {
        format!("{}_{}", self.rng.pick(VERBS), self.rng.pick(IDENTS))
    }

    /// The current lines of `rel` (made up on first use, then kept with the session's edits).
    pub(super) fn file_lines(&mut self, rel: &'static str) -> &mut Vec<String> {
        let (project, lang) = (self.project, self.lang);
        self.file_cache.entry(rel).or_insert_with(|| {
            let mut r = Rng::named(&format!("{project}:{rel}"));
            let data = [".toml", ".json", ".yml", ".md", ".sql"]
                .iter()
                .any(|x| rel.ends_with(x));
            let n = r.range(25, 220);
            (0..n).map(|_| source_line(&mut r, lang, data)).collect()
        })
    }

    /// A random current line of `rel`.
    pub(super) fn some_line(&mut self, rel: &'static str) -> String {
        let n = self.file_lines(rel).len();
        let i = self.rng.index(n);
        self.file_lines(rel)[i].clone()
    }

    pub(super) fn error_text(&mut self, rel: Option<&str>) -> String {
        let rel = rel.unwrap_or_else(|| self.rng.pick(self.lang.files()));
        let tmpl = self.rng.pick(self.lang.errors());
        let i = self.rng.pick(IDENTS);
        let v = self.rng.pick(VERBS);
        let l = self.rng.range(5, 400).to_string();
        tmpl.replace("{f}", rel)
            .replace("{l}", &l)
            .replace("{i}", i)
            .replace("{v}", v)
            .replace("{I}", &title(i))
            .replace("{p}", self.project)
    }

    pub(super) fn user_prompt(&mut self) -> String {
        let rel = self.rng.pick(self.lang.files());
        let fname = self.ident();
        let k = self.rng.unit();
        let r = &mut self.rng;
        if k < 0.16 {
            return (r.pick(SHORT_PROMPTS)).to_owned();
        }
        if k < 0.32 {
            let err = self.error_text(Some(rel));
            return format!(
                "The build is failing with this:\n```\n{err}\n```\nCan you fix it? Don't change the public API of {rel}."
            );
        }
        if k < 0.46 {
            let feature = r.pick(FEATURES);
            let rule = r.pick(&[
                "not break existing callers",
                "be off by default",
                "log at debug level only",
                "respect the config file",
            ]);
            return format!(
                "Add {feature} to `{fname}` in {rel}. It should be covered by a test and {rule}."
            );
        }
        if k < 0.58 {
            let (a, b) = r.pick(APPROACHES);
            return format!(
                "Refactor `{fname}` in {rel} to use {a} instead of {b}. Keep the behaviour identical."
            );
        }
        if k < 0.68 {
            let cmd = r.pick(self.lang.test_cmds());
            let (ci, local) = (r.range(40, 400), r.range(3, 30));
            return format!(
                "Why does `{cmd}` take {ci} seconds on CI but only {local} locally? Look at {rel}."
            );
        }
        if k < 0.76 {
            let to = self.ident();
            return format!("Rename `{fname}` to `{to}` everywhere, including the docs and tests.");
        }
        if k < 0.84 {
            let case = r.pick(&[
                "the connection drops mid-transaction",
                "the file is empty",
                "two workers race on the same key",
                "the config is missing",
            ]);
            return format!(
                "Review {rel} and tell me whether the error handling in `{fname}` is right.\nI'm worried about the case where {case}."
            );
        }
        if k < 0.90 {
            let err = self.error_text(Some(rel));
            let n = self.rng.range(2, 8);
            let ts = iso(self.t);
            let warns: Vec<String> = (1..=n)
                .map(|j| format!("{ts} WARN {fname}: retrying (attempt {j})"))
                .collect();
            return format!(
                "Here is the log from production:\n```\n{err}\n{}\n```\nWhat is going on?",
                warns.join("\n")
            );
        }
        if k < 0.95 {
            let table = r.pick(IDENTS);
            let col = self.ident();
            return format!(
                "Write the migration for the `{table}s` table adding `{col}` (nullable), and update the queries in {rel}."
            );
        }
        format!(
            "Let's plan the next step: {}. What files would you touch and in what order?",
            r.pick(FEATURES)
        )
    }

    pub(super) fn assistant_lead(&mut self, rel: &str) -> String {
        match self.rng.index(6) {
            0 => format!("I'll start by reading {rel} to see how it is structured."),
            1 => "Let me look at the failing code path first.".into(),
            2 => "Let me search for all the call sites before changing anything.".into(),
            3 => "I'll run the tests to reproduce the problem.".into(),
            4 => "Let me check the current state of the working tree.".into(),
            _ => "I'll read the relevant file and then make the change.".into(),
        }
    }

    /// A remark between tool calls; empty sometimes (then the message has no text block).
    pub(super) fn assistant_mid(&mut self, rel: &str) -> String {
        let (a, b) = self.rng.pick(APPROACHES);
        match self.rng.index(7) {
            0 => {
                let id = self.ident();
                format!(
                    "The error comes from `{id}` in {rel}: it assumes the value is always present."
                )
            }
            1 => format!(
                "Found it. The {} is rebuilt on every call, which explains the slowdown.",
                self.rng.pick(IDENTS)
            ),
            2 => format!(
                "I decided to use {a} instead of {b} because {}.",
                self.rng.pick(REASONS)
            ),
            3 => "Now I'll update the test to cover the new branch.".into(),
            4 => "That compiles. Let me run the full suite.".into(),
            5 => format!(
                "Choosing {a} rather than {b} here, since {}.",
                self.rng.pick(REASONS)
            ),
            _ => String::new(),
        }
    }

    pub(super) fn assistant_final(&mut self, touched: &[&'static str]) -> String {
        let k = self.rng.unit();
        let head = if k < 0.25 {
            let (a, b) = self.rng.pick(APPROACHES);
            let why = self.rng.pick(REASONS);
            format!("Done. I took the approach of {a} rather than {b}, because {why}.")
        } else if k < 0.5 {
            format!("All {} tests pass now.", self.rng.range(12, 480))
        } else if k < 0.7 {
            let cause = self.rng.pick(&[
                "a missing `await`",
                "an off-by-one in the cursor",
                "a stale cache entry",
                "the lock being held across an await point",
                "a mismatched column type",
                "an unhandled None",
            ]);
            format!("The root cause was {cause}.")
        } else {
            "Here's a summary of the changes:".into()
        };
        let mut bullets = Vec::new();
        for f in touched.iter().take(4) {
            let what = match self.rng.index(6) {
                0 => format!("added {}", self.rng.pick(FEATURES)),
                1 => format!("fixed error handling in `{}`", self.ident()),
                2 => format!("renamed `{}`", self.ident()),
                3 => format!("new test for `{}`", self.ident()),
                4 => "removed dead code".into(),
                _ => "tightened types".into(),
            };
            bullets.push(format!("- `{f}`: {what}"));
        }
        let tail = match self.rng.index(4) {
            0 => String::new(),
            1 => "\n\nWant me to commit this?".into(),
            2 => format!("\n\nNext, I'd suggest adding {}.", self.rng.pick(FEATURES)),
            _ => format!(
                "\n\nNote: `{}` still has a TODO for {}.",
                self.rng.pick(self.lang.files()),
                self.rng.pick(FEATURES)
            ),
        };
        let bullets = if bullets.is_empty() {
            String::new()
        } else {
            format!("\n\n{}", bullets.join("\n"))
        };
        format!("{head}{bullets}{tail}")
    }
}
