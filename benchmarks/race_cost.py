"""Race check cost: runs per case and CPU time per case, for one-thread and multi-thread generated cases,
against one golden run (tensix_diff.race; the verdict pays it for every multi-thread case).

    python benchmarks/race_cost.py [--cases N] [--profile NAME] [--seed S]
    python benchmarks/race_cost.py --bundle tests/fuzz_corpus/ttsim-pipeline-s4100-part01.cases.jsonl.gz [--every 4]

With --bundle: the recorded cases of a bundle (every Nth) instead of generated ones. Where some multi-thread cases
have race candidates and some not, each kind is also given apart (a candidate is confirmed or cleared by runs).

Target (issue 25): at most 2x one golden run per multi-thread case.
"""
from __future__ import annotations

import argparse
import statistics
import time

from pathlib import Path

from generators.bulk import generate
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import load_bundle
from tensix_diff.race import check, threads_in_use


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--profile", default="counters")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--bundle", type=Path, help="recorded cases of this bundle instead of generated ones")
    ap.add_argument("--every", type=int, default=4, help="with --bundle: every Nth case")
    args = ap.parse_args()
    if args.bundle:
        cases = load_bundle(args.bundle)[::args.every]
    else:
        cases = [c for _, c in generate(args.seed, args.cases, args.profile)]
    golden = GoldenBackend()
    rows: dict[bool, list[tuple[float, float, int, int]]] = {False: [], True: []}
    for c in cases:
        t0 = time.process_time()
        golden.run(c)
        t1 = time.process_time()
        r = check(c)
        t2 = time.process_time()
        rows[len(threads_in_use(c)) > 1].append((t1 - t0, t2 - t1, len(r.tried), r.candidates > 0))
    what = f"{args.bundle.name}, every {args.every}th" if args.bundle else f"'{args.profile}' (seed {args.seed})"
    print(f"{len(cases)} cases of {what}, CPU time")
    groups = [("one thread", rows[False]), ("several threads", rows[True])]
    if any(x[3] for x in rows[True]) and not all(x[3] for x in rows[True]):
        groups += [("  no candidates", [x for x in rows[True] if not x[3]]),
                   ("  candidates", [x for x in rows[True] if x[3]])]
    for label, r in groups:
        if r:
            g, c = (statistics.median(x[i] for x in r) for i in range(2))
            mg, mc = (statistics.mean(x[i] for x in r) for i in range(2))
            runs = statistics.mean(x[2] for x in r)
            print(f"{label:16s} {len(r):4d} cases ({sum(x[3] for x in r)} with race candidates): {runs:.2f} run(s)"
                  f" per case, race check {c * 1e3:.2f} ms per case (median; one golden run {g * 1e3:.2f} ms,"
                  f" {c / g:.1f}x; mean {mc * 1e3:.2f} ms, {mc / mg:.1f}x)")

if __name__ == "__main__":
    main()
