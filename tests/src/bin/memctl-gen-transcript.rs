//! `memctl-gen-transcript`: write a synthetic Claude Code transcript (JSONL) to stdout.
//!
//!     memctl-gen-transcript --turns N [--seed S] [--layout combined|split]
//!                           [--no-compact | --compact-at TOKENS] [--no-extras]
//!     memctl-gen-transcript --append-to FILE --turns 2 --seed S >> FILE
//!
//! The same arguments as `scripts/gen_transcript.py`, for scripts that want transcripts without
//! Python; `--append-to` prints only the new lines, continuing FILE's chain. Parsed by hand:
//! the tests crate does not otherwise need clap.

use memctl_tests::transcript_gen::{GenConfig, Generator, Layout};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: memctl-gen-transcript --turns N [--seed S] [--layout combined|split] \
[--no-compact] [--compact-at TOKENS] [--no-extras] [--append-to FILE]";

struct Args {
    cfg: GenConfig,
    append_to: Option<String>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut cfg = GenConfig::default();
    let mut turns = None;
    let mut append_to = None;
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (a.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let number =
            |name: &str, v: String| v.parse::<u64>().map_err(|e| format!("{name} {v:?}: {e}"));
        match flag.as_str() {
            "--turns" => turns = Some(number("--turns", value("--turns")?)?),
            "--seed" => cfg.seed = number("--seed", value("--seed")?)?,
            "--compact-at" => {
                cfg.compact_at = Some(number("--compact-at", value("--compact-at")?)?)
            }
            "--no-compact" => cfg.compact_at = None,
            "--no-extras" => cfg.extras = false,
            "--append-to" => append_to = Some(value("--append-to")?),
            "--layout" => {
                cfg.layout = match value("--layout")?.as_str() {
                    "combined" => Layout::Combined,
                    "split" => Layout::Split,
                    other => return Err(format!("--layout {other:?}: combined or split")),
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    cfg.turns = turns.ok_or("--turns is required")?;
    Ok(Args { cfg, append_to })
}

fn run(args: Args) -> Result<(), String> {
    let mut g = match &args.append_to {
        Some(path) => {
            let existing = std::fs::read(path).map_err(|e| format!("read {path}: {e}"))?;
            Generator::continuing(&existing, &args.cfg).map_err(|e| format!("{path}: {e}"))?
        }
        None => Generator::new(&args.cfg),
    };
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    // Turn by turn through a buffer: a 50 000-turn transcript need not sit in memory.
    for _ in 0..args.cfg.turns {
        g.turn();
        w.write_all(&g.take_output())
            .map_err(|e| format!("write: {e}"))?;
    }
    w.flush().map_err(|e| format!("write: {e}"))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("memctl-gen-transcript: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memctl-gen-transcript: {e}");
            ExitCode::FAILURE
        }
    }
}
