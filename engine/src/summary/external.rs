//! Optional external summariser: `MEMCTL_SUMMARIZER_CMD` (off by default), run by
//! `memctl summarize <session>` only — never on a hook's critical path.
//!
//! The command runs under `sh -c` with the extractive summary and the latest turns on stdin;
//! its stdout (trimmed, at most [`MAX_OUTPUT`] bytes) becomes the session's abstract. It is
//! killed after the timeout (`MEMCTL_SUMMARIZER_TIMEOUT_SECS`, default 60 s).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest summary kept from the command's stdout.
pub const MAX_OUTPUT: usize = 16 * 1024;
/// Most bytes of recent turns given on stdin.
pub const MAX_INPUT_TURNS: usize = 48 * 1024;

/// How to run the external summariser (set from [`crate::Settings::summarizer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalConfig {
    /// Shell command; None = disabled (the default).
    pub command: Option<String>,
    /// Time limit (default 60 s).
    pub timeout: Duration,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        Self {
            command: None,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Why the external summariser gave nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExternalError {
    /// `MEMCTL_SUMMARIZER_CMD` is not set.
    #[error("no external summariser configured (set MEMCTL_SUMMARIZER_CMD)")]
    Disabled,
    /// The command could not be started or its pipes failed.
    #[error("summariser command failed to run: {0}")]
    Io(#[from] std::io::Error),
    /// The command exceeded the time limit and was killed.
    #[error("summariser command timed out after {0:?}")]
    Timeout(Duration),
    /// The command exited non-zero.
    #[error("summariser command exited with {status}: {stderr}")]
    Failed {
        /// Exit status.
        status: String,
        /// Start of its stderr.
        stderr: String,
    },
    /// The command printed nothing.
    #[error("summariser command printed nothing")]
    Empty,
}

/// Run the summariser with `input` on stdin; returns its trimmed stdout.
pub fn run(cfg: &ExternalConfig, input: &str) -> Result<String, ExternalError> {
    let cmd = cfg.command.as_deref().ok_or(ExternalError::Disabled)?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A summariser that stops reading early is fine.
            let _ignored = s.write_all(input.as_bytes());
        }
    });
    let pipe_reader = |p: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = p {
                let _ignored = p.take(MAX_OUTPUT as u64 + 1).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out_t = pipe_reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err_t = pipe_reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + cfg.timeout;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if Instant::now() >= deadline {
            child.kill()?;
            child.wait()?;
            return Err(ExternalError::Timeout(cfg.timeout));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ignored = writer.join();
    let out = out_t.join().unwrap_or_default();
    let err = err_t.join().unwrap_or_default();
    if !status.success() {
        return Err(ExternalError::Failed {
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&err).chars().take(300).collect(),
        });
    }
    let mut text = String::from_utf8_lossy(&out).trim().to_string();
    if text.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    if text.is_empty() {
        return Err(ExternalError::Empty);
    }
    Ok(crate::redact::redact(&text).into_owned())
}

/// The summariser's stdin: instructions, the extractive summary, then the latest turns (newest
/// last, bounded to [`MAX_INPUT_TURNS`] bytes).
pub fn prompt(extractive: &str, recent_turns: &[String]) -> String {
    let mut tail: Vec<&str> = Vec::new();
    let mut used = 0;
    for t in recent_turns.iter().rev() {
        if used + t.len() > MAX_INPUT_TURNS {
            break;
        }
        used += t.len();
        tail.push(t);
    }
    tail.reverse();
    let mut s = String::from(
        "Summarize this coding session in at most 10 lines: the goal, what was done, decisions \
         and why, the current state, and what is left. Keep exact file names and commands.\n\n\
         ## Extractive summary\n",
    );
    s.push_str(extractive);
    s.push_str("\n## Latest turns\n");
    for t in tail {
        s.push_str(t);
        s.push_str("\n---\n");
    }
    s
}
