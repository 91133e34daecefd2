"""What one golden step read and wrote, by part (tensix_diff.state_parts), for the race check's Recorder
(tensix_diff.happens_before, whose docstring gives the rules): the cells golden.analysis.traced_state reports
while the step runs, coarsened to parts when it ends, Dest by row and Config by bit (as masks), L1 by page.
"""
from __future__ import annotations

import copy

import numpy as np

from golden.analysis.traced_state import value
from golden.config_words import FULL

from .passed_waits import sync
from .state_parts import DEST as _DEST, mask as _mask, pages as _pages, rows as _rows

ALL = None                                   # a detail covering the whole part
ABSENT = frozenset()                         # no access
_UNKNOWN = ("?",)                            # the part of a container nothing maps


class StepAccess:
    """The reports of the step running now (golden.analysis.traced_state calls these); ``_finish`` turns them
    into its reads and writes (part -> detail). ``_owner`` (tensix_diff.state_parts.owners) and ``_dest`` (the
    ids of Dest's arrays) are set when a machine is attached."""

    def __init__(self):
        self._crossed = False         # whether a step took another thread's own part (``whole``)
        self._more = False            # whether the step reported more than cells taken and its own parts
        self._reads: dict = {}
        self._writes: dict = {}
        self._touched: dict = {}      # id(array) -> ``_copy``'s (array, ...) of those the step took or set
        self._copies: dict = {}       # id(array) -> [``_copy``'s tuple, the array as the last step taking it left it]
        self._set = ABSENT           # the Dest rows the step set (ALL: not known which)
        self.own = -1                 # the stepping thread: its entries of the per-thread lists are its own
        self.mine: list = []          # the per-thread lists whose entry ``own`` the step took
        self._others: dict = {}       # another thread's own part taken -> (list, index, copy before the step)
        self.taken: list = []         # (container, key) of the cells read (golden.analysis.traced_state)
        self.written: list = []       # (container, key, value before) of the cells set
        self.fields: list = []        # (container, key, bits) of Config words read by bits (key None: bits of many)
        self._masks: dict = {}        # id(bits) -> (bits, its mask): ``read_bits``'s, all at once
        self._may: dict = {}          # (id(container), key) -> the bits a Config write may change
        self._sync: list = []         # (container, key, value before) of synchronisation cells set
        self._syncs: dict = {}        # part -> whether it is synchronisation state (passed_waits.sync)

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
    def whole(self, lst, i: int) -> None:
        """Another thread's entry of a per-thread list taken whole: read, and written when the step changes it
        (compared with a copy at the end of the step). The thread's own (``mine``) are read and written."""
        part = self._owner[id(lst)][i]
        if i == self.own:
            self.mine.append(lst)
        elif part not in self._others:
            self._crossed = self._more = True
            self._reads[part] = ALL
            self._others[part] = (lst, i, copy.deepcopy(list.__getitem__(lst, i)))

    def touch(self, arr, i=None) -> None:
        """Array ``arr`` about to be set at index ``i`` (None: anywhere)."""
        self._more = True
        a = id(arr)
        if a not in self._touched:
            self._touched[a] = self._copy(arr)
        if a in self._dest and self._set is not ALL:
            rows = None if i is None else _index_rows(i, len(arr))
            self._set = ALL if rows is None else rows if self._set is ABSENT else self._set | rows

    def read_array(self, arr, i) -> None:
        self._more = True
        a = id(arr)
        if a not in self._touched:
            self._touched[a] = self._copy(arr)
        if a in self._dest:                           # Dest by the rows indexed
            reads = self._reads
            old = reads.get(_DEST, ABSENT)
            if old is ALL:
                return
            rows = None if i is None else _index_rows(i, len(arr))
            if rows is not None:
                reads[_DEST] = rows if old is ABSENT else old | rows
                return
        self._reads[self._owner[a]] = ALL

    def _copy(self, arr) -> tuple:
        """(array, its plain view, ``_row_words``) for ``_touched``; when the array is first taken, a copy of it
        in ``_copies`` (Dest's: an array, the rest: bytes), which each step that takes the array compares it
        with at its end and brings up to date. Every change of a tracked array is made by a step that takes or
        sets it (through golden.analysis.traced_state; Dest by the rows it indexes), so the copy holds the
        array as it was before the step."""
        a = id(arr)
        got = self._copies.get(a)
        if got is None:
            now = arr.view(np.ndarray)
            got = self._copies[a] = [(arr, now, _row_words(now)), now.copy() if a in self._dest else now.tobytes()]
        return got[0]

    def field(self, lst, i: int, bits: int) -> None:
        self._more = True
        self.fields.append((lst, i, bits))

    def read_bits(self, lst, bits: dict) -> None:
        self._more = True
        self.fields.append((lst, None, bits))

    def may_set(self, lst, i: int, bits: int) -> None:
        self._may[id(lst), i] = bits

    def read_l1(self, l1, addr: int, n: int) -> None:
        self._more = True
        self._add(self._reads, ("l1",), _pages(l1, addr, n))

    def wrote_l1(self, l1, addr: int, n: int, changed, before, after) -> None:
        """A write of the value already there reads it."""
        self._more = True
        self._add(self._writes if changed.size else self._reads, ("l1",), _pages(l1, addr, n))

    @staticmethod
    def _add_rows(to: dict, rows: int) -> None:
        """Dest rows (a mask) added to a step's reads or writes."""
        old = to.get(_DEST, ABSENT)
        if old is not ALL:
            to[_DEST] = rows if old is ABSENT else old | rows

    @staticmethod
    def _add(to: dict, part: tuple, detail) -> None:
        old = to.get(part, ABSENT)
        if old is not ALL:
            to[part] = old | frozenset(detail)

    def _finish(self) -> tuple[dict, dict]:
        """The step's reads and writes (part -> detail)."""
        reads, writes = self._reads, self._writes
        if self.mine:                 # (a list taken again sets its part again, where it is)
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
            self._arrays(reads, writes)
            self._touched = {}
        if self._set is not ABSENT:      # Dest rows set to what they held: read
            changed = writes.get(_DEST, ABSENT)
            if self._set is ALL or changed is not ALL:
                left = self._set if self._set is ALL or changed is ABSENT else self._set & ~changed
                if left is ALL:
                    reads[_DEST] = ALL
                elif left:
                    self._add_rows(reads, left)
            self._set = ABSENT
        if self._others:
            for part, (lst, i, before) in self._others.items():
                reads[part] = ALL
                if list.__getitem__(lst, i) != before:
                    writes[part] = ALL
            self._others = {}
        self._reads, self._writes, self._more = {}, {}, False
        return reads, writes

    def _cells(self, reads: dict, writes: dict) -> None:
        """The parts of the cells the step took and set. Config by bits (word i's at 32 * i): those read, and
        those a write may change but left as they were (read); those it changed are written."""
        get, words, free = self._owner.get, {}, self._set is ABSENT      # free: Dest rows not set (read whole)
        prev = c = None                               # the latest entry's container, its owner's class
        for obj, key in self.taken:                   # (taking a part reads it whole: reads[part] = ALL)
            if obj is not prev:
                prev, o = obj, get(id(obj))
                c = o.__class__
                if c is tuple:                        # a container inside one part
                    if o not in reads and (free or o != _DEST):
                        reads[o] = ALL
                    continue
            elif c is tuple:                          # (its part taken with its previous entry)
                continue
            if c is dict:
                part = o.get(key)
                if part is not None and part not in reads and (free or part != _DEST):
                    reads[part] = ALL
            elif c is int:                            # a Config word, whole
                words[o] = words.get(o, 0) | FULL << 32 * key
        if self.fields:                               # (a run of one list's entries: its word's bits at once)
            masks, prev, o, acc, word = self._masks, None, None, 0, False     # (word: o is a Config state's)
            for obj, key, bits in self.fields:
                if obj is not prev:
                    if word:
                        words[o] = words.get(o, 0) | acc
                    prev, o, acc = obj, get(id(obj)), 0
                    word = o.__class__ is int
                if word:
                    if key is not None:
                        acc |= bits << 32 * key
                    else:
                        kept = masks.get(id(bits))
                        acc |= kept[1] if kept is not None else self._bits_mask(bits)
            if word:
                words[o] = words.get(o, 0) | acc
        if self.written:
            syncs, may, written = self._syncs, self._may, self.written
            seen = set() if len(written) > 1 else None      # (a cell set again: its first value before counts)
            prev = done = None                              # done: a container whose cells add nothing more
            for obj, key, before in written:
                if obj is done:
                    continue
                if obj is not prev:
                    prev, o = obj, get(id(obj))
                if o is None:
                    continue
                if o.__class__ is int:                # (a Config word: an entry of a list)
                    if seen is not None:
                        cell = id(obj), key
                        if cell in seen:
                            continue
                        seen.add(cell)
                    now = list.__getitem__(obj, key)
                    changed = (now ^ before) & FULL
                    if changed:
                        k = ("config", o)
                        writes[k] = writes.get(k, 0) | changed << 32 * key
                    words[o] = words.get(o, 0) | (may.get((id(obj), key), FULL) & ~changed) << 32 * key
                    continue
                part = o if o.__class__ is tuple else o.get(key)     # setting a cell takes its part
                s = syncs.get(part)
                if s is None:
                    s = syncs[part] = sync(part)
                if not s and (part is None or writes.get(part, ABSENT) is ALL):
                    continue                          # (and so would the cell's again)
                if seen is not None:
                    cell = id(obj), key
                    if cell in seen:
                        continue
                    seen.add(cell)
                if s:
                    self._sync.append((obj, key, before, value(obj, key)))
                    if writes.get(part, ABSENT) is ALL:
                        continue
                if part not in reads:
                    reads[part] = ALL
                now = list.__getitem__(obj, key) if isinstance(obj, list) else obj.__dict__[key]   # (not copied)
                if not (now is before or now == before):
                    writes[part] = ALL
                    if not s and o is part:           # (a container inside one part, written)
                        done = obj
        if self._may:
            self._may = {}
        for i, bits in words.items():
            reads["config", i] = bits

    def _bits_mask(self, bits: dict) -> int:
        """Config bits (word i's at 32 * i) of ``bits`` (i -> word i's bits)."""
        kept = self._masks.get(id(bits))
        if kept is None:
            out = 0
            for i, b in bits.items():
                out |= b << 32 * i
            kept = self._masks[id(bits)] = (bits, out)
        return kept[1]

    def _arrays(self, reads: dict, writes: dict) -> None:
        """The parts of the arrays the step changed (Dest by row), each compared with its copy in ``_copies``
        (Dest's in the span of rows the step indexed), which then takes the changes."""
        owner, copies, dest, span = self._owner, self._copies, self._dest, None
        for a, (arr, now, k) in self._touched.items():
            kept = copies[a]
            old = kept[1]
            if a in dest:                     # Dest by row: its bits or its valid bit
                if span is None:
                    span = _span(reads.get(_DEST, ABSENT), self._set)
                now, old = now[span], old[span]
                if now.tobytes() == old.tobytes():
                    continue
                rows = _changed_rows(now, old, k)
                if rows:
                    self._add_rows(writes, rows << span.start)
                old[...] = now
                continue
            b = now.tobytes()
            if b == old:
                continue
            kept[1] = b
            if now.dtype.kind in "biu" or (now != np.frombuffer(old, now.dtype).reshape(now.shape)).any():
                writes[owner[a]] = ALL                  # (integers: bytes differ, values differ)


def _span(read, set_) -> slice:
    """Dest's rows that hold those a step indexed (``read`` and ``set_``: masks, ALL or ABSENT), as a slice."""
    if read is ALL or set_ is ALL:
        return slice(0, None)
    m = (0 if read is ABSENT else read) | (0 if set_ is ABSENT else set_)
    return slice((m & -m).bit_length() - 1, m.bit_length()) if m else slice(0, 0)


def _index_rows(i, n: int) -> int | None:
    """The rows (a mask) an index ``i`` of an array of ``n`` rows takes by its first index (None: not known):
    tensix_diff.state_parts.rows as a mask, a slice's at once."""
    j = i[0] if i.__class__ is tuple and i else i
    if j.__class__ is slice:
        a, b, step = j.indices(n)
        if step == 1:
            return (1 << b - a) - 1 << a if b > a else 0
    rows = _rows(j, n)
    return None if rows is None else _mask(rows)


_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}     # a row's 64-bit words -> one item


def _row_words(a: np.ndarray) -> int:
    """The 64-bit words in a row of ``a`` when it can be compared a row at a time that way (an integer,
    C-contiguous array of rows of 8 to 64 bytes), else 0."""
    k, rest = divmod(a.shape[1] * a.itemsize, 8) if a.ndim == 2 else (0, 1)
    return k if not rest and k in _WORDS and a.dtype.kind in "iu" and a.flags.c_contiguous else 0


def _changed_rows(now: np.ndarray, before: np.ndarray, k: int) -> int:
    """The rows (first index, as a mask) in which array ``now`` differs from ``before`` (a copy of it); ``k``:
    ``_row_words(now)``, the 64-bit words of a row compared at once (0: cell by cell)."""
    if k:
        changed = (now.view(np.uint64) != before.view(np.uint64)).view(_WORDS[k]).reshape(-1)
    else:
        diff = now != before
        changed = diff.any(axis=1) if diff.ndim == 2 else diff.ravel()
    at = changed.nonzero()[0]
    if len(at) > 64:                            # (many: packed at once; few: bit by bit, cheaper)
        return int.from_bytes(np.packbits(changed != 0, bitorder="little").tobytes(), "little")
    out = 0
    for r in at.tolist():
        out |= 1 << r
    return out
