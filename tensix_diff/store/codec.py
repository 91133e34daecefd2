"""The replay store's recording encoding: the contract state <-> a compact JSON form, checked both ways.

Dest is stored relative to the case's initial Dest (only rows that differ from it, as hex), valid bits as a
bitmap, GPRs sparsely; every field is range-checked on the way in and on the way out (``Bad`` names it).
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np

from golden.registers import CONFIG_STATES, CONFIG_WORDS
from golden.state import ADC_UNITS, COLS, DEST_ROWS, GPRS, THREADS, AdcChannel, Rwc

PROVENANCE_KEYS = ("device", "exalens", "umd", "core", "harness", "date", "observable")

class Bad(Exception):
    pass


def need(cond: bool, what: str) -> None:
    if not cond:
        raise Bad(what)


def _int(v: Any, hi: int, what: str) -> int:
    need(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= hi, f"{what} is not an integer in 0..{hi:#x}")
    return v


def _ints(vals: list, hi: int, what: str) -> list:
    """All of vals are integers in 0..hi (checked in bulk; the culprit is named on failure)."""
    if all(type(x) is int for x in vals) and (not vals or (min(vals) >= 0 and max(vals) <= hi)):
        return vals
    for i, x in enumerate(vals):
        _int(x, hi, f"{what}[{i}]")
    return vals


def mapping(v: Any, what: str) -> dict:
    need(isinstance(v, dict), f"{what} is not a mapping")
    return v


def _index(k: Any, n: int, what: str) -> int:
    need(isinstance(k, str) and k.isdigit() and int(k) < n, f"{what} key {k!r} is not in 0..{n - 1}")
    return int(k)


def _fields(d: Any, names: tuple[str, ...], hi: int, what: str) -> dict:
    d = mapping(d, what)
    if d.keys() - set(names):
        raise Bad(f"{what} has unknown fields {sorted(set(d) - set(names))}")
    if not all(type(x) is int and 0 <= x <= hi for x in d.values()):
        for k, x in d.items():
            _int(x, hi, f"{what} {k}")
    return d


def _hexbytes(v: Any, what: str, size: int | None = None) -> bytes:
    need(isinstance(v, str), f"{what} is not a hex string")
    try:
        b = bytes.fromhex(v)
    except ValueError:
        raise Bad(f"{what} is not a hex string") from None
    need(size is None or len(b) == size, f"{what} holds {len(b)} bytes, not {size}")
    return b


def _rwc(v: Any) -> dict:
    return {str(_index(t, THREADS, "rwc")): _fields(f, Rwc.FIELDS, 0xFFFFFFFF, f"rwc {t}")
            for t, f in mapping(v, "rwc").items()}


def _adc(v: Any) -> dict:
    out = {}
    for t, units in mapping(v, "adc").items():
        _index(t, THREADS, "adc")
        out[t] = {}
        for u, chans in mapping(units, f"adc {t}").items():
            need(u in ADC_UNITS, f"adc {t} unit {u!r} is unknown")
            out[t][u] = {str(_index(c, 2, f"adc {t} {u}")): _fields(f, AdcChannel.FIELDS, 0xFFFFFFFF, f"adc {t} {u} {c}")
                         for c, f in mapping(chans, f"adc {t} {u}").items()}
    return out


def _gpr(v: Any) -> dict:
    out = {}
    for t, regs in mapping(v, "gpr").items():
        _index(t, THREADS, "gpr")
        need(isinstance(regs, list) and len(regs) == GPRS, f"gpr {t} is not a list of {GPRS}")
        out[t] = _ints(regs, 0xFFFFFFFF, f"gpr {t}")
    return out


def _gpr_sparse(v: Any) -> dict:
    out = {}
    for t, regs in mapping(v, "gpr").items():
        _index(t, THREADS, "gpr")
        full = [0] * GPRS
        for i, x in mapping(regs, f"gpr {t}").items():
            full[_index(i, GPRS, f"gpr {t}")] = _int(x, 0xFFFFFFFF, f"gpr {t} {i}")
        out[t] = full
    return out


def _l1(v: Any) -> dict:
    out = {}
    for addr, data in mapping(v, "l1").items():
        need(isinstance(addr, str) and re.fullmatch(r"0x[0-9a-f]+", addr) is not None, f"l1 address {addr!r}")
        _hexbytes(data, f"l1 {addr}")
        out[addr] = data
    return out


def _config(v: Any) -> dict:
    return {str(_index(s, CONFIG_STATES, "config")): {
                str(_index(i, CONFIG_WORDS, f"config {s}")): _int(x, 0xFFFFFFFF, f"config {s} {i}")
                for i, x in mapping(regs, f"config {s}").items()}
            for s, regs in mapping(v, "config").items()}


_COMMON = {"rwc": _rwc, "adc": _adc, "l1": _l1, "config": _config}
_ROW_BYTES = 2 * COLS


def _dest_array(value: Any) -> np.ndarray:
    """Dest as a uint16 (rows, 16) array: an array of that form as it is, lists checked cell by cell."""
    if isinstance(value, np.ndarray) and value.dtype == np.uint16 and value.shape == (DEST_ROWS, COLS):
        return value
    if isinstance(value, np.ndarray):
        value = value.tolist()
    need(isinstance(value, list) and len(value) == DEST_ROWS, f"dest is not {DEST_ROWS} rows")
    for r, row in enumerate(value):
        need(isinstance(row, (list, tuple)) and len(row) == COLS, f"dest row {r} is not {COLS} cells")
        _ints(list(row), 0xFFFF, f"dest row {r}")
    return np.array(value, dtype=np.uint16)


def _valid_array(value: Any) -> np.ndarray:
    """Dest's valid bits as a bool (rows,) array: an array of that form as it is, a list checked."""
    if isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.shape == (DEST_ROWS,):
        return value
    if isinstance(value, np.ndarray):
        value = value.tolist()
    need(isinstance(value, list) and len(value) == DEST_ROWS and all(isinstance(x, bool) for x in value),
         f"dest_valid is not {DEST_ROWS} booleans")
    return np.array(value, dtype=bool)


def _base_array(base: dict[int, list[int]]) -> np.ndarray:
    """The case's initial Dest (rows it does not set are zero) as a fresh uint16 array."""
    dest = np.zeros((DEST_ROWS, COLS), dtype=np.uint16)
    if base:
        rows = list(base)
        dest[rows] = np.array([base[r] for r in rows], dtype=np.uint16)
    return dest


def _changed_rows(dest: np.ndarray, base: dict[int, list[int]]) -> dict[str, str]:
    """{row: big-endian hex} for the rows of ``dest`` that differ from ``base``."""
    rows = np.flatnonzero((dest != _base_array(base)).any(axis=1)).tolist()
    big = dest[rows].astype(">u2")
    return {str(r): big[k].tobytes().hex() for k, r in enumerate(rows)}


def encode_state(state: dict, base: dict[int, list[int]]) -> dict:
    """Contract state -> stored form: Dest as {row: hex} for rows that differ from ``base`` (the case's
    initial Dest; other rows start at zero), valid bits as a bitmap, GPRs as {index: value} where non-zero."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "dest":
            out["dest"] = _changed_rows(_dest_array(value), base)
        elif key == "dest_valid":
            out["dest_valid"] = np.packbits(_valid_array(value)).tobytes().hex()
        elif key == "gpr":
            out["gpr"] = {t: {str(i): x for i, x in enumerate(regs) if x} for t, regs in _gpr(value).items()}
        elif key in _COMMON:
            out[key] = _COMMON[key](value)
        else:
            raise Bad(f"unknown state region {key!r}")
    return out


def decode_state(stored: Any, base: dict[int, list[int]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in mapping(stored, "state").items():
        if key == "dest":
            dest = _base_array(base)
            rows, blobs = [], []
            for r, h in mapping(value, "dest").items():
                blobs.append(_hexbytes(h, f"dest row {r}", _ROW_BYTES))
                rows.append(_index(r, DEST_ROWS, "dest"))
            if rows:
                dest[rows] = np.frombuffer(b"".join(blobs), dtype=">u2").reshape(len(rows), COLS)
            out["dest"] = dest
        elif key == "dest_valid":
            bits = _hexbytes(value, "dest_valid", DEST_ROWS // 8)
            out["dest_valid"] = np.unpackbits(np.frombuffer(bits, dtype=np.uint8)).astype(bool)
        elif key == "gpr":
            out["gpr"] = _gpr_sparse(value)
        elif key in _COMMON:
            out[key] = _COMMON[key](value)
        else:
            raise Bad(f"unknown state region {key!r}")
    return out


def check_provenance(p: Any) -> dict:
    p = mapping(p, "provenance")
    missing = [k for k in PROVENANCE_KEYS if k not in p]
    need(not missing, f"provenance lacks {', '.join(missing)}")
    need(isinstance(p["device"], str) and p["device"].strip() != "", "provenance names no device")
    need(isinstance(p["observable"], list), "provenance observable is not a list")
    return p


def blob_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
