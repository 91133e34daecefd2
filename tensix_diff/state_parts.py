"""Which part of golden's state each traced cell lies in, for the race check (tensix_diff.happens_before): Dest
by row, Config by state (its words by bits), L1 by 4 KiB page, SrcA / SrcB rows by bank and their ownership
and pointers field by field, semaphores one by one, a thread's own registers by thread, the rest whole. Dest
is read and set by the rows its arrays are indexed with: golden reaches Dest's cells only by indexing them
(golden.dest_view, golden/matrix/dest.py), so a step that takes Dest without indexing it reads all of it;
tests/tensix_diff/test_race_named_parts.py runs each step again with the rows it does not name changed."""
from __future__ import annotations

import dataclasses

import numpy as np

OWN = frozenset({"rwc", "adc", "gpr", "thread_config", "frontend", "wait_gate"})   # per-thread parts
STRUCTURE = frozenset({"srca", "srcb", "l1"})      # fields of the state whose containers are parted within
DEST = ("dest",)
_SCALARS = {int, bool, str, type(None)}


def owners(s) -> dict:
    """id(instrumented container) -> how its cells map to parts: a part (the container lies in it), a Config
    state's number (its words), or a dict (field -> part, None: structure only). Parts: Dest (rows), Config
    words, L1 pages, SrcA / SrcB rows by bank and each of their ownership and pointer fields, semaphores one
    by one, the rest whole; a per-thread list (traced whole) -> its entries' parts, by thread."""
    out: dict = {}

    def under(x, part):
        if isinstance(x, dict):
            for v in x.values():
                under(v, part)
            return
        if isinstance(x, np.ndarray):
            out[id(x)] = part
        elif isinstance(x, list) or hasattr(x, "__dataclass_fields__"):
            out[id(x)] = part
            for v in x if isinstance(x, list) else vars(x).values():
                if v.__class__ not in _SCALARS:
                    under(v, part)
    top: dict = {}
    for f in dataclasses.fields(s):
        name, x = f.name, getattr(s, f.name)
        if name in OWN:
            out[id(x)] = [(name, i) for i in range(len(x))]
        elif name == "semaphores":
            for i, v in enumerate(x):
                under(v, (name, i))
        elif name == "config":
            out.update((id(words), i) for i, words in enumerate(x))
        elif name in ("srca", "srcb"):
            out[id(x)] = {k: (name, k) for k in vars(x) if k != "banks"}
            out[id(x.unpacker_row)] = (name, "unpacker_row")
            for i, bank in enumerate(x.banks):
                out[id(bank)] = dict.fromkeys(vars(bank), (name, "bank", i)) | {"rows": (name, "rows", i)}
                out[id(bank.rows)] = (name, "rows", i)
        elif name != "l1":
            top[name] = (name,)
            under(x, (name,))
    out[id(s)] = top
    return out


def rows(i, n: int):
    """The rows (first index) an index of an array of ``n`` rows takes (None: not known, all of them)."""
    if i.__class__ is int:
        return (i % n,) if -n <= i < n else None
    if i.__class__ is slice:
        return range(*i.indices(n))
    if isinstance(i, np.ndarray) and i.dtype.kind in "iu" and i.size and i.min() >= -n and i.max() < n:
        return {r % n for r in i.ravel().tolist()}
    if isinstance(i, (np.integer,)):
        return (int(i) % n,) if -n <= i < n else None
    return None


def mask(rows) -> int:
    """Rows as a bit mask (row r: bit r), as Dest's rows are kept."""
    if rows.__class__ is range and rows.step == 1:
        return (1 << len(rows)) - 1 << rows.start if rows else 0
    out = 0
    for r in rows:
        out |= 1 << r
    return out


def pages(l1, addr: int, n: int) -> range:
    return range(addr // l1.PAGE, (addr + max(n, 1) - 1) // l1.PAGE + 1)
