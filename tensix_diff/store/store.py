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

A lookup reads one member, found through ``.index.gz`` (bundles.py: per bundle, where each
recording is, valid while the bundle's fingerprint holds; rebuilt from a checked scan of any bundle that
changed). ``verify``, ``stats``, merges, gc and writes read every bundle whole.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import gzip
import json
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..case import NAME_RE, Case, case_hash
from ..result import DEVICE_ERROR, GOLDEN_ERRORS, OK, REFUSED, Result, same_fields
from .bundles import (BUNDLE_OPEN, BUNDLE_RE, HASH_RE, Line, Members, Places, Scan, Segment, StaleIndex,
                      StoreError, atomic_write, ends_complete, fingerprint, packed, read_index, scan, write_index)
from .codec import (PROVENANCE_KEYS, Bad, check_provenance, decode_state, dumps, encode_state, mapping, need,
                    blob_hash)

FORMAT = 2
REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_ROOT = "TENSIX_DIFF_RECORDINGS"
RECORD_MODES = ("none", "new", "all")
RECORDED_STATUSES = (OK, REFUSED) + GOLDEN_ERRORS   # never a transient device-error
PER_RECORDING = ("date", "cycles", "observable", "refused_by", "isolation", "leftovers", "cleanups")


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


@dataclass(eq=False)
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

    def __eq__(self, other: object) -> bool:
        return same_fields(self, other)

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
        self._places: Places | None = None
        self._full = False                  # every bundle scanned: every payload and blob read
        self._blobs: dict[str, str] = {}    # blob hash -> text, as read
        self._members = Members(self.root)
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

    def _load(self) -> dict[tuple[str, str], Line]:
        """Every bundle read and checked whole (verify, merges, gc and writes need every payload)."""
        if not self._full:
            self._check_layout()
            self._take([scan(p) for p in self.bundles()], index=True)
            self._full = True
        return self._places.lines

    def _index(self) -> Places:
        """The recordings' places: through the index (bundles.py) for bundles unchanged since it was
        written, every other bundle scanned (and the index rewritten); payloads are read when asked."""
        if self._places is None:
            self._check_layout()
            known = read_index(self.root) if self.root.is_dir() else {}
            parts, fresh = [], False
            for p in self.bundles():
                s = known.get(p.name)
                if s is None or s.fingerprint != fingerprint(p):
                    s, fresh = scan(p), True
                parts.append(s)
            self._take(parts, index=fresh or len(known) != len(parts))
        return self._places

    def _take(self, parts: list[Scan | Segment], index: bool) -> None:
        self._places = Places(parts)
        self._blobs = {p: text for p, (text, _, _) in self._places.blobs.items() if text is not None}
        self._members.clear()
        self.warnings = list(self._places.warnings)
        for w in self.warnings:
            print(f"tensix-diff: warning: {w}", file=sys.stderr)
        if index and self.root.is_dir():
            write_index(self.root, parts)

    def _payload(self, line: Line) -> Line:
        """``line`` with its payload, read through the index; the whole store scanned if the bundle changed
        under the index (that scan names any damage)."""
        if line.payload is None:
            text = self._members.line(line.bundle, line.at)
            head = f"R\t{line.case_hash}\t{line.device}\t{line.case_name}\t"
            if text is None or not text.startswith(head):
                return self._rescanned()[(line.case_hash, line.device)]
            line.payload = text[len(head):]
        return line

    def _blob(self, p: str) -> str | None:
        if p not in self._blobs and p in self._index().blobs:
            _, bundle, at = self._places.blobs[p]
            text = self._members.line(bundle, at)
            if text is None or not text.startswith(f"P\t{p}\t") or text.count("\t") != 2:
                self._rescanned()
            else:
                self._blobs[p] = text.split("\t", 2)[2]
        return self._blobs.get(p)

    def _rescanned(self) -> dict[tuple[str, str], Line]:
        self._places, self._full = None, False
        return self._load()

    def _asked(self, ask):
        """``ask(places)``, answered by a scan of every bundle when the index holds a row it never writes."""
        try:
            return ask(self._index())
        except StaleIndex:
            self._rescanned()
            return ask(self._places)

    def devices(self, h: str) -> list[str]:
        return sorted(self._asked(lambda p: p.of(h)))

    def keys(self) -> list[tuple[str, str]]:
        return sorted(self._asked(Places.all))

    def hashes(self) -> list[str]:
        return sorted({h for h, _ in self._asked(Places.all)})

    def has(self, h: str, device: str | None = None) -> bool:
        found = self._asked(lambda p: p.of(h))
        return device in found if device else bool(found)

    def path(self, h: str, device: str | None = None) -> Path:
        """The bundle holding the chosen recording of ``h`` (for messages)."""
        line = self._choose(h, device)
        return self.root / line.bundle if line else self.root

    def _choose(self, h: str, device: str | None) -> Line | None:
        lines = self._asked(lambda p: p.of(h))
        if device and device in lines:
            return lines[device]
        found = [d for d in lines if not device or d.split()[0] == device]
        return lines[choose_device(found)] if found else None

    def get(self, h: str, device: str | None = None, case: Case | None = None,
            structural: bool = False) -> Recording | None:
        """The recording for a case hash (on ``device``, default: silicon if any, else the newest ttsim);
        None if there is none; StoreError if it is unusable. Dest is rebuilt on ``case``'s initial Dest
        (``structural``: checked without the case, Dest rows not rebased: for verify only)."""
        line = self._choose(h, device)
        return None if line is None else self._decode(line, _init_dest(case), structural)

    def _decode(self, line: Line, base: dict[int, list[int]], structural: bool = False) -> Recording:
        where = f"{self.root / line.bundle}"
        line = self._payload(line)
        try:
            doc = mapping(json.loads(line.payload), "the recording")
            fields = ("status", "message", "p", "prov", "state", "base")
            need(set(doc) == set(fields), f"fields {sorted(doc)} are not {sorted(fields)}")
            need(doc["status"] in RECORDED_STATUSES, f"status {doc['status']!r} is not one of {RECORDED_STATUSES}")
            need(isinstance(doc["message"], str), "message is not text")
            need(isinstance(doc["p"], str) and self._blob(doc["p"]) is not None,
                  f"provenance blob {str(doc['p'])[:16]} is not in the store")
            shared = mapping(json.loads(self._blobs[doc["p"]]), "provenance blob")
            unobservable = shared.pop("unobservable", [])
            need(isinstance(unobservable, list) and all(isinstance(x, str) for x in unobservable),
                  "unobservable is not a list of text")
            prov = check_provenance({**shared, **mapping(doc["prov"], "provenance")})
            need(device_of(prov) == line.device, f"provenance names {device_of(prov)!r}, the line {line.device!r}")
            need(isinstance(doc["base"], str) and doc["base"] in ("init", "zero"), f"base {str(doc['base'])[:20]!r}")
            need(structural or doc["base"] == "zero" or base or not mapping(doc["state"] or {}, "state").get("dest"),
                  "Dest is stored relative to the case's initial Dest: look it up with the case")
            state = None if doc["state"] is None else decode_state(doc["state"], base if doc["base"] == "init" else {})
            need(bool(state) or doc["status"] != OK, "status ok without an observed state")
            need(state is None or doc["status"] == OK, f"status {doc['status']} with an observed state")
        except (ValueError, RecursionError) as e:
            raise StoreError(f"{where}: corrupt recording of {line.case_name}: not JSON ({type(e).__name__})") from None
        except Bad as e:
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
        old = sorted(self._asked(Places.names).get(case.name, set()) - {h})
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
            need(HASH_RE.match(rec.case_hash) is not None and NAME_RE.match(rec.case_name) is not None,
                  "case hash or name")
            prov = check_provenance(dict(rec.provenance))
            need("\t" not in rec.device and "\n" not in rec.device, "device name")
            own = {k: prov.pop(k) for k in PER_RECORDING if k in prov}
            shared = {**prov, "unobservable": list(rec.unobservable)}
            p = blob_hash(shared)
            state = None if rec.state is None else encode_state(rec.state, rec.base)
            payload = dumps({"status": rec.status, "message": rec.message, "p": p, "prov": own, "state": state,
                              "base": "init" if rec.base else "zero"})
        except (Bad, TypeError, ValueError) as e:
            raise StoreError(f"{self.root}: cannot record case '{rec.case_name}': {e}") from None
        line = "\t".join(("R", rec.case_hash, rec.device, rec.case_name, payload))
        blob = None if p in self._blobs else "\t".join(("P", p, dumps(shared)))
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
        self._places.add(Line(h, device, name, payload, target.name))
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
                if not ends_complete(f.read()):
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
                for data in packed(chunk):
                    p = self.root / f"b{len(written) + 1:04d}.jsonl.gz"
                    atomic_write(p, data)
                    written.append(p)
            for p in old:
                if p not in written:
                    p.unlink()
        self._places, self._full = None, False

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
    return doc.get("status"), doc.get("message"), doc.get("p"), dumps(doc.get("state")), doc.get("base")


def choose_device(devices: list[str]) -> str:
    """The default device among recordings of one case: silicon if any, else the newest ttsim."""
    def rank(d: str) -> tuple:
        kind, _, version = d.partition(" ")
        nums = tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-+]", version))
        return (kind != "ttsim", nums, d)
    return max(devices, key=rank)
