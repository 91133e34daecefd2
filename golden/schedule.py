"""Thread interleavings: run a multi-thread case under a chosen schedule instead of core.Tensix.run's
fixed order (each thread runs until it finishes or blocks, thread 0 first).

On a card the three Tensix threads issue concurrently and their relative timing is not fixed, so a case is
only meaningful when its observed state does not depend on the interleaving. A schedule picks, at every
step, which runnable thread issues next and for how many instructions (its quantum). Blocking follows the
same rules as core.run: an instruction that raises errors.Blocked (SEMWAIT, STALLWAIT, ATGETM, valid-bit
handshakes) is retried after other threads move; when no thread can move the case hangs.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Sequence

from .core import Tensix, decode
from .errors import Blocked
from .errors import Hang
from .state import THREADS


@dataclass(frozen=True)
class Schedule:
    """``order``: the thread priority; ``quantum``: instructions a thread issues before the next one gets
    a turn (0: until it finishes or blocks, the sequential schedule); ``seed``: random order and quanta
    (1..8) at every turn instead."""
    name: str
    order: tuple[int, ...] = (0, 1, 2)
    quantum: int = 0
    seed: int | None = None


SEQUENTIAL = Schedule("sequential")


def schedules(threads: Sequence[int], randoms: int = 4, seed: int = 0) -> list[Schedule]:
    """The schedules tried on a case: sequential, round-robin with quantum 1 in every thread order, and
    ``randoms`` seeded random schedules."""
    out = [SEQUENTIAL]
    out += [Schedule(f"round-robin {'-'.join(map(str, p))}", tuple(p), 1) for p in itertools.permutations(threads)]
    out += [Schedule(f"random seed {seed + k}", tuple(threads), 0, seed + k) for k in range(randoms)]
    return out


def run_schedule(m: Tensix, programs: dict[int, Sequence[int]], schedule: Schedule,
                 actions: dict[int, Sequence[tuple[int, object]]] | None = None) -> None:
    """Run per-thread word lists (and RISC-V actions, as core.run) on ``m`` under ``schedule`` (raises
    golden's errors as core.run does)."""
    if schedule.quantum == 0 and schedule.seed is None and schedule.order == (0, 1, 2):
        m.run(programs, actions)
        return
    actions = actions or {}
    programs = {**{t: [] for t in actions}, **programs}
    for t in programs:
        if t not in range(THREADS):
            raise ValueError(f"thread {t} is not in 0..{THREADS - 1}")
    streams = {t: m.stream(t, [decode(w) for w in ws], actions.get(t, ())) for t, ws in programs.items()}
    pending: dict[int, tuple[int, object]] = {}
    rng = random.Random(schedule.seed) if schedule.seed is not None else None
    order = [t for t in schedule.order if t in streams]
    while streams:
        turn = order[:]
        if rng is not None:
            rng.shuffle(turn)
        progressed, blocked = False, {}
        for t in turn:
            if t not in streams:
                continue
            quantum = rng.randint(1, 8) if rng is not None else schedule.quantum or 1 << 30
            while quantum:
                item = pending.pop(t, None) or next(streams[t], None)
                if item is None:
                    del streams[t]
                    break
                try:
                    m.step(t, item[1], item[0])
                except Blocked as b:
                    pending[t] = item
                    blocked[t] = f"thread {t} instruction {item[0]} ({item[1].text}) waits: {b.reason}"
                    break
                progressed, quantum = True, quantum - 1
        if streams and not progressed:
            raise Hang("no thread can proceed: " + "; ".join(blocked.values()))
