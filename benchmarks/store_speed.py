"""Replay store figures over the committed corpus: loading the bundles, replaying every recorded fuzz case
(lookup, decode, the check that the recording holds all its platform observes), and the store's size.

    python benchmarks/store_speed.py [--recordings DIR]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from tensix_diff.case import load_bundle
from hwbridge.replay import ReplayBackend
from tensix_diff.store import Store

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recordings", default=None)
    args = ap.parse_args()
    cases = [c for b in sorted((ROOT / "tests" / "fuzz_corpus").glob("*.cases.jsonl.gz")) for c in load_bundle(b)]
    store = Store(args.recordings)
    t0, c0 = time.perf_counter(), time.process_time()
    n = len(store.keys())
    t1, c1 = time.perf_counter(), time.process_time()
    replay = ReplayBackend(store=store)
    ok = sum(replay.run(c).ok for c in cases)
    t2, c2 = time.perf_counter(), time.process_time()
    size = sum(p.stat().st_size for p in store.bundles())
    print(f"store: {n} recordings in {len(store.bundles())} bundles, {size} bytes ({size / n / 1024:.2f} KiB each);"
          f" every key listed in {(t1 - t0) * 1e3:.0f} ms ({(c1 - c0) * 1e3:.0f} CPU-ms)")
    print(f"replay: {len(cases)} fuzz cases ({ok} ok) in {t2 - t1:.1f} s, {(t2 - t1) / len(cases) * 1e3:.2f} ms"
          f" ({(c2 - c1) / len(cases) * 1e3:.2f} CPU-ms) per case; {os.getloadavg()[0]:.1f} load average")


if __name__ == "__main__":
    main()
