//! `memctl sessions` and `memctl show`: list archived sessions, print a chunk or a session.

use anyhow::{Result, bail};
use clap::Args;
use memctl_engine::Engine;
use std::io::Write;

/// `memctl sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only this project (default: all).
    #[arg(long)]
    pub project: Option<String>,
    /// Only sessions of this agent: claude, codex or gemini.
    #[arg(long, value_parser = memctl_hooks::agent::parse_agent)]
    pub agent: Option<memctl_engine::Agent>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `memctl show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A chunk id (number) or a session id.
    pub id: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn sessions(engine: Engine, a: SessionsArgs, out: &mut dyn Write) -> Result<()> {
    let mut list = engine.sessions()?;
    if let Some(p) = &a.project {
        let p = crate::filters::project(&engine, p)?;
        list.retain(|(_, s)| s.project == p);
    }
    if let Some(agent) = a.agent {
        list.retain(|(_, s)| s.agent == agent);
    }
    list.sort_by(|a, b| b.1.last_ts.cmp(&a.1.last_ts).then(a.0.cmp(&b.0)));
    if a.json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|(id, s)| {
                serde_json::json!({"session_id": id, "agent": s.agent, "project": s.project, "turns": s.turns,
                    "first_ts": s.first_ts, "last_ts": s.last_ts, "summary": s.summary})
            })
            .collect();
        serde_json::to_writer(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    if list.is_empty() {
        writeln!(out, "no sessions archived yet")?;
    }
    for (id, s) in list {
        writeln!(
            out,
            "{id}  {:<6} {:>5} turns  {} → {}  {}",
            s.agent.as_str(),
            s.turns,
            s.first_ts.as_deref().unwrap_or("-"),
            s.last_ts.as_deref().unwrap_or("-"),
            s.project
        )?;
        if let Some(line) = s.summary.as_deref().and_then(|t| t.lines().next()) {
            writeln!(out, "    {}", line.trim_start_matches("Summary: "))?;
        }
    }
    Ok(())
}

/// The near-identical turns search folds into a chunk (`×N` in its results), one a line.
fn write_copies(out: &mut dyn Write, copies: &[(u64, memctl_engine::ChunkRecord)]) -> Result<()> {
    if copies.is_empty() {
        return Ok(());
    }
    writeln!(out, "copies:  {} near-identical turns", copies.len())?;
    for (cid, r) in copies {
        writeln!(
            out,
            "  chunk {cid} · session {} · turn {} · {}",
            r.chunk.session_id,
            r.chunk.turn_index,
            r.chunk.started_at.as_deref().unwrap_or("-")
        )?;
    }
    Ok(())
}

pub(super) fn show(engine: Engine, a: ShowArgs, out: &mut dyn Write) -> Result<()> {
    // A number names a chunk; a session id prefix may be all digits too.
    let chunk = match a.id.parse::<u64>() {
        Ok(id) => engine.chunk(id)?.map(|rec| (id, rec)),
        Err(_) => None,
    };
    if let Some((id, rec)) = chunk {
        let copies = engine.chunk_copies(id)?;
        if a.json {
            let mut v = serde_json::to_value(&rec)?;
            if let Some(o) = v.as_object_mut() {
                let list: Vec<serde_json::Value> = copies
                    .iter()
                    .map(|(cid, r)| {
                        serde_json::json!({"id": cid, "session_id": r.chunk.session_id,
                        "turn_index": r.chunk.turn_index, "started_at": r.chunk.started_at})
                    })
                    .collect();
                o.insert("copies".into(), list.into());
            }
            serde_json::to_writer(&mut *out, &v)?;
            writeln!(out)?;
        } else {
            let c = &rec.chunk;
            writeln!(
                out,
                "chunk {id} · session {} · turn {} part {}/{}",
                c.session_id,
                c.turn_index,
                c.part + 1,
                c.parts
            )?;
            writeln!(out, "project: {}", c.project)?;
            writeln!(
                out,
                "time:    {} → {}",
                c.started_at.as_deref().unwrap_or("-"),
                c.ended_at.as_deref().unwrap_or("-")
            )?;
            writeln!(out, "tools:   {}", c.tools.join(", "))?;
            writeln!(out, "files:   {}", c.files.join(", "))?;
            writeln!(out, "summary: {}", c.summary)?;
            write_copies(out, &copies)?;
            writeln!(out, "---\n{}", c.text)?;
        }
        return Ok(());
    }
    let id = match crate::filters::session_id(&engine, &a.id) {
        Ok(id) => id,
        Err(e) if a.id.parse::<u64>().is_ok() => bail!("no chunk with id {} ({e})", a.id),
        Err(e) => return Err(e),
    };
    let Some(s) = engine.session(&id)? else {
        bail!("no session with id {id:?}");
    };
    let turns = engine.session_chunks(&id)?;
    if a.json {
        let chunks: Vec<serde_json::Value> = turns
            .iter()
            .map(|((_, cid), r)| serde_json::json!({"id": cid, "turn_index": r.chunk.turn_index, "part": r.chunk.part, "summary": r.chunk.summary, "text": r.chunk.text}))
            .collect();
        serde_json::to_writer(
            &mut *out,
            &serde_json::json!({"session_id": id, "session": s, "chunks": chunks}),
        )?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "session {} · project {} · {} turns",
        id, s.project, s.turns
    )?;
    if let Some(sum) = &s.summary {
        writeln!(out, "{}", sum.trim_end())?;
    }
    for (((turn, part), cid), r) in turns {
        let p = if r.chunk.parts > 1 {
            format!(".{part}")
        } else {
            String::new()
        };
        writeln!(out, "  turn {turn}{p} (chunk {cid}): {}", r.chunk.summary)?;
    }
    Ok(())
}
