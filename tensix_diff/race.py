"""Schedule independence: a case whose observed state depends on how its threads interleave is racy.

Golden runs a multi-thread case once, round-robin with quantum 1 (golden.schedule), recording what each
thread's steps read and write and what orders them (tensix_diff.happens_before). Conflicting accesses of two
threads that nothing orders are race candidates; a case with none is schedule-independent (every
interleaving orders its conflicting accesses alike, so every schedule ends in the same state), which no
sample of schedules can show. A candidate is confirmed only by a run: the schedule that reverses it (the
earlier thread held back until the other has run its access; first every candidate of a pair of threads at
once, each at its own step, as a race may need two reversals), and, when no reversal changes the outcome,
the schedules the former sampled check tried (sequential, round-robin in every thread order, four seeded
random). The case is racy when one of them ends in another outcome than the recorded run, and the report
names both; candidates whose runs all agree (the same value written, state nobody observes) are benign.
A run cut short (hang, undefined behaviour) is checked the same way. A case with one thread that runs
anything needs no analysis. Verdicts treat a racy case as uncompared (tensix_diff.assess).
"""
from __future__ import annotations

import gc

from dataclasses import dataclass, field

from golden.core import Tensix
from golden.errors import Blocked, GoldenError
from golden.schedule import ROUND_ROBIN, SEQUENTIAL, Schedule, schedules

from .case import Case
from .compare import NothingCompared, compare
from .golden_run import apply_init, last_sequential, observe, observe_counters
from .happens_before import Candidate, Recorder

REVERSALS = 3          # candidate reversals run at most per case, before the sampled schedules


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


@dataclass
class Hold:
    """A schedule's constraint: thread ``first`` does not run its step i until thread ``second`` has run j steps,
    for each i -> j of ``at`` (one candidate, or every candidate of that pair of threads at once, each at its
    own step); a pair is lifted when nothing else can move (it cannot be reversed there)."""
    first: int
    second: int
    at: dict[int, int]
    count: list = field(default_factory=lambda: [0] * 4)
    lifted: set = field(default_factory=set)

    def step(self, m, t: int, d, index: int) -> None:
        if t == self.first:
            i = self.count[t] + 1
            j = self.at.get(i)
            if j is not None and self.count[self.second] < j and i not in self.lifted:
                raise Blocked(f"held until thread {self.second} has run {j} steps")
        m.step(t, d, index)
        self.count[t] += 1

    def stuck(self) -> bool:
        """Lift the pair that holds ``first`` now, if one does (else the case hangs on its own)."""
        i = self.count[self.first] + 1
        if i not in self.at or i in self.lifted or self.count[self.second] >= self.at[i]:
            return False
        self.lifted.add(i)
        return True

    def name(self) -> str:
        """The schedule's name in a report; after the run, with the pairs lifted."""
        if len(self.at) == 1:
            (i, j), = self.at.items()
            text = f"thread {self.first} held before its step {i} until thread {self.second} has run {j}"
        else:
            text = (f"thread {self.first} held before each of its steps {_span(self.at)} until thread"
                    f" {self.second} has run {_span(self.at.values())}")
        if self.lifted:
            some = "" if len(self.lifted) == len(self.at) else f"{len(self.lifted)} of {len(self.at)} "
            text += f" ({some}released: nothing else could move)"
        return f"{ROUND_ROBIN.name}, {text}"


def _span(steps) -> str:
    """Steps in held order, shortened: "3 and 9", "3..40 (7)"."""
    steps = list(steps)
    return f"{steps[0]}..{steps[-1]} ({len(steps)})" if len(steps) > 2 else " and ".join(map(str, steps))


def threads_in_use(case: Case) -> list[int]:
    return sorted({t for t, ws in case.threads.items() if ws} | {t for t, xs in case.actions.items() if xs})


def _run(case: Case, hold: Hold | None = None, recorder=None, schedule: Schedule = ROUND_ROBIN):
    """(status, the machine or golden's message) of ``case`` under ``schedule``, with ``hold`` or recorded."""
    m = Tensix()
    apply_init(m.s, case)
    step = stuck = None
    if hold is not None:
        step, stuck = (lambda t, d, i: hold.step(m, t, d, i)), hold.stuck
    elif recorder is not None:
        recorder.attach(m)
        step = recorder.step
    try:
        m.run(case.threads, case.actions, schedule, step, stuck)
    except GoldenError as e:
        return e.kind, str(e)
    return "ok", m


def _fingerprint(result, case: Case):
    """What two outcomes are compared by, cheaply: raw Dest bytes and the rest of the observed state. A hang is
    the hang alone, as a verdict judges it (tensix_diff.compare: both hang is a match wherever each thread
    waits)."""
    status, m = result
    if status == "hang":
        return (status,)
    if status != "ok":
        return status, m
    rest = observe_counters(m.s, case)
    return status, m.s.dest.bits.tobytes(), m.s.dest.valid.tobytes(), repr(rest)


def reversals(cands: list[Candidate]) -> list[Hold]:
    """The holds that reverse the candidates: first, per ordered pair of threads, all its candidates at once,
    each held at its own step (the other thread runs its conflicting step first, and the handshakes between
    them still run: a race that needs two reversals, such as the matrix unit flipping SrcB twice before the
    unpacker hands it the bank, is found there); then one per (thread, step, other thread), reaching the other
    thread's last conflicting step, taken in turn from each (threads, part) group."""
    reach: dict[tuple, int] = {}
    groups: dict[tuple, list[tuple]] = {}
    pairs: dict[tuple, dict[int, int]] = {}
    for c in cands:
        key = (c.first, c.i, c.second)
        if key not in reach:
            groups.setdefault((c.first, c.second, c.part), []).append(key)
        reach[key] = max(reach.get(key, 0), c.j)
        at = pairs.setdefault((c.first, c.second), {})
        at[c.i] = max(at.get(c.i, 0), c.j)
    out = [(a, b, tuple(sorted(at.items()))) for (a, b), at in pairs.items()]
    queues = list(groups.values())
    while queues:
        out += [(a, b, ((i, reach[a, i, b]),)) for a, i, b in (q.pop(0) for q in queues)]
        queues = [q for q in queues if q]
    return [Hold(a, b, dict(at)) for a, b, at in dict.fromkeys(out)]


def check(case: Case, limit: int = REVERSALS) -> RaceReport:
    """Record one run, then run the reversal of its race candidates until one changes the outcome."""
    used = threads_in_use(case)
    if len(used) < 2:
        return RaceReport(case.name, [SEQUENTIAL.name], first=SEQUENTIAL.name)
    collecting = gc.isenabled()     # (reference counting frees what a check makes as its runs end, but for a
    gc.disable()                    # probe's few dozen objects: the collector, woken by its allocations, would
    try:                            # walk the process's long-lived objects again and again; docs/speed.md)
        return _check(case, used, limit)
    finally:
        if collecting:
            gc.enable()


def _check(case: Case, used: list[int], limit: int) -> RaceReport:
    """``check`` of a case whose threads ``used`` are two or more."""
    report = RaceReport(case.name, [ROUND_ROBIN.name], first=ROUND_ROBIN.name)
    rec = Recorder()
    base = _run(case, recorder=rec)
    cands = rec.candidates()
    report.candidates = len(cands)
    if not cands and base[0] == "ok":
        return report
    holds = reversals(cands)
    report.unresolved = max(len(holds) - limit, 0)
    tries: list = holds[:limit]
    tries += [s for s in schedules(used) if (s.order, s.quantum) != (tuple(used), 1)]
    base_fp = _fingerprint(base, case)
    for how in tries:
        got = None if how is not SEQUENTIAL else last_sequential(case)      # golden's own run of it, if just made
        if got is None:
            got = _run(case, schedule=how) if isinstance(how, Schedule) else _run(case, hold=how)
        name = how.name if isinstance(how, Schedule) else how.name()
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
