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

from dataclasses import dataclass

from golden.analysis import traced_state
from golden.errors import Blocked, GoldenError

from .passed_waits import COUNTING, Prober, counts, sync
from .state_parts import OWN, STRUCTURE, owners
from .step_access import ABSENT as _ABSENT, ALL, StepAccess

_NO_ORDER = frozenset({("mutex",)})          # parts whose release orders nothing


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
        self._now: list[Step] = []    # the steps made at once
        self._scanned = (0, (0, 0))   # (log length, the logged steps' ends then): ``_ends``
        self._thread_at = ([0] * 4, [0] * 4)    # per thread, its steps' count and section up to ``_made``
        self.count = [0] * 4
        self._section: dict[int, int] = {}
        self._waited: dict[int, tuple[set, int]] = {}
        self.prober = Prober()
        self._kept = None             # (steps, writers, users): ``_by_part``
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
            if again is not None and not self._crossed and self._unchanged(again):
                waited[t] = (waited[t][0], len(self._log) - 1)
                raise Blocked(again[2])
        elif prober.others[t] and (latch is not None or prober.read.get((t, d.handler), True)):
            prober.probe(self, t, d, index, self.count[t] + 1, latch)     # (a wait that blocked: ``_release``)
        self.own = t
        traced_state.ACTIVE = self
        try:
            self.m.step(t, d, index)
        except Blocked as e:
            reads, writes = self._finish_from(*self._ends())
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
            self._log.append(len(self.mine) << 40 | len(self.taken) << 2 | t)     # (``_logged_at`` reads it)
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

    def _unchanged(self, again: tuple) -> bool:
        """Whether no recorded step since a blocked attempt (``_retry``) changed a part it read."""
        parts, n0, _ = again
        wrote = self._wrote
        for k in parts:
            if wrote.get(k, -1) >= n0:
                return False
        return True

    def _ends(self) -> tuple[int, int]:
        """Where the logged steps' reports end in ``mine`` and ``taken`` (the step running now reported the rest):
        the latest logged step's ends (looked for back to where the last call looked)."""
        log, (n0, ends) = self._log, self._scanned
        for n in range(len(log) - 1, n0 - 1, -1):
            x = log[n]
            if x.__class__ is int:
                ends = _logged_at(x)[:2]
                break
        self._scanned = (len(log), ends)
        return ends

    def _finish_from(self, m0: int, k0: int) -> tuple[dict, dict]:
        """``_finish`` of the step running now, whose reports in ``mine`` and ``taken`` start at ``m0``, ``k0``
        (those before are the logged steps')."""
        mine, taken = self.mine, self.taken
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
        reads, writes = self._finish_from(*self._ends())
        counting = False
        if self._sync:      # (a count always sets a semaphore)
            counting = handler in COUNTING
            self.prober.changed(self, len(self._log), t, self._sync, counting)
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
        n, wrote = len(self._log), self._wrote
        for k in writes:
            wrote[k] = n
        self._log.append(step)
        self._now.append(step)

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
        such a step is made at once)."""
        log, (count, section) = self._log, self._thread_at
        logged = self._logged()
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
        self.mine, self.taken = [], []
        self._made = len(log)
        self._scanned = (len(log), (0, 0))

    def _by_part(self) -> tuple[dict, dict]:
        """``_threads`` of every step run (kept while no other step runs)."""
        steps, kept = self.steps, self._kept
        if kept is None or kept[0] != len(steps):
            kept = self._kept = (len(steps), *_threads(steps))
        return kept[1], kept[2]

    def _shared(self) -> bool:
        """Whether a part one thread writes is taken by another (else no pair conflicts), without making the
        logged steps Steps: what they took is read alone, their own parts are no other thread's unless a step
        took another thread's (``whole``)."""
        if self._crossed:
            return True
        writers, users = self._by_part() if self._made else _threads(self._now)
        if writers and not self._made and self.taken:
            taken, part = self.taken, {}
            for cell in taken:
                if (id(cell[0]), cell[1]) not in part:
                    part[id(cell[0]), cell[1]] = self.where(cell)
            if not writers.keys().isdisjoint(part.values()) and not _any_shared(writers, users):
                k0 = 0                      # (the logged steps can only add users: read them when it may matter)
                for x in self._log:
                    if x.__class__ is int:
                        _, k1, t = _logged_at(x)
                        for obj, key in taken[k0:k1]:
                            k = part[id(obj), key]
                            if k in writers:
                                users.setdefault(k, set()).add(t)
                        k0 = k1
        return _any_shared(writers, users)

    # --- after the run ---
    def candidates(self) -> list[Candidate]:
        """Conflicting pairs of steps of different threads that nothing orders, in run order."""
        if not self._shared():
            return []
        writers, users = self._by_part()
        shared = set(_shared_parts(writers, users))
        if not shared:
            return []
        clocks: dict[int, list[int]] = {}
        self._by_thread: dict[int, list[Step]] = {}
        facts: dict = {}                # ``Passed.holds``'s of the cells
        steps, hist = self.steps, self.prober.hist
        for n, s in enumerate(steps):
            vc = clocks.get(s.thread)
            if vc is None:
                vc = clocks[s.thread] = [0] * 4
            vc[s.thread] = s.local
            if s.waited:
                src = self._release(n, s, writers)
                if src is not None:
                    vc[:] = [max(a, b) for a, b in zip(vc, src.clock)]
            if s.passed:
                for p in sorted(s.passed, key=lambda p: p.j):
                    first = p.since + 1 if p.since else s.local      # the wait's first evaluation
                    floor = vc if first == s.local else self._clock_of(s.thread, first)
                    p.held = p.holds(steps, hist, floor, facts)
                    if p.held:
                        vc[:] = [max(a, b) for a, b in zip(vc, steps[p.j].clock)]
            s.clock = tuple(vc)
        sems = self.state.semaphores
        commute = {k for k in shared if k[0] == "semaphores" and k[1] < len(sems)
                   and counts(steps, hist.get((id(sems[k[1]]), "value"), []), len(steps))}
        out: list[Candidate] = []
        seen: dict[tuple, dict[int, tuple[list, list]]] = {}     # part -> thread -> (its steps on it, its writes)
        waits = {k: sync(k) for k in shared}     # reading a wait condition only decides when a thread moves
        for s in steps:
            vc = s.clock
            # parts in the order the step reached them (a set's order moves with the hash seed, and the
            # candidates' order decides which reversals are run first)
            for k in _in(s.reads, s.writes, shared):
                by_thread = seen.get(k)
                if by_thread is None:
                    by_thread = seen[k] = {}
                sw = s.writes.get(k, _ABSENT)
                sr = _ABSENT if waits[k] else s.reads.get(k, _ABSENT)
                e = (s, sw, sr)
                if sw is not _ABSENT or sr is not _ABSENT:
                    for other, (earlier, wrote) in by_thread.items():
                        them = earlier if sw is not _ABSENT else wrote
                        if other != s.thread and them and them[-1][0].local > vc[other]:
                            c = _last_conflict(them, s, sw, sr, vc[other], k in commute)
                            if c is not None:
                                out.append(Candidate(other, c.section or c.local, s.thread, s.local, k))
                mine = by_thread.get(s.thread)
                if mine is None:
                    mine = by_thread[s.thread] = ([], [])
                mine[0].append(e)
                if sw is not _ABSENT:
                    mine[1].append(e)
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


def _in(reads: dict, writes: dict, shared: set) -> list:
    """The parts of ``shared`` a step read or wrote, in the order of ``reads | writes``."""
    out = [k for k in reads if k in shared]
    for k in writes:
        if k in shared and k not in reads:
            out.append(k)
    return out


def _logged_at(x: int) -> tuple[int, int, int]:
    """A logged step's entry (``Recorder.step``): where its reports end in ``mine`` and ``taken``, its thread."""
    return x >> 40, x >> 2 & (1 << 38) - 1, x & 3


def _threads(steps: list[Step]) -> tuple[dict, dict]:
    """part -> the threads whose steps wrote it, and part -> those whose steps read it."""
    wrote: dict[int, set] = {}
    read: dict[int, set] = {}
    for s in steps:
        t = s.thread
        if t not in wrote:
            wrote[t], read[t] = set(), set()
        wrote[t].update(s.writes)
        read[t].update(s.reads)
    writers: dict[tuple, set[int]] = {}
    users: dict[tuple, set[int]] = {}
    for by, out in ((wrote, writers), (read, users)):
        for t, parts in by.items():
            for k in parts:
                out.setdefault(k, set()).add(t)
    return writers, users


def _shared_parts(writers: dict, users: dict):
    """The parts one thread writes and another writes or reads (their order matters)."""
    return (k for k, ts in writers.items() if len(ts | users.get(k, set())) > 1 and k not in _NO_ORDER)


def _any_shared(writers: dict, users: dict) -> bool:
    """Whether some part is shared (``_shared_parts``)."""
    return any(True for _ in _shared_parts(writers, users))


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
