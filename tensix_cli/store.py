"""`tensix-diff store stats|verify|merge OTHER|gc|migrate`: look after the replay store (tensix_diff.store.upkeep).

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

from collections import Counter
from pathlib import Path

from tensix_diff.case import CaseError, case_hash, load_any
from tensix_diff.store import REPO_ROOT, Store, StoreError, upkeep

from .exits import EXIT_USAGE, BackendFailure

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
    n, problems = upkeep.verify(store)
    for line in problems:
        print(line)
    print(f"verified {n} recordings in {len(store.bundles())} bundles: "
          + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 0 if not problems else 1


def merge(store: Store, other: Store) -> int:
    m = upkeep.merge(store, other)
    for c in m.conflicts:
        print(c)
    print(f"merged {other.root} into {store.root}: {m.added} added, {m.same} already there,"
          f" {len(m.conflicts)} conflicting (kept ours)")
    return 1 if m.conflicts else 0


def gc(store: Store, cases: dict | None) -> int:
    before, after = upkeep.gc(store, cases)
    print(f"gc {store.root}: kept {after} of {before} recordings in {len(store.bundles())} bundles")
    return 0


def migrate(store: Store, source: Path, cases: dict) -> int:
    """Old layout -> bundles, once; the old files are removed after the bundles are written."""
    n, rebased = upkeep.migrate(store, source, cases)
    print(f"migrated {n} recordings ({rebased} with Dest relative to the case's initial Dest) into"
          f" {len(Store(store.root).bundles())} bundles; removed the old layout")
    return 0
