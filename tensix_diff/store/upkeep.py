"""Looking after a store (docs/store.md): verify every recording, merge another store, gc, and migrate the old
one-file-per-case layout; each returns what it found and leaves the printing to the command."""
from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Container

from ..case import Case
from ..result import same_value
from .bundles import StoreError
from .codec import Bad, blob_hash, check_provenance, decode_state, mapping
from .store import Recording, Store


def verify(store: Store) -> tuple[int, list[str]]:
    """Every bundle read and checked whole, every blob's hash against its content, every recording decoded:
    (recordings, problems)."""
    store._load()              # noqa: SLF001 (StoreError on any damage)
    problems = list(store.warnings)
    keys = store.keys()
    for p, text in store._blobs.items():      # noqa: SLF001 (the store's own blob table)
        if blob_hash(json.loads(text)) != p:
            problems.append(f"blob {p}: its hash does not match its content")
    for h, device in keys:
        try:
            store.get(h, device, structural=True)
        except StoreError as e:
            problems.append(str(e))
    return len(keys), problems


@dataclass
class Merged:
    added: int = 0
    same: int = 0
    conflicts: list[str] = field(default_factory=list)   # nondeterminism: one case, one device, two results


def merge(store: Store, other: Store) -> Merged:
    """``other``'s recordings added to ``store``; two different results of one case on one device are listed,
    never chosen (ours is kept)."""
    mine = {k: store._load()[k] for k in store.keys()}          # noqa: SLF001
    out = Merged()
    theirs = other._load()                                      # noqa: SLF001
    new = []
    for key, line in sorted(theirs.items()):
        if key in mine:
            if _result_of(mine[key].payload) == _result_of(line.payload):
                out.same += 1
            else:
                out.conflicts.append(f"nondeterminism: case {line.case_name} ({key[0][:12]}) on {key[1]}:"
                                     f" {other.root} ({line.bundle}) and {store.root} ({mine[key].bundle})"
                                     " hold different results")
            continue
        new.append(line)
        out.added += 1
    if new:
        blobs = {json.loads(ln.payload)["p"] for ln in new}
        text = [f"P\t{p}\t{other._blobs[p]}\n" for p in sorted(blobs) if p in other._blobs]   # noqa: SLF001
        text += ["\t".join(("R", ln.case_hash, ln.device, ln.case_name, ln.payload)) + "\n" for ln in new]
        store.write_bundles(store.packed_lines() + text)
    return out


def _result_of(payload: str) -> tuple:
    doc = json.loads(payload)
    return doc["status"], json.dumps(doc["state"], sort_keys=True), doc["base"]


def gc(store: Store, cases: Container[str] | None) -> tuple[int, int]:
    """The bundles rewritten packed, without superseded lines, unused blobs and (given ``cases``, case hashes)
    recordings of other cases: (recordings before, after)."""
    before = len(store.keys())
    keep = (lambda ln: True) if cases is None else (lambda ln: ln.case_hash in cases)
    store.write_bundles(store.packed_lines(keep))
    return before, len(store.keys())


def migrate(store: Store, source: Path, cases: dict[str, Case]) -> tuple[int, int]:
    """The old layout under ``source`` into bundles, once, Dest re-based on the initial Dest of the case (by
    hash) where ``cases`` has it; the old files are removed only after every recording reads back the same:
    (recordings, re-based)."""
    old = sorted(source.glob("??/*.json.gz"))
    if not old:
        raise StoreError(f"{source}: no recordings in the old layout to migrate")
    target = Store(store.root)
    target._check_layout = lambda: None                         # noqa: SLF001 (the old files are ours to move)
    existing = target.packed_lines()
    recs, rebased = [], 0
    for p in old:
        rec = _read_old(p)
        case = cases.get(rec.case_hash)
        if case is not None and case.init.dest:
            rec.base = {r: list(v) for r, v in case.init.dest}
            rebased += 1
        recs.append(rec)
    lines, blobs = [], {}
    for rec in recs:
        line, blob, p = target._encode(rec)                     # noqa: SLF001
        if blob:
            blobs[p] = blob + "\n"
            target._blobs[p] = blob.split("\t", 2)[2]           # noqa: SLF001
        lines.append(line + "\n")
    target.write_bundles(existing + list(blobs.values()) + lines)
    check = Store(store.root)
    check._check_layout = lambda: None                          # noqa: SLF001
    for rec in recs:       # every migrated recording reads back to the very same state before anything is removed
        got = check.get(rec.case_hash, rec.device, case=cases.get(rec.case_hash))
        if got is None or not same_value(got.state, rec.state) or got.status != rec.status:
            raise StoreError(f"migration check failed for {rec.case_name}: not removing the old layout")
    for p in old:
        p.unlink()
    for d in {p.parent for p in old}:
        if not any(d.iterdir()):
            d.rmdir()
    shutil.rmtree(source / "names", ignore_errors=True)
    return len(recs), rebased


def _read_old(p: Path) -> Recording:
    """One recording of the old layout (format 1): Dest sparse by non-zero rows, GPR lists."""
    try:
        doc = mapping(json.loads(gzip.decompress(p.read_bytes())), "the recording")
        state = doc["state"]
        if state is not None:
            st = {}
            for k, v in state.items():
                if k == "gpr":
                    st[k] = {t: {str(i): x for i, x in enumerate(regs) if x} for t, regs in mapping(v, "gpr").items()}
                else:
                    st[k] = v
            state = decode_state(st, {})
        prov = check_provenance(doc["provenance"])
        return Recording(doc["case_hash"], doc["case_name"], doc["status"], state, prov, doc["message"],
                         list(doc["unobservable"]))
    except (OSError, ValueError, KeyError, Bad) as e:
        raise StoreError(f"{p}: cannot migrate: {e}") from None
