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

from bisect import bisect_right
from dataclasses import dataclass
from operator import attrgetter

from golden.analysis import traced_state
from golden.errors import Blocked, GoldenError

from .passed_waits import COUNTING, Prober, counts, sync
from .state_parts import OWN, STRUCTURE, owners
from .step_access import ABSENT as _ABSENT, ALL, StepAccess

_NO_ORDER = frozenset({("mutex",)})          # parts whose release orders nothing
_LOCAL = attrgetter("local")
_J = attrgetter("j")
_NONE = frozenset()                          # no parts
_ENDS = (1 << 38) - 1                        # a logged step's entry >> 2: where its reports end in ``taken``


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
    """One executed step: its thread, its number in that thread (1-based), the parts it read and wrote (part ->
    detail: Dest's rows or Config's bits as a mask, L1's pages as a frozenset, or ALL) and its vector clock."""
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


class Recorder(StepAccess):
    """Records golden's Tensix.step (golden.analysis.traced_state, the tracer provenance uses): each cell a step
    takes or changes is coarsened to its part (tensix_diff.step_access)."""

    def __init__(self):
        super().__init__()
        self._log: list = []          # per step: its Step, or ``_logged`` for one that reported no more
        self._made = 0                # the log's length when its entries were last all made Steps
        self._last = 0                # the latest logged step's entry since the log's Steps were made (0: none)
        self._thread_at = ([0] * 4, [0] * 4)    # per thread, its steps' count and section up to ``_made``
        self.count = [0] * 4
        self._section: dict[int, int] = {}
        self._waited: dict[int, tuple[set, int]] = {}
        self.prober = Prober()
        self._clocked = False         # whether ``candidates`` gave the steps clocks
        self._wrote: dict = {}        # part -> the log index of the latest recorded step that changed it
        self._again: dict = {}        # thread -> ``_retry``'s (parts, log length, reason) of its last blocked attempt

    def attach(self, m) -> None:
        """Record the run of machine ``m`` (before it starts; its state is instrumented in place)."""
        self.m, self.state = m, traced_state.instrument(m.s, whole=OWN, quiet=STRUCTURE)
        self.gate = m.s.wait_gate
        self._owner = owners(m.s)
        self._dest = {id(m.s.dest.bits), id(m.s.dest.valid)}

    def step(self, t: int, d, index: int) -> None:
        prober, waited = self.prober, self._waited
        latch = list.__getitem__(self.gate, t)
        if t in waited:                         # the step it blocked on, again
            again = self._again.get(t)
            if again is not None and not self._crossed:
                parts, n0, reason = again
                wrote = self._wrote
                for k in parts:                 # blocked again unless a step since changed a part it read
                    if wrote.get(k, -1) >= n0:
                        break
                else:
                    waited[t] = (waited[t][0], len(self._log) - 1)
                    raise Blocked(reason)
        elif prober.others[t] and (latch is not None or prober.read.get((t, d.handler), True)):
            prober.probe(self, t, d, index, self.count[t] + 1, latch)     # (a wait that blocked: ``_release``)
        self.own = t
        traced_state.ACTIVE = self
        try:
            self.m.step(t, d, index)
        except Blocked as e:
            reads, writes = self._finish_from(self._last)
            self._sync, prober.found = [], []
            parts, _ = self._waited.get(t, (set(), 0))
            self._waited[t] = (parts | reads.keys() | writes.keys(), len(self._log) - 1)
            self._again[t] = self._retry(t, reads, writes, e.reason, latch)
            raise
        except GoldenError:
            self._record(t, d.handler)
            raise
        finally:
            traced_state.ACTIVE = None
        found = prober.found
        if self.written or self._more or found or t in waited:
            self._record(t, d.handler)
        else:               # its own parts and cells taken alone: made a Step when asked (``steps``)
            self._last = x = len(self.mine) << 40 | len(self.taken) << 2 | t     # (``_logged_at`` reads it)
            self._log.append(x)
            self.count[t] += 1
        now = list.__getitem__(self.gate, t)
        if now is not latch and now is not None:
            prober.latched[t] = self.count[t]
        if found:
            prober.keep(self._log[-1], t)

    def _retry(self, t: int, reads: dict, writes: dict, reason: str, latch):
        """What tells whether thread ``t``'s next attempt of the step that just blocked would block alike: (the
        parts it read, the log's length, why it blocked), or None when the attempt changed state (its Wait Gate
        or anything but its own parts). golden blocks before any side effect (golden.errors.Blocked) but for a
        satisfied latch forgotten, and what it decides from is traced; so while no recorded step changes those
        parts (and no thread takes another's own parts) the same cells hold the same values, and the attempt
        would read them again, block again for the same reason, and add no part to those its waits read."""
        if list.__getitem__(self.gate, t) is not latch:
            return None
        for k in writes:
            if k.__class__ is not tuple or len(k) != 2 or k[1] != t or k[0] not in OWN:
                return None
        return reads.keys() | writes.keys(), len(self._log), reason

    def _finish_from(self, x: int) -> tuple[dict, dict]:
        """``_finish`` of the step running now, whose reports in ``mine`` and ``taken`` start where those of the
        logged step ``x`` (``_last``) end (those before are the logged steps')."""
        if not x:                   # (none logged, or the first's reports end at the start: all the step's)
            return self._finish()
        mine, taken = self.mine, self.taken
        m0, k0 = x >> 40, x >> 2 & _ENDS
        self.mine, self.taken = mine[m0:], taken[k0:]
        del mine[m0:], taken[k0:]
        try:
            return self._finish()
        finally:
            self.mine, self.taken = mine, taken

    def _logged(self):
        """(log index, thread, mine, taken) of each step logged by ``len(mine) << 40 | len(taken) << 2 | thread``
        (where its reports end in the lists ``mine`` and ``taken``, which hold theirs alone)."""
        m0 = k0 = 0
        mine, taken, log = self.mine, self.taken, self._log
        for n in range(self._made, len(log)):
            x = log[n]
            if x.__class__ is int:
                m1, k1, t = _logged_at(x)
                yield n, t, mine[m0:m1], taken[k0:k1]
                m0, k0 = m1, k1

    def _record(self, t: int, handler) -> None:
        reads, writes = self._finish_from(self._last)
        counting = False
        if self._sync:      # (a count always sets a semaphore)
            counting = handler in COUNTING
            self.prober.changed(self, len(self._log), t, self._sync, counting)
            self._sync = []
        count = self.count
        count[t] += 1
        local = count[t]
        if ("mutex",) in reads:
            held = t in self.state.mutex.values()
            self._section[t] = (self._section.get(t) or local) if held else 0
        w = self._waited.pop(t, None)
        log = self._log
        waited, after = (_NONE, -1) if w is None else (frozenset(w[0]), w[1])
        step = Step(t, local, reads, writes, waited, after, self._section.get(t, 0))
        if counting:
            step.counting = True
        if writes:
            wrote, n = self._wrote, len(log)
            for k in writes:
                wrote[k] = n
        log.append(step)

    def ran(self) -> int:
        """The number of steps recorded so far."""
        return len(self._log)

    @property
    def steps(self) -> list[Step]:
        """The steps run, in order."""
        if self._made < len(self._log):
            self._make_steps()
        return self._log

    def _make_steps(self) -> None:
        """Each logged step made the Step ``_finish`` would have given it at the time: its number follows its
        thread's, its section is its thread's latest step's (only a step reading the mutexes changes it, and
        such a step is made at once); once ``candidates`` gave the steps clocks, its clock is its thread's
        latest step's with its own number (it neither waited nor passed a wait)."""
        log, (count, section) = self._log, self._thread_at
        logged = self._logged()
        made = []
        for n in range(self._made, len(log)):
            x = log[n]
            if x.__class__ is Step:
                count[x.thread], section[x.thread] = x.local, x.section
                continue
            _, t, self.mine, self.taken = next(logged)
            self.own = t
            count[t] += 1
            reads, writes = self._finish()
            log[n] = step = Step(t, count[t], reads, writes)
            step.section = section[t]
            made.append(n)
        self.mine, self.taken = [], []
        self._made = len(log)
        self._last = 0
        if self._clocked and made:
            _clock_made(log, made)

    def _taken_reads(self, used: dict) -> dict:
        """log index -> what each logged step (still an entry) that took cells read of them (part -> detail, in
        ``_finish``'s order; its own parts left out), added to the parts its thread used (``_threads``)."""
        out: dict = {}
        if not self.taken:
            return out
        own, mine, taken, log = self.own, self.mine, self.taken, self._log
        k0 = 0
        try:
            for n in range(self._made, len(log)):
                x = log[n]
                if x.__class__ is int:
                    k1 = x >> 2 & _ENDS         # (``_logged_at``)
                    if k1 > k0:
                        t = x & 3
                        self.own, self.mine, self.taken = t, [], taken[k0:k1]
                        out[n] = reads = self._finish()[0]
                        used.setdefault(t, set()).update(reads)
                    k0 = k1
        finally:
            self.own, self.mine, self.taken = own, mine, taken
        return out

    # --- after the run ---
    def candidates(self) -> list[Candidate]:
        """Conflicting pairs of steps of different threads that nothing orders, in run order. The logged steps
        (``step``) stay entries unless a step took another thread's own part (``whole``): they read and wrote
        their own parts, which no other thread then takes (none is shared, none lets another thread's wait
        pass), and read the cells they took alone (``_taken_reads``); they neither waited nor passed a wait,
        so their clock is their thread's latest Step's with their own number."""
        log = self.steps if self._crossed else self._log
        wrote, used = _threads(log)
        taken = self._taken_reads(used) if not self._crossed else {}
        shared = _shared_parts(wrote, used)
        if not shared:
            return []
        on = self._clock(log, wrote, taken, shared)
        hist, sems = self.prober.hist, self.state.semaphores
        commute = {k for k in shared if k[0] == "semaphores" and k[1] < len(sems)
                   and counts(log, hist.get((id(sems[k[1]]), "value"), []), len(log))}
        return self._conflicts(log, on, shared, commute)

    def _clock(self, log: list, wrote: dict, taken: dict, shared: set) -> dict:
        """Each Step's vector clock: its thread's program order, the step that released its wait
        (``_release``) and the changes its passed waits follow (``Passed.holds``); and part -> the steps on
        it, of the ``shared`` parts, in run order (``taken``: the logged steps' reads, ``_taken_reads``, each
        such step made a Step: its number follows its thread's, its section and clock are its thread's
        latest Step's, with its own number)."""
        clocks = [[0] * 4 for _ in range(4)]     # per thread, the clock of its latest Step
        count, section = [0] * 4, [0] * 4        # per thread, its latest step's number, its latest Step's section
                                                 # (kept while logged steps took cells: ``taken``)
        self._by_thread: dict[int, list[Step]] = {}
        facts: dict = {}                # ``Passed.holds``'s of the cells
        hist = self.prober.hist
        add = {k: [].append for k in shared}     # part -> adds to the steps on it, in run order
        among = shared.intersection
        for n, s in enumerate(log):
            if s.__class__ is int:
                if taken:
                    t = s & 3
                    count[t] = local = count[t] + 1
                    reads = taken.get(n)
                    if reads is not None:
                        c = clocks[t]
                        s = Step(t, local, reads, {}, section=section[t],
                                 clock=(*c[:t], local, *c[t + 1:]))
                        for k in among(reads):
                            add[k](s)
                continue
            t, local = s.thread, s.local
            vc = clocks[t]
            vc[t] = local
            if s.waited:
                src = self._release(log, n, s, wrote)
                if src is not None:
                    vc[:] = map(max, vc, src.clock)
            if s.passed:
                for p in sorted(s.passed, key=_J):
                    first = p.since + 1 if p.since else local      # the wait's first evaluation
                    floor = vc if first == local else self._clock_of(log, t, first)
                    p.held = p.holds(log, hist, floor, facts)
                    if p.held:
                        vc[:] = map(max, vc, log[p.j].clock)
            s.clock = tuple(vc)
            if taken:
                count[t], section[t] = local, s.section
            ks = among(s.reads)
            if s.writes:
                ks.update(among(s.writes))
            for k in ks:
                add[k](s)
        self._clocked = True
        return {k: f.__self__ for k, f in add.items()}

    @staticmethod
    def _conflicts(log: list, on: dict, shared: set, commute: set) -> list[Candidate]:
        """The conflicting pairs of steps on ``shared`` parts that no clock orders, in run order (``on``: part ->
        the steps on it, in run order, ``_clock``; ``commute``: semaphores whose counts commute): each part's
        steps in run order (``_part_conflicts``), then a step's candidates by part in the order the step
        reached them (a set's order moves with the hash seed, and the candidates' order decides which
        reversals run first)."""
        out: list = []
        for k, steps in on.items():
            if len(steps) > 1 and not _ordered(steps):
                quiet = sync(k)
                if not _apart(k, steps, quiet):
                    (_sync_conflicts if quiet else _part_conflicts)(k, steps, k in commute, out)
        if not out:
            return []
        at, count = {}, [0] * 4             # (thread, number) -> log index
        for n, s in enumerate(log):
            if s.__class__ is int:
                t = s & 3
                count[t] += 1
                at[t, count[t]] = n
            else:
                count[s.thread] = s.local
                at[s.thread, s.local] = n
        keyed = [(at[c.second, c.j], _in(s.reads, s.writes, shared).index(c.part), c) for s, c in out]
        keyed.sort(key=lambda x: x[:2])
        return [c for _, _, c in keyed]

    def _clock_of(self, log: list, t: int, local: int) -> tuple:
        """The clock of thread ``t``'s step number ``local`` (none yet: zeros; a logged step's: its thread's
        latest Step's with its own number)."""
        if local <= 0:
            return (0, 0, 0, 0)
        by = self._by_thread.get(t)
        if by is None:
            by = self._by_thread[t] = [s for s in log if s.__class__ is Step and s.thread == t]
        i = bisect_right(by, local, key=_LOCAL) - 1
        if i >= 0 and by[i].local == local:
            return by[i].clock
        c = by[i].clock if i >= 0 else (0, 0, 0, 0)
        return c[:t] + (local,) + c[t + 1:]

    def _release(self, log: list, n: int, s: Step, wrote: dict):
        """The step whose write let ``s`` pass its wait, when that order holds in every schedule: one other
        thread wrote what the wait read since its last blocked attempt, and only the waiter and that thread
        ever write those parts (else another thread's write could release it first). (A logged step wrote its
        own parts alone, which no other thread's wait reads.)"""
        if not s.waited:
            return None
        parts = s.waited - _NO_ORDER
        by: dict[int, Step] = {}
        enabling: set = set()
        for o in log[s.after + 1:n]:
            if o.__class__ is Step and o.thread != s.thread:
                hit = parts.intersection(o.writes)
                if hit:
                    by[o.thread] = o
                    enabling |= hit
        if len(by) != 1:
            return None
        (b, src), = by.items()
        for u, parts in wrote.items():
            if u != s.thread and u != b and not parts.isdisjoint(enabling):
                return None
        return src


def _clock_made(log: list, made: list) -> None:
    """Give the Steps at ``made`` (logged steps, made after the others had clocks) their thread's latest
    Step's clock with their own number."""
    last, new = [(0, 0, 0, 0)] * 4, set(made)
    for n, s in enumerate(log):
        t = s.thread
        if n in new:
            c = last[t]
            s.clock = c[:t] + (s.local,) + c[t + 1:]
        elif s.clock:
            last[t] = s.clock


def _apart(k: tuple, steps: list, quiet: bool) -> bool:
    """Whether no two threads' steps on part ``k`` can conflict: all each thread wrote of it overlaps nothing
    another wrote or read of it (``quiet``: synchronisation state, whose reads are none), so no pair of their
    steps overlaps either."""
    w, r = [_ABSENT] * 4, [_ABSENT] * 4      # per thread: all it wrote of the part; all it read
    for s in steps:
        t = s.thread
        x = s.writes.get(k, _ABSENT)
        if x is not _ABSENT:                # (the unions: _ABSENT is none, ALL takes in all)
            y = w[t]
            w[t] = x if y is _ABSENT else ALL if y is ALL or x is ALL else y | x
        if not quiet:
            x = s.reads.get(k, _ABSENT)
            if x is not _ABSENT:
                y = r[t]
                r[t] = x if y is _ABSENT else ALL if y is ALL or x is ALL else y | x
    for t in range(4):
        x = w[t]
        if x is not _ABSENT:
            for u in range(4):
                if u != t and (_overlap(x, w[u]) or _overlap(x, r[u])):
                    return False
    return True


def _ordered(steps: list) -> bool:
    """Whether each of ``steps`` (those on a part, in run order) follows by its clock every earlier one of the
    other threads: then no pair on the part is unordered (a step's own number is its clock's for its thread)."""
    at = [0, 0, 0, 0]               # per thread: the number of its latest step so far
    for s in steps:
        vc = s.clock
        if at[0] > vc[0] or at[1] > vc[1] or at[2] > vc[2] or at[3] > vc[3]:
            return False
        at[s.thread] = s.local
    return True


def _part_conflicts(k: tuple, steps: list, commute: bool, out: list) -> None:
    """The conflicting pairs on part ``k`` (not synchronisation state) that no clock orders, added to ``out`` as
    (the later step, its Candidate) in run order, a step's by thread in the order the threads first reached
    ``k``. ``steps``: the steps on ``k`` in run order; ``commute``: two counts of this semaphore commute.
    Another thread's steps conflict only where all they wrote or read of the part does (its reads merged when
    asked), and a read only where all the other threads wrote of it does."""
    order: list[int] = []           # the threads on the part, in the order they reached it
    every: list = [None] * 4        # per thread: (step, its write, its read of the part) of its steps on it
    wrote: list = [None] * 4        # per thread: those of its steps that wrote the part
    read: list = [None] * 4         # per thread: what its steps read of the part
    w, r, others = [_ABSENT] * 4, [_ABSENT] * 4, [_ABSENT] * 4   # per thread: all it wrote; read; others wrote
    merged = [0] * 4                # per thread: how many of ``read`` ``r`` takes in
    at, wat = [0] * 4, [0] * 4      # per thread: the number of its latest step on the part, latest write
    for s in steps:
        t = s.thread
        sw = s.writes.get(k, _ABSENT)
        sr = s.reads.get(k, _ABSENT)
        if every[t] is None:
            order.append(t)
            every[t], wrote[t], read[t] = [], [], []
            o = _ABSENT
            for u in order:
                x = w[u]
                if x is not _ABSENT:
                    o = x if o is _ABSENT else ALL if o is ALL or x is ALL else o | x
            others[t] = o
        if sw is _ABSENT:
            if sr is _ABSENT:       # no access: conflicts with nothing, orders nothing
                continue
            o = others[t]
            # (_overlap written out (hot): ALL is None, a Config mask an int, pages a frozenset)
            if o is not _ABSENT and (
                    o is ALL or sr is ALL or (o & sr if o.__class__ is int else not o.isdisjoint(sr))):
                vc = s.clock
                for other in order:
                    x, known = w[other], vc[other]
                    if other != t and wat[other] > known and (
                            x is ALL or sr is ALL or (x & sr if x.__class__ is int else not x.isdisjoint(sr))):
                        if commute:
                            c = _last_conflict(wrote[other], s, sw, sr, known, commute)
                        else:           # (_last_conflict of a read written out: hot)
                            c = None
                            for e, ew, _ in reversed(wrote[other]):
                                if e.local <= known:
                                    break
                                if ew is ALL or sr is ALL or (
                                        ew & sr if ew.__class__ is int else not ew.isdisjoint(sr)):
                                    c = e
                                    break
                        if c is not None:
                            out.append((s, Candidate(other, c.section or c.local, t, s.local, k)))
        else:
            vc = s.clock
            for other in order:
                if other != t and at[other] > vc[other]:
                    x = w[other]
                    # (_overlap(sw, x) or _overlap(x, sr) written out: x, sr may be _ABSENT; sw is not)
                    if x is _ABSENT or not (x is ALL or sw is ALL or (
                            x & sw if x.__class__ is int else not x.isdisjoint(sw)) or sr is not _ABSENT and (
                            sr is ALL or (x & sr if x.__class__ is int else not x.isdisjoint(sr)))):
                        x, i = read[other], merged[other]
                        if i < len(x):
                            r[other], merged[other] = _union(r[other], x, i), len(x)
                        if not _overlap(sw, r[other]):
                            continue
                    c = _last_conflict(every[other], s, sw, sr, vc[other], commute)
                    if c is not None:
                        out.append((s, Candidate(other, c.section or c.local, t, s.local, k)))
        e = (s, sw, sr)
        every[t].append(e)
        at[t] = s.local
        if sw is not _ABSENT:           # (the unions: _ABSENT is none, ALL takes in all)
            wrote[t].append(e)
            wat[t] = s.local
            x = w[t]
            w[t] = sw if x is _ABSENT else ALL if x is ALL or sw is ALL else x | sw
            for u in order:
                if u != t:
                    x = others[u]
                    others[u] = sw if x is _ABSENT else ALL if x is ALL or sw is ALL else x | sw
        if sr is not _ABSENT:
            read[t].append(sr)


def _sync_conflicts(k: tuple, steps: list, commute: bool, out: list) -> None:
    """``_part_conflicts`` of a part of synchronisation state: its reads are none (reading a wait condition
    only decides when a thread moves), so only two writes conflict."""
    order: list[int] = []           # the threads on the part, in the order they reached it
    every: list = [None] * 4        # per thread: (step, its write, none) of its steps that wrote the part
    w = [_ABSENT] * 4               # per thread: all it wrote of the part
    at = [0] * 4                    # per thread: the number of its latest step that wrote the part
    for s in steps:
        t = s.thread
        if every[t] is None:
            order.append(t)
            every[t] = []
        sw = s.writes.get(k, _ABSENT)
        if sw is _ABSENT:
            continue
        vc = s.clock
        for other in order:
            if other != t and at[other] > vc[other] and _overlap(sw, w[other]):
                c = _last_conflict(every[other], s, sw, _ABSENT, vc[other], commute)
                if c is not None:
                    out.append((s, Candidate(other, c.section or c.local, t, s.local, k)))
        every[t].append((s, sw, _ABSENT))
        at[t] = s.local
        x = w[t]
        w[t] = sw if x is _ABSENT else ALL if x is ALL or sw is ALL else x | sw


def _union(x, details: list, i: int):
    """``x`` with ``details[i:]`` taken in (_ABSENT is none, ALL takes in all)."""
    for d in details[i:]:
        if x is ALL:
            break
        x = d if x is _ABSENT else ALL if d is ALL else x | d
    return x


def _in(reads: dict, writes: dict, shared: set) -> list:
    """The parts of ``shared`` a step read or wrote, in the order of ``reads | writes``."""
    out = [k for k in reads if k in shared]
    for k in writes:
        if k in shared and k not in reads:
            out.append(k)
    return out


def _logged_at(x: int) -> tuple[int, int, int]:
    """A logged step's entry (``Recorder.step``): where its reports end in ``mine`` and ``taken``, its thread."""
    return x >> 40, x >> 2 & _ENDS, x & 3


def _threads(steps: list) -> tuple[dict, dict]:
    """thread -> the parts its Steps wrote, and thread -> those they wrote or read (log entries not Steps
    left out)."""
    wrote: dict[int, set] = {}
    used: dict[int, set] = {}
    for s in steps:
        if s.__class__ is int:
            continue
        t = s.thread
        if t in wrote:
            wrote[t].update(s.writes)
            used[t].update(s.reads)
        else:
            wrote[t], used[t] = set(s.writes), set(s.reads)
    for t, parts in wrote.items():
        used[t] |= parts
    return wrote, used


def _shared_parts(wrote: dict, used: dict) -> set:
    """The parts one thread writes and another writes or reads (their order matters)."""
    out: set = set()
    for t, parts in wrote.items():
        for u, theirs in used.items():
            if u != t:
                out |= parts & theirs
    return out - _NO_ORDER


def _last_conflict(earlier: list[tuple], s: Step, sw, sr, known: int, commute: bool = False):
    """The latest of another thread's steps on a part that conflicts with ``s`` and is not ordered before it
    (its number is above ``known``, what ``s``'s clock has seen of that thread). ``earlier``: that thread's
    (step, its write, its read of the part) in run order (only its writes will do when ``s`` only reads);
    ``sw``, ``sr``: those of ``s`` (a wait condition's read is none). ``commute``: two counts of this semaphore
    commute (passed_waits.counts), so they do not conflict."""
    for e, ew, er in reversed(earlier):
        if e.local <= known:
            return None
        if commute and e.counting and s.counting:
            continue
        # _overlap written out (hot): ALL is None, a Config mask an int, pages a frozenset
        if sw is not _ABSENT:
            if ew is not _ABSENT and (ew is None or sw is None or (
                    ew & sw if ew.__class__ is int else not ew.isdisjoint(sw))):
                return e
            if er is not _ABSENT and (er is None or sw is None or (
                    er & sw if er.__class__ is int else not er.isdisjoint(sw))):
                return e
        if ew is not _ABSENT and sr is not _ABSENT and (ew is None or sr is None or (
                ew & sr if ew.__class__ is int else not ew.isdisjoint(sr))):
            return e
    return None
