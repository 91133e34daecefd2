"""Happens-before over one golden run: which state each thread's steps read and wrote, which of them the
synchronisation orders, and the conflicting pairs nothing orders (race candidates, tensix_diff.race).

Accesses are seen through tensix_diff.access_view (golden handlers reach all state as ``m.s.<part>``):
taking a part reads it; a write is a part whose value the step changed (Dest by row, Config by word, L1 by
page, SrcA / SrcB rows by bank). A write of the value already there counts as a read: it conflicts with
every other write of that part.

Order: each thread's program order, plus one edge per wait that blocked in the run (SEMWAIT, STALLWAIT on
valid bits, a RISC-V poll, ...) from the step that released it, when that is sound in every schedule: the
parts that step changed among those the wait read are changed by no thread but the waiter and it. A mutex
gives no order (ATGETM makes sections exclusive, in either order), so accesses under one mutex stay
candidates.

Synchronisation state (semaphores, SrcA / SrcB ownership and bank pointers, mutexes) is not observed; reading
it only decides when a thread moves, so only two threads writing it conflict (a SEMPOST against another
thread's SEMGET, the matrix unit handing back a bank the unpacker has not made valid); which thread takes a
mutex first conflicts through what the sections do.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from golden.errors import Blocked, GoldenError

from .access_view import ALL, StateView, snapshot

_ABSENT = frozenset()                        # no access
_NO_ORDER = frozenset({("mutex",)})          # parts whose release orders nothing
_SYNC = frozenset({"semaphores", "srca", "srcb"})   # (SrcA / SrcB: their ownership and pointers, not rows)


def _union(a, b):
    if a is ALL or b is ALL:
        return ALL
    return a | b


def _overlap(a, b) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return False
    return a is ALL or b is ALL or not a.isdisjoint(b)


@dataclass(slots=True)
class Step:
    """One executed step: its thread, its number in that thread (1-based), the parts it read and wrote
    (part -> detail: a frozenset of rows / words / pages, or ALL) and its vector clock."""
    thread: int
    local: int
    reads: dict
    writes: dict
    waited: frozenset = frozenset()     # parts its blocked attempts read (it waited on them)
    after: int = -1                     # index of the run's last step before its last blocked attempt
    section: int = 0                    # the number of the step that took the mutex this thread holds (0: none)
    clock: tuple = ()


@dataclass(frozen=True)
class Candidate:
    """Thread ``first`` ran its step ``i`` before thread ``second`` ran its step ``j``; both touch ``part``
    (at least one writes it) and nothing orders them. A step under a mutex counts from the step that took
    the mutex (the section is reversed as a whole)."""
    first: int
    i: int
    second: int
    j: int
    part: tuple


class Recorder:
    """Wraps golden's Tensix.step while a run is recorded (``m.s`` is tensix_diff.access_view.StateView meanwhile)."""

    def __init__(self):
        self.steps: list[Step] = []
        self.count = [0] * 4
        self._reads: dict = {}
        self._writes: dict = {}
        self._snap: dict = {}
        self._thread = -1
        self._section: dict[int, int] = {}
        self._waited: dict[int, tuple[set, int]] = {}

    def attach(self, m) -> None:
        """Record the run of machine ``m`` (before it starts)."""
        self.m, self.state = m, m.s
        self.view = StateView(m.s, self)

    # --- accesses during one step ---
    def read(self, key: tuple, detail) -> None:
        d = ALL if detail is ALL else frozenset(detail)
        old = self._reads.get(key, frozenset())
        self._reads[key] = _union(old, d)

    def write(self, key: tuple, changed, touched) -> None:
        """A write of ``touched``; the parts of it in ``changed`` took a new value (the rest read)."""
        if changed is not ALL and not changed:
            self.read(key, touched)
            return
        d = ALL if changed is ALL else frozenset(changed)
        self._writes[key] = _union(self._writes.get(key, frozenset()), d)

    def take(self, key: tuple, obj):
        """A part handed to a handler by reference: read now, written if its value changes by the end."""
        if key not in self._snap:
            if key == ("dest",):
                self._snap[key] = (obj, obj.bits.tobytes(), obj.valid.tobytes())
            else:
                self._snap[key] = (obj, snapshot(key, obj), None)
        return obj

    def _finish(self) -> tuple[dict, dict]:
        reads, writes = self._reads, self._writes
        if not self._snap:
            self._reads, self._writes = {}, {}
            return reads, writes
        for key, (obj, before, valid) in self._snap.items():
            if key == ("dest",):
                reads[key] = ALL
                if obj.bits.tobytes() != before or obj.valid.tobytes() != valid:
                    rows = np.flatnonzero((obj.bits.view(np.uint64) != np.frombuffer(before, np.uint64).reshape(-1, 4))
                                          .any(axis=1) | (obj.valid != np.frombuffer(valid, bool)))
                    writes[key] = _union(writes.get(key, frozenset()), frozenset(rows.tolist()))
            else:
                reads[key] = ALL
                if snapshot(key, self._current(key)) != before:
                    writes[key] = ALL
        self._reads, self._writes, self._snap = {}, {}, {}
        return reads, writes

    def _current(self, key: tuple):
        obj = getattr(self.state, key[0])
        if len(key) == 3:
            return obj.banks[key[2]].rows
        return obj[key[1]] if len(key) > 1 else obj

    def step(self, t: int, d, index: int) -> None:
        m = self.m
        self._thread = t
        m.s = self.view
        try:
            m.step(t, d, index)
        except Blocked:
            reads, writes = self._finish()
            parts, _ = self._waited.get(t, (set(), 0))
            self._waited[t] = (parts | reads.keys() | writes.keys(), len(self.steps) - 1)
            raise
        except GoldenError:
            self._record(t)
            raise
        finally:
            m.s = self.state
        self._record(t)

    def _record(self, t: int) -> None:
        reads, writes = self._finish()
        self.count[t] += 1
        w = self._waited.pop(t, None)
        step = Step(t, self.count[t], reads, writes) if w is None else \
            Step(t, self.count[t], reads, writes, frozenset(w[0]), w[1])
        if ("mutex",) in reads:
            held = t in self.state.mutex.values()
            self._section[t] = (self._section.get(t) or self.count[t]) if held else 0
        step.section = self._section.get(t, 0)
        self.steps.append(step)

    # --- after the run ---
    def candidates(self) -> list[Candidate]:
        """Conflicting pairs of steps of different threads that nothing orders, in run order."""
        writers: dict[tuple, set[int]] = {}
        users: dict[tuple, set[int]] = {}
        for s in self.steps:
            for k in s.writes:
                writers.setdefault(k, set()).add(s.thread)
            for k in s.reads:
                users.setdefault(k, set()).add(s.thread)
        shared = {k for k, ts in writers.items() if len(ts | users.get(k, set())) > 1 and k not in _NO_ORDER}
        if not shared:
            return []
        clocks: dict[int, list[int]] = {}
        out: list[Candidate] = []
        seen: dict[tuple, dict[int, list[Step]]] = {}
        for n, s in enumerate(self.steps):
            vc = clocks.setdefault(s.thread, [0] * 4)
            vc[s.thread] = s.local
            src = self._release(n, s, writers)
            if src is not None:
                vc[:] = [max(a, b) for a, b in zip(vc, src.clock)]
            s.clock = tuple(vc)
            for k in shared.intersection(s.reads.keys() | s.writes.keys()):
                by_thread = seen.setdefault(k, {})
                for other, earlier in by_thread.items():
                    if other != s.thread:
                        c = _last_conflict(earlier, s, k, vc[other])
                        if c is not None:
                            out.append(Candidate(other, c.section or c.local, s.thread, s.local, k))
                by_thread.setdefault(s.thread, []).append(s)
        return out

    def _release(self, n: int, s: Step, writers: dict):
        """The step whose write let ``s`` pass its wait, when that order holds in every schedule: one other
        thread wrote what the wait read since its last blocked attempt, and only the waiter and that thread
        ever write those parts (else another thread's write could release it first)."""
        if not s.waited:
            return None
        parts = s.waited - _NO_ORDER
        by: dict[int, Step] = {}
        enabling: set = set()
        for o in self.steps[s.after + 1:n]:
            if o.thread != s.thread:
                hit = parts.intersection(o.writes)
                if hit:
                    by[o.thread] = o
                    enabling |= hit
        if len(by) != 1:
            return None
        (b, src), = by.items()
        if any(writers.get(k, set()) - {s.thread, b} for k in enabling):
            return None
        return src


def _last_conflict(earlier: list[Step], s: Step, k: tuple, known: int):
    """The latest of another thread's steps on part ``k`` that conflicts with ``s`` and is not ordered
    before it (its number is above ``known``, what ``s``'s clock has seen of that thread)."""
    sync = len(k) < 3 and k[0] in _SYNC        # reading a wait condition only decides when a thread moves
    sw, sr = s.writes.get(k, _ABSENT), _ABSENT if sync else s.reads.get(k, _ABSENT)
    for e in reversed(earlier):
        if e.local <= known:
            return None
        ew, er = e.writes.get(k, _ABSENT), _ABSENT if sync else e.reads.get(k, _ABSENT)
        if sw is not _ABSENT and (_overlap(ew, sw) or _overlap(er, sw)):
            return e
        if ew is not _ABSENT and _overlap(ew, sr):
            return e
    return None


@dataclass
class Hold:
    """A schedule's constraint: thread ``first`` does not run its step ``i`` until thread ``second`` has run
    ``j`` steps; lifted when nothing else can move (the pair cannot be reversed)."""
    first: int
    i: int
    second: int
    j: int
    count: list = field(default_factory=lambda: [0] * 4)
    lifted: bool = False

    def step(self, m, t: int, d, index: int) -> None:
        if (not self.lifted and t == self.first and self.count[t] == self.i - 1
                and self.count[self.second] < self.j):
            raise Blocked(f"held until thread {self.second} has run {self.j} steps")
        m.step(t, d, index)
        self.count[t] += 1

    def stuck(self) -> bool:
        if self.lifted:
            return False
        self.lifted = True
        return True

    def reversed(self) -> bool:
        """Whether the pair ran in the held order."""
        return self.count[self.second] >= self.j and not self.lifted
