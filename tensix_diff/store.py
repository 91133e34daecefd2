"""The replay store: what a device returned for a case, keyed by the case hash.

Layout under the store root (``recordings/`` at the repository root by default):
  ``<hh>/<hash>.json.gz``  one gzip'd JSON recording per case hash (Dest kept sparse: non-zero rows only)
  ``names/<case-name>``    the hash last recorded under that case name, so an edited case reads as stale

Writes go to a temporary file in the same directory and are renamed into place, so a crash leaves no
partial file and concurrent pytest-xdist workers never see one. Recordings made by golden are refused:
golden cannot be evidence about the device.
"""
from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import re
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from golden.registers import CONFIG_STATES, CONFIG_WORDS
from golden.state import ADC_UNITS, COLS, DEST_ROWS, GPRS, THREADS, AdcChannel, Rwc
from hwbridge.base import DEVICE_ERROR, GOLDEN_ERRORS, OK, REFUSED, Result

from .case import NAME_RE, Case, case_hash

FORMAT = 1
REPO_ROOT = Path(__file__).resolve().parents[1]
ENV_ROOT = "TENSIX_DIFF_RECORDINGS"
RECORD_MODES = ("none", "new", "all")
RECORDED_STATUSES = (OK, REFUSED) + GOLDEN_ERRORS   # never a transient device-error
PROVENANCE_KEYS = ("device", "exalens", "umd", "core", "harness", "date", "observable")
HASH_RE = re.compile(r"^[0-9a-f]{64}$")
MAX_FILE = 4 << 20   # a recording is a few KiB; anything this large is not one


class StoreError(ValueError):
    """A corrupt, foreign or unusable recording: one clear line naming the file."""


def default_root() -> Path:
    return Path(os.environ.get(ENV_ROOT) or REPO_ROOT / "recordings")


@cache
def harness_revision() -> str:
    """The harness's git revision, '+dirty' when tracked files differ from it; 'unknown' outside git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=REPO_ROOT, capture_output=True,
                               timeout=10).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (rev + ("+dirty" if dirty else "")) if rev else "unknown"


def is_golden(provenance: dict) -> bool:
    return str(provenance.get("device", "")).strip().lower().startswith("golden")


@dataclass
class Recording:
    case_hash: str
    case_name: str
    status: str
    state: dict | None
    provenance: dict
    message: str = ""
    unobservable: list[str] = field(default_factory=list)

    @classmethod
    def from_result(cls, case: Case, result: Result) -> "Recording":
        """A recording of a device Result, provenance completed with harness revision, date and what was
        observable."""
        prov = {k: result.provenance.get(k) for k in PROVENANCE_KEYS}
        prov.update({k: v for k, v in result.provenance.items() if k not in prov})
        prov["harness"] = prov["harness"] or harness_revision()
        prov["date"] = prov["date"] or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        if prov["observable"] is None:
            prov["observable"] = sorted(result.state) if result.state is not None else []
        return cls(case_hash(case), case.name, result.status, result.state, prov, result.message,
                   list(result.unobservable))

    def result(self) -> Result:
        return Result(status=self.status, state=self.state, message=self.message,
                      provenance={**self.provenance, "recording": self.case_hash},
                      unobservable=list(self.unobservable))


# --- encoding: the contract state <-> a compact JSON form, checked both ways --------------------------

class _Bad(Exception):
    pass


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise _Bad(what)


def _int(v: Any, hi: int, what: str) -> int:
    _need(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= hi, f"{what} is not an integer in 0..{hi:#x}")
    return v


def _ints(vals: list, hi: int, what: str) -> list:
    """All of vals are integers in 0..hi (checked in bulk; the culprit is named on failure)."""
    if all(type(x) is int for x in vals) and (not vals or (min(vals) >= 0 and max(vals) <= hi)):
        return vals
    for i, x in enumerate(vals):
        _int(x, hi, f"{what}[{i}]")
    return vals


def _dict(v: Any, what: str) -> dict:
    _need(isinstance(v, dict), f"{what} is not a mapping")
    return v


def _index(k: Any, n: int, what: str) -> int:
    _need(isinstance(k, str) and k.isdigit() and int(k) < n, f"{what} key {k!r} is not in 0..{n - 1}")
    return int(k)


def _fields(d: Any, names: tuple[str, ...], hi: int, what: str) -> dict:
    d = _dict(d, what)
    if d.keys() - set(names):
        raise _Bad(f"{what} has unknown fields {sorted(set(d) - set(names))}")
    if not all(type(x) is int and 0 <= x <= hi for x in d.values()):
        for k, x in d.items():
            _int(x, hi, f"{what} {k}")
    return d


def _hexbytes(v: Any, what: str, size: int | None = None) -> bytes:
    _need(isinstance(v, str), f"{what} is not a hex string")
    try:
        b = bytes.fromhex(v)
    except ValueError:
        raise _Bad(f"{what} is not a hex string") from None
    _need(size is None or len(b) == size, f"{what} holds {len(b)} bytes, not {size}")
    return b


def _rwc(v: Any) -> dict:
    return {str(_index(t, THREADS, "rwc")): _fields(f, Rwc.FIELDS, 0xFFFFFFFF, f"rwc {t}")
            for t, f in _dict(v, "rwc").items()}


def _adc(v: Any) -> dict:
    out = {}
    for t, units in _dict(v, "adc").items():
        _index(t, THREADS, "adc")
        out[t] = {}
        for u, chans in _dict(units, f"adc {t}").items():
            _need(u in ADC_UNITS, f"adc {t} unit {u!r} is unknown")
            out[t][u] = {str(_index(c, 2, f"adc {t} {u}")): _fields(f, AdcChannel.FIELDS, 0xFFFFFFFF, f"adc {t} {u} {c}")
                         for c, f in _dict(chans, f"adc {t} {u}").items()}
    return out


def _gpr(v: Any) -> dict:
    out = {}
    for t, regs in _dict(v, "gpr").items():
        _index(t, THREADS, "gpr")
        _need(isinstance(regs, list) and len(regs) == GPRS, f"gpr {t} is not a list of {GPRS}")
        out[t] = _ints(regs, 0xFFFFFFFF, f"gpr {t}")
    return out


def _l1(v: Any) -> dict:
    out = {}
    for addr, data in _dict(v, "l1").items():
        _need(isinstance(addr, str) and re.fullmatch(r"0x[0-9a-f]+", addr) is not None, f"l1 address {addr!r}")
        _hexbytes(data, f"l1 {addr}")
        out[addr] = data
    return out


def _config(v: Any) -> dict:
    return {str(_index(s, CONFIG_STATES, "config")): {
                str(_index(i, CONFIG_WORDS, f"config {s}")): _int(x, 0xFFFFFFFF, f"config {s} {i}")
                for i, x in _dict(regs, f"config {s}").items()}
            for s, regs in _dict(v, "config").items()}


_COMMON = {"rwc": _rwc, "adc": _adc, "gpr": _gpr, "l1": _l1, "config": _config}
_ROW = struct.Struct(f">{COLS}H")
_ROW_BYTES = _ROW.size


def encode_state(state: dict) -> dict:
    """Contract state -> stored form: Dest as {row: hex} for non-zero rows, valid bits as a bitmap."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "dest":
            _need(isinstance(value, list) and len(value) == DEST_ROWS, f"dest is not {DEST_ROWS} rows")
            rows = {}
            for r, row in enumerate(value):
                _need(isinstance(row, (list, tuple)) and len(row) == COLS, f"dest row {r} is not {COLS} cells")
                if any(row):
                    rows[str(r)] = _ROW.pack(*_ints(list(row), 0xFFFF, f"dest row {r}")).hex()
            out["dest"] = rows
        elif key == "dest_valid":
            _need(isinstance(value, list) and len(value) == DEST_ROWS and all(isinstance(x, bool) for x in value),
                  f"dest_valid is not {DEST_ROWS} booleans")
            out["dest_valid"] = int("".join("1" if x else "0" for x in value), 2).to_bytes(DEST_ROWS // 8, "big").hex()
        elif key in _COMMON:
            out[key] = _COMMON[key](value)
        else:
            raise _Bad(f"unknown state region {key!r}")
    return out


def decode_state(stored: Any) -> dict:
    out: dict[str, Any] = {}
    for key, value in _dict(stored, "state").items():
        if key == "dest":
            dest = [[0] * COLS for _ in range(DEST_ROWS)]
            for r, h in _dict(value, "dest").items():
                b = _hexbytes(h, f"dest row {r}", _ROW_BYTES)
                dest[_index(r, DEST_ROWS, "dest")] = list(_ROW.unpack(b))
            out["dest"] = dest
        elif key == "dest_valid":
            bits = int.from_bytes(_hexbytes(value, "dest_valid", DEST_ROWS // 8), "big")
            if bits in (0, (1 << DEST_ROWS) - 1):
                out["dest_valid"] = [bits != 0] * DEST_ROWS
            else:
                out["dest_valid"] = list(map("1".__eq__, format(bits, f"0{DEST_ROWS}b")))
        elif key in _COMMON:
            out[key] = _COMMON[key](value)
        else:
            raise _Bad(f"unknown state region {key!r}")
    return out


def _check_provenance(p: Any) -> dict:
    p = _dict(p, "provenance")
    missing = [k for k in PROVENANCE_KEYS if k not in p]
    _need(not missing, f"provenance lacks {', '.join(missing)}")
    _need(isinstance(p["device"], str) and p["device"].strip() != "", "provenance names no device")
    _need(isinstance(p["observable"], list), "provenance observable is not a list")
    return p


# --- the store --------------------------------------------------------------------------------------

@dataclass
class Lookup:
    status: str                 # "ok" | "missing" | "stale"
    case_hash: str
    recording: Recording | None = None
    recorded_hash: str | None = None   # for stale: the hash recorded under this case's name


class Store:
    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()

    def path(self, h: str) -> Path:
        return self.root / h[:2] / f"{h}.json.gz"

    def name_path(self, name: str) -> Path:
        return self.root / "names" / name

    def has(self, h: str) -> bool:
        return self.path(h).is_file()

    def hashes(self) -> list[str]:
        return sorted(p.name[:-len(".json.gz")] for p in self.root.glob("??/*.json.gz"))

    # --- reading ---
    def get(self, h: str) -> Recording | None:
        """The recording for a case hash, None if there is none; StoreError if it is unusable."""
        p = self.path(h)
        try:
            if p.stat().st_size > MAX_FILE:
                raise StoreError(f"{p}: corrupt recording: {p.stat().st_size} bytes is far too large")
            raw = p.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StoreError(f"{p}: cannot read recording: {e.strerror or e}") from None
        return self.parse(raw, p, h)

    @staticmethod
    def parse(raw: bytes, p: Path | str, h: str | None = None) -> Recording:
        try:
            doc = json.loads(gzip.decompress(raw))
        except (OSError, EOFError, zlib.error, ValueError, UnicodeDecodeError, RecursionError) as e:
            raise StoreError(f"{p}: corrupt recording: not gzip'd JSON ({type(e).__name__})") from None
        try:
            doc = _dict(doc, "the recording")
            _need(doc.get("format") == FORMAT, f"format {doc.get('format')!r}, this harness reads {FORMAT}")
            fields = ("format", "case_hash", "case_name", "status", "message", "provenance", "unobservable", "state")
            _need(set(doc) == set(fields), f"fields {sorted(doc)} are not {sorted(fields)}")
            _need(isinstance(doc["case_hash"], str) and HASH_RE.match(doc["case_hash"]) is not None,
                  "case_hash is not a sha256")
            _need(h is None or doc["case_hash"] == h, f"holds case {str(doc['case_hash'])[:12]}, not {str(h)[:12]}")
            _need(isinstance(doc["case_name"], str) and NAME_RE.match(doc["case_name"]) is not None, "case_name")
            _need(doc["status"] in RECORDED_STATUSES, f"status {doc['status']!r} is not one of {RECORDED_STATUSES}")
            _need(isinstance(doc["message"], str), "message is not text")
            _need(isinstance(doc["unobservable"], list) and all(isinstance(x, str) for x in doc["unobservable"]),
                  "unobservable is not a list of text")
            prov = _check_provenance(doc["provenance"])
            state = None if doc["state"] is None else decode_state(doc["state"])
            _need(bool(state) or doc["status"] != OK, "status ok without an observed state")
            _need(state is None or doc["status"] == OK, f"status {doc['status']} with an observed state")
        except _Bad as e:
            raise StoreError(f"{p}: corrupt recording: {e}") from None
        if is_golden(prov):
            raise StoreError(f"{p}: recording came from {prov['device']}; golden is never evidence about the device")
        return Recording(doc["case_hash"], doc["case_name"], doc["status"], state, prov, doc["message"],
                         doc["unobservable"])

    def lookup(self, case: Case) -> Lookup:
        h = case_hash(case)
        rec = self.get(h)
        if rec is not None:
            return Lookup("ok", h, rec)
        old = self._name_hash(case.name)
        if old is not None and old != h:
            return Lookup("stale", h, None, old)
        return Lookup("missing", h)

    def _name_hash(self, name: str) -> str | None:
        p = self.name_path(name)
        try:
            text = p.read_text().strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise StoreError(f"{p}: cannot read name index: {e}") from None
        if not HASH_RE.match(text):
            raise StoreError(f"{p}: corrupt name index: expected one sha256, got {text[:40]!r}")
        return text

    # --- writing ---
    def put(self, rec: Recording) -> Path:
        """Write a recording atomically and point its case name at it."""
        if is_golden(rec.provenance):
            raise StoreError(f"refusing to record case '{rec.case_name}' from {rec.provenance.get('device')}:"
                             " golden is never evidence about the device")
        if rec.status not in RECORDED_STATUSES:
            raise StoreError(f"refusing to record case '{rec.case_name}' with status {rec.status!r}")
        p = self.path(rec.case_hash)
        try:
            _need(HASH_RE.match(rec.case_hash) is not None and NAME_RE.match(rec.case_name) is not None,
                  "case hash or name")
            state = None if rec.state is None else encode_state(rec.state)
            doc = {"format": FORMAT, "case_hash": rec.case_hash, "case_name": rec.case_name, "status": rec.status,
                   "message": rec.message, "provenance": _check_provenance(rec.provenance),
                   "unobservable": list(rec.unobservable), "state": state}
            blob = gzip.compress(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode(), 9, mtime=0)
        except (_Bad, TypeError, ValueError) as e:
            raise StoreError(f"{p}: cannot record case '{rec.case_name}': {e}") from None
        _atomic_write(p, blob)
        _atomic_write(self.name_path(rec.case_name), (rec.case_hash + "\n").encode())
        return p

    def record(self, case: Case, result: Result, mode: str) -> Path | None:
        """Record mode none|new|all (contract): none writes nothing, new only cases without a recording,
        all overwrites. A device failure is never recorded."""
        if mode not in RECORD_MODES:
            raise StoreError(f"record mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
        if mode == "none" or result.status == DEVICE_ERROR or result.status not in RECORDED_STATUSES:
            return None
        rec = Recording.from_result(case, result)
        if mode == "new" and self.has(rec.case_hash):
            return None
        return self.put(rec)


def _atomic_write(p: Path, data: bytes) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
