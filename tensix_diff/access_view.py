"""TensixState as one recorded step sees it (tensix_diff.happens_before): every part a golden handler takes
through ``m.s`` is reported to the recorder as read, and as written when the step changes it.

Parts: Dest (rows compared after the step), Config words, L1 pages (through read/write), SrcA / SrcB rows by
bank apart from their ownership and pointers, semaphores one by one, each thread's own parts (RWCs, ADCs,
GPRs, ThreadConfig, frontend, Wait Gate), the rest (SFPU, packer, mutexes, mailboxes) whole.
"""
from __future__ import annotations

import numpy as np

ALL = None                                  # a detail covering the whole part
_PER_INDEX = frozenset({"rwc", "adc", "gpr", "thread_config", "frontend", "wait_gate", "semaphores", "config"})


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
def snapshot(key: tuple, obj):
    return obj.tobytes() if len(key) == 3 else _SNAPSHOT.get(key[0], _fp)(obj)


OWN = frozenset({"rwc", "adc", "gpr", "thread_config", "frontend", "wait_gate"})   # per-thread parts


class _Words:
    """A Config state's word list: reads and writes by word index."""
    __slots__ = ("_w", "_r", "_k")

    def __init__(self, words: list, rec, key: tuple):
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

    def __init__(self, items: list, rec, name: str):
        self._l, self._r, self._n, self._own = items, rec, name, name in OWN

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

    def __init__(self, f, rec, name: str):
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

    def __init__(self, l1, rec):
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


class StateView:
    """TensixState as a recorded step sees it (the indexed parts and L1 wrapped once, the rest per access)."""

    def __init__(self, s, rec):
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
