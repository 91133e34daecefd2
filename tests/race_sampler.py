"""The race check the happens-before analysis replaced, kept to compare with it: golden runs a multi-thread
case under seven sampled schedules (golden.schedule.schedules: sequential, round-robin in every thread
order, four seeded random) and calls it racy when two observed outcomes differ."""
from __future__ import annotations

from golden.core import Tensix
from golden.errors import GoldenError
from golden.schedule import SEQUENTIAL, run_schedule, schedules
from tensix_diff.case import Case
from tensix_diff.golden_run import apply_init, observe_counters
from tensix_diff.race import threads_in_use


def _outcome(case: Case, schedule):
    m = Tensix()
    apply_init(m.s, case)
    try:
        run_schedule(m, case.threads, schedule, case.actions)
    except GoldenError as e:
        return e.kind, str(e)
    return "ok", m.s.dest.bits.tobytes(), m.s.dest.valid.tobytes(), repr(observe_counters(m.s, case))


def sampled_racy(case: Case, randoms: int = 4, seed: int = 0) -> str | None:
    """The first sampled schedule whose outcome differs from the sequential one (None: all agree)."""
    used = threads_in_use(case)
    if len(used) < 2:
        return None
    base = _outcome(case, SEQUENTIAL)
    for s in schedules(used, randoms, seed)[1:]:
        if _outcome(case, s) != base:
            return s.name
    return None
