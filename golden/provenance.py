"""Data provenance of one golden run (opt-in, tensix_diff.effects): which executed instruction last changed each
state cell, and whose values each instruction read.

``Traced`` is a Tensix whose state is instrumented in place: lists, arrays, L1 and the state's dataclasses are
swapped for subclasses that report reads and writes while a step runs; a plain Tensix never sees them, so
tracking costs nothing when off. Cells: one Dest / SrcA / SrcB / LReg element or Dest valid bit, one L1 byte,
one list entry (a GPR, a Config word, ...), one dataclass field (an RWC, an ADC field, ...); the SFPU flag stack,
the mutexes and the mailboxes are one cell each. A write is a cell whose value the step changed (rewriting the
value already there is no write); a read is any cell the step took (reading part of an array row through a view
counts the whole view). A step depends on the last writers, when it ran, of the cells it read.

The frontend (MOP and replay expanders, golden.ops.replay) runs between steps: an instruction a REPLAY plays
also depends on the program word that loaded its buffer entry (``Occurrence.loader``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .core import Decoded, Tensix
from .ops import ENGAGED, FRONTEND
from .ops.replay import REPLAY_OP
from .riscv import interleave
from .state import L1, TensixState

_REC: "Recorder | None" = None      # the recorder of the step running now (None: nothing records)
_LEAVES = {"cc_stack", "mutex", "mailboxes"}     # mutable containers kept whole, as one cell each


@dataclass
class Occurrence:
    """One executed step: thread, program index, word, whether an expander issued it, and the program index
    of the word that loaded it into the replay buffer (None otherwise)."""
    thread: int
    index: int | None
    word: int
    expanded: bool
    loader: int | None


class Recorder:
    """Last writer per cell and, per occurrence, the occurrences whose values it read."""

    def __init__(self):
        self.last: dict[tuple, int] = {}          # (id(container), key) -> occurrence
        self.deps: list[set[int]] = []
        self.occ = -1
        self.cur: set[int] = set()
        self.old: dict[tuple, tuple] = {}         # cell -> (container, key, value before the step)
        self.touched: dict[int, tuple] = {}       # id(array) -> (array, copy before the step)

    def read(self, obj, key) -> None:
        w = self.last.get((id(obj), key))
        if w is not None:
            self.cur.add(w)

    def will_write(self, obj, key, value) -> None:
        cell = (id(obj), key)
        if cell not in self.old:
            self.old[cell] = (obj, key, value)

    def commit(self) -> None:
        occ, last = self.occ, self.last
        for cell, (obj, key, before) in self.old.items():
            now = _value(obj, key)
            if now is not before and now != before:
                last[cell] = occ
        for arr, before in self.touched.values():
            plain = arr.view(np.ndarray)
            if not np.array_equal(plain, before):
                arr.lw[plain != before] = occ
        self.cur.discard(occ)
        self.deps.append(self.cur)
        self.cur, self.old, self.touched = set(), {}, {}


def _value(obj, key):
    if isinstance(obj, list):
        return list.__getitem__(obj, key)
    v = object.__getattribute__(obj, key)
    return v.copy() if key in _LEAVES else v


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

    def __getitem__(self, i):
        r = _REC
        out = np.ndarray.__getitem__(self.view(np.ndarray), i)
        if r is not None and self.lw is not None:
            self._touch(r)
            w = self.lw[i]
            if np.ndim(w):
                r.cur.update(np.unique(w[w >= 0]).tolist())
            elif w >= 0:
                r.cur.add(int(w))
        return out

    def __setitem__(self, i, v):
        r = _REC
        if r is not None and self.lw is not None:
            self._touch(r)
        np.ndarray.__setitem__(self.view(np.ndarray), i, v)

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        r = _REC
        plain = []
        for x in inputs:
            if isinstance(x, TArray):
                if r is not None and x.lw is not None:
                    x._touch(r)
                    r.cur.update(np.unique(x.lw[x.lw >= 0]).tolist())
                x = x.view(np.ndarray)
            plain.append(x)
        if "out" in kw:
            for o in kw["out"]:
                if isinstance(o, TArray) and r is not None and o.lw is not None:
                    o._touch(r)
            kw["out"] = tuple(o.view(np.ndarray) if isinstance(o, TArray) else o for o in kw["out"])
        return getattr(ufunc, method)(*plain, **kw)


def _tarray(a: np.ndarray) -> TArray:
    t = a.view(TArray)
    t.lw = np.full(a.shape, -1, dtype=np.int32)
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
                    r.cur.update(np.unique(w[w >= 0]).tolist())
        return super().read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        r = _REC
        if r is None:
            return super().write(addr, data)
        self._check(addr, len(data))
        before = np.frombuffer(super().read(addr, len(data)), dtype=np.uint8)
        super().write(addr, data)
        changed = np.flatnonzero(before != np.frombuffer(bytes(data), dtype=np.uint8))
        for page, off, take in self._spans(addr, len(data)):
            lo = page * self.PAGE + off - addr
            hit = changed[(changed >= lo) & (changed < lo + take)]
            if hit.size:
                self.lw.setdefault(page, np.full(self.PAGE, -1, dtype=np.int32))[hit - lo + off] = r.occ

    def last_writers(self, addr: int, n: int) -> set[int]:
        out: set[int] = set()
        for page, off, take in self._spans(addr, n):
            lw = self.lw.get(page)
            if lw is not None:
                w = lw[off:off + take]
                out.update(np.unique(w[w >= 0]).tolist())
        return out


_CLASSES: dict[type, type] = {}


def _traced_class(cls: type) -> type:
    """A subclass of the dataclass ``cls`` whose fields are cells."""
    sub = _CLASSES.get(cls)
    if sub is None:
        names = frozenset(f.name for f in dataclasses.fields(cls))

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
            if f.name not in _LEAVES:
                object.__setattr__(x, f.name, _instrument(getattr(x, f.name)))
        x.__class__ = _traced_class(type(x))
    return x


class Traced(Tensix):
    """Golden with provenance: ``occurrences[k]`` and ``rec.deps[k]`` describe step k; ``rec.last`` and the
    arrays' ``lw`` name each cell's last writer. Instrument after the case's initial state is set."""

    def __init__(self, state: TensixState | None = None):
        super().__init__(state)
        self.rec = Recorder()
        self.occurrences: list[Occurrence] = []
        self.programs: dict[int, list[int]] = {}
        self._loader: dict[int, int | None] = {}

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
        self.occurrences.append(Occurrence(t, index if d.ins is not None else None, d.word, expanded,
                                           self._loader.get(t) if expanded else None))
        _REC = rec
        try:
            super().step(t, d, index)
        finally:
            _REC = None
            rec.commit()

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
        word that loaded its buffer entry (a capture that leaves an entry's word as it was loads nothing)."""
        fe = self.s.frontend[t]
        source: dict[int, int] = {}
        play: list[int] = []

        def feed():
            for index, d in items:
                before = list.copy(fe.replay)
                play.clear()
                if d.ins is not None and d.ins.opcode == REPLAY_OP and not d.fields.load_mode:
                    start, count = d.fields.start_idx & 31, (d.fields.len & 31) or 32
                    play.extend(source.get((start + i) & 31) for i in range(count))
                    play.reverse()
                yield index, d
                for k, (a, b) in enumerate(zip(before, list.copy(fe.replay))):
                    if a != b:
                        source[k] = index
        for index, d in stage(self, t, feed()):
            self._loader[t] = play.pop() if play else None
            yield index, d
