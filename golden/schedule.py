"""Thread interleavings: the one scheduler loop that runs a multi-thread case (core.Tensix.run), under a
chosen schedule.

On a card the three Tensix threads issue concurrently and their relative timing is not fixed, so a case is
only meaningful when its observed state does not depend on the interleaving. A schedule picks, at every
turn, which runnable thread issues next and for how many instructions (its quantum). The sequential schedule
(every thread runs until it finishes or blocks, thread 0 first) is golden's default run. An instruction that
raises errors.Blocked (SEMWAIT, STALLWAIT, ATGETM, valid-bit handshakes) is retried after other threads
move; when no thread can move the case hangs (reported, never spun on).
"""
from __future__ import annotations

import itertools
import random
from typing import Callable, Iterator, NamedTuple, Sequence

from .errors import Blocked, Hang


class Schedule(NamedTuple):
    """``order``: the thread priority; ``quantum``: instructions a thread issues before the next one gets
    a turn (0: until it finishes or blocks, the sequential schedule); ``seed``: random order and quanta
    (1..8) at every turn instead. (A tuple: every golden run imports it, and a tuple class costs less to make
    than a frozen dataclass.)"""
    name: str
    order: tuple[int, ...] = (0, 1, 2)
    quantum: int = 0
    seed: int | None = None


SEQUENTIAL = Schedule("sequential")
_UNBOUNDED = 1 << 62        # a quantum of 0: the thread runs until it finishes or blocks
ROUND_ROBIN = Schedule("round-robin 0-1-2", (0, 1, 2), 1)


def schedules(threads: Sequence[int], randoms: int = 4, seed: int = 0) -> list[Schedule]:
    """Sequential, round-robin with quantum 1 in every thread order, and ``randoms`` seeded random schedules."""
    out = [SEQUENTIAL]
    out += [Schedule(f"round-robin {'-'.join(map(str, p))}", tuple(p), 1) for p in itertools.permutations(threads)]
    out += [Schedule(f"random seed {seed + k}", tuple(threads), 0, seed + k) for k in range(randoms)]
    return out


def interleave(streams: dict[int, Iterator[tuple[int, object]]], schedule: Schedule,
               step: Callable[[int, object, int], None], stuck: Callable[[], bool] | None = None) -> None:
    """Issue each thread's (program index, Decoded) items through ``step(thread, decoded, index)`` under
    ``schedule`` until every stream ends. ``stuck``: asked when no thread can move; True means it changed
    what blocks (a schedule's own hold was lifted) and the loop goes on, else the case hangs."""
    pending: dict[int, tuple[int, object]] = {}     # thread -> the instruction it is blocked on
    rng = random.Random(schedule.seed) if schedule.seed is not None else None
    order = [t for t in schedule.order if t in streams]
    if len(order) != len(streams):
        order += sorted(t for t in streams if t not in schedule.order)
    full = schedule.quantum or _UNBOUNDED
    while streams:
        turn = order
        if rng is not None:
            turn = order[:]
            rng.shuffle(turn)
        progressed, blocked = False, {}
        for t in turn:
            items = streams.get(t)
            if items is None:
                continue
            item = pending.pop(t, None) if pending else None
            left = rng.randint(1, 8) if rng is not None else full
            if left == 1:                   # one instruction (round-robin): as below, without the loop
                if item is None:
                    item = next(items, None)
                    if item is None:        # the stream ended
                        del streams[t]
                        continue
                try:
                    step(t, item[1], item[0])
                except Blocked as b:
                    pending[t] = item
                    blocked[t] = (item, b.reason)
                    continue
                progressed = True
                continue
            turn_items = items if item is None else itertools.chain((item,), items)      # the blocked one first
            issued = 0
            for index, d in turn_items if left == _UNBOUNDED else itertools.islice(turn_items, left):
                try:
                    step(t, d, index)
                except Blocked as b:
                    pending[t] = (index, d)
                    blocked[t] = ((index, d), b.reason)      # the text only when it hangs
                    break
                issued += 1
            else:
                if issued < left:           # the stream ended
                    del streams[t]
            progressed = progressed or issued > 0
        if streams and not progressed and not (stuck is not None and stuck()):
            raise Hang("no thread can proceed: " + "; ".join(
                f"thread {t} instruction {i} ({d.text}) waits: {why}" for t, ((i, d), why) in blocked.items()))


def run_schedule(m, programs: dict[int, Sequence[int]], schedule: Schedule,
                 actions: dict[int, Sequence[tuple[int, object]]] | None = None) -> None:
    """Run per-thread word lists (and RISC-V actions) on the golden machine ``m`` under ``schedule``."""
    m.run(programs, actions, schedule)
