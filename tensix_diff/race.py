"""Schedule independence: a case whose observed state depends on how its threads interleave is racy.

Golden runs a multi-thread case once, round-robin with quantum 1 (golden.schedule), recording what each
thread's steps read and write and what orders them (tensix_diff.happens_before). Conflicting accesses of two
threads that nothing orders are race candidates. A candidate is confirmed by running the schedule that
reverses it (the earlier thread held back until the other has run its access): when that outcome differs
from the recorded one the case is racy, and the report names both schedules; candidates whose reversal
leaves the outcome unchanged (the same value written, state nobody observes) are benign. A case with no
candidate is schedule-independent: every interleaving orders its conflicting accesses the same way. A case
with one thread that runs anything needs no analysis. Verdicts treat a racy case as uncompared
(tensix_diff.assess).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from golden.core import Tensix
from golden.errors import GoldenError
from golden.schedule import ROUND_ROBIN, SEQUENTIAL

from .case import Case
from .compare import NothingCompared, compare
from .golden_run import apply_init, observe, observe_counters
from .happens_before import Candidate, Hold, Recorder

REVERSALS = 6          # candidate reversals run at most per case (as many runs as the sampled schedules had)


@dataclass
class RaceReport:
    case: str
    tried: list[str] = field(default_factory=list)
    racy: bool = False
    first: str = ""           # the recorded schedule everything is compared with
    second: str = ""          # a schedule whose outcome differs
    differences: list[str] = field(default_factory=list)
    candidates: int = 0       # conflicting pairs nothing orders
    unresolved: int = 0       # candidate reversals not run (over REVERSALS)

    def text(self) -> str:
        if not self.racy:
            extra = f", {self.unresolved} more reversal(s) not run" if self.unresolved else ""
            return (f"{self.case}: not racy ({self.candidates} unordered conflicting pair(s);"
                    f" {len(self.tried)} schedule(s) agree: {', '.join(self.tried)}{extra})")
        return (f"{self.case}: RACY: schedules '{self.first}' and '{self.second}' disagree:\n  "
                + "\n  ".join(self.differences))


def threads_in_use(case: Case) -> list[int]:
    return sorted({t for t, ws in case.threads.items() if ws} | {t for t, xs in case.actions.items() if xs})


def _run(case: Case, hold: Hold | None = None, recorder=None):
    """(status, the machine or golden's message) of ``case`` round-robin, under ``hold`` or recorded."""
    m = Tensix()
    apply_init(m.s, case)
    step = stuck = None
    if hold is not None:
        step, stuck = (lambda t, d, i: hold.step(m, t, d, i)), hold.stuck
    elif recorder is not None:
        recorder.attach(m)
        step = recorder.step
    try:
        m.run(case.threads, case.actions, ROUND_ROBIN, step, stuck)
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


def reversals(cands: list[Candidate]) -> list[Hold]:
    """One hold per (thread, step, other thread) that comes first in a candidate, reaching the other
    thread's last conflicting step; taken in turn from each (threads, part) group."""
    reach: dict[tuple, int] = {}
    groups: dict[tuple, list[tuple]] = {}
    for c in cands:
        key = (c.first, c.i, c.second)
        if key not in reach:
            groups.setdefault((c.first, c.second, c.part), []).append(key)
        reach[key] = max(reach.get(key, 0), c.j)
    out, queues = [], list(groups.values())
    while queues:
        for q in queues:
            out.append(q.pop(0))
        queues = [q for q in queues if q]
    return [Hold(a, i, b, reach[a, i, b]) for a, i, b in dict.fromkeys(out)]


def check(case: Case, limit: int = REVERSALS) -> RaceReport:
    """Record one run, then run the reversal of its race candidates until one changes the outcome."""
    used = threads_in_use(case)
    if len(used) < 2:
        return RaceReport(case.name, [SEQUENTIAL.name], first=SEQUENTIAL.name)
    report = RaceReport(case.name, [ROUND_ROBIN.name], first=ROUND_ROBIN.name)
    rec = Recorder()
    base = _run(case, recorder=rec)
    cands = rec.candidates()
    report.candidates = len(cands)
    if not cands:
        return report
    base_fp = _fingerprint(base, case)
    holds = reversals(cands)
    report.unresolved = max(len(holds) - limit, 0)
    for h in holds[:limit]:
        got = _run(case, hold=h)
        name = (f"{ROUND_ROBIN.name}, thread {h.first} held before its step {h.i} until thread {h.second}"
                f" has run {h.j}" + ("" if h.reversed() else " (released: nothing else could move)"))
        report.tried.append(name)
        if _fingerprint(got, case) != base_fp:
            report.racy, report.second, report.unresolved = True, name, 0
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
