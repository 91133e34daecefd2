"""A case's verdict: its outcome and the one line said about it (docs/verdicts.md); tensix_diff.compare makes
the verdicts of a comparison, and a command that only runs cases makes its own without importing it."""
from __future__ import annotations

from dataclasses import dataclass

from .result import OK

MATCHED, DIVERGED, UNCOMPARED, DEVICE_FAILED = "matched", "diverged", "uncompared", "device-failed"
KNOWN = "known"   # diverged, and every difference is explained by the known-divergence registry


@dataclass
class Verdict:
    """A case's outcome and the line said about it; ``comparison`` where two states were compared."""
    outcome: str                        # matched | diverged | known | missing | stale | uncompared | device-failed
    message: str
    comparison: Comparison | None = None    # tensix_diff.compare.Comparison: what was compared, when anything was
    statuses: tuple[str, str] = (OK, OK)
    why: str = ""                       # uncompared: the short reason the run's summary counts by
    known: tuple[str, ...] = ()         # ids of the registry entries that explained differences
    effects: int | None = None          # instructions whose effect reached compared state (when counted)

    @property
    def matched(self) -> bool:
        return self.outcome == MATCHED

    def signature(self) -> tuple:
        """What differs: state regions/fields, or the pair of statuses when they disagree."""
        if self.comparison is not None:
            return self.comparison.signature()
        return (("status",) + self.statuses,)

    def report(self, limit: int = 20, unobserved: bool = True) -> str:
        if self.comparison is not None and self.outcome in (MATCHED, DIVERGED, KNOWN):
            return self.comparison.report(limit, unobserved)
        return self.message
