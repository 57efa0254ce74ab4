//! `memctl export` and `memctl import`: the archive as a portable JSON Lines file and back
//! (format: `docs/export-format.md`; engine: `memctl_engine::export`).

use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_engine::{
    Engine, ExportOptions, ExportPhase, ExportProgress, FileCompaction, ImportOptions,
    ImportReport, KindCounts, MemoryConfig,
};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// `memctl export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output file (`-`: stdout). A name ending in `.gz` is gzip-compressed. Default: stdout,
    /// unless it is a terminal.
    #[arg(long, short)]
    pub out: Option<String>,
    /// Project to export (the directory Claude Code ran in); default: the current directory.
    #[arg(long, conflicts_with = "all_projects")]
    pub project: Option<String>,
    /// Export every project.
    #[arg(long)]
    pub all_projects: bool,
    /// Only this session (its id or a unique prefix); its project is implied.
    #[arg(long)]
    pub session: Option<String>,
    /// Only turns started at or after this time: RFC 3339, a date, an age (7d), today.
    #[arg(long)]
    pub since: Option<String>,
    /// Include the model vectors (an import with the same model reuses them instead of
    /// embedding again).
    #[arg(long)]
    pub vectors: bool,
    /// Overwrite the output file when it exists.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `memctl import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The export file (gzip or not).
    pub file: PathBuf,
    /// Say what would be imported; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the file's memory files into this project's memory folder
    /// (`DIR/.memctl/memory`, or `MEMCTL_MEMORY_DIR`). Without it they are kept in the data
    /// dir and written into no project.
    #[arg(long, value_name = "DIR")]
    pub memory_into: Option<PathBuf>,
}

/// A progress bar on stderr, hidden when stderr is not a terminal or with `--quiet`.
fn bar(quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {msg} {pos}/{len}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

fn show(b: &indicatif::ProgressBar, p: ExportProgress) {
    let msg = match p.phase {
        ExportPhase::Export => "chunks",
        ExportPhase::Check => "checking (bytes)",
        _ => "importing (bytes)",
    };
    b.set_message(msg);
    if p.total > 0 {
        b.set_length(p.total);
    }
    b.set_position(p.done);
}

pub(super) fn export(
    engine: Engine,
    a: ExportArgs,
    memory: &MemoryConfig,
    out: &mut dyn Write,
) -> Result<()> {
    let now = jiff::Timestamp::now();
    let session = a
        .session
        .as_deref()
        .map(|p| crate::filters::session_id(&engine, p))
        .transpose()?;
    let projects = if a.all_projects || (session.is_some() && a.project.is_none()) {
        Vec::new()
    } else {
        let p = match &a.project {
            Some(p) => crate::filters::project(&engine, p)?,
            None => {
                let cwd = std::env::current_dir().context("current directory")?;
                let cwd = cwd.display().to_string();
                crate::filters::project(&engine, &cwd).with_context(|| {
                    "nothing archived for the current directory: give --project or --all-projects"
                })?
            }
        };
        vec![p]
    };
    let opts = ExportOptions {
        projects,
        session,
        since: a
            .since
            .as_deref()
            .map(|v| memctl_engine::parse_time("since", v, now))
            .transpose()?,
        vectors: a.vectors,
        memory: memory.clone(),
    };
    let target = a.out.as_deref().unwrap_or("-");
    let b = bar(a.quiet);
    let mut tick = |p: ExportProgress| show(&b, p);
    let report = if target == "-" {
        if std::io::stdout().is_terminal() && a.out.is_none() {
            bail!("the export would go to the terminal: give --out FILE (or --out - to print it)");
        }
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut *out);
        let r = engine.export(&opts, &mut w, &mut tick)?;
        w.flush()?;
        r
    } else {
        engine.export_to_file(std::path::Path::new(target), a.force, &opts, &mut tick)?
    };
    b.finish_and_clear();
    let c = &report.counts;
    let mut say = format!(
        "exported {} chunks, {} sessions, {} tool outputs, {} memory files, {} tombstones",
        c.chunks, c.sessions, c.swap_outputs, c.memory_files, c.tombstones
    );
    if c.turn_links > 0 {
        say.push_str(&format!(", {} shared turns", c.turn_links));
    }
    if let Some(e) = &report.embedder {
        say.push_str(&format!(", {} vectors ({e})", c.vectors));
    }
    let size = memctl_engine::human_bytes(report.bytes);
    if target == "-" {
        eprintln!("memctl: {say} ({size})");
    } else {
        writeln!(out, "{say} ({size} of JSON) to {target}")?;
    }
    Ok(())
}

fn line(out: &mut dyn Write, what: &str, c: &KindCounts) -> Result<()> {
    let mut parts = Vec::new();
    for (n, label) in [
        (c.imported, "imported"),
        (c.merged, "merged"),
        (c.duplicates, "already here"),
        (c.forgotten, "forgotten here, skipped"),
        (c.conflicts, "different here, kept"),
        (c.skipped, "skipped"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    if !parts.is_empty() {
        writeln!(out, "  {what:<13} {}", parts.join(", "))?;
    }
    Ok(())
}

fn print_report(r: &ImportReport, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{}{} records read (format v{}, written by memctl {})",
        if r.dry_run {
            "dry run, nothing written: "
        } else {
            ""
        },
        r.records,
        r.version,
        r.written_by
    )?;
    line(out, "chunks", &r.chunks)?;
    line(out, "shared turns", &r.turn_links)?;
    line(out, "sessions", &r.sessions)?;
    line(out, "tool outputs", &r.swap_outputs)?;
    line(out, "memory files", &r.memory_files)?;
    line(out, "tombstones", &r.tombstones)?;
    line(out, "projects", &r.projects)?;
    writeln!(
        out,
        "  vectors       {} reused from the file, {} queued for embedding",
        r.vectors_reused, r.vectors_queued
    )?;
    if r.redactions > 0 {
        writeln!(out, "  redacted      {} secrets", r.redactions)?;
    }
    print_store_file(&r.store_file, out)?;
    for m in &r.memory_placed {
        let what = match m.outcome {
            "new" if r.memory_kept_in.is_some() => "kept",
            "new" => "new",
            "same" => "already there",
            _ => "a different file has its name: written beside it",
        };
        writeln!(
            out,
            "  memory file   {} of {} -> {} ({what})",
            m.name,
            m.project,
            m.path.display()
        )?;
    }
    if let Some(dir) = &r.memory_kept_in {
        writeln!(
            out,
            "  note: memory files are kept in {} and written into no project; to put them in \
             a project's memory folder, import again with --memory-into <project dir>",
            dir.display()
        )?;
    }
    if r.vectors_queued > 0 && !r.dry_run {
        writeln!(
            out,
            "  run `memctl embed-pending` to embed the queued chunks now (the hooks' background \
             embedder does it otherwise)"
        )?;
    }
    Ok(())
}

fn print_store_file(c: &FileCompaction, out: &mut dyn Write) -> Result<()> {
    match c {
        FileCompaction::Done {
            bytes_before,
            bytes_after,
            millis,
        } => writeln!(
            out,
            "  store file    {} -> {} (compacted in {:.1} s)",
            memctl_engine::human_bytes(*bytes_before),
            memctl_engine::human_bytes(*bytes_after),
            *millis as f64 / 1000.0
        )?,
        FileCompaction::Busy => writeln!(
            out,
            "  store file    not compacted: another process was reading or writing it (later \
             writes reuse its free pages)"
        )?,
        _ => {}
    }
    Ok(())
}

pub(super) fn import(
    engine: Engine,
    a: ImportArgs,
    memory: &MemoryConfig,
    out: &mut dyn Write,
) -> Result<()> {
    let opts = ImportOptions {
        dry_run: a.dry_run,
        memory: memory.clone(),
        memory_into: a.memory_into,
        ..ImportOptions::default()
    };
    let b = bar(a.quiet);
    let report = engine
        .import_file(&a.file, &opts, &mut |p| show(&b, p))
        .with_context(|| format!("importing {}", a.file.display()))?;
    b.finish_and_clear();
    if a.json {
        serde_json::to_writer(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    print_report(&report, out)
}
