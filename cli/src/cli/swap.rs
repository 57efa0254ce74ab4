//! `memctl swap ...`: tool outputs stored whole by the PostToolUse hook.

use super::short;
use anyhow::{Result, bail};
use clap::Subcommand;
use memctl_engine::Engine;
use std::io::Write;

/// `memctl swap ...`.
#[derive(Debug, Subcommand)]
pub enum SwapCommand {
    /// List swapped outputs, newest first.
    List {
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// JSON output (an array of entries).
        #[arg(long)]
        json: bool,
    },
    /// Print the exact stored output (byte for byte) of an id (counts as an access).
    Show {
        /// The id from `memctl swap list`, a restore inventory or a digest (a unique prefix
        /// works).
        id: String,
        /// Only these lines, 1-based and inclusive: `A:B`, `A:` (to the end), `:B`, or `A`
        /// (the numbering of the digest an in-place swap left in the context).
        #[arg(long, value_name = "A:B")]
        lines: Option<String>,
    },
    /// Find swapped outputs by meaning and words (no model needed).
    Search {
        /// What to look for.
        query: String,
        /// Number of results.
        #[arg(short = 'k', long, default_value_t = 5)]
        k: usize,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this project (default: all projects).
        #[arg(long)]
        project: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Remove outputs past their retention (never accessed: 6 h after the session went idle,
    /// at most 24 h; accessed: 48 h after the last access).
    Prune {
        /// Only report what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(super) fn swap(
    engine: Engine,
    c: SwapCommand,
    cfg: &memctl_engine::SwapConfig,
    out: &mut dyn Write,
) -> Result<()> {
    use memctl_engine::human_bytes;
    use memctl_engine::unix_now;
    match c {
        SwapCommand::List { session, json } => {
            let list = engine.swap_list(session.as_deref())?;
            if json {
                serde_json::to_writer(&mut *out, &list)?;
                writeln!(out)?;
                return Ok(());
            }
            if list.is_empty() {
                writeln!(out, "no swapped tool outputs")?;
                return Ok(());
            }
            for e in &list {
                writeln!(
                    out,
                    "{}  {:<8} {:>9}  session {}  shown {}×  {}",
                    e.short_id(),
                    e.tool,
                    human_bytes(e.bytes),
                    short(&e.session_id),
                    e.access_count,
                    e.input_summary
                )?;
                writeln!(out, "    {}", e.summary)?;
            }
            let st = engine.swap_stats()?;
            writeln!(
                out,
                "{} entries, {} distinct outputs, {}",
                list.len(),
                st.blobs,
                human_bytes(st.bytes)
            )?;
        }
        SwapCommand::Show { id, lines } => {
            let text = engine.swap_show(&id, unix_now())?.text;
            let text = match lines.as_deref() {
                None => text.as_str(),
                Some(r) => {
                    let total = text.lines().count() as u64;
                    let (first, last) = parse_lines(r, total)?;
                    let (a, b) = memctl_engine::line_span(&text, first, last);
                    &text[a..b]
                }
            };
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        SwapCommand::Search {
            query,
            k,
            session,
            project,
            json,
        } => {
            if query.trim().is_empty() {
                bail!("empty query");
            }
            let hits = engine.swap_search(&query, k, session.as_deref(), project.as_deref())?;
            if json {
                serde_json::to_writer(&mut *out, &hits)?;
                writeln!(out)?;
                return Ok(());
            }
            if hits.is_empty() {
                writeln!(out, "no swapped tool outputs match")?;
            }
            for (i, h) in hits.iter().enumerate() {
                writeln!(
                    out,
                    "{:>2}. [{:.3}] {}",
                    i + 1,
                    h.score,
                    h.entry.inventory_line()
                )?;
            }
        }
        SwapCommand::Prune { dry_run } => {
            let r = engine.swap_prune(cfg, unix_now(), dry_run)?;
            let verb = if dry_run { "would remove" } else { "removed" };
            for e in &r.removed {
                writeln!(
                    out,
                    "{verb} {}  {}  session {}  {}",
                    memctl_engine::short_id(&e.id),
                    e.tool,
                    short(&e.session_id),
                    human_bytes(e.bytes)
                )?;
            }
            writeln!(out, "{verb} {} expired entries", r.removed.len())?;
        }
    }
    Ok(())
}

/// `A:B`, `A:`, `:B` or `A` (1-based, inclusive) → a line range inside `1..=total`; a range
/// outside the output, reversed or unreadable is an error that says how many lines there are.
fn parse_lines(r: &str, total: u64) -> Result<(u64, u64)> {
    let num = |s: &str, default: u64| -> Result<u64> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(default);
        }
        s.parse::<u64>().map_err(|_| {
            anyhow::anyhow!("--lines {r:?}: {s:?} is not a line number (expected A:B)")
        })
    };
    let (first, last) = match r.split_once(':') {
        Some((a, b)) => (num(a, 1)?, num(b, total)?),
        None => {
            let n = num(r, 0)?;
            (n, n)
        }
    };
    if first == 0 || first > last || first > total {
        bail!("--lines {r}: the output has {total} lines (lines are numbered from 1)");
    }
    Ok((first, last.min(total)))
}

#[cfg(test)]
mod tests {
    use super::parse_lines;

    #[test]
    fn line_ranges() {
        assert_eq!(parse_lines("3:5", 10).unwrap(), (3, 5));
        assert_eq!(parse_lines("8:", 10).unwrap(), (8, 10));
        assert_eq!(parse_lines(":2", 10).unwrap(), (1, 2));
        assert_eq!(parse_lines("4", 10).unwrap(), (4, 4));
        assert_eq!(parse_lines("9:400", 10).unwrap(), (9, 10));
        for bad in ["0:3", "5:3", "11:12", "x:3", "3:y", "", "-1:2"] {
            let e = parse_lines(bad, 10).unwrap_err().to_string();
            assert!(e.contains("--lines"), "{bad}: {e}");
        }
    }
}
