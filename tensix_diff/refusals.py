"""Expected golden refusals (configs/expected_refusals.yaml): cases the device ran that golden may refuse.

When golden answers not-modelled or undefined-behaviour for a case the device ran, that is a failure (a gap
in the model a regression could hide behind) unless an entry here expects it. Each entry: ``id``, ``reason``,
``status`` (not-modelled | undefined-behaviour) and ``message`` (a regular expression searched in golden's
message, which names the instruction and mode it refuses); optional ``cases`` (only these case names).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from golden import yaml_tables

REFUSALS_PATH = Path(__file__).resolve().parent.parent / "configs" / "expected_refusals.yaml"
REFUSALS_ENV = "TENSIX_DIFF_REFUSALS"
REFUSAL_STATUSES = ("not-modelled", "undefined-behaviour")


class RefusalsError(ValueError):
    """A malformed expected-refusals file: one line naming the file and entry."""


@dataclass(frozen=True)
class ExpectedRefusal:
    id: str
    reason: str
    status: str
    message: re.Pattern
    cases: tuple[str, ...] | None = None

    def matches(self, case_name: str, status: str, message: str) -> bool:
        return (status == self.status and self.message.search(message) is not None
                and (self.cases is None or case_name in self.cases))


def refusals_file() -> Path:
    return Path(os.environ.get(REFUSALS_ENV) or REFUSALS_PATH)


def load_refusals(path: str | Path | None = None) -> list[ExpectedRefusal]:
    p = Path(path) if path is not None else refusals_file()
    if not p.exists():
        return []
    try:
        raw = yaml_tables.parse(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise RefusalsError(f"{p}: not YAML: {str(e).splitlines()[0]}") from None
    raw = raw.get("expected", []) if isinstance(raw, dict) else raw
    if not isinstance(raw, list):
        raise RefusalsError(f"{p}: expected a list of entries under 'expected:'")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or not {"id", "reason", "status", "message"} <= set(e):
            raise RefusalsError(f"{p}: entry {i} needs 'id', 'reason', 'status' and 'message'")
        if e["status"] not in REFUSAL_STATUSES:
            raise RefusalsError(f"{p}: entry {i} ({e['id']}): status must be one of {', '.join(REFUSAL_STATUSES)}")
        try:
            pattern = re.compile(str(e["message"]))
        except re.error as err:
            raise RefusalsError(f"{p}: entry {i} ({e['id']}): message is not a regular expression: {err}") from None
        cases = e.get("cases")
        out.append(ExpectedRefusal(str(e["id"]), str(e["reason"]), e["status"], pattern,
                                   tuple(map(str, cases)) if cases is not None else None))
    return out


def expected_refusal(case_name: str, status: str, message: str,
                     entries: list[ExpectedRefusal]) -> ExpectedRefusal | None:
    return next((e for e in entries if e.matches(case_name, status, message)), None)
