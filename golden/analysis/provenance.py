"""Data provenance of one golden run (opt-in, tensix_diff.effects): which executed steps' values reach the
cells a caller observes, by data flow checked one step at a time.

``Traced`` is a Tensix whose state golden.analysis.traced_state instruments: each step's reads (with their last writers)
and changes are kept. ``slice(seeds)`` walks the run backwards, undoing each step. A step is live when it last
changed a live cell: an observed one, or one a live step read while it held this step's value, where putting
back the value the cell held before this step changes that reader's live outputs (the reader's semantics re-run
on the rolled-back state, then undone; a re-run golden refuses or that would wait shows nothing). Sync state a
wait took (a semaphore the Wait Gate read, ATGETM's mutex) makes its writer live: without it the wait could last
forever. A SEMWAIT counts when its hold ordered a flow the walk found (``waits``).

The frontend (MOP and replay expanders, golden.frontend.replay) runs between steps: a step a REPLAY plays names the
program word that loaded its buffer entry (``Occurrence.loader``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core import Decoded, Tensix
from ..errors import Blocked, GoldenError
from ..frontend.replay import REPLAY_OP
from ..handlers import FRONTEND, stage_engaged
from ..riscv import interleave
from ..state import Semaphore, TensixState
from . import traced_state as ts
from .traced_state import Recorder, TArray, Undo, instrument, poke, value


@dataclass
class Occurrence:
    """One executed step: thread, program index (None for a RISC-V action), the decoded word, whether an
    expander issued it, and the program index of the word that loaded it into the replay buffer."""
    thread: int
    index: int | None
    decoded: Decoded
    expanded: bool
    loader: int | None


class Traced(Tensix):
    """Golden with provenance: ``occurrences[k]``, ``reads[k]`` (cells step k read, with their writers) and
    ``undo[k]`` (what it changed) describe step k; ``slice`` finds the steps whose values reach given cells.
    Instrument after the case's initial state is set."""

    def __init__(self, state: TensixState | None = None):
        super().__init__(state)
        self.rec = Recorder()
        self.occurrences: list[Occurrence] = []
        self.reads: list[list] = []
        self.undo: list[Undo] = []
        self.programs: dict[int, list[int]] = {}
        self.released: list[tuple[int, tuple]] = []    # (writer, cell) that ended a wait
        self.holds: list[tuple] = []      # (thread, SEMWAIT, first step held, step let go) per wait that held
        self.edges: list[tuple] = []      # (writer, reader, cells) whose value slice() found flowing
        self._loader: dict[int, int | None] = {}
        self._latch: dict[int, int | None] = {}        # thread -> the SEMWAIT whose wait is latched
        self._held: dict[int, tuple] = {}

    def instrument(self) -> None:
        instrument(self.s)

    def run(self, programs, actions=None) -> None:
        self.programs = {t: list(ws) for t, ws in programs.items()}
        super().run(programs, actions)

    def step(self, t: int, d: Decoded, index: int = 0) -> None:
        rec = self.rec
        rec.occ = len(self.occurrences)
        words = self.programs.get(t, ())
        expanded = d.ins is not None and not (index < len(words) and words[index] == d.word)
        self.occurrences.append(Occurrence(t, index if d.ins is not None else None, d, expanded,
                                           self._loader.get(t) if expanded else None))
        rec.reads, rec.taken, rec.written, rec.touched, rec.l1 = [], [], [], {}, []
        ts.ACTIVE = rec
        try:
            super().step(t, d, index)
        except Blocked as b:
            held = b.reason.startswith("latched wait")      # golden.sync.sync.wait_gate, not the step's own wait
            if held and self._latch.get(t) is not None and t not in self._held:
                self._held[t] = (self._latch[t], rec.occ)
            raise
        finally:
            ts.ACTIVE = None
            reads, undo = rec.commit()
            self.reads.append(reads)
            self.undo.append(undo)
        if t in self._held:
            latch, first = self._held.pop(t)
            self.holds.append((t, latch, first, rec.occ))
        if d.ins is not None and d.ins.name in ("SEMWAIT", "STALLWAIT"):
            self._latch[t] = rec.occ if d.ins.name == "SEMWAIT" else None
        if d.ins is not None and (d.ins.name == "ATGETM" or d.ins.name[:3] not in ("SEM", "ATR")):
            # the sync state a wait took (ATGETM's mutex, the Wait Gate's semaphores): without its writer
            # the wait could have lasted forever
            self.released += [(w, ("c", o, key)) for kind, w, o, key in reads if kind == "c" and _is_sync(o, key)]

    # --- the observed cells, as (writer, cell) pairs for slice() ---
    def cell(self, obj, key):
        w = self.rec.last.get((id(obj), key))
        return [] if w is None else [(w, ("c", obj, key))]

    @staticmethod
    def array_cells(arr: TArray):
        lw = arr.lw.reshape(-1)
        return [(j, ("a", arr, np.flatnonzero(lw == j))) for j in np.unique(lw[lw >= 0]).tolist()]

    def l1_cells(self, addr: int, n: int):
        by: dict[int, list[int]] = {}
        for w, a in self.s.l1.last_writers(addr, n):
            by.setdefault(w, []).append(a)
        return [(w, ("l", self.s.l1, np.array(a))) for w, a in by.items()]

    # --- the backward walk ---
    def slice(self, seeds) -> set[int]:
        """The steps whose values reach the ``seeds`` cells (see the module). Leaves the state as it was
        before the run."""
        live: list[list] = [[] for _ in self.occurrences]
        keys: list[set] = [set() for _ in self.occurrences]      # live[j] as cell keys
        memo: dict[tuple, bool] = {}    # (reader's word, writer, what it read, its live outputs) -> flows
        for w, c in seeds:
            live[w].append(c)
            keys[w].add(_key(c))
        counted: set[int] = set()
        for k in range(len(self.occurrences) - 1, -1, -1):
            self._restore(self.undo[k])
            if not live[k]:
                continue
            if any(not _same(_of(self.undo[k], c, 2), _of(self.undo[k], c, 3)) for c in live[k]):
                counted.add(k)      # it changed a live cell (a step that rewrote the value there does not count)
            word, outs = self.occurrences[k].decoded.word, frozenset(map(_kind, live[k]))
            for j, cells in _by_writer(self.reads[k]).items():
                ks = frozenset(map(_key, cells))
                if ks <= keys[j]:
                    flows = True       # already live through another reader: nothing new to learn
                else:
                    mk = (word, j, frozenset(map(_kind, cells)), outs)
                    flows = memo.get(mk)
                    if flows is None:
                        flows = memo[mk] = self._flows(k, j, cells, live[k])
                    if flows:
                        live[j].extend(cells)
                        keys[j] |= ks
                if flows:
                    self.edges.append((j, k, cells))
        return counted

    def waits(self) -> set[int]:
        """The SEMWAITs (after slice) whose hold ordered a flow slice() found (sync state apart): while it
        held its thread, another thread wrote what the thread read after (read too early without the wait),
        or read what the thread overwrote after (overwritten too early without it)."""
        out = set()
        for t, latch, first, let_go in self.holds:
            for j, k, cells in self.edges:
                if all(c[0] == "c" and _is_sync(c[1], c[2]) for c in cells):
                    continue
                th_j, th_k = self.occurrences[j].thread, self.occurrences[k].thread
                if (th_k == t and k >= let_go and th_j != t and first <= j < let_go) or \
                        (th_k != t and first <= k < let_go and self._overwritten(t, let_go, cells)):
                    out.add(latch)
                    break
        return out

    def _overwritten(self, t: int, since: int, cells: list) -> bool:
        """Does a step of thread t from ``since`` on change one of ``cells``?"""
        for s in range(since, len(self.occurrences)):
            if self.occurrences[s].thread != t:
                continue
            u = self.undo[s]
            for kind, obj, key in cells:
                if kind == "c" and (id(obj), key) in u.cells:
                    return True
                if kind == "a" and id(obj) in u.arrays and np.isin(key, u.arrays[id(obj)][1]).any():
                    return True
                if kind == "l" and u.l1 is not None and np.isin(key, u.l1[1]).any():
                    return True
        return False

    def _restore(self, u: Undo) -> None:
        for obj, key, before, _ in u.cells.values():
            poke(obj, key, before)
        for arr, idx, before, _ in u.arrays.values():
            arr.view(np.ndarray).reshape(-1)[idx] = before
        if u.l1 is not None:
            l1, addrs, before, _ = u.l1
            l1.poke(addrs, before)

    def _flows(self, k: int, j: int, cells: list, live: list) -> bool:
        """Does putting back what ``cells`` held before step j change step k's ``live`` outputs?"""
        saved = [(c, _get(c)) for c in cells]
        for c in cells:
            _set(c, _of(self.undo[j], c, 2))
        occ = self.occurrences[k]
        d, gate = occ.decoded, list.copy(self.s.wait_gate)
        scratch = ts.ACTIVE = Recorder(scratch=True)
        try:
            d.handler(self, occ.thread, d.fields)
            shows = any(not _same(_get(c), _of(self.undo[k], c, 3)) for c in live)
        except (GoldenError, Blocked):
            shows = False              # the rolled-back input is refused or would wait: no prediction
        finally:
            ts.ACTIVE = None
        scratch.revert()
        self.s.wait_gate[:] = gate
        for c, v in saved:
            _set(c, v)
        return shows

    def stream(self, t: int, program: Sequence[Decoded], actions=()):
        items = interleave(program, actions) if actions else enumerate(program)
        for stage in FRONTEND:
            if not stage_engaged(self, t, stage, program, actions):
                continue
            if stage.__name__ == "replay_expander":
                items = self._replay_sources(t, stage, items)
            else:
                items = stage(self, t, items)
        return items

    def _replay_sources(self, t: int, stage, items):
        """The replay expander's output, noting for each instruction a REPLAY plays the program index of the
        word that loaded its buffer entry."""
        fe = self.s.frontend[t]
        source: dict[int, int] = {}
        play: list[int] = []

        def feed():
            for index, d in items:
                left, entry = fe.load_left, fe.load_index
                play.clear()
                if d.ins is not None and d.ins.opcode == REPLAY_OP and not d.fields.load_mode:
                    start, count = d.fields.start_idx & 31, (d.fields.len & 31) or 32
                    play.extend(source.get((start + i) & 31) for i in range(count))
                    play.reverse()
                yield index, d
                if d.ins is not None and left and fe.load_left < left:     # captured into ``entry``
                    source[entry] = index
        for index, d in stage(self, t, feed()):
            self._loader[t] = play.pop() if play else None
            yield index, d


def _is_sync(obj, key) -> bool:
    """A semaphore's fields, the mutexes, the mailboxes: what a wait waits on."""
    return isinstance(obj, Semaphore) or key in ("mutex", "mailboxes")


def _by_writer(reads: list) -> dict[int, list]:
    out: dict[int, list] = {}
    for kind, w, obj, key in reads:
        if kind == "c":
            out.setdefault(w, []).append(("c", obj, key))
            continue
        for j in np.unique(w).tolist():
            out.setdefault(j, []).append((kind, obj, key[w == j]))
    return out


def _key(c) -> tuple:
    kind, obj, key = c
    return (id(obj), key) if kind == "c" else (id(obj), key.tobytes())


def _kind(c) -> tuple:
    """A cell of a list or dataclass itself; an array's or L1's cells as the array / L1."""
    kind, obj, key = c
    return (id(obj), key) if kind == "c" else (id(obj),)


def _get(c):
    kind, obj, key = c
    if kind == "c":
        return value(obj, key)
    if kind == "a":
        return obj.view(np.ndarray).reshape(-1)[key].copy()
    return obj.peek(key)


def _set(c, v) -> None:
    kind, obj, key = c
    if kind == "c":
        poke(obj, key, v)
    elif kind == "a":
        obj.view(np.ndarray).reshape(-1)[key] = v
    else:
        obj.poke(key, v)


def _of(u: Undo, c, which: int):
    """The value (2: before, 3: after) step ``u`` gave cell(s) ``c``, which it changed."""
    kind, obj, key = c
    if kind == "c":
        return u.cells[(id(obj), key)][which]
    _, idx, before, after = u.arrays[id(obj)] if kind == "a" else u.l1
    return (before, after)[which - 2][np.searchsorted(idx, key)]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a is b or a == b
