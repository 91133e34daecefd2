"""What every backend returns for a case: the observed state in the contract's dump shape (the core
layer: backends, the store and comparison share it)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from .case import Case

# Result statuses. Only "ok" carries a state to compare.
OK = "ok"
DEVICE_ERROR = "device-error"          # the device or simulator failed, timed out or exited
REFUSED = "refused"                    # the backend cannot run this case (unsupported instruction, ...)
GOLDEN_ERRORS = ("undefined-behaviour", "not-modelled", "hang")  # golden's typed errors
TAINTED = "tainted"                    # run after a hang on the core before a health check passed (why in message)
MISSING = "missing"                    # replay: no recording for this case
STALE = "stale"                        # replay: the recording belongs to another version of the case


@dataclass(eq=False)
class Result:
    """What a backend returns for a case: status, observed state (the dump's shape), message, provenance."""
    status: str
    state: dict | None = None          # contract dump shape; keys a backend cannot observe are absent
    message: str = ""
    provenance: dict = field(default_factory=dict)   # device kind, versions, date, observable regions
    unobservable: list[str] = field(default_factory=list)  # what this backend says it could not see
    # In process, Dest is a uint16 (rows, 16) array and dest_valid a bool array; dump_form lists them.

    @property
    def ok(self) -> bool:
        return self.status == OK

    def __eq__(self, other: object) -> bool:
        return same_fields(self, other)


class Backend(Protocol):
    name: str

    def run(self, case: Case) -> Result: ...


def plain(v: Any) -> Any:
    """One region's value as the contract dump holds it: an array as its lists, anything else as it is."""
    return v.tolist() if isinstance(v, np.ndarray) else v


def dump_form(state: dict) -> dict:
    """``state`` in the contract dump's plain shape: Dest and its valid bits as lists (for JSON, files, text)."""
    return {k: plain(v) for k, v in state.items()}


def same_fields(a: Any, b: Any) -> Any:
    """A dataclass's equality with same_value for each compared field (a state's arrays compared in bulk)."""
    if type(a) is not type(b):
        return NotImplemented
    return all(same_value(getattr(a, f.name), getattr(b, f.name)) for f in fields(a) if f.compare)


def same_value(a: Any, b: Any) -> bool:
    """Equal as the dump would show them: arrays compared in bulk, an array against lists as those lists."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return plain(a) == plain(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b
