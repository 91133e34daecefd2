"""`tensix-diff race CASE...`: does a case's outcome depend on how its threads interleave (tensix_diff.race)?

Prints, per case, the schedules tried (the recorded one and the reversals of its race candidates) and, for a
racy case, the two that disagree and the first differing fields. Exit status: 0 none racy, 1 a racy case, 2 bad input.
"""
from __future__ import annotations

import time

from tensix_diff.case import load_any
from tensix_diff.race import REVERSALS, check

from .exits import EXIT_USAGE, BackendFailure


def add_parser(sub) -> None:
    p = sub.add_parser("race", help="explain whether a case's outcome depends on the thread interleaving")
    p.add_argument("cases", nargs="+", metavar="CASE", help="case YAML files, directories or *.cases.jsonl.gz bundles")
    p.add_argument("-q", "--quiet", action="store_true", help="only racy cases and the summary")
    p.add_argument("--reversals", type=int, default=REVERSALS, metavar="N",
                   help=f"race candidates reversed at most per case (default {REVERSALS})")
    p.set_defaults(func=run)


def run(args) -> int:
    cases = load_any(args.cases)
    if not cases:
        raise BackendFailure(EXIT_USAGE, f"no case files in {' '.join(args.cases)}")
    racy, t0 = 0, time.perf_counter()
    for case in cases:
        report = check(case, args.reversals)
        racy += report.racy
        if report.racy or not args.quiet:
            print(report.text())
    print(f"{len(cases)} cases: {racy} racy ({(time.perf_counter() - t0) / len(cases) * 1e3:.1f} ms per case)")
    return 1 if racy else 0
