"""The replay backend: answers a case from the replay store (what a device returned when it was recorded)."""
from __future__ import annotations

from pathlib import Path

from tensix_diff.case import Case
from tensix_diff.store import Store, StoreError

from tensix_diff.result import MISSING, OK, STALE, Result
from .hw.observation import check_recorded


class ReplayBackend:
    """``run(case)`` gives the recorded Result (of ``device``, by default silicon if recorded, else the newest
    ttsim; its provenance names the device); ``missing`` when nothing was recorded for this case, ``stale``
    when the case's name was recorded from a different version of the case. A corrupt recording raises
    ``StoreError`` naming the file; so does an ``ok`` recording that lacks anything its platform observes
    for the case (hwbridge.hw.observation), which would otherwise "match" on what is left."""

    name = "replay"

    def __init__(self, root: str | Path | None = None, store: Store | None = None, device: str | None = None):
        self.store = store if store is not None else Store(root)
        self.device = device      # a device ("ttsim 1.10.0") or kind ("ttsim"); default: silicon, else newest ttsim

    def run(self, case: Case) -> Result:
        look = self.store.lookup(case, self.device)
        if look.recording is not None:
            rec = look.recording
            if rec.status == OK:
                problems = check_recorded(case, rec.state, rec.provenance)
                if problems:
                    raise StoreError(f"{look.where}: corrupt recording of case '{case.name}': {problems[0]}")
            return rec.result(look.where)
        where = f"in {self.store.root}" + (f" for device '{self.device}'" if self.device else "")
        if look.status == STALE:
            return Result(STALE, message=(
                f"case '{case.name}' changed since it was recorded (recorded {look.recorded_hash[:12]}, now"
                f" {look.case_hash[:12]}) {where}; the old recording is not used: re-record it"),
                provenance={"device": "replay"})
        return Result(MISSING, message=f"no recording for case '{case.name}' (hash {look.case_hash[:12]}) {where}",
                      provenance={"device": "replay"})
