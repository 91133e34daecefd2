"""Race check cost: schedules tried and time per case, for one-thread and multi-thread generated cases, against
one golden run (tensix_diff.race; the verdict pays it for every multi-thread case).

    python benchmarks/race_cost.py [--cases N] [--profile NAME] [--seed S]
"""
from __future__ import annotations

import argparse
import statistics
import time

from generators.bulk import generate
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.race import check, threads_in_use


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--profile", default="counters")
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args()
    cases = [c for _, c in generate(args.seed, args.cases, args.profile)]
    golden = GoldenBackend()
    rows: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
    for c in cases:
        t0 = time.process_time()
        golden.run(c)
        t1 = time.process_time()
        r = check(c)
        t2 = time.process_time()
        rows[len(threads_in_use(c)) > 1].append((t1 - t0, t2 - t1, len(r.tried)))
    print(f"{len(cases)} '{args.profile}' cases (seed {args.seed})")
    for multi, label in ((False, "one thread"), (True, "several threads")):
        r = rows[multi]
        if r:
            g, c, n = (statistics.median(x[i] for x in r) for i in range(3))
            print(f"{label:16s} {len(r):4d} cases: {n:.0f} schedule(s), race check {c * 1e3:.2f} ms per case"
                  f" (median; one golden run {g * 1e3:.2f} ms, {c / g:.1f}x)")


if __name__ == "__main__":
    main()
