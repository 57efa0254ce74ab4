//! Fuzzing of Claude Code's payload parsing and its translation into engine events, with the
//! engine's harness (`memctl_engine::testing::fuzz`: seed, budget, hang guard, mutations of
//! the real payloads in `tests/fixtures/payloads/claude.jsonl`). Properties: never panics;
//! errors are typed values with a message; a parsed payload translates, and its output
//! renders, whatever it holds.

use super::{HookEventName, HookOutput, HookPayload};
use memctl_engine::testing::fuzz::{fuzz, hook_payloads, mutated_json, text};
use memctl_engine::{EventKind, Reply};
use proptest::prelude::*;

#[test]
fn fuzz_hook_payload_arbitrary_bytes() {
    fuzz(
        "hook payload: arbitrary bytes",
        (
            prop::collection::vec(any::<u8>(), 0..1024),
            prop::option::of(text()),
        ),
        |(bytes, event)| {
            if let Err(e) = HookPayload::parse(&bytes, event.as_deref()) {
                prop_assert!(!e.to_string().is_empty());
            }
            Ok(())
        },
    );
}

const EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "Notification",
];

#[test]
fn fuzz_hook_payload_mutated_per_event() {
    let strategy = (
        mutated_json(hook_payloads()),
        prop::option::of(prop::sample::select(EVENTS)),
    );
    fuzz(
        "hook payload: mutated real payloads, per event",
        strategy,
        |(raw, event)| {
            match HookPayload::parse(&raw, event) {
                Ok(p) => {
                    let ev = p.clone().into_event();
                    prop_assert_eq!(
                        matches!(ev.kind, EventKind::Other),
                        p.event.kind().is_none(),
                        "handled events translate to handled kinds"
                    );
                    if let EventKind::ToolOutput(t) = &ev.kind {
                        prop_assert_eq!(
                            t.failed,
                            p.event.kind() == Some(HookEventName::PostToolUseFailure)
                        );
                    }
                    // Whatever a payload held, a reply to it renders as valid JSON.
                    let out = HookOutput::answer(p.event.name(), Reply::Context(ev.session_id));
                    let printed = out.render();
                    if !printed.is_empty() {
                        let parsed = serde_json::from_str::<serde_json::Value>(&printed);
                        prop_assert!(parsed.is_ok(), "{printed}");
                    }
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            Ok(())
        },
    );
}
