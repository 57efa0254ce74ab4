//! The tool calls of the agentic loop: what the assistant asks (`tool_use` input) and what
//! the tool answers (the model-facing `tool_result` text and the structured `toolUseResult`),
//! in the shapes Claude Code writes for Read, Edit, Write, Grep, Glob, TodoWrite and Bash.

use super::Generator;
use super::lines::{Hunk, ReadFile, Todo, ToolInput, ToolUseResult};
use super::vocab::{IDENTS, MISC_CMDS, VERBS};

/// One tool round trip as the assistant made it and the tool answered.
#[derive(Debug)]
pub(super) struct ToolCall {
    pub name: &'static str,
    pub input: ToolInput,
    /// The model-facing `tool_result` text.
    pub body: String,
    pub is_error: bool,
    /// The top-level `toolUseResult`.
    pub result: ToolUseResult,
    /// The file the call changed, if any (the final answer lists them).
    pub touched: Option<&'static str>,
}

/// `cat -n`-style numbering with Claude Code's arrow separator, from line `start`.
fn numbered(lines: &[String], start: usize) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:6}\u{2192}{l}", i + start))
        .collect::<Vec<_>>()
        .join("\n")
}

fn dirname(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

impl Generator {
    /// One tool call on `rel`; `step` 0 is the first of the turn (reads and searches only).
    pub(super) fn tool_call(&mut self, rel: &'static str, step: usize) -> ToolCall {
        let path = self.abspath(rel);
        let k = self.rng.unit();
        let name = if step == 0 {
            self.rng.pick(&["Read", "Read", "Grep", "Bash", "Glob"])
        } else if k < 0.97 {
            self.rng.pick(&[
                "Read",
                "Edit",
                "Edit",
                "Bash",
                "Bash",
                "Grep",
                "Write",
                "TodoWrite",
            ])
        } else {
            "Read"
        };
        match name {
            "Read" => self.read(rel, path),
            "Edit" => self.edit(rel, path),
            "Write" => {
                let n = self.rng.range(10, 40) as usize;
                let content = self
                    .file_lines(rel)
                    .iter()
                    .take(n)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n");
                ToolCall {
                    name: "Write",
                    input: ToolInput::Write {
                        file_path: path.clone(),
                        content: content.clone(),
                    },
                    body: format!("File created successfully at: {path}"),
                    is_error: false,
                    result: ToolUseResult::Write {
                        kind: "create",
                        file_path: path,
                        content,
                        structured_patch: Vec::new(),
                    },
                    touched: Some(rel),
                }
            }
            "Grep" => self.grep(rel),
            "Glob" => {
                let pattern = self.rng.pick(&[
                    "**/*.rs",
                    "src/**/*.ts",
                    "**/test_*.py",
                    "**/*.toml",
                    "**/*.md",
                ]);
                let n = self.rng.range(1, 12) as usize;
                let files: Vec<String> = self
                    .rng
                    .sample(self.lang.files(), n)
                    .iter()
                    .map(|f| self.abspath(f))
                    .collect();
                ToolCall {
                    name: "Glob",
                    input: ToolInput::Glob { pattern },
                    body: files.join("\n"),
                    is_error: false,
                    result: ToolUseResult::Glob {
                        num_files: files.len(),
                        filenames: files,
                        duration_ms: self.rng.range(3, 90),
                        truncated: false,
                    },
                    touched: None,
                }
            }
            "TodoWrite" => {
                let n = self.rng.range(2, 6);
                let todos: Vec<Todo> = (0..n)
                    .map(|_| Todo {
                        content: format!(
                            "{} {}",
                            self.rng
                                .pick(&["Fix", "Add", "Test", "Refactor", "Document"]),
                            self.ident()
                        ),
                        status: self.rng.pick(&["pending", "in_progress", "completed"]),
                        active_form: format!("Working on {}", self.ident()),
                    })
                    .collect();
                ToolCall {
                    name: "TodoWrite",
                    input: ToolInput::TodoWrite { todos: todos.clone() },
                    body: "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable".into(),
                    is_error: false,
                    result: ToolUseResult::Todo { old_todos: Vec::new(), new_todos: todos },
                    touched: None,
                }
            }
            _ => self.bash(rel),
        }
    }

    fn read(&mut self, rel: &'static str, path: String) -> ToolCall {
        let total = self.file_lines(rel).len();
        let (mut off, mut lim) = (1, total);
        let mut window = None;
        if total > 150 && self.rng.chance(0.5) {
            off = self.rng.range(1, total as u64 - 60) as usize;
            lim = 60;
            window = Some((off, lim));
        }
        let lines = &self.file_lines(rel)[off - 1..(off - 1 + lim).min(total)];
        let body = numbered(lines, off);
        let content = lines.join("\n");
        ToolCall {
            name: "Read",
            input: ToolInput::Read {
                file_path: path.clone(),
                offset: window.map(|w| w.0),
                limit: window.map(|w| w.1),
            },
            body,
            is_error: false,
            result: ToolUseResult::Read {
                kind: "text",
                file: ReadFile {
                    file_path: path,
                    content,
                    num_lines: lim.min(total),
                    start_line: off,
                    total_lines: total,
                },
            },
            touched: None,
        }
    }

    fn edit(&mut self, rel: &'static str, path: String) -> ToolCall {
        let n = self.file_lines(rel).len();
        let j = self.rng.index(n);
        let cur = self.file_lines(rel)[j].clone();
        let old = if cur.trim().is_empty() {
            "}".to_owned()
        } else {
            cur
        };
        let new = if old.contains("Result<") {
            old.replace("Result<", "anyhow::Result<")
        } else {
            format!("{old}  // {}", self.ident())
        };
        let replace_all = self.rng.chance(0.1).then_some(true);
        let input = ToolInput::Edit {
            file_path: path.clone(),
            old_string: old.clone(),
            new_string: new.clone(),
            replace_all,
        };
        let lines = self.file_lines(rel);
        let lo = j.saturating_sub(4);
        let mut snippet: Vec<String> = lines[lo..j].to_vec();
        snippet.push(new.clone());
        snippet.extend(lines.iter().skip(j + 1).take(4).cloned());
        let snippet = numbered(&snippet, lo + 1);
        if self.rng.chance(0.06) {
            return ToolCall {
                name: "Edit",
                input,
                body: format!(
                    "<tool_use_error>String to replace not found in file.\nString: {old}</tool_use_error>"
                ),
                is_error: true,
                result: ToolUseResult::Error("Error: String to replace not found in file.".into()),
                touched: None,
            };
        }
        let original = self.file_lines(rel).join("\n");
        self.file_lines(rel)[j] = new.clone();
        ToolCall {
            name: "Edit",
            input,
            body: format!(
                "The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{snippet}"
            ),
            is_error: false,
            result: ToolUseResult::Edit {
                file_path: path,
                structured_patch: vec![Hunk {
                    old_start: j + 1,
                    old_lines: 1,
                    new_start: j + 1,
                    new_lines: 1,
                    lines: vec![format!("-{old}"), format!("+{new}")],
                }],
                old_string: old,
                new_string: new,
                original_file: original,
                user_modified: false,
                replace_all: replace_all.unwrap_or(false),
            },
            touched: Some(rel),
        }
    }

    fn grep(&mut self, rel: &'static str) -> ToolCall {
        let pattern = if self.rng.index(IDENTS.len() + VERBS.len()) < IDENTS.len() {
            self.rng.pick(IDENTS)
        } else {
            self.rng.pick(VERBS)
        };
        let mode = self
            .rng
            .pick(&["files_with_matches", "content", "files_with_matches"]);
        let dir = dirname(rel);
        let path = if self.rng.chance(0.5) {
            self.cwd.clone()
        } else {
            self.abspath(if dir.is_empty() { "." } else { dir })
        };
        let files = self.lang.files();
        if mode == "content" {
            let n = self.rng.range(1, 9) as usize;
            let mut hits = Vec::new();
            for f in self.rng.sample(files, n) {
                let line_no = self.rng.range(1, 300);
                let line = self.some_line(f);
                hits.push(format!("{}:{line_no}:{line}", self.abspath(f)));
            }
            let body = hits.join("\n");
            return ToolCall {
                name: "Grep",
                input: ToolInput::Grep {
                    pattern: pattern.into(),
                    path,
                    output_mode: mode,
                    line_numbers: Some(true),
                },
                body: body.clone(),
                is_error: false,
                result: ToolUseResult::GrepContent {
                    mode,
                    num_files: 0,
                    filenames: Vec::new(),
                    content: body,
                    num_lines: hits.len(),
                },
                touched: None,
            };
        }
        let n = self.rng.range(0, 7) as usize;
        let found: Vec<String> = self
            .rng
            .sample(files, n)
            .iter()
            .map(|f| self.abspath(f))
            .collect();
        let body = if found.is_empty() {
            "No files found".to_owned()
        } else {
            format!("Found {} files\n{}", found.len(), found.join("\n"))
        };
        ToolCall {
            name: "Grep",
            input: ToolInput::Grep {
                pattern: pattern.into(),
                path,
                output_mode: mode,
                line_numbers: None,
            },
            body,
            is_error: false,
            result: ToolUseResult::GrepFiles {
                mode,
                num_files: found.len(),
                filenames: found,
            },
            touched: None,
        }
    }

    fn bash(&mut self, rel: &'static str) -> ToolCall {
        let command = if self.rng.chance(0.6) {
            (self.rng.pick(self.lang.test_cmds())).to_owned()
        } else {
            let tmpl = self.rng.pick(MISC_CMDS);
            let kind = self.rng.pick(&["fix", "feat", "refactor", "test"]);
            let msg = format!("{kind}: {}", self.ident().replace('_', " "));
            tmpl.replace("{f}", rel).replace("{msg}", &msg)
        };
        let description = self.rng.pick(&[
            "Run the test suite",
            "Check build",
            "Show working tree status",
            "Run linter",
            "Inspect schema",
            "Commit changes",
        ]);
        let timeout = self.rng.chance(0.1).then_some(600_000);
        let input = ToolInput::Bash {
            command: command.clone(),
            description,
            timeout,
        };
        if self.rng.chance(0.22) {
            let n = self.rng.range(1, 3);
            let out: Vec<String> = (0..n).map(|_| self.error_text(Some(rel))).collect();
            let code = self.rng.pick(&[1, 1, 2, 101]);
            let body = format!("Exit code {code}\n{}", out.join("\n"));
            return ToolCall {
                name: "Bash",
                input,
                result: ToolUseResult::Error(format!("Error: {body}")),
                body,
                is_error: true,
                touched: None,
            };
        }
        let n = self.rng.range(3, 160);
        let body = if ["cargo test", "pytest", "npm test", "npx vitest"]
            .iter()
            .any(|p| command.starts_with(p))
        {
            let mut lines: Vec<String> = (0..n)
                .map(|_| format!("test {}::{} ... ok", self.rng.pick(IDENTS), self.ident()))
                .collect();
            let secs = self.rng.unit() * 20.0;
            lines.push(format!(
                "\ntest result: ok. {n} passed; 0 failed; 0 ignored; finished in {secs:.2}s"
            ));
            lines.join("\n")
        } else if command.starts_with("git") {
            let k = self.rng.range(1, 6) as usize;
            self.rng
                .sample(self.lang.files(), k)
                .iter()
                .map(|f| format!(" M {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            let k = self.rng.range(1, 20);
            (0..k)
                .map(|_| format!("{} {}", self.rng.pick(IDENTS), self.rng.range(1, 99_999)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        ToolCall {
            name: "Bash",
            input,
            result: ToolUseResult::Bash {
                stdout: body.clone(),
                stderr: String::new(),
                interrupted: false,
                is_image: false,
            },
            body,
            is_error: false,
            touched: None,
        }
    }
}
