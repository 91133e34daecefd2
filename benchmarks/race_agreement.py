"""The race check against the seven-schedule sampling it replaced, over the committed corpus: how many
multi-thread cases each finds racy, how many of the check's the reversals find (before any sampled schedule
runs), every case the sampling finds that the check misses (there must be none), every case only the check finds
with the schedule that shows it, runs per racy case, and CPU time per case for each.

    python benchmarks/race_agreement.py [PATH ...]     (default: tests/corpus and every bundle of tests/fuzz_corpus)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from race_sampler import sampled_racy  # noqa: E402  (the former check, kept beside the tests)
from tensix_diff.case import load_any, load_bundle  # noqa: E402
from tensix_diff.race import check, threads_in_use  # noqa: E402


def sources(paths: list[str]):
    if paths:
        yield from ((p, load_any([p])) for p in paths)
        return
    yield "tests/corpus", load_any([str(ROOT / "tests" / "corpus")])
    for p in sorted((ROOT / "tests" / "fuzz_corpus").glob("*.cases.jsonl.gz")):
        yield p.name, load_bundle(p)


def main() -> None:
    n = old_racy = new_racy = by_reversal = racy_runs = 0
    t_old = t_new = 0.0
    missed, extra = [], []
    for _, cases in sources(sys.argv[1:]):
        for case in cases:
            if len(threads_in_use(case)) < 2:
                continue
            t0 = time.process_time()
            old = sampled_racy(case)
            t1 = time.process_time()
            new = check(case)
            t2 = time.process_time()
            n, t_old, t_new = n + 1, t_old + t1 - t0, t_new + t2 - t1
            old_racy += old is not None
            new_racy += new.racy
            if new.racy:
                by_reversal += " held before " in new.second       # a reversal (tensix_diff.race.Hold.name)
                racy_runs += len(new.tried)
            if old and not new.racy:
                missed.append(f"{case.name} (sampled: {old})")
            if new.racy and not old:
                extra.append(f"{case.name}: {new.second}: {new.differences[0] if new.differences else ''}")
    print(f"{n} multi-thread cases: {old_racy} racy under the sampled schedules, {new_racy} under the race check")
    print(f"the race check's racy cases found by a reversal: {by_reversal}, by a sampled schedule:"
          f" {new_racy - by_reversal}; runs per racy case {racy_runs / max(new_racy, 1):.2f}")
    print(f"found by the sampling only: {len(missed)}" + "".join(f"\n  {m}" for m in missed))
    print(f"found by the race check only: {len(extra)}" + "".join(f"\n  {e}" for e in extra))
    print(f"CPU per case: sampled schedules {t_old / max(n, 1) * 1e3:.1f} ms,"
          f" race check {t_new / max(n, 1) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
