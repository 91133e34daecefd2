"""Golden state instrumented in place: the one tracer of the cells a step reads and changes, for data provenance
(golden.analysis.provenance: with their last writers) and the race check (tensix_diff.happens_before: by part).

``instrument(s)`` swaps a TensixState's lists, arrays, L1 and dataclasses for subclasses that report to the
recorder set in ``ACTIVE`` while a step runs (None: they behave as the plain types and record nothing; a
plain Tensix never holds them, so tracking costs nothing when off). A recorder (``Recorder`` below,
tensix_diff.happens_before.Recorder) gets in its list ``taken`` the (container, key) of each cell a step
takes and in ``written`` the (container, key, value before) of each cell about to be set (lists are cheaper
than calls; the recorder reads them at the end of the step), ``read_array(arr, index)`` and ``touch(arr, index)`` (about to be written at ``index``, None: anywhere) for an
array, ``read_l1(l1, addr, n)`` and ``wrote_l1(l1, addr, n, changed, before, after)`` for L1, and ``own``, ``mine``
and ``whole(lst, i)`` for the entries of a TWhole list (only the race check asks for those). Config words are
read and set by bits where golden says which it uses or may change (``TList.bits``, ``fields``,
``read_fields``, ``set_bits``):
``field(lst, i, mask)``, ``read_bits(lst, {i: mask})`` and ``may_set(lst, i, mask)``.

Cells: one Dest / SrcA / SrcB / LReg element or Dest valid bit, one L1 byte, one list entry (a GPR, a Config
word, ...), one dataclass field (an RWC, an ADC field, ...); the SFPU flag stack, the mutexes and the
mailboxes are one cell each. A list of containers and a field holding a list are structure: their entries
are the cells (setting such a field is still a write). A write is a cell whose value the step changed
(writing the value already there is no write); a read is any cell the step took (taking a view of an array
reads all of it). The Wait Gate latches are not instrumented: they order issue, they carry no data (taking
them is reported, as a cell of the state).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..state import L1

ACTIVE: "Recorder | None" = None    # the recorder of the step running now (None: nothing records)
_LEAVES = {"cc_stack", "mutex", "mailboxes"}     # mutable containers kept whole, as one cell each
_UNTRACKED = {"wait_gate"}
_SCALARS = {int, bool, float, str, type(None)}
_GET = list.__getitem__


@dataclass
class Undo:
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
        self.taken: list = []                     # (container, key) of the cells read
        self.written: list = []                   # (container, key, value before) of the cells set
        self.touched: dict[int, tuple] = {}       # id(array) -> (array, copy before the step)
        self.l1: list = []                        # (L1, addresses changed, before, after)

    def touch(self, arr: "TArray", i=None) -> None:
        if id(arr) not in self.touched:
            self.touched[id(arr)] = (arr, arr.view(np.ndarray).copy())

    def read_array(self, arr: "TArray", i) -> None:
        self.touch(arr)
        w = arr.lw[i] if i is not None else arr.lw
        if np.ndim(w):
            hit = w >= 0
            if hit.any():
                self.reads.append(("a", w[hit].ravel(), arr, (arr.ids[i] if i is not None else arr.ids)[hit].ravel()))
        elif w >= 0:
            self.reads.append(("a", np.array([w]), arr, np.array([arr.ids[i]])))

    def field(self, lst: "TList", i: int, mask: int) -> None:
        """Bits of entry i read: the entry (provenance follows whole words)."""
        self.taken.append((lst, i))

    def read_bits(self, lst: "TList", bits: dict) -> None:
        """``field`` of each entry i of ``bits`` (i -> its bits read)."""
        for i, mask in bits.items():
            self.field(lst, i, mask)

    def may_set(self, lst: "TList", i: int, mask: int) -> None:
        """Entry i set, changing at most the bits ``mask`` (provenance: the entry is written when it changes)."""

    def read_l1(self, l1: "TL1", addr: int, n: int) -> None:
        self.reads += [("l", w, l1, a) for w, a in l1.writers(addr, n)]

    def wrote_l1(self, l1: "TL1", addr: int, n: int, changed, before, after) -> None:
        if changed.size:
            self.l1.append((l1, addr + changed, before[changed], after[changed]))
            if not self.scratch:
                l1.mark(addr, n, changed, self.occ)

    def commit(self) -> tuple[list, Undo]:
        occ, last = self.occ, self.last
        for obj, key in self.taken:
            w = last.get((id(obj), key))
            if w is not None:
                self.reads.append(("c", w, obj, key))
        cells, arrays = {}, {}
        for cell, (obj, key, before) in firsts(self.written).items():
            now = value(obj, key)
            if not (now is before or now == before):
                last[cell] = occ
                cells[cell] = (obj, key, before, now)
        for arr, before in self.touched.values():
            flat, old = arr.view(np.ndarray).reshape(-1), before.reshape(-1)
            idx = np.flatnonzero(flat != old)
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
        return self.reads, Undo(cells, arrays, l1)

    def revert(self) -> None:
        """Put back everything the step wrote (a scratch re-run)."""
        for obj, key, before in firsts(self.written).values():
            poke(obj, key, before)
        for arr, before in self.touched.values():
            arr.view(np.ndarray)[...] = before
        for l1, addrs, before, _ in reversed(self.l1):
            l1.poke(addrs, before)


def firsts(written: list) -> dict:
    """cell -> (container, key, value before the step) of the cells a step set."""
    out: dict = {}
    for obj, key, before in written:
        cell = (id(obj), key)
        if cell not in out:
            out[cell] = (obj, key, before)
    return out


def value(obj, key):
    if isinstance(obj, list):
        return list.__getitem__(obj, key)
    v = obj.__dict__[key]
    return v.copy() if key in _LEAVES else v


def poke(obj, key, value) -> None:
    if isinstance(obj, list):
        list.__setitem__(obj, key, value)
    else:
        obj.__dict__[key] = value.copy() if key in _LEAVES else value


class TList(list):
    """A list whose entries are cells."""

    def _keys(self, i):
        return range(len(self))[i] if isinstance(i, slice) else (i % len(self),)

    def __getitem__(self, i):
        r = ACTIVE
        if r is not None:
            if i.__class__ is int:
                r.taken.append((self, i % len(self)))
            else:
                r.taken += [(self, k) for k in self._keys(i)]
        return _GET(self, i)

    def __setitem__(self, i, v):
        r = ACTIVE
        if r is not None:
            r.written += [(self, k, list.__getitem__(self, k)) for k in self._keys(i)]
        list.__setitem__(self, i, v)

    def __iter__(self):
        r = ACTIVE
        if r is not None:
            r.taken += [(self, k) for k in range(len(self))]
        return list.__iter__(self)

    def bits(self, i: int, mask: int) -> int:
        """Entry i, of which the caller uses only the bits ``mask`` (golden.config_words)."""
        r = ACTIVE
        if r is not None:
            r.field(self, i, mask)
        return _GET(self, i)

    def fields(self, bits: dict) -> list:
        """The entries as a plain list, of which the caller uses only the bits ``bits[i]`` of entry i (``bits``
        is not changed once passed)."""
        r = ACTIVE
        if r is not None and bits:
            r.read_bits(self, bits)
        return list.copy(self)

    def read_fields(self, bits: dict) -> None:
        """``fields`` for a caller that took the entries unrecorded (``list.__getitem__``): reports alone."""
        r = ACTIVE
        if r is not None and bits:
            r.read_bits(self, bits)

    def set_bits(self, i: int, mask: int, v) -> None:
        """Entry i = ``v``, a write that may change only the bits ``mask`` (the rest of ``v`` is the entry's)."""
        r = ACTIVE
        if r is not None:
            r.written.append((self, i, list.__getitem__(self, i)))
            r.may_set(self, i, mask)
        list.__setitem__(self, i, v)


class TWhole(list):
    """A list whose entries are left plain, each reported whole when taken or set (before the handler sees
    it): entry ``r.own`` (the stepping thread's) by appending the list to ``r.mine``, any other by
    ``r.whole(lst, i)``; for a recorder that wants them whole rather than cell by cell."""

    def __getitem__(self, i):
        r = ACTIVE
        if r is not None:
            if i == r.own:
                mine = r.mine
                if not mine or mine[-1] is not self:     # (taken again at once: reported once)
                    mine.append(self)
            elif i.__class__ is int:
                r.whole(self, i % len(self))
            else:
                for k in range(len(self))[i]:
                    r.whole(self, k)
        return _GET(self, i)

    def __setitem__(self, i, v):
        self[i]
        list.__setitem__(self, i, v)

    def __iter__(self):
        return (self[k] for k in range(len(self)))


class TArray(np.ndarray):
    """An array whose elements are cells; ``lw`` holds each element's last writer (-1: none), ``ids`` their
    flat indices (both made when first asked for). Arrays numpy derives from it are not ``tracked`` and
    record nothing; a ufunc on the whole array reads all of it."""

    tracked = False
    plain = None        # a tracked array's view as a plain ndarray

    @property
    def lw(self) -> np.ndarray:
        if "_lw" not in self.__dict__:
            self._lw = np.full(self.shape, -1, dtype=np.int32)
        return self._lw

    @property
    def ids(self) -> np.ndarray:
        if "_ids" not in self.__dict__:
            self._ids = np.arange(self.size).reshape(self.shape)
        return self._ids

    def __getitem__(self, i):
        p = self.plain
        if p is None:
            return np.ndarray.__getitem__(self.view(np.ndarray), i)
        out = p[i]
        r = ACTIVE
        if r is not None:
            r.read_array(self, i)
        return out

    def __setitem__(self, i, v):
        p = self.plain
        if p is None:
            return np.ndarray.__setitem__(self.view(np.ndarray), i, v)
        r = ACTIVE
        if r is not None:
            r.touch(self, i)
        p[i] = v

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        r = ACTIVE
        plain = []
        for x in inputs:
            if isinstance(x, TArray):
                if r is not None and x.tracked:
                    r.read_array(x, None)
                x = x.view(np.ndarray)
            plain.append(x)
        if "out" in kw:
            for o in kw["out"]:
                if isinstance(o, TArray) and r is not None and o.tracked:
                    r.touch(o)
            kw["out"] = tuple(o.view(np.ndarray) if isinstance(o, TArray) else o for o in kw["out"])
        return getattr(ufunc, method)(*plain, **kw)


def _tarray(a: np.ndarray) -> TArray:
    t = np.ascontiguousarray(a).view(TArray)
    t.tracked, t.plain = True, t.view(np.ndarray)
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
        r = ACTIVE
        if r is not None:
            r.read_l1(self, addr, n)
        return super().read(addr, n)

    def writers(self, addr: int, n: int):
        """(last writers, addresses) of the written bytes of [addr, addr + n), page by page."""
        for page, off, take in self._spans(addr, n):
            lw = self.lw.get(page)
            if lw is not None:
                w = lw[off:off + take]
                hit = np.flatnonzero(w >= 0)
                if hit.size:
                    yield w[hit], page * self.PAGE + off + hit

    def write(self, addr: int, data: bytes) -> None:
        r = ACTIVE
        if r is None:
            return super().write(addr, data)
        self._check(addr, len(data))
        before = np.frombuffer(super().read(addr, len(data)), dtype=np.uint8)
        after = np.frombuffer(bytes(data), dtype=np.uint8)
        super().write(addr, data)
        r.wrote_l1(self, addr, len(data), np.flatnonzero(before != after), before, after)

    def mark(self, addr: int, n: int, changed: np.ndarray, occ: int) -> None:
        """Step ``occ`` last wrote the bytes ``addr + changed`` of [addr, addr + n)."""
        for page, off, take in self._spans(addr, n):
            lo = page * self.PAGE + off - addr
            hit = changed[(changed >= lo) & (changed < lo + take)]
            if hit.size:
                self.lw.setdefault(page, np.full(self.PAGE, -1, dtype=np.int32))[hit - lo + off] = occ

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
_NAMES: dict[type, tuple] = {}


def _cell(name: str) -> property:
    """A dataclass field as a cell (its value stays in the instance's __dict__)."""
    leaf = name in _LEAVES

    def get(self):
        r = ACTIVE
        if r is not None:
            r.taken.append((self, name))
        return self.__dict__[name]

    def get_leaf(self):
        v = self.__dict__[name]
        r = ACTIVE
        if r is not None:
            r.taken.append((self, name))
            r.written.append((self, name, v.copy()))
        return v

    def put(self, v):
        r = ACTIVE
        if r is not None:
            old = self.__dict__[name]
            r.written.append((self, name, old.copy() if leaf else old))
        self.__dict__[name] = v
    return property(get_leaf if leaf else get, put)


class _Held:
    """A dataclass field holding a list: its entries are the cells; setting it is a write. It has no __get__,
    so reading the field reads the instance's __dict__ at C speed."""

    def __init__(self, name: str):
        self.put = _cell(name).fset

    def __set__(self, obj, v) -> None:
        self.put(obj, v)


def _traced_class(cls: type, lists: frozenset) -> type:
    """A subclass of the dataclass ``cls`` whose fields are cells (those in ``lists`` hold lists)."""
    sub = _CLASSES.get((cls, lists))
    if sub is None:
        sub = _CLASSES[cls, lists] = type(f"Traced{cls.__name__}", (cls,), {
            name: _Held(name) if name in lists else _cell(name) for name in _names(cls)})
    return sub


def instrument(x, whole: frozenset = frozenset(), quiet: frozenset = frozenset()):
    """``x`` with its containers swapped for traced ones, recursively (in place where it can); the lists in
    the fields of ``x`` named in ``whole`` become TWhole, their entries left plain; the fields of ``x`` named
    in ``quiet`` (each holding a container) are structure: taking them reports nothing, as for a list."""
    if isinstance(x, np.ndarray):
        return _tarray(x)
    if isinstance(x, list):
        if set(map(type, x)) <= _SCALARS:
            return TList(x)
        if all(isinstance(v, (list, dict)) or _is_dataclass(v) for v in x):
            return [instrument(v) for v in x]        # a list of containers: its entries hold the cells
        return TList(v if v.__class__ in _SCALARS else instrument(v) for v in x)
    if isinstance(x, dict):
        return {k: instrument(v) for k, v in x.items()}
    if isinstance(x, L1):
        return TL1(x)
    if _is_dataclass(x):
        lists, d, skip = set(), x.__dict__, _LEAVES | _UNTRACKED
        for name in _names(x.__class__):
            v = d[name]
            if name in whole:
                v = d[name] = TWhole(v)
                lists.add(name)
            elif name not in skip and v.__class__ not in _SCALARS:
                v = d[name] = instrument(v)
                if isinstance(v, list) or name in quiet:
                    lists.add(name)
        x.__class__ = _traced_class(x.__class__, frozenset(lists))
    return x


def _is_dataclass(x) -> bool:
    return hasattr(x.__class__, "__dataclass_fields__") and not isinstance(x, type)


def _names(cls: type) -> tuple:
    """The field names of the dataclass ``cls``."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names
