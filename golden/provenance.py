"""Data provenance of one golden run (opt-in, tensix_diff.effects): which executed step's values reach the
cells a caller observes, by data flow checked one step at a time.

``Traced`` is a Tensix whose state is instrumented in place: lists, arrays, L1 and the state's dataclasses are
swapped for subclasses that report reads and writes while a step runs; a plain Tensix never sees them, so
tracking costs nothing when off. Cells: one Dest / SrcA / SrcB / LReg element or Dest valid bit, one L1 byte,
one list entry (a GPR, a Config word, ...), one dataclass field (an RWC, an ADC field, ...); the SFPU flag stack,
the mutexes and the mailboxes are one cell each. A write is a cell the step assigned or changed; a read is any
cell the step took (taking a view of an array reads all of it). The Wait Gate latches are not tracked: they
order issue, they carry no data.

``slice(seeds)`` walks the run backwards, undoing each step. A step is live when it last wrote a live cell
(observed, or read by a live step while it held this step's value, where putting back the value the cell held
before this step changes that reader's live outputs: the reader's semantics re-run on the rolled-back state,
then undone); a live step counts when it changed one of its live cells (rewriting the value already there
does not count).

The frontend (MOP and replay expanders, golden.ops.replay) runs between steps: a step a REPLAY plays names the
program word that loaded its buffer entry (``Occurrence.loader``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .core import Decoded, Tensix
from .errors import Blocked, GoldenError
from .ops import ENGAGED, FRONTEND
from .ops.replay import REPLAY_OP
from .riscv import interleave
from .state import L1, Semaphore, TensixState

_REC: "Recorder | None" = None      # the recorder of the step running now (None: nothing records)
_LEAVES = {"cc_stack", "mutex", "mailboxes"}     # mutable containers kept whole, as one cell each
_UNTRACKED = {"wait_gate"}
REWRITES = False


@dataclass
class Occurrence:
    """One executed step: thread, program index (None for a RISC-V action), the decoded word, whether an
    expander issued it, and the program index of the word that loaded it into the replay buffer."""
    thread: int
    index: int | None
    decoded: Decoded
    expanded: bool
    loader: int | None


@dataclass
class _Undo:
    """What one step changed: cells (obj, key, before, after), arrays (idx, before, after), L1 bytes."""
    cells: dict
    arrays: dict
    l1: tuple | None


class Recorder:
    """While a step runs: its reads (with their writers) and the values before its writes."""

    def __init__(self, scratch: bool = False):
        self.scratch = scratch
        self.last: dict[tuple, int] = {}          # (id(container), key) -> occurrence
        self.occ = -1
        self.reads: list = []
        self.old: dict[tuple, tuple] = {}         # cell -> (container, key, value before the step)
        self.touched: dict[int, tuple] = {}       # id(array) -> (array, copy before the step)
        self.written: dict[int, list] = {}        # id(array) -> flat indices assigned to
        self.l1: list = []                        # (L1, addresses written, before, after)

    def read(self, obj, key) -> None:
        w = self.last.get((id(obj), key))
        if w is not None:
            self.reads.append(("c", w, obj, key))

    def will_write(self, obj, key, value) -> None:
        cell = (id(obj), key)
        if cell not in self.old:
            self.old[cell] = (obj, key, value)

    def commit(self) -> tuple[list, _Undo]:
        occ, last = self.occ, self.last
        cells, arrays = {}, {}
        for cell, (obj, key, before) in self.old.items():
            now = _value(obj, key)
            if REWRITES or not (now is before or now == before):
                last[cell] = occ
                cells[cell] = (obj, key, before, now)
        for arr, before in self.touched.values():
            flat, old = arr.view(np.ndarray).reshape(-1), before.reshape(-1)
            idx = np.flatnonzero(flat != old)
            if REWRITES:
                idx = np.union1d(idx, np.concatenate(self.written.get(id(arr), [[]])))
            idx = idx.astype(np.intp)
            if idx.size:
                arr.lw.reshape(-1)[idx] = occ
                arrays[id(arr)] = (arr, idx, old[idx], flat[idx].copy())
        l1 = None
        if self.l1:        # per byte: the value before the step's first write, after its last
            addrs = np.concatenate([a for _, a, _, _ in self.l1])
            before, after = (np.concatenate([x[i] for x in self.l1]) for i in (2, 3))
            u, first = np.unique(addrs, return_index=True)
            _, rev = np.unique(addrs[::-1], return_index=True)
            l1 = (self.l1[0][0], u, before[first], after[len(addrs) - 1 - rev])
        return self.reads, _Undo(cells, arrays, l1)

    def revert(self) -> None:
        """Put back everything the step wrote (a scratch re-run)."""
        for obj, key, before in self.old.values():
            _poke(obj, key, before)
        for arr, before in self.touched.values():
            arr.view(np.ndarray)[...] = before
        for l1, addrs, before, _ in reversed(self.l1):
            l1.poke(addrs, before)


def _value(obj, key):
    if isinstance(obj, list):
        return list.__getitem__(obj, key)
    v = object.__getattribute__(obj, key)
    return v.copy() if key in _LEAVES else v


def _poke(obj, key, value) -> None:
    if isinstance(obj, list):
        list.__setitem__(obj, key, value)
    else:
        object.__setattr__(obj, key, value.copy() if key in _LEAVES else value)


class TList(list):
    """A list whose entries are cells."""

    def _keys(self, i):
        return range(len(self))[i] if isinstance(i, slice) else (i % len(self),)

    def __getitem__(self, i):
        r = _REC
        if r is not None:
            for k in self._keys(i):
                r.read(self, k)
        return list.__getitem__(self, i)

    def __setitem__(self, i, v):
        r = _REC
        if r is not None:
            for k in self._keys(i):
                r.will_write(self, k, list.__getitem__(self, k))
        list.__setitem__(self, i, v)

    def __iter__(self):
        r = _REC
        if r is not None:
            for k in range(len(self)):
                r.read(self, k)
        return list.__iter__(self)


class TArray(np.ndarray):
    """An array whose elements are cells; ``lw`` holds each element's last writer (-1: none). Arrays numpy
    derives from it carry no ``lw`` and record nothing; a ufunc on the whole array reads all of it."""

    lw = None

    def _touch(self, r: Recorder) -> None:
        if id(self) not in r.touched:
            r.touched[id(self)] = (self, self.view(np.ndarray).copy())

    def _read(self, r: Recorder, i) -> None:
        self._touch(r)
        w = self.lw[i] if i is not None else self.lw
        if np.ndim(w):
            hit = w >= 0
            if hit.any():
                r.reads.append(("a", w[hit].ravel(), self, (self.ids[i] if i is not None else self.ids)[hit].ravel()))
        elif w >= 0:
            r.reads.append(("a", np.array([w]), self, np.array([self.ids[i]])))

    def __getitem__(self, i):
        r = _REC
        out = np.ndarray.__getitem__(self.view(np.ndarray), i)
        if r is not None and self.lw is not None:
            self._read(r, i)
        return out

    def __setitem__(self, i, v):
        r = _REC
        if r is not None and self.lw is not None:
            self._touch(r)
            r.written.setdefault(id(self), []).append(np.ravel(self.ids[i]))
        np.ndarray.__setitem__(self.view(np.ndarray), i, v)

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        r = _REC
        plain = []
        for x in inputs:
            if isinstance(x, TArray):
                if r is not None and x.lw is not None:
                    x._read(r, None)
                x = x.view(np.ndarray)
            plain.append(x)
        if "out" in kw:
            for o in kw["out"]:
                if isinstance(o, TArray) and r is not None and o.lw is not None:
                    o._touch(r)
                    r.written.setdefault(id(o), []).append(o.ids.ravel())
            kw["out"] = tuple(o.view(np.ndarray) if isinstance(o, TArray) else o for o in kw["out"])
        return getattr(ufunc, method)(*plain, **kw)


def _tarray(a: np.ndarray) -> TArray:
    t = np.ascontiguousarray(a).view(TArray)
    t.lw = np.full(a.shape, -1, dtype=np.int32)
    t.ids = np.arange(a.size).reshape(a.shape)
    return t


class TL1(L1):
    """L1 whose bytes are cells (last writers per 4 KiB page, made when first written)."""

    def __init__(self, src: L1):
        super().__init__()
        self.pages = src.pages
        self.lw: dict[int, np.ndarray] = {}

    def _spans(self, addr: int, n: int):
        while n > 0:
            page, off = divmod(addr, self.PAGE)
            take = min(n, self.PAGE - off)
            yield page, off, take
            addr, n = addr + take, n - take

    def read(self, addr: int, n: int) -> bytes:
        r = _REC
        if r is not None:
            for page, off, take in self._spans(addr, n):
                lw = self.lw.get(page)
                if lw is not None:
                    w = lw[off:off + take]
                    hit = np.flatnonzero(w >= 0)
                    if hit.size:
                        r.reads.append(("l", w[hit], self, page * self.PAGE + off + hit))
        return super().read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        r = _REC
        if r is None:
            return super().write(addr, data)
        self._check(addr, len(data))
        before = np.frombuffer(super().read(addr, len(data)), dtype=np.uint8)
        after = np.frombuffer(bytes(data), dtype=np.uint8)
        super().write(addr, data)
        changed = np.arange(len(data)) if REWRITES else np.flatnonzero(before != after)
        r.l1.append((self, addr + changed, before[changed], after[changed]))
        if r.scratch:
            return
        for page, off, take in self._spans(addr, len(data)):
            lo = page * self.PAGE + off - addr
            hit = changed[(changed >= lo) & (changed < lo + take)]
            if hit.size:
                self.lw.setdefault(page, np.full(self.PAGE, -1, dtype=np.int32))[hit - lo + off] = r.occ

    def poke(self, addrs: np.ndarray, values: np.ndarray) -> None:
        pages = addrs // self.PAGE
        for page in np.unique(pages).tolist():
            sel = pages == page
            p = np.frombuffer(self.pages.setdefault(page, bytearray(self.PAGE)), dtype=np.uint8)
            p[addrs[sel] - page * self.PAGE] = values[sel]

    def peek(self, addrs: np.ndarray) -> np.ndarray:
        out = np.zeros(len(addrs), dtype=np.uint8)
        pages = addrs // self.PAGE
        for page in np.unique(pages).tolist():
            if page in self.pages:
                sel = pages == page
                out[sel] = np.frombuffer(self.pages[page], dtype=np.uint8)[addrs[sel] - page * self.PAGE]
        return out

    def last_writers(self, addr: int, n: int):
        """(writer, address) of the written bytes of [addr, addr + n)."""
        for page, off, take in self._spans(addr, n):
            lw = self.lw.get(page)
            if lw is not None:
                hit = np.flatnonzero(lw[off:off + take] >= 0)
                yield from zip(lw[off + hit].tolist(), (page * self.PAGE + off + hit).tolist())


_CLASSES: dict[type, type] = {}


def _traced_class(cls: type) -> type:
    """A subclass of the dataclass ``cls`` whose fields are cells."""
    sub = _CLASSES.get(cls)
    if sub is None:
        names = frozenset(f.name for f in dataclasses.fields(cls)) - _UNTRACKED

        def __getattribute__(self, name):
            v = object.__getattribute__(self, name)
            r = _REC
            if r is not None and name in names:
                r.read(self, name)
                if name in _LEAVES:
                    r.will_write(self, name, v.copy())
            return v

        def __setattr__(self, name, v):
            r = _REC
            if r is not None and name in names:
                r.will_write(self, name, _value(self, name))
            object.__setattr__(self, name, v)
        sub = _CLASSES[cls] = type(f"Traced{cls.__name__}", (cls,),
                                   {"__getattribute__": __getattribute__, "__setattr__": __setattr__})
    return sub


def _instrument(x):
    """``x`` with its containers swapped for traced ones, recursively (in place where it can)."""
    if isinstance(x, np.ndarray):
        return _tarray(x)
    if isinstance(x, list):
        return TList(_instrument(v) for v in x)
    if isinstance(x, dict):
        return {k: _instrument(v) for k, v in x.items()}
    if isinstance(x, L1):
        return TL1(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            if f.name not in _LEAVES | _UNTRACKED:
                object.__setattr__(x, f.name, _instrument(getattr(x, f.name)))
        x.__class__ = _traced_class(type(x))
    return x


class Traced(Tensix):
    """Golden with provenance: ``occurrences[k]``, ``reads[k]`` (cells step k read, with their writers) and
    ``undo[k]`` (what it changed) describe step k; ``slice`` finds the steps whose values reach given cells.
    Instrument after the case's initial state is set."""

    def __init__(self, state: TensixState | None = None):
        super().__init__(state)
        self.rec = Recorder()
        self.occurrences: list[Occurrence] = []
        self.reads: list[list] = []
        self.undo: list[_Undo] = []
        self.programs: dict[int, list[int]] = {}
        self.released: list[tuple[int, tuple]] = []    # (writer, cell) that ended a wait
        self.holds: list[tuple] = []      # (thread, SEMWAIT, first step held, step let go) per wait that held
        self.edges: list[tuple] = []      # (writer, reader, cells) whose value slice() found flowing
        self._loader: dict[int, int | None] = {}
        self._latch: dict[int, int | None] = {}        # thread -> the SEMWAIT whose wait is latched
        self._held: dict[int, tuple] = {}

    def instrument(self) -> None:
        _instrument(self.s)

    def run(self, programs, actions=None) -> None:
        self.programs = {t: list(ws) for t, ws in programs.items()}
        super().run(programs, actions)

    def step(self, t: int, d: Decoded, index: int = 0) -> None:
        global _REC
        rec = self.rec
        rec.occ = len(self.occurrences)
        words = self.programs.get(t, ())
        expanded = d.ins is not None and not (index < len(words) and words[index] == d.word)
        self.occurrences.append(Occurrence(t, index if d.ins is not None else None, d, expanded,
                                           self._loader.get(t) if expanded else None))
        rec.reads, rec.old, rec.touched, rec.written, rec.l1 = [], {}, {}, {}, []
        _REC = rec
        try:
            super().step(t, d, index)
        except Blocked as b:
            held = b.reason.startswith("latched wait")      # golden.ops.sync.wait_gate, not the step's own wait
            if held and self._latch.get(t) is not None and t not in self._held:
                self._held[t] = (self._latch[t], rec.occ)
            raise
        finally:
            _REC = None
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
        memo: set[tuple] = set()             # (reader's word, writer, what it read) found flowing
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
            word = self.occurrences[k].decoded.word
            for j, cells in _by_writer(self.reads[k]).items():
                ks = frozenset(map(_key, cells))
                if ks <= keys[j]:
                    flows = True       # already live through another reader: nothing new to learn
                else:
                    mk = (word, j, frozenset(_kind(c) for c in cells))
                    flows = mk in memo or self._flows(k, j, cells, live[k])
                    if flows:
                        memo.add(mk)
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

    def _restore(self, u: _Undo) -> None:
        for obj, key, before, _ in u.cells.values():
            _poke(obj, key, before)
        for arr, idx, before, _ in u.arrays.values():
            arr.view(np.ndarray).reshape(-1)[idx] = before
        if u.l1 is not None:
            l1, addrs, before, _ = u.l1
            l1.poke(addrs, before)

    def _flows(self, k: int, j: int, cells: list, live: list) -> bool:
        """Does putting back what ``cells`` held before step j change step k's ``live`` outputs?"""
        global _REC
        saved = [(c, _get(c)) for c in cells]
        for c in cells:
            _set(c, _of(self.undo[j], c, 2))
        occ = self.occurrences[k]
        d, gate = occ.decoded, list.copy(self.s.wait_gate)
        scratch = _REC = Recorder(scratch=True)
        try:
            d.handler(self, occ.thread, d.fields)
            shows = any(not _same(_get(c), _of(self.undo[k], c, 3)) for c in live)
        except (GoldenError, Blocked):
            shows = False              # the rolled-back input is refused or would wait: no prediction
        finally:
            _REC = None
        scratch.revert()
        self.s.wait_gate[:] = gate
        for c, v in saved:
            _set(c, v)
        return shows

    def stream(self, t: int, program: Sequence[Decoded], actions=()):
        if not actions and not any(engaged(self, t, program) for engaged in ENGAGED):
            return enumerate(program)
        items = interleave(program, actions) if actions else enumerate(program)
        for stage in FRONTEND:
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
        return _value(obj, key)
    if kind == "a":
        return obj.view(np.ndarray).reshape(-1)[key].copy()
    return obj.peek(key)


def _set(c, v) -> None:
    kind, obj, key = c
    if kind == "c":
        _poke(obj, key, v)
    elif kind == "a":
        obj.view(np.ndarray).reshape(-1)[key] = v
    else:
        obj.poke(key, v)


def _of(u: _Undo, c, which: int):
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
