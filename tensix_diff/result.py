"""What every backend returns for a case: the observed state in the contract's dump shape (the core
layer: backends, the store and comparison share it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .case import Case

# Result statuses. Only "ok" carries a state to compare.
OK = "ok"
DEVICE_ERROR = "device-error"          # the device or simulator failed, timed out or exited
REFUSED = "refused"                    # the backend cannot run this case (unsupported instruction, ...)
GOLDEN_ERRORS = ("undefined-behaviour", "not-modelled", "hang")  # golden's typed errors
TAINTED = "tainted"                    # run after a hang on the core before a health check passed (why in message)
MISSING = "missing"                    # replay: no recording for this case
STALE = "stale"                        # replay: the recording belongs to another version of the case


@dataclass
class Result:
    status: str
    state: dict | None = None          # contract dump shape; keys a backend cannot observe are absent
    message: str = ""
    provenance: dict = field(default_factory=dict)   # device kind, versions, date, observable regions
    unobservable: list[str] = field(default_factory=list)  # what this backend says it could not see

    @property
    def ok(self) -> bool:
        return self.status == OK


class Backend(Protocol):
    name: str

    def run(self, case: Case) -> Result: ...
