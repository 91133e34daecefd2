"""The replay store: what devices returned for cases, keyed by case hash + device, packed in bundles.

Layout under the store root (``recordings/`` at the repository root by default): a few bundle files
``bNNNN.jsonl.gz``, each under ``BUNDLE_MAX`` bytes, each a sequence of gzip members of text lines:

  ``R <TAB> case-hash <TAB> device <TAB> case-name <TAB> payload``   one recording (payload: JSON)
  ``P <TAB> blob-hash <TAB> JSON``                                    a shared provenance blob

A recording's provenance is split: what many recordings share (device, versions, core, harness, what is
unobservable) is a ``P`` blob stored once per bundle and named by its hash; per-recording fields (date,
cycles, observable) stay in the payload. Dest is stored relative to the case's initial Dest (only rows that
differ from it), GPRs sparsely. The same recording put twice is stored once.

Writes append one gzip member to the newest bundle under an exclusive lock (``.lock``), flushed and
fsync'd, so concurrent recorders (pytest-xdist workers, several processes) never interleave, and a crash
leaves at most a torn last member, which readers skip with a warning and ``store verify`` reports. Later
lines win (``--mode all`` re-records); ``pack`` rewrites bundles without superseded lines. Two different
recordings of one case on one device met in ``merge`` are reported as nondeterminism, never chosen.
Recordings made by golden are refused: golden cannot be evidence about the device.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import gzip
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterator

from golden.registers import CONFIG_STATES, CONFIG_WORDS
from golden.state import ADC_UNITS, COLS, DEST_ROWS, GPRS, THREADS, AdcChannel, Rwc
from .result import DEVICE_ERROR, GOLDEN_ERRORS, OK, REFUSED, Result

from .case import NAME_RE, Case, case_hash

FORMAT = 2
REPO_ROOT = Path(__file__).resolve().parents[1]
ENV_ROOT = "TENSIX_DIFF_RECORDINGS"
RECORD_MODES = ("none", "new", "all")
RECORDED_STATUSES = (OK, REFUSED) + GOLDEN_ERRORS   # never a transient device-error
PROVENANCE_KEYS = ("device", "exalens", "umd", "core", "harness", "date", "observable")
# provenance kept in each recording (the rest is shared by the recordings of one run)
PER_RECORDING = ("date", "cycles", "observable", "refused_by", "isolation", "leftovers", "cleanups")
HASH_RE = re.compile(r"^[0-9a-f]{64}$")
BUNDLE_RE = re.compile(r"^b(\d{4,})\.jsonl\.gz$")
BUNDLE_MAX = 2 << 20            # no bundle exceeds 2 MiB (small files: cheap to append, to diff and to clone)
BUNDLE_OPEN = BUNDLE_MAX - (256 << 10)   # appends go to the newest bundle until it reaches this
MAX_BUNDLE_READ = 16 << 20      # what a reader accepts (bundles written before the 2 MiB limit were up to 8 MiB)
MAX_LINE = 1 << 20              # a recording line is a few KiB; anything this large is not one
MAX_INFLATE = 64 << 20          # a bundle never inflates past this (a gzip bomb is refused)


class StoreError(ValueError):
    """A corrupt, foreign or unusable recording or bundle: one clear line naming the file."""


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


def device_of(provenance: dict) -> str:
    return str(provenance.get("device", "")).strip()


def _init_dest(case: Case | None) -> dict[int, list[int]]:
    return {r: list(v) for r, v in case.init.dest} if case is not None else {}


@dataclass
class Recording:
    case_hash: str
    case_name: str
    status: str
    state: dict | None
    provenance: dict
    message: str = ""
    unobservable: list[str] = field(default_factory=list)
    base: dict[int, list[int]] = field(default_factory=dict, repr=False)   # the case's initial Dest rows

    @property
    def device(self) -> str:
        return device_of(self.provenance)

    @classmethod
    def from_result(cls, case: Case, result: Result) -> "Recording":
        """A recording of a device Result, provenance completed with harness revision, date and what was
        observable."""
        prov = {k: result.provenance.get(k) for k in PROVENANCE_KEYS}
        prov.update({k: v for k, v in result.provenance.items() if k not in prov and k != "recording"})
        prov["harness"] = prov["harness"] or harness_revision()
        prov["date"] = prov["date"] or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        if prov["observable"] is None:
            prov["observable"] = sorted(result.state) if result.state is not None else []
        return cls(case_hash(case), case.name, result.status, result.state, prov, result.message,
                   list(result.unobservable), _init_dest(case))

    def result(self, where: str = "") -> Result:
        return Result(status=self.status, state=self.state, message=self.message,
                      provenance={**self.provenance, "recording": self.case_hash, "store": where},
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


def _gpr_sparse(v: Any) -> dict:
    out = {}
    for t, regs in _dict(v, "gpr").items():
        _index(t, THREADS, "gpr")
        full = [0] * GPRS
        for i, x in _dict(regs, f"gpr {t}").items():
            full[_index(i, GPRS, f"gpr {t}")] = _int(x, 0xFFFFFFFF, f"gpr {t} {i}")
        out[t] = full
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


_COMMON = {"rwc": _rwc, "adc": _adc, "l1": _l1, "config": _config}
_ROW = struct.Struct(f">{COLS}H")
_ROW_BYTES = _ROW.size


def encode_state(state: dict, base: dict[int, list[int]]) -> dict:
    """Contract state -> stored form: Dest as {row: hex} for rows that differ from ``base`` (the case's
    initial Dest; other rows start at zero), valid bits as a bitmap, GPRs as {index: value} where non-zero."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "dest":
            _need(isinstance(value, list) and len(value) == DEST_ROWS, f"dest is not {DEST_ROWS} rows")
            rows = {}
            for r, row in enumerate(value):
                _need(isinstance(row, (list, tuple)) and len(row) == COLS, f"dest row {r} is not {COLS} cells")
                row = _ints(list(row), 0xFFFF, f"dest row {r}")
                if row != base.get(r, [0] * COLS):
                    rows[str(r)] = _ROW.pack(*row).hex()
            out["dest"] = rows
        elif key == "dest_valid":
            _need(isinstance(value, list) and len(value) == DEST_ROWS and all(isinstance(x, bool) for x in value),
                  f"dest_valid is not {DEST_ROWS} booleans")
            out["dest_valid"] = int("".join("1" if x else "0" for x in value), 2).to_bytes(DEST_ROWS // 8, "big").hex()
        elif key == "gpr":
            out["gpr"] = {t: {str(i): x for i, x in enumerate(regs) if x} for t, regs in _gpr(value).items()}
        elif key in _COMMON:
            out[key] = _COMMON[key](value)
        else:
            raise _Bad(f"unknown state region {key!r}")
    return out


def decode_state(stored: Any, base: dict[int, list[int]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in _dict(stored, "state").items():
        if key == "dest":
            dest = [list(base[r]) if r in base else [0] * COLS for r in range(DEST_ROWS)]
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
        elif key == "gpr":
            out["gpr"] = _gpr_sparse(value)
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


def _blob_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# --- bundle files -------------------------------------------------------------------------------------

@dataclass
class _Line:
    case_hash: str
    device: str
    case_name: str
    payload: str            # JSON text, parsed on demand
    bundle: str             # file name, for messages


def _members(raw: bytes, where: str, warn: list[str]) -> Iterator[str]:
    """The text of each gzip member of a bundle; a torn last member is skipped with a warning; any
    other damage, or inflating past MAX_INFLATE, is a StoreError."""
    pos, total = 0, 0
    while pos < len(raw):
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            text = d.decompress(raw[pos:], MAX_INFLATE - total + 1)
        except zlib.error as e:
            raise StoreError(f"{where}: corrupt bundle: not gzip at byte {pos} ({e})") from None
        total += len(text)
        if total > MAX_INFLATE or d.unconsumed_tail:
            raise StoreError(f"{where}: corrupt bundle: inflates past {MAX_INFLATE >> 20} MiB")
        if not d.eof:
            warn.append(f"{where}: torn last member at byte {pos} (a write was cut short); skipped")
            return
        try:
            yield text.decode("utf-8")
        except UnicodeDecodeError:
            raise StoreError(f"{where}: corrupt bundle: not UTF-8 text at byte {pos}") from None
        pos = len(raw) - len(d.unused_data)


def _ends_complete(raw: bytes) -> bool:
    """Whether ``raw`` is a sequence of complete gzip members (nothing torn at its end)."""
    pos = 0
    while pos < len(raw):
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while True:       # inflate in bounded steps; only the end of the member matters here
                d.decompress(raw[pos:] if not d.unconsumed_tail else d.unconsumed_tail, 1 << 22)
                if d.eof or not d.unconsumed_tail:
                    break
        except zlib.error:
            return False
        if not d.eof:
            return False
        pos = len(raw) - len(d.unused_data)
    return True


def _parse_lines(text: str, where: str) -> Iterator[tuple[str, list[str]]]:
    for n, line in enumerate(text.split("\n")):
        if not line:
            continue
        if len(line) > MAX_LINE:
            raise StoreError(f"{where}: corrupt bundle: a line of {len(line)} characters")
        parts = line.split("\t")
        if parts[0] == "R" and len(parts) == 5:
            yield "R", parts[1:]
        elif parts[0] == "P" and len(parts) == 3:
            yield "P", parts[1:]
        else:
            raise StoreError(f"{where}: corrupt bundle: line {n + 1} is neither a recording nor a blob")


@dataclass
class Lookup:
    status: str                 # "ok" | "missing" | "stale"
    case_hash: str
    recording: Recording | None = None
    recorded_hash: str | None = None   # for stale: a hash recorded under this case's name
    where: str = ""


class Store:
    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        self._lines: dict[tuple[str, str], _Line] | None = None
        self._names: dict[str, set[str]] = {}
        self._devices: dict[str, set[str]] = {}   # case hash -> devices with a recording of it
        self._blobs: dict[str, str] = {}
        self._good: dict[str, int] = {}     # bundle name -> bytes known to end with a complete member
        self.warnings: list[str] = []

    # --- reading ---
    def bundles(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted((p for p in self.root.iterdir() if BUNDLE_RE.match(p.name)), key=lambda p: p.name)

    def _check_layout(self) -> None:
        if self.root.is_dir() and any(self.root.glob("??/*.json.gz")):
            raise StoreError(f"{self.root}: holds recordings in the old one-file-per-case layout: convert them"
                             " once with `tensix-diff store migrate`")

    def _load(self) -> dict[tuple[str, str], _Line]:
        if self._lines is None:
            self._check_layout()
            self._lines, self._names, self._blobs, self._devices = {}, {}, {}, {}
            for p in self.bundles():
                self._read_bundle(p)
            for w in self.warnings:
                print(f"tensix-diff: warning: {w}", file=sys.stderr)
        return self._lines

    def _read_bundle(self, p: Path) -> None:
        try:
            if p.stat().st_size > MAX_BUNDLE_READ:
                raise StoreError(f"{p}: corrupt bundle: {p.stat().st_size} bytes is over the bundle size")
            raw = p.read_bytes()
        except OSError as e:
            raise StoreError(f"{p}: cannot read bundle: {e.strerror or e}") from None
        for text in _members(raw, str(p), self.warnings):
            for kind, f in _parse_lines(text, str(p)):
                if kind == "P":
                    self._blobs[f[0]] = f[1]
                    continue
                h, device, name, payload = f
                if not HASH_RE.match(h) or not device or not NAME_RE.match(name):
                    raise StoreError(f"{p}: corrupt bundle: a recording line with hash {h[:16]!r},"
                                     f" device {device[:20]!r}, name {name[:40]!r}")
                self._lines[(h, device)] = _Line(h, device, name, payload, p.name)
                self._names.setdefault(name, set()).add(h)
                self._devices.setdefault(h, set()).add(device)

    def devices(self, h: str) -> list[str]:
        self._load()
        return sorted(self._devices.get(h, ()))

    def keys(self) -> list[tuple[str, str]]:
        return sorted(self._load())

    def hashes(self) -> list[str]:
        return sorted({h for h, _ in self._load()})

    def has(self, h: str, device: str | None = None) -> bool:
        lines = self._load()
        return (h, device) in lines if device else bool(self._devices.get(h))

    def path(self, h: str, device: str | None = None) -> Path:
        """The bundle holding the chosen recording of ``h`` (for messages)."""
        line = self._choose(h, device)
        return self.root / line.bundle if line else self.root

    def _choose(self, h: str, device: str | None) -> _Line | None:
        lines = self._load()
        if device and (h, device) in lines:
            return lines[(h, device)]
        found = [d for d in self._devices.get(h, ()) if not device or d.split()[0] == device]
        return lines[(h, choose_device(found))] if found else None

    def get(self, h: str, device: str | None = None, case: Case | None = None,
            structural: bool = False) -> Recording | None:
        """The recording for a case hash (on ``device``, default: silicon if any, else the newest ttsim);
        None if there is none; StoreError if it is unusable. Dest is rebuilt on ``case``'s initial Dest
        (``structural``: checked without the case, Dest rows not rebased: for verify only)."""
        line = self._choose(h, device)
        return None if line is None else self._decode(line, _init_dest(case), structural)

    def _decode(self, line: _Line, base: dict[int, list[int]], structural: bool = False) -> Recording:
        where = f"{self.root / line.bundle}"
        try:
            doc = _dict(json.loads(line.payload), "the recording")
            fields = ("status", "message", "p", "prov", "state", "base")
            _need(set(doc) == set(fields), f"fields {sorted(doc)} are not {sorted(fields)}")
            _need(doc["status"] in RECORDED_STATUSES, f"status {doc['status']!r} is not one of {RECORDED_STATUSES}")
            _need(isinstance(doc["message"], str), "message is not text")
            _need(isinstance(doc["p"], str) and doc["p"] in self._blobs,
                  f"provenance blob {str(doc['p'])[:16]} is not in the store")
            shared = _dict(json.loads(self._blobs[doc["p"]]), "provenance blob")
            unobservable = shared.pop("unobservable", [])
            _need(isinstance(unobservable, list) and all(isinstance(x, str) for x in unobservable),
                  "unobservable is not a list of text")
            prov = _check_provenance({**shared, **_dict(doc["prov"], "provenance")})
            _need(device_of(prov) == line.device, f"provenance names {device_of(prov)!r}, the line {line.device!r}")
            _need(isinstance(doc["base"], str) and doc["base"] in ("init", "zero"), f"base {str(doc['base'])[:20]!r}")
            _need(structural or doc["base"] == "zero" or base or not _dict(doc["state"] or {}, "state").get("dest"),
                  "Dest is stored relative to the case's initial Dest: look it up with the case")
            state = None if doc["state"] is None else decode_state(doc["state"], base if doc["base"] == "init" else {})
            _need(bool(state) or doc["status"] != OK, "status ok without an observed state")
            _need(state is None or doc["status"] == OK, f"status {doc['status']} with an observed state")
        except (ValueError, RecursionError) as e:
            raise StoreError(f"{where}: corrupt recording of {line.case_name}: not JSON ({type(e).__name__})") from None
        except _Bad as e:
            raise StoreError(f"{where}: corrupt recording of {line.case_name}: {e}") from None
        if is_golden(prov):
            raise StoreError(f"{where}: recording of {line.case_name} came from {prov['device']}; golden is never"
                             " evidence about the device")
        return Recording(line.case_hash, line.case_name, doc["status"], state, prov, doc["message"], unobservable,
                         base)

    def lookup(self, case: Case, device: str | None = None) -> Lookup:
        h = case_hash(case)
        line = self._choose(h, device)
        if line is not None:
            return Lookup("ok", h, self._decode(line, _init_dest(case)), where=str(self.root / line.bundle))
        self._load()
        old = sorted(self._names.get(case.name, set()) - {h})
        if old:
            return Lookup("stale", h, None, old[0])
        return Lookup("missing", h)

    # --- writing ---
    def _encode(self, rec: Recording) -> tuple[str, str | None, str]:
        """(recording line, its provenance blob line or None when already stored, blob hash)."""
        if is_golden(rec.provenance):
            raise StoreError(f"refusing to record case '{rec.case_name}' from {rec.provenance.get('device')}:"
                             " golden is never evidence about the device")
        if rec.status not in RECORDED_STATUSES:
            raise StoreError(f"refusing to record case '{rec.case_name}' with status {rec.status!r}")
        try:
            _need(HASH_RE.match(rec.case_hash) is not None and NAME_RE.match(rec.case_name) is not None,
                  "case hash or name")
            prov = _check_provenance(dict(rec.provenance))
            _need("\t" not in rec.device and "\n" not in rec.device, "device name")
            own = {k: prov.pop(k) for k in PER_RECORDING if k in prov}
            shared = {**prov, "unobservable": list(rec.unobservable)}
            p = _blob_hash(shared)
            state = None if rec.state is None else encode_state(rec.state, rec.base)
            payload = _dumps({"status": rec.status, "message": rec.message, "p": p, "prov": own, "state": state,
                              "base": "init" if rec.base else "zero"})
        except (_Bad, TypeError, ValueError) as e:
            raise StoreError(f"{self.root}: cannot record case '{rec.case_name}': {e}") from None
        line = "\t".join(("R", rec.case_hash, rec.device, rec.case_name, payload))
        blob = None if p in self._blobs else "\t".join(("P", p, _dumps(shared)))
        return line, blob, p

    def put(self, rec: Recording) -> Path:
        """Append a recording (unless the very same one is stored) to the open bundle; returns the bundle."""
        lines = self._load()
        line, blob, p = self._encode(rec)
        old = lines.get((rec.case_hash, rec.device))
        if old is not None and _content(old.payload) == _content(line.split("\t", 4)[4]):
            return self.root / old.bundle      # the same result again (only its date differs): stored once
        text = (blob + "\n" if blob else "") + line + "\n"
        with self._locked():
            target = self._append(text.encode())
        if blob:
            self._blobs[p] = blob.split("\t", 2)[2]
        h, device, name, payload = line.split("\t", 4)[1:]
        lines[(h, device)] = _Line(h, device, name, payload, target.name)
        self._names.setdefault(name, set()).add(h)
        self._devices.setdefault(h, set()).add(device)
        return target

    def record(self, case: Case, result: Result, mode: str) -> Path | None:
        """Record mode none|new|all (contract): none writes nothing, new only cases without a recording on
        this device, all replaces it. A device failure is never recorded."""
        if mode not in RECORD_MODES:
            raise StoreError(f"record mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
        if mode == "none" or result.status == DEVICE_ERROR or result.status not in RECORDED_STATUSES:
            return None
        rec = Recording.from_result(case, result)
        if mode == "new" and self.has(rec.case_hash, rec.device):
            return None
        return self.put(rec)

    @contextmanager
    def _locked(self):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _append(self, data: bytes) -> Path:
        """One gzip member appended to the newest bundle that has room (a new one when none has)."""
        member = gzip.compress(data, 9, mtime=0)
        bundles = self.bundles()
        target = bundles[-1] if bundles and bundles[-1].stat().st_size + len(member) <= BUNDLE_OPEN else None
        if target is not None and target.stat().st_size > self._good.get(target.name, 0):
            with open(target, "rb") as f:       # bytes another writer appended (or tore): check them first
                f.seek(self._good.get(target.name, 0))
                if not _ends_complete(f.read()):
                    target = None               # never append after a torn member; never truncate one
        if target is None:
            n = int(BUNDLE_RE.match(bundles[-1].name).group(1)) + 1 if bundles else 1
            target = self.root / f"b{n:04d}.jsonl.gz"
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, member)
            os.fsync(fd)
            self._good[target.name] = os.fstat(fd).st_size
        finally:
            os.close(fd)
        return target

    def write_bundles(self, recs: list[tuple[str, str]]) -> None:
        """Replace every bundle by a packed copy of ``recs`` (line text, blob lines first), under the lock:
        used by pack, gc, merge and migrate. Each bundle is one gzip member; atomic per file."""
        with self._locked():
            old = self.bundles()
            chunks, cur, size = [], [], 0
            for text in recs:
                est = len(text) // 3      # packed JSON lines compress ~3x at least; checked below
                if cur and size + est > BUNDLE_OPEN:
                    chunks.append(cur)
                    cur, size = [], 0
                cur.append(text)
                size += est
            if cur:
                chunks.append(cur)
            written = []
            for chunk in chunks:
                for data in _packed(chunk):
                    p = self.root / f"b{len(written) + 1:04d}.jsonl.gz"
                    _atomic_write(p, data)
                    written.append(p)
            for p in old:
                if p not in written:
                    p.unlink()
        self._lines = None

    def packed_lines(self, keep=lambda line: True) -> list[str]:
        """Every current recording (later lines won) with the blobs it uses, as text for write_bundles;
        recordings are grouped by device, then case name, so a bundle holds related recordings."""
        lines = [ln for ln in self._load().values() if keep(ln)]
        lines.sort(key=lambda ln: (ln.device, ln.case_name, ln.case_hash))
        out, blobs = [], set()
        for ln in lines:
            p = json.loads(ln.payload).get("p")
            if p in self._blobs and p not in blobs:
                blobs.add(p)
                out.append(f"P\t{p}\t{self._blobs[p]}\n")
            out.append("\t".join(("R", ln.case_hash, ln.device, ln.case_name, ln.payload)) + "\n")
        return out


def _content(payload: str) -> tuple:
    """What a recording says about the device: everything but the per-recording provenance (date, ...)."""
    doc = json.loads(payload)
    return doc.get("status"), doc.get("message"), doc.get("p"), _dumps(doc.get("state")), doc.get("base")


def _packed(chunk: list[str]) -> list[bytes]:
    """One gzip member per bundle; a chunk that compresses past BUNDLE_MAX is split in halves."""
    data = gzip.compress("".join(chunk).encode(), 9, mtime=0)
    if len(data) <= BUNDLE_MAX:
        return [data]
    if len(chunk) == 1:
        raise StoreError(f"one recording compresses to {len(data)} bytes, over the bundle size {BUNDLE_MAX}")
    half = len(chunk) // 2
    return _packed(chunk[:half]) + _packed(chunk[half:])


def choose_device(devices: list[str]) -> str:
    """The default device among recordings of one case: silicon if any, else the newest ttsim."""
    def rank(d: str) -> tuple:
        kind, _, version = d.partition(" ")
        nums = tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-+]", version))
        return (kind != "ttsim", nums, d)
    return max(devices, key=rank)


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
