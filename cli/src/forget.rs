//! `memctl forget`: remove turns from the archive for good ([`memctl_engine::forget`]).
//!
//! Without `--yes` it only prints what would be removed: a forget cannot be undone, so the
//! command a user types first is the one that shows them what it covers. A selector that does
//! not parse or names nothing known (a bad time, an unknown session prefix or chunk id) is an
//! error (exit 1); one that parses but matches nothing says so plainly and exits 0.

use anyhow::Result;
use clap::Args;
use memctl_engine::{BackupsReport, Engine, ForgetReport, ForgetRequest, Interrupted, human_bytes};
use std::io::Write;

use memctl_hooks::background::FORGET_FINISH_MARKER as FINISH_MARKER;

/// Turn lines printed (the JSON report has up to 50).
const SHOWN: usize = 5;

/// `memctl forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// Chunk ids (from `memctl search` or `memctl show`); each takes the rest of its turn.
    pub ids: Vec<u64>,
    /// A session: its id or a unique prefix (e.g. the 8 characters `search` prints).
    #[arg(long)]
    pub session: Option<String>,
    /// A project: the directory Claude Code ran in.
    #[arg(long)]
    pub project: Option<String>,
    /// Turns started at or after: RFC 3339, a date (2025-10-24), an age (30m, 12h, 7d, 2w),
    /// today or yesterday.
    #[arg(long)]
    pub since: Option<String>,
    /// Turns started before (same forms as --since).
    #[arg(long)]
    pub until: Option<String>,
    /// Turns whose text contains this (any case); the whole turn goes.
    #[arg(long)]
    pub text: Option<String>,
    /// Remove them (without it, only print what would be removed).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Only finish a forget that was killed before its store file was rewritten (every
    /// command does it when it opens the store; hooks start this in the background).
    #[arg(long, conflicts_with_all = ["ids", "session", "project", "since", "until", "text", "yes"])]
    pub finish: bool,
}

/// Remove the hooks' once-a-minute marker: gone means the next hook that finds a forget cut
/// short may start the store's upkeep again.
pub(crate) fn clear_finish_marker(data_dir: &std::path::Path) {
    let marker = data_dir.join(FINISH_MARKER);
    match std::fs::remove_file(&marker) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(path = %marker.display(), error = %e, "marker not removed"),
    }
}

/// Run `memctl forget`.
pub fn run(
    engine: Engine,
    settings: &memctl_engine::Settings,
    a: ForgetArgs,
    out: &mut dyn Write,
) -> Result<()> {
    if a.finish {
        // `cli::open` finished whatever was left (and said so on stderr).
        let left = engine.forget_pending()?;
        clear_finish_marker(engine.data_dir());
        if a.json {
            writeln!(out, "{}", serde_json::json!({ "pending": left }))?;
        } else if left {
            writeln!(
                out,
                "an interrupted forget is still not finished: see the warning above"
            )?;
        } else {
            writeln!(out, "no interrupted forget left to finish")?;
        }
        if left {
            anyhow::bail!("an interrupted forget could not be finished");
        }
        return Ok(());
    }
    let req = ForgetRequest {
        chunk_ids: a.ids,
        session: a.session,
        project: a.project,
        since: a.since,
        until: a.until,
        text: a.text,
    };
    // Synced copies go too: what the forget will remove, read before it is gone.
    let team = a.yes && crate::team::config::configured(settings, engine.data_dir());
    let refs = if team {
        crate::team::forgotten_refs(&engine, &engine.forget(&req, true)?.removed_ids)?
    } else {
        Vec::new()
    };
    let rep = engine.forget(&req, !a.yes)?;
    if team && !rep.removed_ids.is_empty() {
        crate::team::after_forget(&engine, settings, refs);
    }
    if a.json {
        // Written as one io call: a closed pipe is an io error the CLI treats as success.
        writeln!(out, "{}", serde_json::to_string(&rep)?)?;
        return Ok(());
    }
    print(&rep, out)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn print(rep: &ForgetReport, out: &mut dyn Write) -> Result<()> {
    let criteria = rep.criteria.join(", ");
    if rep.is_empty() {
        writeln!(out, "nothing matches {criteria}: nothing to forget")?;
        if let Some(rw) = &rep.rewrite {
            writeln!(
                out,
                "(the store file still held what an earlier forget removed: rewritten, {} → {})",
                human_bytes(rw.bytes_before),
                human_bytes(rw.bytes_after)
            )?;
            print_backups(&rep.backups, out)?;
        }
        return Ok(());
    }
    let mut what = format!(
        "{} ({}) of {}",
        plural(rep.turns, "turn", "turns"),
        plural(rep.chunks, "chunk", "chunks"),
        plural(rep.sessions, "session", "sessions")
    );
    if rep.chunks == 0 {
        what = "no archived turn".to_string();
    }
    if rep.tool_outputs > 0 {
        what.push_str(&format!(
            ", {}",
            plural(
                rep.tool_outputs,
                "stored tool output",
                "stored tool outputs"
            )
        ));
    }
    if rep.spooled_calls > 0 {
        what.push_str(&format!(
            ", {}",
            plural(rep.spooled_calls, "spooled tool call", "spooled tool calls")
        ));
    }
    let verb = if rep.dry_run {
        "would forget"
    } else {
        "forgot"
    };
    writeln!(out, "{verb} {what}")?;
    writeln!(out, "  matching {criteria}")?;
    if !rep.sessions_removed.is_empty() {
        let n = rep.sessions_removed.len();
        let mut names: Vec<&str> = rep
            .sessions_removed
            .iter()
            .take(SHOWN)
            .map(String::as_str)
            .collect();
        let more = format!("… {} more", n - names.len());
        if n > names.len() {
            names.push(&more);
        }
        let verb = if rep.dry_run { "would go" } else { "removed" };
        writeln!(
            out,
            "  {} {verb} entirely: {}",
            plural(n as u64, "session", "sessions"),
            names.join(", ")
        )?;
    }
    for l in rep.turn_lines.iter().take(SHOWN) {
        writeln!(
            out,
            "  {}  turn {:<4} {}  {}",
            l.session.get(..8).unwrap_or(&l.session),
            l.turn,
            l.time.as_deref().unwrap_or("                "),
            l.gist
        )?;
    }
    if rep.turns as usize > SHOWN {
        writeln!(out, "  … and {} more", rep.turns as usize - SHOWN)?;
    }
    if rep.dry_run {
        writeln!(
            out,
            "nothing was removed: run again with --yes to forget them (it cannot be undone)"
        )?;
        return Ok(());
    }
    if let Some(rw) = &rep.rewrite {
        writeln!(
            out,
            "store file rewritten without them: {} → {} ({} rows, {:.1} s)",
            human_bytes(rw.bytes_before),
            human_bytes(rw.bytes_after),
            rw.rows,
            rw.millis as f64 / 1000.0
        )?;
    }
    if rep.rewrite.is_some() {
        print_backups(&rep.backups, out)?;
    }
    if rep.chunks > 0 {
        writeln!(
            out,
            "archiving their transcripts again will not bring them back ({}); Claude Code's own \
             transcript files still hold them: memctl does not delete those",
            plural(rep.tombstones, "tombstone", "tombstones")
        )?;
    }
    Ok(())
}

/// What a forget did to the backups in the data dir, and what it cannot reach.
fn print_backups(b: &BackupsReport, out: &mut dyn Write) -> Result<()> {
    for p in &b.removed {
        writeln!(out, "deleted a backup that held them: {}", p.display())?;
    }
    for (p, why) in &b.unreadable_removed {
        writeln!(
            out,
            "deleted a backup that could not be read to check it ({why}): {}",
            p.display()
        )?;
    }
    for (p, why) in &b.failed {
        writeln!(
            out,
            "WARNING: could not delete a backup that holds them ({why}): {} — delete it by hand",
            p.display()
        )?;
    }
    if b.kept > 0 {
        writeln!(
            out,
            "{} in {} hold none of it: kept",
            plural(b.kept, "backup", "backups"),
            b.dir.display()
        )?;
    }
    writeln!(
        out,
        "backups written outside {} (memctl backup --out, copies of the data dir) are not \
         known to memctl and were not touched",
        b.dir.display()
    )?;
    Ok(())
}

/// What finishing a killed operation did, on stderr at a command's start (nothing when
/// nothing was left).
pub(crate) fn print_interrupted(done: &Interrupted, out: &mut dyn Write) -> Result<()> {
    for p in &done.leftovers {
        writeln!(
            out,
            "memctl: removed a temporary file of a killed memctl: {}",
            p.display()
        )?;
    }
    if let Some(f) = &done.forget {
        writeln!(
            out,
            "memctl: an earlier forget was interrupted before the store file was rewritten; \
             finished it now: rewritten, {} → {}",
            human_bytes(f.rewrite.bytes_before),
            human_bytes(f.rewrite.bytes_after)
        )?;
        let mut buf = Vec::new();
        print_backups(&f.backups, &mut buf)?;
        for line in String::from_utf8_lossy(&buf).lines() {
            writeln!(out, "memctl: {line}")?;
        }
    }
    Ok(())
}
