"""Happens-before over one golden run: which state each thread's steps read and wrote, which of them the
synchronisation orders, and the conflicting pairs nothing orders (race candidates, tensix_diff.race).

Accesses are the cells golden.analysis.traced_state reports (the tracer provenance uses), each coarsened to
its part (tensix_diff.state_parts): taking a cell reads its whole part; a write is a part whose value the step
changed. A write of the value already there counts as a read: it conflicts with every other write of that
part. Finer than a part: Dest by row (a read is the rows indexed, a step that indexes no row reads all of
them; rows set to what they held are read); L1 by page; SrcA / SrcB rows by bank; Config by bits, word i's at
32 * i: a read is the bits of the fields golden says it uses (golden.config_words, the whole word where it
does not say), a write the bits the step changed, and the bits it might have changed (RMWCIB: its byte mask;
WRCFG, a RISC-V store: the word) but left alone are read. A thread's own parts (its RWCs, ADCs, GPRs,
ThreadConfig, frontend, Wait Gate) are traced whole, their cells unwatched: taken by their thread, read and
written; taken by another (ADCs, as adc[adc_thread]), read, and written when the step changed them.

Order: each thread's program order, plus edges a wait gives when they hold in every schedule.
- A wait that blocked (SEMWAIT, STALLWAIT on valid bits, a RISC-V poll, ...): from the step that released it,
  when the parts that step changed among those the wait read are changed by no thread but the waiter and it.
- A wait that passed without blocking (tensix_diff.passed_waits): the step is tried again before it runs
  with another thread b's latest changes of synchronisation state put back, from its change j on; if it then
  blocks, it follows j in every schedule provided that, for each cell the try read, only the two threads set
  it, the waiter set none of what was put back after b did (nor anything after the latch, for a Wait Gate
  latched earlier), the other writes before it are in an order every schedule keeps, and b's among them
  precede the wait's first evaluation. Then any schedule running the step before j shows it what the try
  saw, and it would block there. Earlier changes of what it read are tried too: their orders may be what
  lets the latest hold.
- Semaphore counts (golden's COUNTING handlers: SEMPOST, SEMGET, RISC-V posts and gets) commute while no
  schedule brings the Value to a bound (tensix_diff.passed_waits.counts: one thread counts up, one down,
  SEMINITs first; before each count down the counts up that precede it in every schedule, less its own
  thread's counts down, leave at least 1; before each count up at most 14). Two counts of such a semaphore
  do not conflict, and a try puts back only b's counts of it, so the waiter's own counts may interleave.
A mutex gives no order (ATGETM makes sections exclusive, in either order), so accesses under one mutex stay
candidates.

Synchronisation state (semaphores, SrcA / SrcB ownership and bank pointers, mutexes) is not observed; reading
it only decides when a thread moves, so only two threads writing it conflict (a SEMPOST against another
thread's SEMINIT, the matrix unit handing back a bank the unpacker has not made valid); which thread takes a
mutex first conflicts through what the sections do.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from golden.analysis import traced_state
from golden.analysis.traced_state import firsts, value
from golden.config_words import FULL
from golden.errors import Blocked, GoldenError

from .passed_waits import COUNTING, Prober, counts, sync
from .state_parts import DEST as _DEST, OWN, owners as _owners, pages as _pages, rows as _rows

ALL = None                                   # a detail covering the whole part
_ABSENT = frozenset()                        # no access
_NO_ORDER = frozenset({("mutex",)})          # parts whose release orders nothing
_UNKNOWN = ("?",)                            # the part of a container nothing maps


def _overlap(a, b) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return False
    if a is ALL or b is ALL:
        return True
    if a.__class__ is int:                   # Config bits (word i's at 32 * i)
        return bool(a & b)
    return not a.isdisjoint(b)


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
    passed: tuple = ()                  # tensix_diff.passed_waits.Passed: a wait it passed, had it come earlier
    counting: bool = False              # a golden COUNTING handler's: it counts semaphores up or down by one
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
    """Records golden's Tensix.step (golden.analysis.traced_state, the tracer provenance uses): each cell a step
    takes or changes is coarsened to its part (``_owners``)."""

    def __init__(self):
        self.steps: list[Step] = []
        self.count = [0] * 4
        self._reads: dict = {}
        self._writes: dict = {}
        self._touched: dict = {}      # id(array) -> (array, copy before the step)
        self._set = _ABSENT           # the Dest rows the step set (ALL: not known which)
        self.own = -1                 # the stepping thread: its entries of the per-thread lists are its own
        self.mine: list = []          # the per-thread lists whose entry ``own`` the step took
        self._others: dict = {}       # another thread's own part taken -> (list, index, copy before the step)
        self.taken: list = []         # (container, key) of the cells read (golden.analysis.traced_state)
        self.written: list = []       # (container, key, value before) of the cells set
        self.fields: list = []        # (container, key, bits) of Config words read by bits
        self._may: dict = {}          # (id(container), key) -> the bits a Config write may change
        self._sync: list = []         # (container, key, value before) of synchronisation cells set
        self._section: dict[int, int] = {}
        self._waited: dict[int, tuple[set, int]] = {}
        self.prober = Prober(self)

    def attach(self, m) -> None:
        """Record the run of machine ``m`` (before it starts; its state is instrumented in place)."""
        self.m, self.state = m, traced_state.instrument(m.s, whole=OWN)
        self.gate = m.s.wait_gate
        self._owner = _owners(m.s)
        self._dest = {id(m.s.dest.bits), id(m.s.dest.valid)}
        self._syncs = {p for o in self._owner.values() for p in (o.values() if o.__class__ is dict else (o,))
                       if sync(p)}

    def where(self, cell) -> tuple | None:
        """The part a (container, key) lies in (None: structure)."""
        o = self._owner.get(id(cell[0]))
        if o is None:
            return _UNKNOWN
        if o.__class__ is int:
            return ("config", o)
        if o.__class__ is list:
            return o[cell[1]]
        return o if o.__class__ is tuple else o.get(cell[1])

    # --- the tracer's reports during one step (golden.analysis.traced_state) ---
    def _take(self, part: tuple) -> None:
        """A part handed to a handler: read whole."""
        self._reads[part] = ALL

    @staticmethod
    def _part(o, key):
        """The part cell ``key`` of a container lies in (``o``: the container's entry in ``_owners``)."""
        return o if o.__class__ is tuple else o.get(key)

    def whole(self, lst, i: int) -> None:
        """Another thread's entry of a per-thread list taken whole: read, and written when the step changes it
        (compared with a copy at the end of the step). The thread's own (``mine``) are read and written."""
        part = self._owner[id(lst)][i]
        if i == self.own:
            self.mine.append(lst)
        elif part not in self._others:
            self._reads[part] = ALL
            self._others[part] = (lst, i, copy.deepcopy(list.__getitem__(lst, i)))

    def touch(self, arr, i=None) -> None:
        """Array ``arr`` about to be set at index ``i`` (None: anywhere)."""
        if id(arr) not in self._touched:
            self._touched[id(arr)] = (arr, arr.view(np.ndarray).copy())
        if id(arr) in self._dest and self._set is not ALL:
            rows = None if i is None else _rows(i[0] if i.__class__ is tuple and i else i, len(arr))
            self._set = ALL if rows is None else self._set | frozenset(rows)

    def read_array(self, arr, i) -> None:
        if id(arr) not in self._touched:
            self._touched[id(arr)] = (arr, arr.view(np.ndarray).copy())
        if id(arr) in self._dest and self._reads.get(_DEST, _ABSENT) is not ALL:     # Dest by the rows indexed
            rows = None if i is None else _rows(i[0] if i.__class__ is tuple and i else i, len(arr))
            if rows is not None:
                self._add(self._reads, _DEST, rows)
                return
        self._take(self._owner[id(arr)])

    def field(self, lst, i: int, bits: int) -> None:
        self.fields.append((lst, i, bits))

    def may_set(self, lst, i: int, bits: int) -> None:
        self._may[id(lst), i] = bits

    def read_l1(self, l1, addr: int, n: int) -> None:
        self._add(self._reads, ("l1",), _pages(l1, addr, n))

    def wrote_l1(self, l1, addr: int, n: int, changed, before, after) -> None:
        """A write of the value already there reads it."""
        self._add(self._writes if changed.size else self._reads, ("l1",), _pages(l1, addr, n))

    @staticmethod
    def _add(to: dict, part: tuple, detail) -> None:
        old = to.get(part, _ABSENT)
        if old is not ALL:
            to[part] = old | frozenset(detail)

    def _finish(self) -> tuple[dict, dict]:
        """The step's reads and writes (part -> detail)."""
        reads, writes = self._reads, self._writes
        if self.mine:
            owner, t = self._owner, self.own
            for lst in self.mine:
                part = owner[id(lst)][t]
                reads[part] = writes[part] = ALL
            self.mine = []
        if self.taken or self.written or self.fields:
            self._cells(reads, writes)
            self.taken, self.written = [], []
            if self.fields:
                self.fields = []
        if self._touched:
            self._arrays(writes)
            self._touched = {}
        if self._set is not _ABSENT:      # Dest rows set to what they held: read
            changed = writes.get(_DEST, _ABSENT)
            if self._set is ALL or changed is not ALL:
                left = ALL if self._set is ALL else self._set - changed
                if left is ALL:
                    reads[_DEST] = ALL
                elif left and reads.get(_DEST, _ABSENT) is not ALL:
                    self._add(reads, _DEST, left)
            self._set = _ABSENT
        if self._others:
            for part, (lst, i, before) in self._others.items():
                reads[part] = ALL
                if list.__getitem__(lst, i) != before:
                    writes[part] = ALL
            self._others = {}
        self._reads, self._writes = {}, {}
        return reads, writes

    def _cells(self, reads: dict, writes: dict) -> None:
        """The parts of the cells the step took and set. Config by bits (word i's at 32 * i): those read, and
        those a write may change but left as they were (read); those it changed are written."""
        owner, words, done = self._owner, {}, set()
        for obj, key in self.taken:
            i = id(obj)
            if i in done:
                continue
            o = owner.get(i)
            if o is None or o.__class__ is tuple:     # structure, or a container inside one part: once
                done.add(i)
                if o is not None and o not in reads and (o != _DEST or self._set is _ABSENT):
                    self._take(o)
            elif o.__class__ is int:                  # a Config word, whole
                words[o] = words.get(o, 0) | FULL << 32 * key
            else:
                part = self._part(o, key)
                if part is not None and part not in reads and (part != _DEST or self._set is _ABSENT):
                    self._take(part)
        for obj, key, bits in self.fields:
            o = owner.get(id(obj))
            if o.__class__ is int:
                words[o] = words.get(o, 0) | bits << 32 * key
        for obj, key, before in firsts(self.written).values() if self.written else ():
            o = owner.get(id(obj))
            if o is None:
                continue
            now = value(obj, key)
            if o.__class__ is int:
                changed = (now ^ before) & FULL
                may = self._may.get((id(obj), key), FULL)
                if changed:
                    k = ("config", o)
                    writes[k] = writes.get(k, 0) | changed << 32 * key
                words[o] = words.get(o, 0) | (may & ~changed) << 32 * key
                continue
            part = o if o.__class__ is tuple else self._part(o, key)     # setting a cell takes its part
            if part in self._syncs:
                self._sync.append((obj, key, before, now))
            if part is None or writes.get(part, _ABSENT) is ALL:
                continue
            if part not in reads:
                self._take(part)
            if not (now is before or now == before):
                writes[part] = ALL
        if self._may:
            self._may = {}
        for i, bits in words.items():
            reads["config", i] = bits

    def _arrays(self, writes: dict) -> None:
        """The parts of the arrays the step changed (Dest by row)."""
        owner = self._owner
        for arr, before in self._touched.values():
            now = arr.view(np.ndarray)
            if now.tobytes() == before.tobytes():
                continue
            part, diff = owner[id(arr)], now != before
            if part == ("dest",):             # Dest by row: its bits or its valid bit
                rows = np.flatnonzero(diff.any(axis=1) if diff.ndim == 2 else diff)
                if rows.size:
                    self._add(writes, part, rows.tolist())
            elif diff.any():
                writes[part] = ALL

    def step(self, t: int, d, index: int) -> None:
        m, prober = self.m, self.prober
        latch = list.__getitem__(self.gate, t)
        if prober.by and t not in self._waited:       # a wait that blocked orders it already (``_release``)
            prober.probe(t, d, index, self.count[t] + 1, latch)
        self.own = t
        traced_state.ACTIVE = self
        try:
            m.step(t, d, index)
        except Blocked:
            reads, writes = self._finish()
            self._sync, prober.found = [], []
            parts, _ = self._waited.get(t, (set(), 0))
            self._waited[t] = (parts | reads.keys() | writes.keys(), len(self.steps) - 1)
            raise
        except GoldenError:
            self._record(t, d.handler)
            raise
        finally:
            traced_state.ACTIVE = None
        self._record(t, d.handler)
        now = list.__getitem__(self.gate, t)
        if now is not latch and now is not None:
            prober.latched[t] = self.count[t]
        if prober.found:
            prober.keep(self.steps[-1], t)

    def _record(self, t: int, handler) -> None:
        reads, writes = self._finish()
        counting = False
        if self._sync:      # (a count always sets a semaphore)
            counting = handler in COUNTING
            self.prober.changed(len(self.steps), t, self._sync, counting)
            self._sync = []
        self.count[t] += 1
        w = self._waited.pop(t, None)
        step = Step(t, self.count[t], reads, writes) if w is None else \
            Step(t, self.count[t], reads, writes, frozenset(w[0]), w[1])
        if ("mutex",) in reads:
            held = t in self.state.mutex.values()
            self._section[t] = (self._section.get(t) or self.count[t]) if held else 0
        step.section = self._section.get(t, 0)
        if counting:
            step.counting = True
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
        self._by_thread: dict[int, list[Step]] = {}
        for n, s in enumerate(self.steps):
            vc = clocks.setdefault(s.thread, [0] * 4)
            vc[s.thread] = s.local
            src = self._release(n, s, writers)
            if src is not None:
                vc[:] = [max(a, b) for a, b in zip(vc, src.clock)]
            for p in sorted(s.passed, key=lambda p: p.j):
                first = p.since + 1 if p.since else s.local      # the wait's first evaluation
                floor = vc if first == s.local else self._clock_of(s.thread, first)
                p.held = p.holds(self.steps, self.prober.hist, floor)
                if p.held:
                    vc[:] = [max(a, b) for a, b in zip(vc, self.steps[p.j].clock)]
            s.clock = tuple(vc)
        sems = self.state.semaphores
        commute = {k for k in shared if k[0] == "semaphores" and k[1] < len(sems)
                   and counts(self.steps, self.prober.hist.get((id(sems[k[1]]), "value"), []), len(self.steps))}
        out: list[Candidate] = []
        seen: dict[tuple, dict[int, list[Step]]] = {}
        for s in self.steps:
            vc = s.clock
            for k in shared.intersection(s.reads.keys() | s.writes.keys()):
                by_thread = seen.setdefault(k, {})
                for other, earlier in by_thread.items():
                    if other != s.thread:
                        c = _last_conflict(earlier, s, k, vc[other], k in commute)
                        if c is not None:
                            out.append(Candidate(other, c.section or c.local, s.thread, s.local, k))
                by_thread.setdefault(s.thread, []).append(s)
        return out

    def _clock_of(self, t: int, local: int) -> tuple:
        """The clock of thread ``t``'s step number ``local`` (none yet: zeros)."""
        if local <= 0:
            return (0, 0, 0, 0)
        by = self._by_thread.get(t)
        if by is None:
            by = self._by_thread[t] = [s for s in self.steps if s.thread == t]
        return by[local - 1].clock

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


def _last_conflict(earlier: list[Step], s: Step, k: tuple, known: int, commute: bool = False):
    """The latest of another thread's steps on part ``k`` that conflicts with ``s`` and is not ordered
    before it (its number is above ``known``, what ``s``'s clock has seen of that thread). ``commute``: two
    counts of this semaphore commute (passed_waits.counts), so they do not conflict."""
    waits = sync(k)        # reading a wait condition only decides when a thread moves
    sw, sr = s.writes.get(k, _ABSENT), _ABSENT if waits else s.reads.get(k, _ABSENT)
    for e in reversed(earlier):
        if e.local <= known:
            return None
        if commute and e.counting and s.counting:
            continue
        ew, er = e.writes.get(k, _ABSENT), _ABSENT if waits else e.reads.get(k, _ABSENT)
        if sw is not _ABSENT and (_overlap(ew, sw) or _overlap(er, sw)):
            return e
        if ew is not _ABSENT and _overlap(ew, sr):
            return e
    return None
