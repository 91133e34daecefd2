"""`tensix-diff store stats|verify|merge OTHER|gc|migrate`: look after the replay store (tensix_diff.store).

- ``stats``: cases, recordings per device, bundles, bytes per recording and per case.
- ``verify``: every bundle readable, every blob's hash matches its content, every recording decodes.
- ``merge OTHER``: add another store's recordings (e.g. from another lab machine). Two different results of
  one case on one device are nondeterminism: listed, never chosen (ours is kept), exit 1.
- ``gc``: rewrite the bundles packed, without superseded lines, unused blobs, and (with ``--cases``)
  recordings no given case refers to.
- ``migrate``: convert a store in the old layout (one ``<hh>/<hash>.json.gz`` per case, ``names/``) into
  bundles, once; Dest is re-based on each case's initial Dest where the case is found in ``--cases``.
"""
from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

from .backends import EXIT_USAGE, BackendFailure
from tensix_diff.case import CaseError, case_hash
from tensix_diff.store import REPO_ROOT, Recording, Store, StoreError, _Bad, _blob_hash, _check_provenance, _dict, decode_state

DEFAULT_CASES = [REPO_ROOT / "tests" / "corpus", REPO_ROOT / "tests" / "fuzz_corpus"]


def add_parser(sub) -> None:
    p = sub.add_parser("store", help="look after the replay store: stats, verify, merge, gc, migrate")
    p.add_argument("action", choices=("stats", "verify", "merge", "gc", "migrate"))
    p.add_argument("other", nargs="?", metavar="OTHER", help="merge: the other store's directory")
    p.add_argument("--recordings", metavar="DIR", help="the store (default: $TENSIX_DIFF_RECORDINGS or ./recordings)")
    p.add_argument("--cases", nargs="*", metavar="PATH", default=None,
                   help="case files, directories or bundles (gc: keep only their recordings; migrate: their"
                        " initial Dest; default tests/corpus and tests/fuzz_corpus)")
    p.add_argument("--from", dest="source", metavar="DIR", help="migrate: the old-layout store (default: the store)")
    p.set_defaults(func=run)


def run(args) -> int:
    store = Store(args.recordings)
    try:
        if args.action == "stats":
            return stats(store)
        if args.action == "verify":
            return verify(store)
        if args.action == "merge":
            if not args.other:
                raise BackendFailure(EXIT_USAGE, "store merge needs the other store's directory")
            return merge(store, Store(args.other))
        if args.action == "gc":
            return gc(store, _cases(args.cases) if args.cases is not None else None)
        return migrate(store, Path(args.source) if args.source else store.root, _cases(args.cases or DEFAULT_CASES))
    except StoreError as e:
        raise BackendFailure(EXIT_USAGE, str(e)) from None


def _cases(paths) -> dict:
    from tensix_diff.case import load_any
    try:
        return {case_hash(c): c for c in load_any([Path(p) for p in paths])}
    except CaseError as e:
        raise BackendFailure(EXIT_USAGE, str(e)) from None


def stats(store: Store) -> int:
    keys = store.keys()
    per = Counter(d for _, d in keys)
    files = store.bundles()
    size = sum(p.stat().st_size for p in files)
    cases = len({h for h, _ in keys})
    print(f"store {store.root}: {cases} cases, {len(keys)} recordings in {len(files)} bundles, {size} bytes")
    for device, n in sorted(per.items()):
        print(f"  {device}: {n} recordings")
    if keys:
        print(f"bytes per recording: {size / len(keys):.0f} ({size / len(keys) / 1024:.2f} KiB);"
              f" bytes per case: {size / cases:.0f} ({size / cases / 1024:.2f} KiB)")
    return 0


def verify(store: Store) -> int:
    store._load()              # noqa: SLF001 (every bundle read and checked whole: StoreError on any damage)
    problems = list(store.warnings)
    keys = store.keys()
    for p, text in store._blobs.items():      # noqa: SLF001 (the store's own blob table)
        if _blob_hash(json.loads(text)) != p:
            problems.append(f"blob {p}: its hash does not match its content")
    for h, device in keys:
        try:
            store.get(h, device, structural=True)
        except StoreError as e:
            problems.append(str(e))
    for line in problems:
        print(line)
    print(f"verified {len(keys)} recordings in {len(store.bundles())} bundles: "
          + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 0 if not problems else 1


def merge(store: Store, other: Store) -> int:
    mine = {k: store._load()[k] for k in store.keys()}          # noqa: SLF001
    added, same, conflicts = 0, 0, []
    theirs = other._load()                                      # noqa: SLF001
    new = []
    for key, line in sorted(theirs.items()):
        if key in mine:
            if _result_of(mine[key].payload) == _result_of(line.payload):
                same += 1
            else:
                conflicts.append(f"nondeterminism: case {line.case_name} ({key[0][:12]}) on {key[1]}: {other.root}"
                                 f" ({line.bundle}) and {store.root} ({mine[key].bundle}) hold different results")
            continue
        new.append(line)
        added += 1
    if new:
        blobs = {json.loads(ln.payload)["p"] for ln in new}
        text = [f"P\t{p}\t{other._blobs[p]}\n" for p in sorted(blobs) if p in other._blobs]   # noqa: SLF001
        text += ["\t".join(("R", ln.case_hash, ln.device, ln.case_name, ln.payload)) + "\n" for ln in new]
        store.write_bundles(store.packed_lines() + text)
    for c in conflicts:
        print(c)
    print(f"merged {other.root} into {store.root}: {added} added, {same} already there,"
          f" {len(conflicts)} conflicting (kept ours)")
    return 1 if conflicts else 0


def _result_of(payload: str) -> tuple:
    doc = json.loads(payload)
    return doc["status"], json.dumps(doc["state"], sort_keys=True), doc["base"]


def gc(store: Store, cases: dict | None) -> int:
    before = store.keys()
    keep = (lambda ln: True) if cases is None else (lambda ln: ln.case_hash in cases)
    store.write_bundles(store.packed_lines(keep))
    after = store.keys()
    print(f"gc {store.root}: kept {len(after)} of {len(before)} recordings in {len(store.bundles())} bundles")
    return 0


def migrate(store: Store, source: Path, cases: dict) -> int:
    """Old layout -> bundles, once; the old files are removed after the bundles are written."""
    old = sorted(source.glob("??/*.json.gz"))
    if not old:
        raise BackendFailure(EXIT_USAGE, f"{source}: no recordings in the old layout to migrate")
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
        if got is None or got.state != rec.state or got.status != rec.status:
            raise StoreError(f"migration check failed for {rec.case_name}: not removing the old layout")
    for p in old:
        p.unlink()
    for d in {p.parent for p in old}:
        if not any(d.iterdir()):
            d.rmdir()
    shutil.rmtree(source / "names", ignore_errors=True)
    print(f"migrated {len(recs)} recordings ({rebased} with Dest relative to the case's initial Dest) into"
          f" {len(check.bundles())} bundles; removed the old layout")
    return 0


def _read_old(p: Path) -> Recording:
    """One recording of the old layout (format 1): Dest sparse by non-zero rows, GPR lists."""
    try:
        doc = _dict(json.loads(gzip.decompress(p.read_bytes())), "the recording")
        state = doc["state"]
        if state is not None:
            st = {}
            for k, v in state.items():
                if k == "gpr":
                    st[k] = {t: {str(i): x for i, x in enumerate(regs) if x} for t, regs in _dict(v, "gpr").items()}
                else:
                    st[k] = v
            state = decode_state(st, {})
        prov = _check_provenance(doc["provenance"])
        return Recording(doc["case_hash"], doc["case_name"], doc["status"], state, prov, doc["message"],
                         list(doc["unobservable"]))
    except (OSError, ValueError, KeyError, _Bad) as e:
        raise StoreError(f"{p}: cannot migrate: {e}") from None

