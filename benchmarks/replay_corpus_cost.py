"""Where the replay corpus test's CPU goes (tests/hwbridge/test_hw_replay_corpus.py), per case and by step,
on a sample of the committed bundles: loading the bundle, golden's run, the replay lookup (the case hash, the
recording read and checked), the verdict (its race check and observed-effect check apart) and the closing
summary's bookkeeping (tensix_diff.triage.stale_known); then each step over the whole corpus, extrapolated
bundle by bundle. CPU time (time.process_time), one process.

    python benchmarks/replay_corpus_cost.py [--every N] [--cases M]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import tensix_diff.assess as assess_module
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import assess
from tensix_diff.case import load_bundle
from tensix_diff.race import check as race_check
from tensix_diff.triage import stale_known

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("load", "golden", "replay", "race check", "effects check", "verdict, the rest", "bookkeeping")


def timed(counts: Counter, step: str, fn):
    def run(*args, **kw):
        t = time.process_time()
        try:
            return fn(*args, **kw)
        finally:
            counts[step] += time.process_time() - t
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=4, help="every N-th bundle (default 4)")
    ap.add_argument("--cases", type=int, default=12, help="cases of its first chunk timed per bundle (default 12)")
    args = ap.parse_args()
    bundles = sorted((ROOT / "tests" / "fuzz_corpus").glob("*.cases.jsonl.gz"))[::args.every]
    step: Counter = Counter()
    race = timed(step, "race check", race_check)
    any_observed = assess_module.any_observed
    assess_module.any_observed = timed(step, "effects check", any_observed)   # the verdict's own call, timed
    golden, replay = GoldenBackend(), ReplayBackend()
    replay.store.hashes()      # the index's table of hashes, which a process builds once, built before timing
    whole: Counter = Counter()
    cases_in_all = 0
    for path in bundles:
        t = time.process_time()
        cases = load_bundle(path)
        whole["load"] += time.process_time() - t
        sample = cases[0::4][:args.cases]
        step.clear()
        for case in sample:
            expected = timed(step, "golden", golden.run)(case)
            actual = timed(step, "replay", replay.run)(case)
            verdict = timed(step, "verdict", assess)(case, expected, actual, ("golden", "ttsim"), "replay",
                                                     race_of=race)
            timed(step, "bookkeeping", stale_known)(case, verdict, "replay")
        step["verdict, the rest"] = step.pop("verdict") - step["race check"] - step["effects check"]
        for name, cpu in step.items():
            whole[name] += cpu * len(cases) / len(sample)
        cases_in_all += len(cases)
    assess_module.any_observed = any_observed
    total = sum(whole.values())
    print(f"{len(bundles)} bundles of {len(sorted((ROOT / 'tests' / 'fuzz_corpus').glob('*.cases.jsonl.gz')))},"
          f" {cases_in_all} cases, {args.cases} timed per bundle; load {os.getloadavg()[0]:.1f}")
    for name in STEPS:
        print(f"{name:18s} {1000 * whole[name] / cases_in_all:6.2f} CPU-ms a case"
              f"  {100 * whole[name] / total:5.1f}%  {whole[name] * args.every:7.1f} CPU-s over the corpus")
    print(f"{'all':18s} {1000 * total / cases_in_all:6.2f} CPU-ms a case          {total * args.every:7.1f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
