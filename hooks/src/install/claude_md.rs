//! `memctl install --claude-md` / `uninstall --claude-md`: the memory protocol block in the
//! project's `CLAUDE.md`.

use anyhow::{Context, Result};
use std::io::Write;

/// The CLAUDE.md part of `memctl install --claude-md` / `uninstall --claude-md`: the managed
/// protocol block in `./CLAUDE.md`, inserted or removed idempotently.
pub fn claude_md(add: bool, dry_run: bool, out: &mut dyn Write) -> Result<()> {
    let path = std::env::current_dir()
        .context("current directory")?
        .join("CLAUDE.md");
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let new = if add {
        memctl_engine::upsert_claude_md_block(&old)
    } else {
        memctl_engine::remove_claude_md_block(&old)
    };
    if dry_run {
        write!(out, "{new}")?;
        return Ok(());
    }
    if new == old {
        writeln!(out, "{}: already up to date", path.display())?;
        return Ok(());
    }
    if !add && new.is_empty() {
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        writeln!(
            out,
            "removed {} (it held only the memctl block)",
            path.display()
        )?;
        return Ok(());
    }
    super::write_atomic(&path, &new)?;
    writeln!(
        out,
        "{} the memory protocol {} {}",
        if add { "wrote" } else { "removed" },
        if add { "to" } else { "from" },
        path.display()
    )?;
    Ok(())
}
