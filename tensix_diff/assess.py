"""The one verdict every command and test gives a case: compare.judge, then what the verdict may claim.

- A divergence is ``known`` only when the registry (tensix_diff.known) explains every difference; the
  differences it does not explain stay a divergence and are reported alone. An entry with a condition
  applies where golden's own run of the case meets it (tensix_diff.known_conditions).
- Golden refusing (not-modelled, undefined) a case the device ran is a divergence of statuses unless
  configs/expected_refusals.yaml expects it (then uncompared, with that entry's reason).
- A match in which no instruction's effect reached the compared state observed nothing the case did:
  uncompared, "nothing the case does is observable" (tensix_diff.effects).
- A case whose golden outcome depends on the thread interleaving (tensix_diff.race) is uncompared, "racy":
  on a card it could show either outcome, so it is never a divergence and never a match. A case tagged
  ``schedule:sequential`` (a literal kernel whose correctness rests on the hardware's timing, said in its
  description) is judged against golden's sequential schedule instead, and its verdict says so.
- Uncompared verdicts carry a short ``why`` that run summaries count by.
"""
from __future__ import annotations

import os
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from .result import OK, REFUSED, Result

from .case import Case
from .compare import DIVERGED, KNOWN, MATCHED, UNCOMPARED, Comparison, NothingCompared, Verdict, judge
from .effects import any_observed
from .race import check as race_check, threads_in_use
from .known import KnownEntry, explain_diffs, explain_statuses, known_file, load_known
from .known_conditions import GoldenFacts
from .refusals import REFUSAL_STATUSES, ExpectedRefusal, expected_refusal, load_refusals, refusals_file

NOTHING_OBSERVABLE = "nothing the case does is observable"
RACY = "racy"
PINNED = "schedule:sequential"     # a case tag: judged under golden's sequential schedule even if racy


@lru_cache(maxsize=8)
def _cached_known(path: str, mtime: float) -> tuple[KnownEntry, ...]:
    return tuple(load_known(path))


@lru_cache(maxsize=8)
def _cached_refusals(path: str, mtime: float) -> tuple[ExpectedRefusal, ...]:
    return tuple(load_refusals(path))


def _mtime(p: Path) -> float:
    try:
        return os.stat(p).st_mtime
    except OSError:
        return -1.0


def registry(path: str | Path | None = None) -> tuple[KnownEntry, ...]:
    """The known-divergence registry at ``path`` (default: tensix_diff.known.known_file()), read again only
    when the file changes."""
    p = Path(path) if path is not None else known_file()
    return _cached_known(str(p), _mtime(p))


def refusals() -> tuple[ExpectedRefusal, ...]:
    p = refusals_file()
    return _cached_refusals(str(p), _mtime(p))


def assess(case: Case, expected: Result, actual: Result, names: tuple[str, str] = ("golden", "device"),
           backend: str | None = None, *, known=None, expected_refusals=None, effects: bool = True,
           race_of=race_check) -> Verdict:
    """Judge ``actual`` against ``expected`` (one of them is usually golden, named so in ``names``);
    ``race_of``: tensix_diff.race.check, or a cache of it (tensix_diff.result_cache.RaceCache.check)."""
    known = registry() if known is None else known
    expected_refusals = refusals() if expected_refusals is None else expected_refusals
    pinned = ""
    if len(threads_in_use(case)) > 1:
        race = race_of(case)
        if race.racy and PINNED not in case.tags:
            return Verdict(UNCOMPARED, race.text().replace("\n", ";"), None, (expected.status, actual.status),
                           why=RACY)
        if race.racy:
            pinned = (f" [schedule pinned to sequential by the case; under '{race.second}' golden gives "
                      f"{race.differences[0] if race.differences else 'another outcome'}]")
    v = _judged(case, expected, actual, names, backend, known, expected_refusals, effects)
    return replace(v, message=v.message + pinned) if pinned else v


def _judged(case: Case, expected: Result, actual: Result, names: tuple[str, str], backend: str | None, known,
            expected_refusals, effects: bool) -> Verdict:
    try:
        v = judge(expected, actual, names)
    except NothingCompared as e:
        return Verdict(UNCOMPARED, str(e), None, (expected.status, actual.status), why="no region in common")
    g = names.index("golden") if "golden" in names else None
    if v.outcome == DIVERGED:
        return _explain(case, v, backend, known, g, (expected, actual))
    if v.outcome == UNCOMPARED and g is not None:
        return _refusal(case, v, (expected, actual)[g], (expected, actual)[1 - g], names[1 - g], expected_refusals)
    if v.outcome == MATCHED and v.comparison is not None and effects and not _observed(case, expected, actual, g):
        return replace(v, outcome=UNCOMPARED, why=NOTHING_OBSERVABLE,
                       message=f"{NOTHING_OBSERVABLE} ({v.comparison.compared} items compared,"
                               f" {case.instruction_count} instruction(s), none with an observed effect)")
    return v


def _observed(case: Case, expected: Result, actual: Result, g: int | None) -> bool:
    """Whether an instruction's effect reached what the non-golden side observed (its state is the mask)."""
    if g is None:
        return any_observed(case, actual.state)
    return any_observed(case, (expected, actual)[1 - g].state, (expected, actual)[g].state)


def _explain(case: Case, v: Verdict, backend: str | None, known, g: int | None, results) -> Verdict:
    facts = GoldenFacts(case) if g is not None else None    # golden's run, made only if an entry asks
    if v.comparison is None:   # statuses differ (one side hangs)
        if g is None:
            return v
        entry = explain_statuses(v.statuses[g], v.statuses[1 - g], case.name, backend, known, case.tags, facts)
        if entry is None:
            return v
        return replace(v, outcome=KNOWN, known=(entry.id,), message=f"known divergence {entry.id}: {entry.reason}")
    dests = None
    if g is not None:                  # (golden's Dest, the device's Dest) for state-wide predicates
        dests = tuple(r.state.get("dest") if isinstance(r.state, dict) else None for r in (results[g], results[1 - g]))
    ex = explain_diffs(v.comparison.diffs, case.name, backend, known, case.tags,
                       dests if dests and all(d is not None for d in dests) else None, facts)
    if ex.complete:
        return replace(v, outcome=KNOWN, known=tuple(e.id for e in ex.entries), message=ex.text())
    if not ex.entries:
        return v
    rest = Comparison(v.comparison.compared, ex.unexplained, v.comparison.regions, v.comparison.unobserved)
    return replace(v, comparison=rest, known=tuple(e.id for e in ex.entries),
                   message=f"{rest.summary()}; {ex.explained} more explained by {', '.join(e.id for e in ex.entries)}")


def _refusal(case: Case, v: Verdict, golden: Result, device: Result, device_name: str, entries) -> Verdict:
    if golden.status in REFUSAL_STATUSES and device.status == OK:
        entry = expected_refusal(case.name, golden.status, golden.message, entries)
        if entry is not None:
            return replace(v, why=f"expected golden refusal {entry.id}",
                           message=f"golden {golden.status} (expected: {entry.id}: {entry.reason}): {golden.message}")
        return replace(v, outcome=DIVERGED, why="",
                       message=f"DIVERGED: golden {golden.status} on a case {device_name} ran: {golden.message}"
                               " (list it in configs/expected_refusals.yaml if that is intended)")
    if device.status == REFUSED:
        return replace(v, why=f"{device_name} refused")
    return v
