"""Typed scenario files: every key and type is checked before anything runs.

A scenario with a typo (`"prompst": [...]`) used to run with the key silently ignored and pass
or fail for the wrong reason. `load(path)` returns the parsed dict after checking it against
the dataclasses below, or raises `ScenarioError` naming the file and the field.

    python3 scenario.py FILE...     # check scenario files, exit 1 on the first bad one
"""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Optional, Union

JSON = Any  # a free-form JSON value (responses, checks, settings)


class ScenarioError(ValueError):
    pass


@dataclass
class Step:
    """One CLI process."""

    name: Optional[str] = None
    session: Optional[str] = None  # new | resume | continue | fork
    session_id: Optional[str] = None
    prompt: Optional[str] = None
    prompts: Optional[list[str]] = None  # several prompts in ONE process (stream-json input)
    interactive: Optional[bool] = None
    exit: Optional[bool] = None
    responses: Optional[list[JSON]] = None
    compact_summary: Optional[str] = None
    hook_behavior: Optional[dict[str, str]] = None
    hook_events: Optional[list[str]] = None
    hook_timeout_s: Optional[Union[int, float]] = None
    settings_extra: Optional[dict[str, JSON]] = None
    env: Optional[dict[str, str]] = None
    args: Optional[list[str]] = None
    timeout_s: Optional[Union[int, float]] = None
    wait_idle_s: Optional[Union[int, float]] = None
    sleep_after_s: Optional[Union[int, float]] = None
    no_include_hook_events: Optional[bool] = None
    expect_failure: Optional[bool] = None


@dataclass
class Scenario:
    """A scenario file (see ../README.md)."""

    name: str
    steps: list[Step]
    description: Optional[str] = None
    session_id: Optional[str] = None
    files: Optional[dict[str, str]] = None
    git_init: Optional[bool] = None
    args: Optional[list[str]] = None
    env: Optional[dict[str, str]] = None
    hook_events: Optional[list[str]] = None
    hook_timeout_s: Optional[Union[int, float]] = None
    hook_behavior: Optional[dict[str, str]] = None
    settings_extra: Optional[dict[str, JSON]] = None
    compact_summary: Optional[str] = None
    compact_re: Optional[str] = None
    default_text: Optional[str] = None
    side_rules: Optional[list[JSON]] = None
    max_seconds: Optional[Union[int, float]] = None
    expect: list[JSON] = field(default_factory=list)
    # memctl's own checks (tests/e2e/check.py) and options of our e2e runner.
    memctl_checks: list[JSON] = field(default_factory=list)
    memctl_e2e: Optional[dict[str, JSON]] = None


SESSION_MODES = {"new", "resume", "continue", "fork"}


def _check(value: Any, tp: Any, where: str) -> None:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return
    if origin is Union:
        errors = []
        for alt in args:
            try:
                _check(value, alt, where)
                return
            except ScenarioError as e:
                errors.append(str(e))
        names = " or ".join(getattr(a, "__name__", str(a)) for a in args)
        raise ScenarioError(f"{where}: expected {names}, got {type(value).__name__} {value!r:.60}")
    if tp is type(None):
        if value is not None:
            raise ScenarioError(f"{where}: expected null")
        return
    if origin is list:
        if not isinstance(value, list):
            raise ScenarioError(f"{where}: expected a list, got {type(value).__name__}")
        for i, v in enumerate(value):
            _check(v, args[0], f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise ScenarioError(f"{where}: expected an object, got {type(value).__name__}")
        for k, v in value.items():
            _check(v, args[1], f"{where}.{k}")
        return
    if dataclasses.is_dataclass(tp):
        _check_object(value, tp, where)
        return
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return
    if tp is int and isinstance(value, bool):
        raise ScenarioError(f"{where}: expected int, got bool")
    if not isinstance(value, tp):
        raise ScenarioError(f"{where}: expected {tp.__name__}, got {type(value).__name__} {value!r:.60}")


def _check_object(value: Any, cls: type, where: str) -> None:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected an object, got {type(value).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {unknown}; known: {sorted(known)}")
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if f.name not in value:
            if required:
                raise ScenarioError(f"{where}: missing required key {f.name!r}")
            continue
        _check(value[f.name], hints[f.name], f"{where}.{f.name}")


def validate(doc: Any, source: str) -> dict:
    """Check a parsed scenario; returns it unchanged."""
    _check_object(doc, Scenario, source)
    if not doc["steps"]:
        raise ScenarioError(f"{source}.steps: a scenario needs at least one step")
    for i, st in enumerate(doc["steps"]):
        where = f"{source}.steps[{i}]"
        if st.get("session") is not None and st["session"] not in SESSION_MODES:
            raise ScenarioError(f"{where}.session: {st['session']!r} is not one of {sorted(SESSION_MODES)}")
        if st.get("prompt") is not None and st.get("prompts") is not None:
            raise ScenarioError(f"{where}: give either 'prompt' or 'prompts', not both")
    return doc


def load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not valid JSON: {e}") from None
    return validate(doc, path)


def main(argv: list[str]) -> int:
    for p in argv:
        try:
            load(p)
        except (ScenarioError, OSError) as e:
            print(f"scenario: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
