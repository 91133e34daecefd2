"""Waits that passed without blocking, for tensix_diff.happens_before: would a step have blocked had another
thread's latest changes of synchronisation state not been made yet? golden's waits (the Wait Gate, the Src
bank checks, RISC-V polls, golden.errors.Blocked) decide on synchronisation state and the thread's own Wait
Gate before the step changes anything, so the step is tried again (a probe) with those cells put back.

A probe runs the step with the tracer (golden.analysis.traced_state) reporting here: it stops, as "passes",
at the first cell it takes outside synchronisation state (or structure, or its own Wait Gate) and before the
first cell it would set, and the machine is left as it was. Whether the order a blocking probe suggests holds
in every schedule is decided after the run (``Passed.holds``).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import partial
from itertools import compress
from operator import itemgetter, not_

from golden.analysis import traced_state
from golden.analysis.traced_state import poke, value
from golden.errors import Blocked
from golden.riscv import COUNTING as _RISCV_COUNTING
from golden.sync.sync import COUNTING as _SYNC_COUNTING, SEM_LIMIT, holds_back

COUNTING = _SYNC_COUNTING | _RISCV_COUNTING      # handlers that only count semaphores up or down by one

SYNC = frozenset({"semaphores", "srca", "srcb"})   # (SrcA / SrcB: their ownership and pointers, not rows)
TRIES = 3                                          # starts probed per other thread, latest first
QUIET_LIMIT = 4096                                 # ``_QUIET``'s (and ``_TRIED``'s) keys at most
_RUN_STEP = itemgetter(0)                          # a write's run step (``Prober.hist``)
_PARTS = itemgetter(2)                             # a change's parts (``Prober.by``)
_QUIET: dict = {}     # (thread, word or RISC-V action, handler, latch) -> outcome of a try that read no sync state
_TRIED: dict = {}     # the same keys -> the tries that read sync state, as a tree (``_Read``) of the cells read
_NAMES: dict = {}     # (part, key) of a cell ``_TRIED`` reads -> its number (``_Read.name``)


class _Read:
    """A node of ``_TRIED``: the cell a try reads next, named by its part and key (and a number for them), and
    what the try does for each value it finds there (the next ``_Read``, or its outcome: a tuple, without the
    cells)."""
    __slots__ = ("part", "key", "name", "then")

    def __init__(self, part: tuple, key, then: dict):
        self.part, self.key, self.then = part, key, then
        self.name = _NAMES.setdefault((part, key), len(_NAMES))


def _chain(names: list, outcome: tuple):
    """The ``_Read`` nodes of a try that read ``names`` ((part, key, value), in order) and ended in ``outcome``."""
    node = outcome
    for part, key, v in reversed(names):
        node = _Read(part, key, {v: node})
    return node


def sync(part) -> bool:
    """Whether a part is synchronisation state (reading it only decides when a thread moves)."""
    return part.__class__ is tuple and part[0] in SYNC and (len(part) < 2 or part[1] != "rows")


class _Passes(Exception):
    """The step went past what a wait reads: it would not block."""


class _Probe:
    """What golden.analysis.traced_state reports to during a probe: synchronisation cells taken are kept (one
    for a prober, ``start``ed afresh for each probe; its report lists keep nothing)."""

    def __init__(self):
        self.taken, self.written, self.mine = _Taken(self), _Stop(), _Mine(self)

    def start(self, t: int, where, gate) -> "_Probe":
        self.own, self.where, self.gate = t, where, gate
        self.cells, self.parts, self.latched, self.seq = set(), set(), False, []
        return self

    def whole(self, lst, i) -> None:
        raise _Passes

    def field(self, lst, i, mask) -> None:
        raise _Passes

    def read_bits(self, lst, bits) -> None:
        raise _Passes

    def may_set(self, lst, i, mask) -> None:
        raise _Passes

    def touch(self, arr, i=None) -> None:
        raise _Passes

    def read_array(self, arr, i) -> None:
        raise _Passes

    def read_l1(self, l1, addr, n) -> None:
        raise _Passes

    def wrote_l1(self, l1, addr, n, changed, before, after) -> None:
        l1.poke(addr + changed, before[changed])
        raise _Passes


class _Report(list):
    """A list the tracer appends cells (or lists) to, each checked by ``append`` as it comes."""

    def __init__(self, probe: _Probe):
        super().__init__()
        self.probe = probe

    def __iadd__(self, items):
        for x in items:
            self.append(x)
        return self


class _Taken(_Report):
    """The cells taken: synchronisation state and structure only (kept), else the step is past its waits."""

    def append(self, cell) -> None:
        part = self.probe.where(cell)
        if part is None:
            return                  # structure: which container is read next
        if not sync(part):
            raise _Passes
        probe, (obj, key) = self.probe, cell
        probe.cells.add((id(obj), key))
        probe.parts.add(part[:2])
        probe.seq.append((obj, key, value(obj, key)))


class _Stop(list):
    """A cell about to be set: the step is past its waits."""

    def append(self, cell) -> None:
        raise _Passes

    def __iadd__(self, cells):
        if cells:
            raise _Passes
        return self


class _Mine(_Report):
    """The thread's own per-thread lists taken: its Wait Gate alone."""

    def append(self, lst) -> None:
        if lst is not self.probe.gate:
            raise _Passes
        self.probe.latched = list.__getitem__(lst, self.probe.own) is not None


def would_block(m, t: int, d, index: int, back: list, where, gate, probe: _Probe
                ) -> tuple[bool, frozenset, bool, set]:
    """Try thread ``t``'s step ``d`` with the cells ``back`` ((container, key, value) of synchronisation state)
    set to those values: (whether it blocks, the cells (id(container), key) it read, whether it read a latched
    Wait Gate, the kinds of parts (their first two items) it read). ``where(cell)``: the part of a
    (container, key) (None: structure). ``probe``: the prober's, reported to."""
    now = [(obj, key, value(obj, key)) for obj, key, _ in back]
    held, executed = list.__getitem__(gate, t), m.executed
    for obj, key, before in back:
        poke(obj, key, before)
    traced_state.ACTIVE = probe.start(t, where, gate)
    blocked = False
    try:
        m.step(t, d, index)
    except Blocked:
        blocked = True
    except Exception:               # noqa: BLE001 - past the waits, or refused: the step would not wait
        pass
    finally:
        traced_state.ACTIVE, m.executed = None, executed
        probe.where = probe.gate = None            # (the recorder is not kept)
        list.__setitem__(gate, t, held)
        for obj, key, v in now:
            poke(obj, key, v)
    return blocked, frozenset(probe.cells), probe.latched, probe.parts


@dataclass(slots=True)
class Passed:
    """Step ``n`` (thread ``t``) would have blocked without thread ``b``'s changes of synchronisation state from
    its run step ``j`` on; it read ``cells``; ``since``: the number of the thread's own step that latched the
    Wait Gate it read (0: it read none, its wait is its own)."""
    n: int
    t: int
    b: int
    j: int
    cells: frozenset
    since: int
    held: bool = False      # whether the order was kept (``holds``, decided after the run)

    def holds(self, steps, hist: dict, floor, memo: dict | None = None) -> bool:
        """Whether every schedule runs step ``j`` before step ``n``. Assume one runs ``n`` first: then for each
        cell the probe read, (1) only ``t`` and ``b`` ever set it; (2) ``t`` sets none of the cells ``b`` put
        back after ``b`` first did, nor, with a latched wait, any cell after the latch; (3) the other writes
        before ``n`` are in an order every schedule keeps, ``b``'s before the wait's first evaluation (known
        to precede ``floor``: the clock of the step after the latching one, or of ``n`` as far as known). So at each
        evaluation the cells hold what the probe saw, and the step would block: a contradiction. A semaphore
        Value only counted up and down by one (``counts``) was put back by ``b``'s counts alone: (2) and (3)
        then ask only that ``b``'s counts before ``j`` precede ``floor``, since counts commute (and its other
        writes, unless one of them changed the Value: they all come first). ``memo``: what one analysis keeps of
        each cell between calls (``_facts``)."""
        t, b, j, n, since = self.t, self.b, self.j, self.n, self.since
        if memo is None:
            memo = {}
        pair = {t, b}
        for cell in self.cells:
            facts = memo.get(cell)
            if facts is None:
                facts = memo[cell] = _facts(steps, hist.get(cell, ()))
            who, same, tally, at, xs, by, counts_by, checked = facts
            if not who <= pair:
                return False
            # (every write is t's or b's; each thread's are in run order, so its numbers rise with the run steps)
            hi = bisect_left(at, n)
            lo = bisect_left(at, j, 0, hi)      # b's writes before ``lo`` are kept, from it on put back
            mine = by.get(b, ())
            first = bisect_left(mine, lo)
            put_back, counted = None, True      # b's first write from j on, whether all b's from j on count
            for i in mine[first:]:
                if i >= hi:
                    break
                if put_back is None:
                    put_back = at[i]
                if not xs[i].counting:
                    counted = False
                    break
            if counted:
                counted = tally is not None and tally.upto(hi)
            late = put_back if put_back is not None and not counted else n
            ts = by.get(t, ())
            last = bisect_left(ts, hi) - 1      # t's latest write before n: the one any of t's would fail with
            if last >= 0:
                i = ts[last]
                if at[i] > late or since and xs[i].local > since:
                    return False
            if not counted and lo:              # the kept: all writes before ``lo``, then t's before n
                if _unordered(xs, checked, lo):
                    return False
                after = bisect_left(ts, lo)
                if after <= last:
                    x, y = xs[lo - 1], xs[ts[after]]
                    if x.thread != t and x.local > y.clock[x.thread]:
                        return False
            # the latest of b's kept, but for its writes of the Value while idle (that count)
            kept = counts_by.get(b, ()) if counted and same else mine
            i = bisect_left(kept, lo) - 1
            if i >= 0 and xs[kept[i]].local > floor[b]:
                return False
        return True


def _facts(steps, writes: list) -> tuple:
    """Of a cell's writes ((run step, before, after)): the threads that set it, whether every write but the
    counts left it as it was, their ``_Counts`` (None: a value before or after is not an integer), their run
    steps, their steps, per thread the indices of its writes and of its counts, and how far ``_unordered``
    checked them."""
    at = [k for k, _, _ in writes]
    xs = [steps[k] for k in at]
    by: dict = {}
    counts_by: dict = {}
    for i, x in enumerate(xs):
        by.setdefault(x.thread, []).append(i)
        if x.counting:
            counts_by.setdefault(x.thread, []).append(i)
    ints = all(before.__class__ is int and after.__class__ is int for _, before, after in writes)
    return (frozenset(x.thread for x in xs),
            all(before == after for x, (_, before, after) in zip(xs, writes) if not x.counting),
            _Counts(steps, writes) if ints else None, at, xs, by, counts_by, [1, None])


def _unordered(xs: list, checked: list, upto: int) -> bool:
    """Whether two consecutive writes of different threads among the first ``upto`` (``xs``: their steps) are
    in an order some schedule does not keep. ``checked``: [how many are known in order, the index of the
    later write of the first pair found out of order (None: none yet)], kept between calls (the clocks of
    the writes before a step are final when the step's waits are decided)."""
    done, bad = checked
    if bad is not None:
        return bad < upto
    for i in range(done, upto):
        x, y = xs[i - 1], xs[i]
        if x.thread != y.thread and x.local > y.clock[x.thread]:
            checked[1] = i
            return True
    if upto > done:
        checked[0] = upto
    return False


def counts(steps, writes: list, upto: int) -> bool:
    """Whether the writes ((run step, before, after)) of a semaphore Value before run step ``upto`` end in the
    same value in every schedule: the writes of other kinds (SEMINIT) come first, from one thread, and precede
    every count; then one thread counts up and one down (golden COUNTING steps, each a change by one), and no
    schedule brings a count to a bound: before a count down at least 1 (the counts up that precede it in every
    schedule, less the counts down of its thread before it), before a count up at most SEM_LIMIT - 1."""
    if any(before.__class__ is not int or after.__class__ is not int for _, before, after in writes):
        return False
    return _Counts(steps, writes).upto(bisect_left(writes, upto, key=_RUN_STEP))


class _Counts:
    """``counts`` of one semaphore Value's writes (all integers) for ever longer prefixes, its writes tested
    one at a time in run order: a write's test looks at the writes before it alone (a step's clock has seen
    only steps run before it), so a prefix passes while each of its writes does. Each side is one thread's,
    in its order: how many precede a number is a bisection of their numbers."""
    __slots__ = ("steps", "writes", "done", "bad", "setter", "counting", "last", "value", "up", "down", "tu",
                 "td")

    def __init__(self, steps, writes: list):
        self.steps, self.writes = steps, writes
        self.done, self.bad = 0, None   # writes tested; the length of the shortest prefix that fails (None: none)
        self.setter = None              # the thread of the writes before the first count
        self.counting = False           # whether a count was reached (``last``, ``value`` then set)
        self.last, self.value = None, 0     # the latest write before the first count; the Value it left
        self.up, self.down = [], []     # the numbers of the counts up, down
        self.tu = self.td = None        # the thread counting up, down

    def upto(self, hi: int) -> bool:
        """Whether the first ``hi`` writes pass (``counts``)."""
        if self.bad is not None:
            return hi < self.bad
        steps, writes = self.steps, self.writes
        for i in range(self.done, hi):
            if not self._passes(steps, writes, i):
                self.bad = i + 1
                return False
        if hi > self.done:
            self.done = hi
        return True

    def _passes(self, steps, writes: list, i: int) -> bool:
        k, before, after = writes[i]
        x = steps[k]
        if not self.counting:
            if not x.counting:          # a write of another kind: all of them one thread's, before every count
                if self.setter is not None and self.setter != x.thread:
                    return False
                self.setter = x.thread
                return True
            self.counting = True
            if i:
                self.last, self.value = steps[writes[i - 1][0]], writes[i - 1][2]
            else:
                self.value = before
        elif not x.counting:
            return False
        d, t = after - before, x.thread
        if d == 1:
            if self.tu is not None and self.tu != t:
                return False
            self.tu = t
            self.up.append(x.local)
        elif d == -1:
            if self.td is not None and self.td != t:
                return False
            self.td = t
            self.down.append(x.local)
        else:
            return False
        last, vc = self.last, x.clock
        if last is not None and last.thread != t and last.local > vc[last.thread]:
            return False
        up, down, tu, td = self.up, self.down, self.tu, self.td
        if d == -1:
            return self.value + (bisect_right(up, vc[tu]) if tu is not None else 0) - bisect_left(down, x.local) >= 1
        return self.value + bisect_left(up, x.local) - (
            bisect_right(down, vc[td]) if td is not None else 0) <= SEM_LIMIT - 1


def _back(mine: list, x: int) -> dict:
    """The cells a thread changed from its change x on (``mine``: its ``Prober.by``), with what they held
    before (a count: less that thread's counts): cell -> (container, key, value)."""
    out, counted = {}, {}
    for _, cells, _, counting in mine[x:]:
        for obj, k, before, after in cells:
            cell = (id(obj), k)
            if cell not in out:
                out[cell], counted[cell] = (obj, k, before), 0
            if counted[cell] is not None:
                counted[cell] = counted[cell] + after - before if counting else None
    for cell, by in counted.items():
        if by is not None:
            obj, k, _ = out[cell]
            out[cell] = (obj, k, value(obj, k) - by)
    return out


def _container(rec, part: tuple, key):
    """The container of synchronisation cell ``key`` of ``part`` in the recorded run's state (False: none): a
    semaphore, SrcA / SrcB, one of their banks, their unpacker row cursors (tensix_diff.state_parts)."""
    s = rec.m.s
    try:
        if part[0] == "semaphores":
            obj = s.semaphores[part[1]]
        else:
            src = getattr(s, part[0])
            obj = src.banks[part[2]] if len(part) == 3 else \
                src.unpacker_row if part[1] == "unpacker_row" and key.__class__ is int else src
    except (AttributeError, IndexError, TypeError):
        return False
    if isinstance(obj, list):
        has = key.__class__ is int and 0 <= key < len(obj)
    else:
        has = key in getattr(obj, "__dict__", ())
    return obj if has and rec.where((obj, key)) == part else False


def _put_back(mine: dict, x: int, cell):
    """``_back(by, x).get(cell)`` from ``mine`` (a thread's ``Prober.changes``): what ``cell`` held before
    the thread's changes of it from its change x on, as (container, key, value), or None (it changed none)."""
    ch = mine.get(cell)
    if ch is None:
        return None
    at, writes = ch
    i = bisect_left(at, x)
    if i == len(at):
        return None
    obj, k, before, _, _ = writes[i]
    by = 0
    for _, _, was, now, counting in writes[i:]:
        if not counting:
            return obj, k, before
        by += now - was
    return obj, k, value(obj, k) - by


def _reader(obj, key):
    """What reads the value of cell ``key`` of container ``obj`` (``value``'s, but for a copy of a leaf: equal)."""
    return partial(list.__getitem__, obj, key) if isinstance(obj, list) else partial(obj.__dict__.__getitem__, key)


def _action(a):
    """A RISC-V action as a memo key (golden.riscv.RiscvAction: equal kind and arguments, equal action): its
    kind and arguments, or None when they cannot be hashed."""
    key = (a.kind, a.args)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class Prober:
    """During a recorded run: the synchronisation cells each step set and changed, and the probes of steps
    that may wait while another thread has changed such cells since the step was last known to follow it.
    Which steps are probed and from which change is only a matter of cost (an order is kept only when
    ``Passed.holds``): a step is tried from the latest and from the earliest change not yet known to precede
    it, among those of parts its handler has read before (any part while its Wait Gate is latched), and not
    again while nothing has changed since a try that passed. The recorder (tensix_diff.happens_before.Recorder)
    is passed to each call, not kept: a recorded run is freed as soon as it is dropped."""

    def __init__(self):
        self.by: dict[int, list[tuple[int, list, frozenset]]] = {}   # thread -> [(run step, cells, parts)]
        self.at: dict[int, list[int]] = {}                 # thread -> the run steps of ``by``
        self.hist: dict[tuple, list[int]] = {}             # (id(container), key) -> run steps that set it
        self.changes: dict[int, dict] = {}                 # thread -> cell -> (indices in ``by``, writes) changing it
        self.covered: dict[tuple, int] = {}                # (t, b) -> the latest run step of b t follows
        self.read: dict[tuple, set] = {}                   # (t, handler) -> kinds of parts its waits read
        self.passes: set = set()                           # (t, handler) of which a try passed every wait
        self.futile: dict[tuple, tuple] = {}               # (t, handler, b) -> the changes when a try last passed
        self.latched = [0] * 4                             # thread -> the number of its step that latched its gate
        self.others = [False] * 4                          # thread -> whether another thread has changed sync state
        self.found: list[Passed] = []
        self._probe: _Probe | None = None                  # made when a step is first tried
        self._kinds: dict = {}              # (id(container), key) -> (the container, its part's first two items)
        self._cells: dict = {}              # ``_Read.name`` -> (its cell in this run, ``_reader``) (False: none)

    def changed(self, rec, n: int, t: int, sets: list, counting: bool) -> None:
        """Run step ``n`` of thread ``t`` (``counting``: a COUNTING handler's) set the synchronisation cells
        ``sets`` ((container, key, value before, value after))."""
        hist, changed, table = self.hist, [], None
        for c in sets:
            obj, key, before, after = c
            cell = (id(obj), key)
            h = hist.get(cell)
            if h is None:
                hist[cell] = [(n, before, after)]
            else:
                h.append((n, before, after))
            if after is before or after == before:
                continue
            if table is None:       # (its first change)
                mine = self.by.get(t)
                if mine is None:
                    self.others = [u != t or was for u, was in enumerate(self.others)]
                    mine, self.at[t], self.changes[t] = self.by.setdefault(t, []), [], {}
                kinds, table, x, parts = self._kinds, self.changes[t], len(mine), set()
            changed.append(c)
            kind = kinds.get(cell)
            if kind is None or kind[0] is not obj:
                kind = kinds[cell] = (obj, rec.where((obj, key))[:2])
            parts.add(kind[1])
            ch = table.get(cell)
            if ch is None:
                table[cell] = ([x], [(obj, key, before, after, counting)])
            else:
                ch[0].append(x)
                ch[1].append((obj, key, before, after, counting))
        if table is not None:
            mine.append((n, changed, frozenset(parts), counting))
            self.at[t].append(n)

    def probe(self, rec, t: int, d, index: int, local: int, latch) -> None:
        """Before thread ``t`` runs ``d`` as its step ``local`` (``latch``: its Wait Gate's): for each other
        thread, a change of it without which the step blocks."""
        if latch is not None and (d.ins is None or not holds_back(latch, d.ins.name)):
            latch = None            # a latch that cannot hold this step back: its handler's own waits alone
        # the kinds of parts its waits read (None: any part), known once a try passed them all: a try that
        # blocks stops at its first unmet wait (a SrcA bank, never reaching SrcB's)
        handler = d.handler
        wants = None
        if latch is None:
            th = (t, handler)
            if th in self.passes:
                wants = self.read.get(th)
                if wants is not None and not wants:
                    return          # its handler has read no synchronisation state
        ats, futile, covered = self.at, self.futile, self.covered
        own, held = len(ats.get(t, ())), id(latch)
        tried = None
        for b, mine in self.by.items():
            if b == t:
                continue
            at = ats[b]
            key = (t, handler, b)
            now = (len(at), own, held)
            if futile.get(key) == now:
                continue
            first = bisect_right(at, covered.get((t, b), -1))
            last = len(at) - 1      # b's latest change to start from (of a part in ``wants``)
            if wants is not None:
                while last >= first and wants.isdisjoint(mine[last][2]):
                    last -= 1
            if last < first:
                continue
            if tried is None:       # (what every try of this step shares, made when one is first needed)
                tried = self._tried(rec, t, d, index, handler)
                quiet = tried[6]
                if quiet is not None and not quiet[0]:
                    # a try that read no synchronisation state and passed: every try ends so (noted once)
                    if not quiet[2] and (t, handler) not in self.passes:
                        self._noted(t, handler, quiet)
                    futile[key] = now
                    return
            backs = {}
            got = self._try(tried, b, last, mine, backs)
            xs = None
            if not got[0] and got[1] and last > first:
                x = first           # b's earliest change to start from
                if wants is not None:
                    while wants.isdisjoint(mine[x][2]):
                        x += 1
                if x < last and self._since(b, got[1], x):     # more put back might matter
                    xs = self._starts(mine, x, last, wants)
                    best = len(xs) - 1
                    tried_x = self._try(tried, b, xs[0], mine, backs)
                    if tried_x[0]:
                        lo, hi, got = 0, best, tried_x
                        while hi - lo > 1:
                            mid = (lo + hi) // 2
                            tried_x = self._try(tried, b, xs[mid], mine, backs)
                            if tried_x[0]:
                                lo, got = mid, tried_x
                            else:
                                hi = mid
                        best = lo
            if not got[0]:
                futile[key] = now
                if not got[1]:
                    return          # it read no synchronisation state: no other thread's changes matter
                continue
            # the earlier changes of what it read: each order from one may be what lets the next hold
            if xs is None:
                xs = self._starts(mine, first, last, wants)
                best = len(xs) - 1
            n, cells, since = rec.ran(), got[1], self.latched[t]
            for x in range(best):
                for obj, k, _, _ in mine[xs[x]][1]:
                    if (id(obj), k) in cells:
                        tried_x = self._try(tried, b, xs[x], mine, backs)
                        if tried_x[0]:
                            self.found.append(Passed(n, t, b, at[xs[x]], tried_x[1], since if tried_x[2] else 0))
                        break
            self.found.append(Passed(n, t, b, at[xs[best]], got[1], since if got[2] else 0))

    def _tried(self, rec, t: int, d, index: int, handler) -> list:
        """What every try of thread ``t``'s step ``d`` shares (``_try``'s ``tried``): the recorder, the step,
        its handler, its memo (``_attempt``), the memo's ``_QUIET`` entry."""
        if self._probe is None:
            self._probe = _Probe()
        g = list.__getitem__(rec.gate, t)
        memo = (t, d.word if d.ins is not None else _action(d), handler,
                None if g is None else tuple(g.__dict__.values()))
        if memo[1] is None:
            return [rec, t, d, index, handler, None, None]
        return [rec, t, d, index, handler, memo, _QUIET.get(memo)]

    @staticmethod
    def _starts(mine: list, first: int, last: int, wants) -> list:
        """The changes from ``first`` to ``last`` (of ``mine``, a thread's ``by``) of a part in ``wants`` (None:
        any part)."""
        if wants is None:
            return range(first, last + 1)
        return list(compress(range(first, last + 1),
                             map(not_, map(wants.isdisjoint, map(_PARTS, mine[first:last + 1])))))

    def _try(self, tried: list, b: int, x: int, mine: list, backs: dict) -> tuple:
        """``_attempt`` of a step (``tried``: what its tries share, its memo's ``_QUIET`` entry last) from thread
        ``b``'s change x on (``mine``: b's ``by``; ``backs``: b's ``_back``s made so far), or the ``_QUIET``
        outcome; noting what its handler's waits read and whether they all passed."""
        rec, t, d, index, handler, memo, got = tried
        if got is None:
            got = self._attempt(rec, t, d, index, b, x, mine, backs, memo)
            if not got[1] and memo is not None:
                tried[6] = _QUIET.get(memo)     # (a try that read no sync state is kept there)
        self._noted(t, handler, got)
        return got

    def _noted(self, t: int, handler, got: tuple) -> None:
        """Note what a try of thread ``t``'s ``handler`` (``got``: its outcome) read and whether it passed."""
        if not got[2]:
            read = self.read.get((t, handler))
            if read is None:
                read = self.read[t, handler] = set()
            read |= got[3]
            if not got[0]:
                self.passes.add((t, handler))

    def _since(self, b: int, cells: frozenset, x: int) -> bool:
        """Whether thread ``b`` changed one of ``cells`` from its change x on (a cell of ``_back(by[b], x)``)."""
        mine = self.changes[b]
        for cell in cells:
            ch = mine.get(cell)
            if ch is not None and ch[0][-1] >= x:
                return True
        return False

    def _attempt(self, rec, t: int, d, index: int, b: int, x: int, mine: list, backs: dict, memo) -> tuple:
        """``would_block`` with thread ``b``'s changes from its change x on put back (``_back`` of ``mine``, b's
        ``by``, kept in ``backs`` while the step is probed from b: cell -> (container, key, value)), or the
        outcome of an earlier try (in any run) of the same instruction (or RISC-V action) by the same thread
        with the same Wait Gate latch (``memo``; None: not kept) whose cells, read in order, hold the same
        values now: the try decides on those alone (it stops at the first other cell), so it would read the
        same and end alike. Such tries are kept as a tree (``_TRIED``): the first cell a try reads is the same
        for all of them, and each value found there decides the next; its cells are named by part and key,
        found again in this run's state (``_container``). A try that read none ends alike in any run: kept in
        ``_QUIET``, which the caller asks first (before ``_back`` is made)."""
        node = _TRIED.get(memo) if memo is not None else None
        if node is not None:
            table, cells, read = self.changes[b], self._cells, []
            while node.__class__ is _Read:
                got = cells.get(node.name)
                if got is None:
                    obj = _container(rec, node.part, node.key)
                    got = cells[node.name] = obj if obj is False else ((id(obj), node.key), _reader(obj, node.key))
                if got is False:
                    break
                cell, now = got
                read.append(cell)
                ch = table.get(cell)
                try:
                    node = node.then.get(now() if ch is None or ch[0][-1] < x else _put_back(table, x, cell)[2])
                except TypeError:               # (a value that cannot be hashed: not kept)
                    break
            else:
                if node is not None:
                    return node[0], frozenset(read), node[2], node[3]
        probe = self._probe
        back = backs.get(x)
        if back is None:
            back = backs[x] = _back(mine, x)
        got = would_block(rec.m, t, d, index, list(back.values()), rec.where, rec.gate, probe)
        if memo is not None:
            if not probe.seq:
                if len(_QUIET) < QUIET_LIMIT:
                    _QUIET[memo] = (got[0], got[1], got[2], frozenset())
            else:
                self._keep(rec, memo, got)
        return got

    def _keep(self, rec, memo, got: tuple) -> None:
        """Add the try just run (its cells: ``_probe.seq``) to ``_TRIED``."""
        names = [(rec.where((obj, key)), key, v) for obj, key, v in self._probe.seq]
        outcome = (got[0], None, got[2], frozenset(got[3]))
        node = _TRIED.get(memo)
        try:
            if node is None:
                if len(_TRIED) < QUIET_LIMIT:
                    _TRIED[memo] = _chain(names, outcome)
                return
            for i, (part, key, v) in enumerate(names):
                if node.__class__ is not _Read or node.part != part or node.key != key:
                    return                      # (tries of one key read alike while they find alike)
                nxt = node.then.get(v)
                if nxt is None:
                    node.then[v] = _chain(names[i + 1:], outcome)
                    return
                node = nxt
        except TypeError:                       # (a value that cannot be hashed: not kept)
            return

    def keep(self, step, t: int) -> None:
        """Step ``step`` of thread ``t`` ran without blocking: keep what its probes found."""
        step.passed = tuple(self.found)
        for p in self.found:
            self.covered[t, p.b] = p.j
        self.found = []
