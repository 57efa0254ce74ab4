#!/usr/bin/env python3
"""Typed scenario files for memctl's end-to-end harness.

A scenario file is JSON. `load(path)` parses it into the dataclasses below and checks every key
and type on the way: an unknown key (a typo such as "prompst") or a wrong type fails with
`ScenarioError("<file>: steps[2].prompst: unknown key ...")` before anything runs, instead of
being silently ignored and making the scenario pass or fail for the wrong reason.

    python3 scenario.py FILE...     # check scenario files; exit 1 naming the first bad field

Placeholders `{{WORKDIR}}`, `{{HOME}}`, `{{OUTDIR}}`, `{{SESSION_ID}}` in strings are replaced by
`load(path, mapping)` (the driver passes them); other `{{...}}` are left alone (memctl's checks
use their own).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Optional, Union

JSON = Any  # a free-form JSON value, kept as parsed
Number = Union[int, float]

HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
               "Stop", "PreCompact", "PostCompact", "SessionEnd", "SubagentStop", "Notification"]
SESSION_MODES = ("new", "resume", "continue", "fork")
REQUEST_KINDS = ("main", "compact", "side", "count_tokens", "other")


class ScenarioError(ValueError):
    """A scenario file that does not match the schema; the message names file and field."""


def _prefix(where: str) -> str:
    return f"{where}." if where else ""


# ---------------------------------------------------------------------------- the schema


@dataclass
class ApiError:
    status: int = 500
    type: str = "api_error"
    message: str = "fake error"


@dataclass
class Response:
    """One scripted reply of the fake model: text and/or tool_use, or raw content blocks, or an
    HTTP error. `usage` overrides the reported token counts (e.g. input_tokens to cross the
    auto-compact threshold). A tool_use may `bind` input fields to what the previous tool
    result said: {"bind": {"ids[]": "\"id\":(\\d+)"}} sets input.ids to [first match's group,
    JSON-parsed when it parses] (a field name ending in [] makes a one-element list); the model
    can then open what its own search found, as a real one would. A [regex, template] pair puts
    the group into the template's `{}` (a command line around an id the tool result named)."""

    text: Optional[str] = None
    tool_use: Optional[Union[dict[str, JSON], list[dict[str, JSON]]]] = None
    content: Optional[list[dict[str, JSON]]] = None
    error: Optional[ApiError] = None
    usage: Optional[dict[str, int]] = None
    stop_reason: Optional[str] = None
    delay_s: Optional[Number] = None

    def validate(self, where: str) -> None:
        shapes = [k for k in ("text", "tool_use", "content", "error") if getattr(self, k) is not None]
        if not shapes:
            raise ScenarioError(f"{where}: a response needs 'text', 'tool_use', 'content' or 'error'")
        if len(shapes) > 1 and set(shapes) != {"text", "tool_use"}:
            raise ScenarioError(f"{where}: {shapes} cannot be combined (only text + tool_use can)")
        for i, tu in enumerate(self.tool_uses()):
            if not isinstance(tu.get("name"), str):
                raise ScenarioError(f"{_prefix(where)}tool_use{'' if isinstance(self.tool_use, dict) else f'[{i}]'}: needs a string 'name'")
            unknown = sorted(set(tu) - {"name", "input", "id", "bind"})
            if unknown:
                raise ScenarioError(f"{_prefix(where)}tool_use: unknown key(s) {unknown}; known: ['bind', 'id', 'input', 'name']")
            bind = tu.get("bind")
            if bind is None:
                continue
            def bind_ok(v):
                return isinstance(v, str) or (isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
                                              and "{}" in v[1])
            if not isinstance(bind, dict) or not all(isinstance(k, str) and bind_ok(v) for k, v in bind.items()):
                raise ScenarioError(f"{_prefix(where)}tool_use.bind: expected an object of input field -> regex "
                                    "(or [regex, template with {}])")
            for k, rx in bind.items():
                rx = rx if isinstance(rx, str) else rx[0]
                try:
                    groups = re.compile(rx).groups
                except re.error as e:
                    raise ScenarioError(f"{_prefix(where)}tool_use.bind.{k}: bad regex: {e}") from None
                if groups != 1:
                    raise ScenarioError(f"{_prefix(where)}tool_use.bind.{k}: the regex needs exactly one group")

    def tool_uses(self) -> list[dict]:
        if self.tool_use is None:
            return []
        return self.tool_use if isinstance(self.tool_use, list) else [self.tool_use]


@dataclass
class SideRule:
    match: str
    response: Response


@dataclass
class Step:
    """One CLI process."""

    name: Optional[str] = None
    session: Optional[str] = None  # new | resume | continue | fork (default: new, then resume)
    session_id: Optional[str] = None  # for new: the id to create; for resume/fork: the id to resume
    prompt: Optional[str] = None  # one `-p` prompt (slash commands work: "/compact")
    prompts: Optional[list[str]] = None  # several prompts in ONE process (stream-json input)
    responses: list[Response] = field(default_factory=list)  # main-loop replies, in order
    compact_summary: Optional[str] = None
    hook_events: Optional[list[str]] = None
    hook_timeout_s: Optional[Number] = None
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)
    timeout_s: Optional[Number] = None
    expect_failure: bool = False  # the CLI may exit non-zero

    def validate(self, where: str) -> None:
        if self.session is not None and self.session not in SESSION_MODES:
            raise ScenarioError(f"{_prefix(where)}session: {self.session!r} is not one of {list(SESSION_MODES)}")
        if self.prompt is not None and self.prompts is not None:
            raise ScenarioError(f"{where}: give either 'prompt' or 'prompts', not both")
        if self.prompts is not None and not self.prompts:
            raise ScenarioError(f"{_prefix(where)}prompts: empty list")
        if self.session == "continue" and self.session_id is not None:
            raise ScenarioError(f"{_prefix(where)}session_id: 'continue' picks the latest session itself")


@dataclass
class RequestFilter:
    step: Optional[int] = None
    kind: Optional[str] = None


@dataclass
class Expect:
    """One check evaluated after the run (exactly one of the check keys)."""

    # check keys
    hook: Optional[str] = None  # calls of this hook event
    request_contains: Optional[str] = None
    request_not_contains: Optional[str] = None
    request_count: Optional[RequestFilter] = None
    transcript_contains: Optional[str] = None
    transcript_line: Optional[dict[str, JSON]] = None
    # qualifiers
    where: Optional[dict[str, JSON]] = None  # hook: payload fields that must match
    exit_code: Optional[int] = None  # hook: every matching call exited with it
    killed: Optional[bool] = None  # hook: the CLI killed (or did not kill) every matching call
    count_min: Optional[int] = None
    count_max: Optional[int] = None
    kind: Optional[str] = None  # request_*: only requests of this kind
    min_step: Optional[int] = None
    max_step: Optional[int] = None
    note: Optional[str] = None

    CHECK_KEYS = ("hook", "request_contains", "request_not_contains", "request_count",
                  "transcript_contains", "transcript_line")

    def check_key(self) -> str:
        return next(k for k in self.CHECK_KEYS if getattr(self, k) is not None)

    def validate(self, where: str) -> None:
        keys = [k for k in self.CHECK_KEYS if getattr(self, k) is not None]
        if len(keys) != 1:
            raise ScenarioError(f"{where}: needs exactly one of {list(self.CHECK_KEYS)}, has {keys}")
        if self.hook is not None and self.hook not in HOOK_EVENTS:
            raise ScenarioError(f"{_prefix(where)}hook: {self.hook!r} is not a hook event ({HOOK_EVENTS})")
        for k in ("kind",):
            if getattr(self, k) is not None and getattr(self, k) not in REQUEST_KINDS:
                raise ScenarioError(f"{_prefix(where)}{k}: {getattr(self, k)!r} is not one of {list(REQUEST_KINDS)}")
        if self.request_count is not None and self.request_count.kind not in (None,) + REQUEST_KINDS:
            raise ScenarioError(f"{_prefix(where)}request_count.kind: {self.request_count.kind!r} is not one of {list(REQUEST_KINDS)}")
        hook_only = ("where", "exit_code", "killed")
        if self.hook is None:
            bad = [k for k in hook_only if getattr(self, k) is not None]
            if bad:
                raise ScenarioError(f"{where}: {bad} only apply to 'hook' checks")


@dataclass
class MemctlE2E:
    """Options of memctl's runner (scripts/e2e.sh, tests/e2e/check.py)."""

    hook_wrapper: Optional[str] = None  # repo-relative command put in front of memctl-hook


@dataclass
class Scenario:
    name: str
    steps: list[Step]
    description: Optional[str] = None
    session_id: Optional[str] = None  # default: a fresh uuid
    files: dict[str, str] = field(default_factory=dict)  # created in the work folder
    args: Optional[list[str]] = None  # CLI args of every step (default: DEFAULT_ARGS)
    env: dict[str, str] = field(default_factory=dict)  # extra env of the CLI (and its hooks)
    hook_events: Optional[list[str]] = None  # default: HOOK_EVENTS
    hook_timeout_s: Optional[Number] = None  # "timeout" of every hook entry
    compact_summary: Optional[str] = None  # the fake model's compaction reply
    compact_re: Optional[str] = None  # how a compaction request is recognised
    default_text: Optional[str] = None  # reply when a step's responses ran out
    side_rules: list[SideRule] = field(default_factory=list)
    max_seconds: Optional[Number] = None  # the fake server's lifetime cap
    expect: list[Expect] = field(default_factory=list)
    # memctl's own checks (tests/e2e/check.py validates and evaluates them) and runner options
    memctl_checks: list[dict[str, JSON]] = field(default_factory=list)
    memctl_e2e: Optional[MemctlE2E] = None

    DEFAULT_ARGS = ["--allowedTools", "Bash Read Write Edit Glob Grep"]

    def validate(self, where: str) -> None:
        if not self.steps:
            raise ScenarioError(f"{_prefix(where)}steps: a scenario needs at least one step")
        for i, ev in enumerate(self.hook_events or []):
            if ev not in HOOK_EVENTS:
                raise ScenarioError(f"{_prefix(where)}hook_events[{i}]: {ev!r} is not a hook event ({HOOK_EVENTS})")
        for i, st in enumerate(self.steps):
            for j, ev in enumerate(st.hook_events or []):
                if ev not in HOOK_EVENTS:
                    raise ScenarioError(f"{_prefix(where)}steps[{i}].hook_events[{j}]: {ev!r} is not a hook event")
        if self.steps[0].session not in (None, "new"):
            # resume/continue need an existing session: only fine if a session_id is named
            if self.steps[0].session_id is None and self.steps[0].session != "continue":
                raise ScenarioError(f"{_prefix(where)}steps[0].session: the first step has no session to {self.steps[0].session}")

    def step_name(self, i: int) -> str:
        return self.steps[i].name or f"step{i}"


# ---------------------------------------------------------------------------- the parser


def _type_name(tp: Any) -> str:
    if tp is type(None):
        return "null"
    origin = typing.get_origin(tp)
    if origin is Union:
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is list:
        return f"list of {_type_name(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"object of {_type_name(typing.get_args(tp)[1])}"
    if dataclasses.is_dataclass(tp):
        return f"object ({tp.__name__})"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, getattr(tp, "__name__", str(tp)))


def _json_name(v: Any) -> str:
    return {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string",
            list: "list", dict: "object"}.get(type(v), type(v).__name__)


def _join(where: str, key: str) -> str:
    return f"{_prefix(where)}{key}" if where else key


def _parse(value: Any, tp: Any, where: str) -> Any:
    """Convert parsed JSON into `tp` (dataclasses, lists, dicts, scalars), or raise ScenarioError."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is Union:
        alts = typing.get_args(tp)
        if value is None and type(None) in alts:
            return None
        errors = []
        for alt in alts:
            if alt is type(None):
                continue
            try:
                return _parse(value, alt, where)
            except ScenarioError as e:
                errors.append(str(e))
        # a single non-null alternative: its own (more precise) message
        if len([a for a in alts if a is not type(None)]) == 1:
            raise ScenarioError(errors[0])
        raise ScenarioError(f"{where}: expected {_type_name(tp)}, got {_json_name(value)} {json.dumps(value)[:60]}")
    if origin is list:
        if not isinstance(value, list):
            raise ScenarioError(f"{where}: expected a list, got {_json_name(value)}")
        return [_parse(v, typing.get_args(tp)[0], f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ScenarioError(f"{where}: expected an object, got {_json_name(value)}")
        return {k: _parse(v, typing.get_args(tp)[1], _join(where, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return _parse_object(value, tp, where)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, tp):
        return value
    raise ScenarioError(f"{where}: expected {_type_name(tp)}, got {_json_name(value)} {json.dumps(value)[:60]}")


def _parse_object(value: Any, cls: type, where: str) -> Any:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected an object ({cls.__name__}), got {_json_name(value)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for k in value:
        if k not in fields:
            raise ScenarioError(f"{_join(where, k)}: unknown key; {cls.__name__} knows {sorted(fields)}")
    kwargs = {}
    for name, f in fields.items():
        if name in value:
            kwargs[name] = _parse(value[name], hints[name], _join(where, name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ScenarioError(f"{_join(where, name)}: required key is missing")
    obj = cls(**kwargs)
    if hasattr(obj, "validate"):
        obj.validate(where)
    return obj


def substitute(obj: Any, mapping: dict[str, str]) -> Any:
    """Replace {{NAME}} in every string of a JSON value."""
    if isinstance(obj, str):
        for k, v in mapping.items():
            obj = obj.replace("{{" + k + "}}", v)
        return obj
    if isinstance(obj, list):
        return [substitute(x, mapping) for x in obj]
    if isinstance(obj, dict):
        return {k: substitute(v, mapping) for k, v in obj.items()}
    return obj


def parse(doc: Any, source: str) -> Scenario:
    """Parse a scenario document; errors read "<source>: <field path>: <problem>"."""
    try:
        return _parse_object(doc, Scenario, "")
    except ScenarioError as e:
        msg = str(e)
        raise ScenarioError(f"{source}: {msg[2:] if msg.startswith(': ') else msg}") from None


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not valid JSON: {e}") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None


def load(path: str, mapping: Optional[dict[str, str]] = None) -> Scenario:
    doc = read_json(path)
    if mapping:
        doc = substitute(doc, mapping)
    return parse(doc, path)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: scenario.py FILE...", file=sys.stderr)
        return 2
    bad = 0
    for p in argv:
        try:
            load(p)
        except ScenarioError as e:
            print(f"invalid scenario: {e}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
