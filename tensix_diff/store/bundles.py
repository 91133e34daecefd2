"""The replay store's files: bundles of gzip members of text lines, read whole or one member at a time, and
the index from case hash + device to the member and line that hold a recording.

A bundle scan checks every member (gzip CRC, size bounds, UTF-8) and every line's form; a torn last member
is skipped with a warning. The index (``.index.gz`` beside the bundles, never committed) keeps, per bundle,
what its last scan found (each recording's hash, device, name, member and line; each blob's member and
line; its warnings) with the bundle's fingerprint: size, modification time, inode and a hash of its last
4 KiB. A bundle whose fingerprint differs is scanned again; a lookup through the index inflates only the one
member that holds the line (whole, so its CRC is checked) and checks the line is the one indexed.
"""
from __future__ import annotations

import bisect
import gzip
import hashlib
import os
import re
import tempfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..case import NAME_RE

HASH_RE = re.compile(r"^[0-9a-f]{64}$")
BUNDLE_RE = re.compile(r"^b(\d{4,})\.jsonl\.gz$")
BUNDLE_MAX = 2 << 20            # no bundle exceeds 2 MiB (small files: cheap to append, to diff and to clone)
BUNDLE_OPEN = BUNDLE_MAX - (256 << 10)   # appends go to the newest bundle until it reaches this
MAX_BUNDLE_READ = 16 << 20      # what a reader accepts (bundles written before the 2 MiB limit were up to 8 MiB)
MAX_LINE = 1 << 20              # a recording line is a few KiB; anything this large is not one
MAX_INFLATE = 64 << 20          # a bundle never inflates past this (a gzip bomb is refused)
INDEX_NAME = ".index"
INDEX_HEADER = "tensix-diff store index 1"
TAIL = 4096                     # bytes of a bundle's end hashed into its fingerprint
MEMBERS_KEPT = 4                # inflated members a store keeps for the next lookup


class StoreError(ValueError):
    """A corrupt, foreign or unusable recording or bundle: one clear line naming the file."""


class StaleIndex(Exception):
    """An index row that is not one the index writes: the store is scanned instead."""


Where = tuple[int, int, int, int]   # member offset, member length (bytes), line start, line length (characters)


@dataclass(slots=True)
class Line:
    case_hash: str
    device: str
    case_name: str
    payload: str | None     # JSON text, parsed on demand; None until read through the index
    bundle: str             # file name, for messages
    at: Where = (0, 0, 0, 0)


@dataclass
class Scan:
    """What one bundle holds: its recordings (the last line of each key), blobs, warnings, fingerprint."""
    name: str
    fingerprint: str
    lines: dict[tuple[str, str], Line] = field(default_factory=dict)
    blobs: dict[str, tuple[str | None, Where]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def members(raw: bytes, where: str, warn: list[str]) -> Iterator[tuple[int, int, str]]:
    """(offset, length, text) of each gzip member of a bundle; a torn last member is skipped with a warning;
    any other damage, or inflating past MAX_INFLATE, is a StoreError."""
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
        end = len(raw) - len(d.unused_data)
        try:
            yield pos, end - pos, text.decode("utf-8")
        except UnicodeDecodeError:
            raise StoreError(f"{where}: corrupt bundle: not UTF-8 text at byte {pos}") from None
        pos = end


def ends_complete(raw: bytes) -> bool:
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


def parse_lines(text: str, where: str) -> Iterator[tuple[str, list[str], int, int]]:
    """(kind "R" or "P", its fields, start, length) of each line of a member's text."""
    start = 0
    for n, line in enumerate(text.split("\n")):
        if line:
            if len(line) > MAX_LINE:
                raise StoreError(f"{where}: corrupt bundle: a line of {len(line)} characters")
            parts = line.split("\t")
            if parts[0] == "R" and len(parts) == 5:
                yield "R", parts[1:], start, len(line)
            elif parts[0] == "P" and len(parts) == 3:
                yield "P", parts[1:], start, len(line)
            else:
                raise StoreError(f"{where}: corrupt bundle: line {n + 1} is neither a recording nor a blob")
        start += len(line) + 1


def _fingerprint(st: os.stat_result, size: int, tail: bytes) -> str:
    return f"{size}:{st.st_mtime_ns}:{st.st_ino}:{hashlib.sha256(tail).hexdigest()[:16]}"


def fingerprint(p: Path) -> str:
    """What a bundle's index entry is valid for (see the module); '' when the file cannot be read."""
    try:
        with open(p, "rb") as f:
            st = os.fstat(f.fileno())
            f.seek(max(0, st.st_size - TAIL))
            return _fingerprint(st, st.st_size, f.read())
    except OSError:
        return ""


def scan(p: Path) -> Scan:
    """Read a whole bundle, checking every member and line (StoreError on damage)."""
    try:
        with open(p, "rb") as f:
            st = os.fstat(f.fileno())     # before the read: a write after it changes what the index checks
            if st.st_size > MAX_BUNDLE_READ:
                raise StoreError(f"{p}: corrupt bundle: {st.st_size} bytes is over the bundle size")
            raw = f.read(MAX_BUNDLE_READ + 1)
    except OSError as e:
        raise StoreError(f"{p}: cannot read bundle: {e.strerror or e}") from None
    out = Scan(p.name, _fingerprint(st, len(raw), raw[-TAIL:]))
    for pos, length, text in members(raw, str(p), out.warnings):
        for kind, f, start, n in parse_lines(text, str(p)):
            at = (pos, length, start, n)
            if kind == "P":
                out.blobs[f[0]] = (f[1], at)
                continue
            h, device, name, payload = f
            if not HASH_RE.match(h) or not device or not NAME_RE.match(name):
                raise StoreError(f"{p}: corrupt bundle: a recording line with hash {h[:16]!r},"
                                 f" device {device[:20]!r}, name {name[:40]!r}")
            out.lines[(h, device)] = Line(h, device, name, payload, p.name, at)
    return out


def packed(chunk: list[str]) -> list[bytes]:
    """One gzip member per bundle; a chunk that compresses past BUNDLE_MAX is split in halves."""
    data = gzip.compress("".join(chunk).encode(), 9, mtime=0)
    if len(data) <= BUNDLE_MAX:
        return [data]
    if len(chunk) == 1:
        raise StoreError(f"one recording compresses to {len(data)} bytes, over the bundle size {BUNDLE_MAX}")
    half = len(chunk) // 2
    return packed(chunk[:half]) + packed(chunk[half:])


def atomic_write(p: Path, data: bytes) -> None:
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


# --- the index ----------------------------------------------------------------------------------------

@dataclass
class Segment:
    """One bundle's part of the index, as written: its W and P rows (``head``), then its R rows."""
    name: str
    fingerprint: str
    head: str
    rows: str


def _where(fields: list[str]) -> Where:
    try:
        a, b, c, d = map(int, fields)
    except ValueError:
        raise StaleIndex from None
    return a, b, c, d


def read_index(root: Path) -> dict[str, Segment]:
    """The index's segments by bundle name; {} when there is none or it cannot be used (it is only a cache)."""
    try:
        text = (root / INDEX_NAME).read_bytes().decode()
    except (OSError, UnicodeDecodeError):
        return {}
    first, _, body = text.partition("\n")
    if first != INDEX_HEADER or not body.endswith("\n"):
        return {}
    out = {}
    for part in ("\n" + body).split("\nB\t")[1:]:
        line, _, rest = part.partition("\n")
        name, _, fp = line.partition("\t")
        if not BUNDLE_RE.match(name) or not fp:
            return {}
        rest = rest if rest.endswith("\n") or not rest else rest + "\n"
        k = 0 if rest.startswith("R\t") else rest.find("\nR\t") + 1 or len(rest)
        for row in rest[:k].split("\n")[:-1]:
            f = row.split("\t")
            if not (f[0] == "W" or f[0] == "P" and len(f) == 6 and all(x.isdigit() for x in f[2:])):
                return {}
        out[name] = Segment(name, fp, rest[:k], rest[k:])
    return out


def _segment(s: Scan | Segment) -> str:
    if isinstance(s, Segment):
        return f"B\t{s.name}\t{s.fingerprint}\n{s.head}{s.rows}"
    rows = [f"B\t{s.name}\t{s.fingerprint}"] + [f"W\t{w}" for w in s.warnings if "\t" not in w and "\n" not in w]
    rows += ["P\t{}\t{}\t{}\t{}\t{}".format(p, *at) for p, (_, at) in s.blobs.items()]
    rows += ["R\t{}\t{}\t{}\t{}\t{}\t{}\t{}".format(ln.case_hash, ln.device, ln.case_name, *ln.at)
             for ln in s.lines.values()]
    return "".join(r + "\n" for r in rows)


def write_index(root: Path, parts: list[Scan | Segment]) -> None:
    """Replace the index (atomically; silently not when the directory cannot be written). Plain text: it
    is read on every lookup, and inflating it would cost more than reading it."""
    try:
        atomic_write(root / INDEX_NAME, (INDEX_HEADER + "\n" + "".join(map(_segment, parts))).encode())
    except OSError:
        pass      # a store that cannot be written is read through scans


class Places:
    """Where each recording is, bundle by bundle in order (later lines win): the lines of bundles scanned
    (payloads read) and, for bundles the index still holds, its R rows, found by hash when asked (the first
    ``SEARCHED`` hashes by searching the rows' text, then through a table of them all)."""
    SEARCHED = 64

    def __init__(self, parts: list[Scan | Segment]):
        self.order: dict[str, int] = {}
        self.lines: dict[tuple[str, str], Line] = {}
        self.devices: dict[str, set[str]] = {}                  # of self.lines: case hash -> devices
        self.blobs: dict[str, tuple[str | None, str, Where]] = {}   # blob hash -> (text or None, bundle, place)
        self.warnings: list[str] = []
        self._names: dict[str, set[str]] | None = None
        self._starts: list[int] = []       # where each indexed bundle's R rows begin in self._text
        self._bundles: list[str] = []
        self._table: dict[str, list[tuple[str, str]]] | None = None   # case hash -> (bundle, R row)
        self._searched = 0
        self._read: dict[tuple[str, str], Line] = {}   # lines made from index rows, kept (their payloads too)
        chunks, pos = [], 1
        for s in parts:
            self.order[s.name] = len(self.order)
            if isinstance(s, Scan):
                self.warnings += s.warnings
                self.blobs.update({p: (text, s.name, at) for p, (text, at) in s.blobs.items()})
                for line in s.lines.values():
                    self.add(line)
                continue
            for row in s.head.split("\n"):
                if row.startswith("P\t"):
                    f = row.split("\t")
                    self.blobs[f[1]] = (None, s.name, _where(f[2:6]))
                elif row.startswith("W\t"):
                    self.warnings.append(row[2:])
            if s.rows:
                self._starts.append(pos)
                self._bundles.append(s.name)
                chunks.append(s.rows)
                pos += len(s.rows)
        self._text = "\n" + "".join(chunks)      # every R row follows a newline

    def _rows(self, h: str) -> list[tuple[str, str]]:
        """(bundle, R row) of every indexed row of case hash ``h``, in bundle order."""
        if self._table is None and self._searched < self.SEARCHED:
            self._searched += 1
            out, needle, text = [], f"\nR\t{h}\t", self._text
            i = text.find(needle)
            while i >= 0:
                end = text.find("\n", i + 1)
                out.append((self._bundles[bisect.bisect_right(self._starts, i + 1) - 1], text[i + 1:end]))
                i = text.find(needle, end)
            return out
        if self._table is None:
            self._table = {}
            for k, start in enumerate(self._starts):
                end = self._starts[k + 1] if k + 1 < len(self._starts) else len(self._text)
                for row in self._text[start:end - 1].split("\n"):
                    self._table.setdefault(row[2:66], []).append((self._bundles[k], row))
        return self._table.get(h, [])

    def add(self, line: Line) -> None:
        """A line read or appended after those already here."""
        self.order.setdefault(line.bundle, len(self.order))
        self.lines[(line.case_hash, line.device)] = line
        self.devices.setdefault(line.case_hash, set()).add(line.device)
        if self._names is not None:
            self._names.setdefault(line.case_name, set()).add(line.case_hash)

    def of(self, h: str) -> dict[str, Line]:
        """The current line of each device that recorded case hash ``h`` (StaleIndex: a row is not one the
        index writes)."""
        out: dict[str, Line] = {}
        for bundle, row in self._rows(h):
            f = row.split("\t")
            if len(f) != 8 or f[1] != h or not HASH_RE.match(h) or not f[2] or not NAME_RE.match(f[3]):
                raise StaleIndex
            prev = out.get(f[2])
            if prev is None or self.order[bundle] >= self.order[prev.bundle]:
                line = self._read.get((bundle, row))
                if line is None:
                    line = self._read[(bundle, row)] = Line(h, f[2], f[3], None, bundle, _where(f[4:8]))
                out[f[2]] = line
        for d in self.devices.get(h, ()):
            line, prev = self.lines[(h, d)], out.get(d)
            if prev is None or self.order[line.bundle] >= self.order[prev.bundle]:
                out[d] = line
        return out

    def all(self) -> dict[tuple[str, str], Line]:
        if not self._starts:
            return self.lines
        self._searched = self.SEARCHED       # every hash is asked for: the table
        self._rows("")
        return {(h, d): line for h in self._table.keys() | self.devices.keys() for d, line in self.of(h).items()}

    def names(self) -> dict[str, set[str]]:
        """Case name -> the case hashes recorded under it."""
        if self._names is None:
            self._names = {}
            for line in self.all().values():
                self._names.setdefault(line.case_name, set()).add(line.case_hash)
        return self._names


class Members:
    """Inflates single members of bundles (the last few kept), for lines read through the index."""

    def __init__(self, root: Path):
        self.root = root
        self._kept: OrderedDict[tuple[str, int], str] = OrderedDict()

    def clear(self) -> None:
        self._kept.clear()

    def line(self, bundle: str, at: Where) -> str | None:
        """The text of the line at ``at``, or None when the member there is not one whole, intact member
        holding a line at that place (the bundle changed under the index, or is damaged: scan it)."""
        pos, length, start, n = at
        key = (bundle, pos)
        text = self._kept.get(key)
        if text is None:
            p = self.root / bundle
            try:
                with open(p, "rb") as f:
                    f.seek(pos)
                    raw = f.read(length)
            except OSError as e:
                raise StoreError(f"{p}: cannot read bundle: {e.strerror or e}") from None
            try:
                found = list(members(raw, str(p), [])) if len(raw) == length else []
            except StoreError:       # the full scan that follows names the damage and where it is
                return None
            if len(found) != 1 or found[0][1] != length:
                return None
            text = found[0][2]
            self._kept[key] = text
            if len(self._kept) > MEMBERS_KEPT:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
        whole = start + n <= len(text) and (not start or text[start - 1] == "\n")
        if not whole or text[start + n:start + n + 1] not in ("", "\n"):
            return None
        return text[start:start + n]
