"""Schedule independence: a case whose observed state depends on how its threads interleave is racy.

Golden runs a multi-thread case under several schedules (golden.schedule: sequential, round-robin with
quantum 1 in every thread order, seeded random orders and quanta). If any two observed outcomes differ the
case is racy: on a card it could show either, so comparing it would chase ghosts. A case with one thread
that runs anything needs one schedule. Verdicts treat a racy case as uncompared (tensix_diff.assess).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from golden.core import Tensix
from golden.errors import GoldenError
from golden.schedule import SEQUENTIAL, Schedule, run_schedule, schedules

from .case import Case
from .compare import NothingCompared, compare
from .golden_run import apply_init, observe, observe_counters

RANDOM_SCHEDULES = 4


@dataclass
class RaceReport:
    case: str
    tried: list[str] = field(default_factory=list)
    racy: bool = False
    first: str = ""           # the schedule everything is compared with (sequential)
    second: str = ""          # a schedule whose outcome differs
    differences: list[str] = field(default_factory=list)

    def text(self) -> str:
        if not self.racy:
            return f"{self.case}: not racy ({len(self.tried)} schedule(s) agree: {', '.join(self.tried)})"
        return (f"{self.case}: RACY: schedules '{self.first}' and '{self.second}' disagree:\n  "
                + "\n  ".join(self.differences))


def threads_in_use(case: Case) -> list[int]:
    return sorted({t for t, ws in case.threads.items() if ws} | {t for t, xs in case.actions.items() if xs})


def _run(case: Case, schedule: Schedule):
    """(status, the machine or golden's message) of ``case`` under ``schedule``."""
    m = Tensix()
    apply_init(m.s, case)
    try:
        run_schedule(m, case.threads, schedule, case.actions)
    except GoldenError as e:
        return e.kind, str(e)
    return "ok", m


def _fingerprint(result, case: Case):
    """What two outcomes are compared by, cheaply: raw Dest bytes and the rest of the observed state."""
    status, m = result
    if status != "ok":
        return status, m
    rest = observe_counters(m.s, case)
    return status, m.s.dest.bits.tobytes(), m.s.dest.valid.tobytes(), repr(rest)


def outcome(case: Case, schedule: Schedule) -> tuple[str, dict | str]:
    """(status, observed state or golden's message) of ``case`` under ``schedule``."""
    status, m = _run(case, schedule)
    return (status, observe(m.s, case)) if status == "ok" else (status, m)


def check(case: Case, randoms: int = RANDOM_SCHEDULES, seed: int = 0) -> RaceReport:
    """Try the case's schedules against the sequential one; stop at the first that disagrees."""
    report = RaceReport(case.name, first=SEQUENTIAL.name)
    used = threads_in_use(case)
    if len(used) < 2:
        report.tried = [SEQUENTIAL.name]
        return report
    base = _run(case, SEQUENTIAL)
    base_fp = _fingerprint(base, case)
    report.tried.append(SEQUENTIAL.name)
    for s in schedules(used, randoms, seed)[1:]:
        got = _run(case, s)
        report.tried.append(s.name)
        if _fingerprint(got, case) != base_fp:
            report.racy, report.second = True, s.name
            report.differences = _differences(_full(base, case), _full(got, case))
            return report
    return report


def _full(result, case: Case) -> tuple:
    status, m = result
    return (status, observe(m.s, case)) if status == "ok" else result


def _differences(a: tuple, b: tuple) -> list[str]:
    if a[0] != b[0]:
        return [f"status: {a[0]} vs {b[0]} ({(a[1] if a[0] != 'ok' else b[1])!s:.160})"]
    if a[0] != "ok":
        return [f"both {a[0]}: {a[1]!s:.80} vs {b[1]!s:.80}"]
    try:
        c = compare(a[1], b[1])
    except NothingCompared:
        return []
    return [d.line() for d in c.diffs[:8]] + ([f"... and {len(c.diffs) - 8} more"] if len(c.diffs) > 8 else [])


def is_racy(case: Case) -> bool:
    return check(case).racy
