//! Fuzzing of the Codex and Gemini CLI payload parsing and their outputs, with the engine's
//! harness over mutations of the recorded payloads (`tests/fixtures/payloads/`). Properties:
//! never panics; errors are typed values with a message; handled events translate to handled
//! kinds; a reply to any payload renders as nothing or valid JSON.

use super::{Adapter, Agent};
use memctl_engine::testing::fuzz::{fuzz, mutated_json, text};
use memctl_engine::{EventKind, Reply};
use proptest::prelude::*;

const CODEX: &str = include_str!("../../../tests/fixtures/payloads/codex-0.171.0.jsonl");
const GEMINI: &str = include_str!("../../../tests/fixtures/payloads/gemini-0.61.0.jsonl");

fn seeds(fixture: &str) -> Vec<Vec<u8>> {
    fixture
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

fn property(agent: Agent, raw: &[u8], event: Option<&str>) -> Result<(), TestCaseError> {
    match agent.parse(raw, event, None, None) {
        Ok(p) => {
            if matches!(p.event.kind, EventKind::Other) {
                prop_assert!(
                    !matches!(
                        p.label.as_str(),
                        "SessionStart" | "UserPromptSubmit" | "BeforeAgent"
                    ),
                    "{}",
                    p.label
                );
            }
            let (printed, _) = agent.render(&p.label, Reply::Context(p.event.session_id));
            if !printed.is_empty() {
                let parsed = serde_json::from_str::<serde_json::Value>(&printed);
                prop_assert!(parsed.is_ok(), "{printed}");
            }
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

#[test]
fn fuzz_codex_and_gemini_payloads() {
    for (agent, fixture, events) in [
        (
            Agent::Codex,
            CODEX,
            &[
                "SessionStart",
                "UserPromptSubmit",
                "PostToolUse",
                "Stop",
                "PreToolUse",
            ][..],
        ),
        (
            Agent::Gemini,
            GEMINI,
            &[
                "SessionStart",
                "BeforeAgent",
                "AfterTool",
                "PreCompress",
                "BeforeModel",
            ][..],
        ),
    ] {
        fuzz(
            &format!("{agent} payload: mutated recorded payloads, per event"),
            (
                mutated_json(seeds(fixture)),
                prop::option::of(prop::sample::select(events)),
            ),
            |(raw, event)| property(agent, &raw, event),
        );
        fuzz(
            &format!("{agent} payload: arbitrary bytes"),
            (
                prop::collection::vec(any::<u8>(), 0..512),
                prop::option::of(text()),
            ),
            |(bytes, event)| property(agent, &bytes, event.as_deref()),
        );
    }
}
