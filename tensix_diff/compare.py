"""Bit-exact comparison of two observed states (the contract's dump shape) and of two backend Results.

Only what both sides observe is compared (a backend leaves out what it cannot see); a comparison that
compares nothing is an error, never a silent match. Values are compared as raw bits, never as floats;
Dest cells are additionally *read* as BF16 and FP16 in reports, since a raw cell does not say its format.
"""
from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .result import DEVICE_ERROR, GOLDEN_ERRORS, MISSING, STALE, TAINTED, Result, plain
from .verdict import DEVICE_FAILED, DIVERGED, KNOWN, MATCHED, UNCOMPARED, Verdict  # noqa: F401 (re-exported)

REGIONS = ("dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config")


class NothingCompared(ValueError):
    """The two states share no observed region: refusing to call that a match."""


@dataclass(frozen=True)
class Diff:
    region: str          # one of REGIONS
    location: str        # e.g. "row 5 col 3", "thread 1 dst", "0x20003"
    expected: Any        # raw int (bool for dest_valid)
    actual: Any
    key: tuple = ()      # what the divergence signature groups by (see Comparison.signature)

    def line(self, names: tuple[str, str] = ("expected", "actual")) -> str:
        text = f"{self.region} {self.location}: {names[0]} {_fmt(self.expected)}, {names[1]} {_fmt(self.actual)}"
        if self.region == "dest" and isinstance(self.expected, int) and isinstance(self.actual, int):
            text += f"   [bf16 {dest_bf16(self.expected)} -> {dest_bf16(self.actual)};" \
                    f" fp16 {dest_fp16(self.expected)} -> {dest_fp16(self.actual)}]"
        return text


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "valid" if v else "invalid"
    if isinstance(v, int):
        return f"{v:#x}"
    return repr(v)


def _float_text(x: float) -> str:
    return f"{x:.7g}"


def dest_bf16(cell: int) -> str:
    """A Dst16b cell read as BF16: storage order is Sign, Man(7), Exp(8) (Dst.md; dest spec 1.3)."""
    std = (cell & 0x8000) | ((cell & 0xFF) << 7) | ((cell >> 8) & 0x7F)
    return _float_text(struct.unpack("<f", struct.pack("<I", std << 16))[0])


def dest_fp16(cell: int) -> str:
    """A Dst16b cell read as FP16: storage order is Sign, Man(10), Exp(5); IEEE reading of the fields."""
    std = (cell & 0x8000) | ((cell & 0x1F) << 10) | ((cell >> 5) & 0x3FF)
    return _float_text(struct.unpack("<e", struct.pack("<H", std))[0])


@dataclass
class Comparison:
    compared: int = 0                                       # number of raw items compared
    diffs: list[Diff] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)        # regions both sides observed
    unobserved: list[str] = field(default_factory=list)     # "path (only in <side>)"
    names: tuple[str, str] = ("expected", "actual")         # the two sides, as the report names them

    @property
    def matched(self) -> bool:
        return self.compared > 0 and not self.diffs

    def signature(self) -> tuple:
        """Hashable summary of *what* differs (region and field, not values or Dest cells): the same
        signature on a smaller case means the same divergence."""
        return tuple(sorted({d.key for d in self.diffs}))

    def summary(self) -> str:
        if not self.diffs:
            return f"matched: {self.compared} items compared ({', '.join(self.regions)})"
        per = Counter(d.region for d in self.diffs)
        return (f"DIVERGED: {len(self.diffs)} of {self.compared} compared items differ ("
                + ", ".join(f"{r} {n}" for r, n in per.items()) + ")")

    def report(self, limit: int = 20, unobserved: bool = True) -> str:
        """The summary, then the differences (sides named), then what one side did not observe (``unobserved``;
        a command that runs many cases says that once per run instead)."""
        lines = [self.summary()]
        if len(self.diffs) > limit:
            lines += ["  " + s for s in _region_summaries(self.diffs)]
            lines.append(f"  first {limit}:")
        lines += ["  " + d.line(self.names) for d in self.diffs[:limit]]
        if len(self.diffs) > limit:
            lines.append(f"  ... and {len(self.diffs) - limit} more")
        if self.unobserved and unobserved:
            lines.append("  not compared (one side did not observe): " + ", ".join(self.unobserved))
        return "\n".join(lines)


def _region_summaries(diffs: list[Diff]) -> list[str]:
    out = []
    for region in REGIONS:
        ds = [d for d in diffs if d.region == region]
        if not ds:
            continue
        if region == "dest":
            rows = sorted({int(d.location.split()[1]) for d in ds})
            cols = sorted({int(d.location.split()[3]) for d in ds})
            out.append(f"{region}: {len(ds)} cells differ in {len(rows)} rows ({rows[0]}..{rows[-1]}),"
                       f" {len(cols)} columns")
        else:
            keys = Counter(" ".join(str(k) for k in d.key[1:]) or region for d in ds)
            out.append(f"{region}: {len(ds)} differ: " + ", ".join(f"{k} ({n})" for k, n in list(keys.items())[:8])
                       + (" ..." if len(keys) > 8 else ""))
    return out


class _Walk:
    def __init__(self, names: tuple[str, str]) -> None:
        self.c = Comparison(names=names)

    def leaf(self, region: str, location: str, key: tuple, e: Any, a: Any) -> None:
        self.c.compared += 1
        if type(e) is not type(a) or e != a:
            self.c.diffs.append(Diff(region, location, e, a, key))

    def keys(self, path: str, e: Any, a: Any) -> list:
        """Keys both dicts hold; the rest is noted as unobserved. Non-dicts are a shape difference."""
        if not isinstance(e, dict) or not isinstance(a, dict):
            raise _Shape(path, e, a)
        for k in sorted(e.keys() - a.keys(), key=_sort_key):
            self.c.unobserved.append(f"{path} {k} (only in {self.c.names[0]})".strip())
        for k in sorted(a.keys() - e.keys(), key=_sort_key):
            self.c.unobserved.append(f"{path} {k} (only in {self.c.names[1]})".strip())
        return sorted(e.keys() & a.keys(), key=_sort_key)

    def seq(self, path: str, e: Any, a: Any) -> Iterator[tuple[int, Any, Any]]:
        if not isinstance(e, list) or not isinstance(a, list) or len(e) != len(a):
            raise _Shape(path, e, a)
        return zip(range(len(e)), e, a)

    # --- regions ---
    def dest(self, e: Any, a: Any) -> None:
        if isinstance(e, np.ndarray):      # both (rows, 16) of one dtype: only the rows that differ are walked
            rows = np.flatnonzero((e != a).any(axis=1)).tolist()
            self.c.compared += (len(e) - len(rows)) * e.shape[1]
            for r in rows:
                for col, ev, av in zip(range(e.shape[1]), e[r].tolist(), a[r].tolist()):
                    self.leaf("dest", f"row {r} col {col}", ("dest",), ev, av)
            return
        for r, er, ar in self.seq("dest", e, a):
            if er == ar or (type(er) is not type(ar) and list(er) == list(ar)):  # rows may be tuples
                self.c.compared += len(er)
                continue
            for col, ev, av in self.seq(f"dest row {r}", list(er), list(ar)):
                self.leaf("dest", f"row {r} col {col}", ("dest",), ev, av)

    def dest_valid(self, e: Any, a: Any) -> None:
        if isinstance(e, np.ndarray):      # both (rows,) of one dtype
            rows = np.flatnonzero(e != a).tolist()
            self.c.compared += len(e) - len(rows)
            for r in rows:
                self.leaf("dest_valid", f"row {r}", ("dest_valid",), e[r].item(), a[r].item())
            return
        for r, ev, av in self.seq("dest_valid", e, a):
            self.leaf("dest_valid", f"row {r}", ("dest_valid",), ev, av)

    def rwc(self, e: Any, a: Any) -> None:
        for t in self.keys("rwc", e, a):
            for f in self.keys(f"rwc {t}", e[t], a[t]):
                self.leaf("rwc", f"thread {t} {f}", ("rwc", t, f), e[t][f], a[t][f])

    def adc(self, e: Any, a: Any) -> None:
        for t in self.keys("adc", e, a):
            for u in self.keys(f"adc {t}", e[t], a[t]):
                for ch in self.keys(f"adc {t} {u}", e[t][u], a[t][u]):
                    for f in self.keys(f"adc {t} {u} {ch}", e[t][u][ch], a[t][u][ch]):
                        self.leaf("adc", f"thread {t} {u} channel {ch} {f}", ("adc", t, u, ch, f),
                                  e[t][u][ch][f], a[t][u][ch][f])

    def gpr(self, e: Any, a: Any) -> None:
        for t in self.keys("gpr", e, a):
            if e[t] == a[t] and isinstance(e[t], list):
                self.c.compared += len(e[t])
                continue
            for i, ev, av in self.seq(f"gpr {t}", e[t], a[t]):
                self.leaf("gpr", f"thread {t} r{i}", ("gpr", t, i), ev, av)

    def l1(self, e: Any, a: Any) -> None:
        for addr in self.keys("l1", e, a):
            eb, ab = _hex_bytes(e[addr]), _hex_bytes(a[addr])
            if eb is None or ab is None or len(eb) != len(ab):
                raise _Shape(f"l1 {addr}", e[addr], a[addr])
            base = int(addr, 16)
            if eb == ab:
                self.c.compared += len(eb)
                continue
            for i, (x, y) in enumerate(zip(eb, ab)):
                self.leaf("l1", f"{base + i:#x}", ("l1", addr), x, y)

    def config(self, e: Any, a: Any) -> None:
        for s in self.keys("config", e, a):
            for i in self.keys(f"config {s}", e[s], a[s]):
                self.leaf("config", f"state {s} [{i}]", ("config", s, i), e[s][i], a[s][i])


def _count(v: Any) -> int:
    """Raw items in a region that compared equal as a whole (Dest cells, fields, L1 bytes)."""
    if isinstance(v, np.ndarray):
        return v.size
    if isinstance(v, dict):
        return sum(_count(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        if v and isinstance(v[0], (list, tuple)):
            return sum(map(len, v))
        return sum(_count(x) for x in v) if v and isinstance(v[0], dict) else len(v)
    if isinstance(v, str):
        return len(v) // 2   # L1 bytes as hex
    return 1


class _Shape(Exception):
    def __init__(self, path: str, e: Any, a: Any):
        super().__init__(path)
        self.path, self.e, self.a = path, e, a


def _sort_key(k: Any) -> tuple:
    s = str(k)
    try:
        return (0, int(s, 0), s)
    except ValueError:
        return (1, 0, s)


def _hex_bytes(v: Any) -> bytes | None:
    try:
        return bytes.fromhex(v) if isinstance(v, str) else None
    except ValueError:
        return None


def _shape_text(v: Any) -> str:
    if isinstance(v, (list, str)):
        return f"{type(v).__name__} of length {len(v)}"
    return type(v).__name__


_BULK_DIMS = {"dest": 2, "dest_valid": 1}      # regions held as arrays in process (Result's note)


def _bulk(region: str, e: Any, a: Any) -> tuple[Any, Any]:
    """Both sides as arrays when both are arrays of the region's shape and one dtype, else both as lists
    (a list against an array, or an odd shape, is walked as the dump's lists would be)."""
    if not isinstance(e, np.ndarray) and not isinstance(a, np.ndarray):
        return e, a
    if (isinstance(e, np.ndarray) and isinstance(a, np.ndarray) and e.shape == a.shape and e.dtype == a.dtype
            and e.ndim == _BULK_DIMS.get(region)):
        return e, a
    return plain(e), plain(a)


def compare(expected_state: dict, actual_state: dict, names: tuple[str, str] = ("expected", "actual")) -> Comparison:
    """Compare two dump-shaped states over what both observe; ``names`` name the two sides in the report.
    Raises NothingCompared if both observe nothing in common."""
    w = _Walk(names)
    for region in REGIONS:
        if region not in expected_state or region not in actual_state:
            if region in expected_state or region in actual_state:
                side = names[0] if region in expected_state else names[1]
                w.c.unobserved.append(f"{region} (only in {side})")
            continue
        w.c.regions.append(region)
        ev, av = _bulk(region, expected_state[region], actual_state[region])
        if np.array_equal(ev, av) if isinstance(ev, np.ndarray) else ev == av:   # equal as a whole: count, do not walk
            w.c.compared += _count(ev)
            continue
        try:
            getattr(w, region)(ev, av)
        except _Shape as s:
            w.c.compared += 1
            w.c.diffs.append(Diff(region, f"{s.path} (shape)", _shape_text(s.e), _shape_text(s.a), (region, "shape")))
    unknown = (expected_state.keys() | actual_state.keys()) - set(REGIONS)
    w.c.unobserved += [f"{k} (unknown region)" for k in sorted(map(str, unknown))]
    if w.c.compared == 0:
        raise NothingCompared(
            f"nothing compared: {names[0]} observes {sorted(expected_state) or 'nothing'},"
            f" {names[1]} observes {sorted(actual_state) or 'nothing'}")
    return w.c


# --- Judging two Results (the outcomes and Verdict: tensix_diff.verdict) ---------------------------------

def side_name(result: Result, backend: str) -> str:
    """What a side is: the device its result names (``golden``, ``ttsim 1.10.0``, a card), else the backend."""
    device = str(result.provenance.get("device") or "").strip()
    return device if device and device != "replay" else backend


def judge(expected: Result, actual: Result, names: tuple[str, str] = ("expected", "actual")) -> Verdict:
    """Compare two backend Results. Both ok: bit-exact state comparison. Both hang: matched (the hang is
    what was observed). Both refusing (not-modelled, undefined) observed nothing: uncompared. A device
    failure, missing or stale recording or refusal is reported as such and never counts as agreement; a
    tainted result (run after a hang, before a health check passed) is uncompared, its message the why.
    (tensix_diff.assess adds the registry, expected refusals and observed-effect accounting on top.)"""
    en, an = names
    statuses = (expected.status, actual.status)
    for res, name in ((expected, en), (actual, an)):
        if res.status == DEVICE_ERROR:
            return Verdict(DEVICE_FAILED, f"{name}: device-error: {res.message}", None, statuses)
    for res, name in ((expected, en), (actual, an)):
        if res.status in (MISSING, STALE):
            return Verdict(res.status, f"{name}: {res.status}: {res.message}", None, statuses)
    for res, name in ((expected, en), (actual, an)):
        if res.status == TAINTED:       # the core may hold what a hang left: nothing it shows is evidence
            return Verdict(UNCOMPARED, f"{name}: tainted: {res.message}", None, statuses, why=res.message)
    if expected.ok and actual.ok:
        if expected.state is None or actual.state is None:
            return Verdict(UNCOMPARED, f"{en if expected.state is None else an}: status ok but no state", None,
                           statuses)
        sides = (side_name(expected, en), side_name(actual, an))
        if sides[0] == sides[1]:                   # golden against golden, or one device twice
            sides = (f"{sides[0]} ({en})", f"{sides[1]} ({an})") if en != an else ("expected", "actual")
        c = compare(expected.state, actual.state, sides)
        return Verdict(MATCHED if c.matched else DIVERGED, c.summary(), c, statuses)
    if expected.status == actual.status == "hang":
        said = f" ({an}: {actual.message})" if actual.message else ""      # the device names what stalled
        return Verdict(MATCHED, "both hang" + said, None, statuses)
    if expected.status == actual.status and expected.status in GOLDEN_ERRORS:
        return Verdict(UNCOMPARED, f"both {expected.status}", None, statuses, why=f"both {expected.status}")
    if (expected.ok or actual.ok) and "hang" in statuses:
        return Verdict(DIVERGED, f"DIVERGED: {en} {expected.status}, {an} {actual.status}: "
                       + (expected.message or actual.message), None, statuses)
    bad = [(n, r) for n, r in ((en, expected), (an, actual)) if not r.ok]
    return Verdict(UNCOMPARED, "; ".join(f"{n}: {r.status}: {r.message}".rstrip(": ") for n, r in bad), None,
                   statuses, why=" and ".join(f"{n} {r.status}" for n, r in bad))
