//! The CLI bookkeeping lines newer Claude Code clients write around the conversation:
//! `queue-operation`, hook `attachment`s in the chain, `last-prompt`, and a line type no parser
//! knows yet. A parser that archives conversation must skip all of them, and must never archive
//! a hook's `additionalContext` (it is memctl's own restored context coming back).
//!
//! Drawn from the generator's second stream (`xrng`): with extras off, the conversation lines
//! are byte for byte the same.

use super::Generator;
use super::lines::*;
use super::rng::iso;

impl Generator {
    pub(super) fn extras_before_prompt(&mut self, text: &str) {
        if !self.extras || !self.xrng.chance(0.3) {
            return;
        }
        let line = QueueOperation {
            operation: "enqueue",
            timestamp: iso(self.t),
            session_id: self.session.clone(),
            content: text.to_owned(),
        };
        self.emit(&line);
    }

    /// What a UserPromptSubmit hook that returned context leaves in the chain.
    pub(super) fn extras_after_prompt(&mut self) {
        if !self.extras || !self.xrng.chance(0.2) {
            return;
        }
        let marker = format!(
            "memctl restored context {:08x}",
            self.xrng.next_u64() as u32
        );
        let output = HookOutput {
            hook_specific_output: HookSpecificOutput {
                hook_event_name: "UserPromptSubmit",
                additional_context: marker.clone(),
            },
        };
        let success = Attachment::HookSuccess {
            hook_name: "UserPromptSubmit",
            tool_use_id: self.xrng.uuid(),
            hook_event: "UserPromptSubmit",
            content: "",
            exit_code: 0,
            duration_ms: self.xrng.range(2, 90),
            stdout: serde_json::to_string(&output).unwrap_or_default(),
            stderr: "",
            command: "memctl-hook UserPromptSubmit",
        };
        self.extra_chained(AttachmentBody {
            attachment: success,
            rendered: None,
            rendered_role: None,
        });
        let rendered = format!(
            "<system-reminder>\nUserPromptSubmit hook additional context: {marker}\n</system-reminder>"
        );
        let context = Attachment::HookAdditionalContext {
            content: vec![marker],
            hook_name: "UserPromptSubmit",
            tool_use_id: "UserPromptSubmit",
            hook_event: "UserPromptSubmit",
        };
        self.extra_chained(AttachmentBody {
            attachment: context,
            rendered: Some(vec![Rendered { content: rendered }]),
            rendered_role: Some("system"),
        });
    }

    /// An extras line in the chain: uuid from the extras stream, the clock left as it is.
    fn extra_chained(&mut self, body: AttachmentBody) {
        let uuid = self.xrng.uuid();
        let line = self.envelope("attachment", body, uuid, iso(self.t), Some("cli"));
        self.emit(&line);
    }

    pub(super) fn extras_after_turn(&mut self, prompt: &str) {
        if !self.extras {
            return;
        }
        if self.xrng.chance(0.1) {
            let line = LastPrompt {
                last_prompt: prompt.to_owned(),
                leaf_uuid: self.parent.clone(),
                session_id: self.session.clone(),
            };
            self.emit(&line);
        }
        if self.xrng.chance(0.02) {
            let line = FutureLine {
                session_id: self.session.clone(),
                timestamp: iso(self.t),
                payload: FuturePayload {
                    note: "a line type this parser does not know yet",
                },
            };
            self.emit(&line);
        }
    }
}
