"""Happens-before over one golden run: which state each thread's steps read and wrote, which of them the
synchronisation orders, and the conflicting pairs nothing orders (race candidates, tensix_diff.race).

Accesses are seen through a view of ``m.s`` (golden handlers reach all state as ``m.s.<part>``): taking a
part reads it; a write is a part whose value the step changed. Granularity: Dest by row (a read takes all of
Dest), Config by word, L1 by 4 KiB page, semaphores one by one, SrcA / SrcB rows by bank and their ownership
(valid bits) and pointers as one part each, per-thread parts (RWCs, ADCs, GPRs, ThreadConfig, frontend, Wait
Gate) per thread, the rest (SFPU, packer, mutexes, mailboxes) whole.
A write of the value already there counts as a read: it conflicts with every other write of that part.

Order: each thread's program order, plus one edge per wait that blocked in the run (SEMWAIT, STALLWAIT on
valid bits, a RISC-V poll, ...) from the step that released it, when that is sound in every schedule: the
parts that step changed among those the wait read are changed by no thread but the waiter and it. A mutex gives no
order (ATGETM makes sections exclusive, in either order), so accesses under one mutex stay candidates.

Synchronisation state (semaphores, SrcA / SrcB ownership and bank pointers, mutexes) is not observed; reading
it only decides when a thread moves, so only two threads writing it conflict (a SEMPOST against another
thread's SEMGET, the matrix unit handing back a bank the unpacker has not made valid); which thread takes a
mutex first conflicts through what the sections do.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from golden.errors import Blocked, GoldenError

ALL = None                                  # a detail covering the whole part
_ABSENT = frozenset()                        # no access
_PER_INDEX = frozenset({"rwc", "adc", "gpr", "thread_config", "frontend", "wait_gate", "semaphores", "config"})
_NO_ORDER = frozenset({("mutex",)})          # parts whose release orders nothing
_SYNC = frozenset({"semaphores", "srca", "srcb"})   # (SrcA / SrcB: their ownership and pointers, not rows)


def _fp(x):
    """A comparable snapshot of a state part (lists, dicts, dataclasses, arrays)."""
    if isinstance(x, np.ndarray):
        return x.tobytes()
    if isinstance(x, (list, tuple)):
        return tuple(_fp(v) for v in x)
    if isinstance(x, dict):
        return tuple((k, _fp(v)) for k, v in x.items())
    if hasattr(x, "__dict__"):
        return tuple(_fp(v) for v in vars(x).values())
    return x


def _src(f):
    """SrcA / SrcB but their rows: bank ownership (the valid bits), implied formats, bank and row pointers."""
    a, b = f.banks
    return a.allowed_client, b.allowed_client, a.implied_format, b.implied_format, f.matrix_bank, \
        f.unpacker_bank, *f.unpacker_row


_SNAPSHOT = {   # fast _fp for the parts handlers take most
    "semaphores": lambda x: (x.value, x.max), "srca": _src, "srcb": _src,
    "sfpu": lambda x: (x.lreg.tobytes(), x.cc_en, x.cc, tuple(x.cc_stack), x.lane_config, x.sp),
    "gpr": tuple, "thread_config": tuple, "packer": lambda x: tuple(vars(x).values()),
    "mutex": lambda x: tuple(x.items()), "mailboxes": lambda x: tuple(x.items()),
    "rwc": lambda x: tuple(vars(x).values()), "wait_gate": lambda x: x,
}
def _snapshot(key: tuple, obj):
    return obj.tobytes() if len(key) == 3 else _SNAPSHOT.get(key[0], _fp)(obj)


_OWN = frozenset({"rwc", "adc", "gpr", "thread_config", "frontend", "wait_gate"})   # per-thread parts


class _Words:
    """A Config state's word list: reads and writes by word index."""
    __slots__ = ("_w", "_r", "_k")

    def __init__(self, words: list, rec: "Recorder", key: tuple):
        self._w, self._r, self._k = words, rec, key

    def __getitem__(self, i):
        self._r.read(self._k, range(len(self._w))[i] if isinstance(i, slice) else (i,))
        return self._w[i]

    def __setitem__(self, i, v):
        idx = range(len(self._w))[i] if isinstance(i, slice) else (i,)
        old = [self._w[j] for j in idx]
        self._w[i] = v
        self._r.write(self._k, [j for j, o in zip(idx, old) if self._w[j] != o], idx)

    def __len__(self):
        return len(self._w)

    def __iter__(self):
        self._r.read(self._k, ALL)
        return iter(self._w)


class _Indexed:
    """A per-thread (or per-semaphore, per-Config-state) list: each element is its own part."""
    __slots__ = ("_l", "_r", "_n", "_own")

    def __init__(self, items: list, rec: "Recorder", name: str):
        self._l, self._r, self._n, self._own = items, rec, name, name in _OWN

    def __getitem__(self, i):
        r = self._r
        if self._own and i == r._thread:      # a thread's own part: no other thread conflicts on it
            r._reads[self._n, i] = r._writes[self._n, i] = ALL
            return self._l[i]
        if self._n == "config":
            return _Words(self._l[i], r, ("config", i))
        return r.take((self._n, i), self._l[i])

    def __setitem__(self, i, v):
        self[i]
        self._l[i] = v

    def __len__(self):
        return len(self._l)

    def __iter__(self):
        return (self[i] for i in range(len(self._l)))


class _Src:
    """SrcA or SrcB: its rows bank by bank, the rest (ownership, pointers) as one part."""
    __slots__ = ("_f", "_r", "_n")

    def __init__(self, f, rec: "Recorder", name: str):
        object.__setattr__(self, "_f", f)
        object.__setattr__(self, "_r", rec)
        object.__setattr__(self, "_n", name)

    def __getattr__(self, a):
        if a == "banks":
            return [_Bank(b, self, i) for i, b in enumerate(self._f.banks)]
        self._r.take((self._n,), self._f)
        return getattr(self._f, a)

    def __setattr__(self, a, v):
        self._r.take((self._n,), self._f)
        setattr(self._f, a, v)


class _Bank:
    """One Src bank: ``rows`` is the part (name, "rows", bank); its ownership and format belong to the file."""
    __slots__ = ("_b", "_s", "_i")

    def __init__(self, bank, src: _Src, i: int):
        object.__setattr__(self, "_b", bank)
        object.__setattr__(self, "_s", src)
        object.__setattr__(self, "_i", i)

    def __getattr__(self, a):
        s = self._s
        if a == "rows":
            return s._r.take((s._n, "rows", self._i), self._b.rows)
        s._r.take((s._n,), s._f)
        return getattr(self._b, a)

    def __setattr__(self, a, v):
        s = self._s
        s._r.take((s._n, "rows", self._i) if a == "rows" else (s._n,), self._b.rows if a == "rows" else s._f)
        setattr(self._b, a, v)


class _L1:
    """L1 by 4 KiB page."""
    __slots__ = ("_l1", "_r")

    def __init__(self, l1, rec: "Recorder"):
        self._l1, self._r = l1, rec

    def _pages(self, addr: int, n: int) -> range:
        return range(addr // self._l1.PAGE, (addr + max(n, 1) - 1) // self._l1.PAGE + 1)

    def read(self, addr: int, n: int) -> bytes:
        self._r.read(("l1",), self._pages(addr, n))
        return self._l1.read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        pages = self._pages(addr, len(data))
        changed = self._l1.read(addr, len(data)) != bytes(data)
        self._l1.write(addr, data)
        self._r.write(("l1",), pages if changed else (), pages)

    def read32(self, addr: int) -> int:
        return int.from_bytes(self.read(addr, 4), "little")

    def write32(self, addr: int, value: int) -> None:
        self.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))

    def __getattr__(self, name):       # anything else (pages): the whole of L1, read and written
        self._r.read(("l1",), ALL)
        self._r.write(("l1",), ALL, ALL)
        return getattr(self._l1, name)


class _State:
    """TensixState as a recorded step sees it (the indexed parts and L1 wrapped once, the rest per access)."""

    def __init__(self, s, rec: "Recorder"):
        object.__setattr__(self, "_s", s)
        object.__setattr__(self, "_r", rec)
        for name in _PER_INDEX:
            object.__setattr__(self, name, _Indexed(getattr(s, name), rec, name))
        object.__setattr__(self, "l1", _L1(s.l1, rec))
        object.__setattr__(self, "srca", _Src(s.srca, rec, "srca"))
        object.__setattr__(self, "srcb", _Src(s.srcb, rec, "srcb"))

    def __getattr__(self, name):
        return self._r.take((name,), getattr(self._s, name))

    def __setattr__(self, name, v):
        self._r.take((name,), getattr(self._s, name))
        setattr(self._s, name, v)


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
    """Wraps golden's Tensix.step while a run is recorded (``m.s`` is viewed through _State meanwhile)."""

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
        self.view = _State(m.s, self)

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
                self._snap[key] = (obj, _snapshot(key, obj), None)
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
                if _snapshot(key, self._current(key)) != before:
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
