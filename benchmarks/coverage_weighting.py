"""Coverage-weighted generation against plain generation: how many coverage bins (instruction, mode field,
value) never seen in the committed corpus N cases reach, for the plain profile and for
generators.coverage_weights.toward_unseen of it. Only cases golden runs count (a refused case compares nothing).

    python benchmarks/coverage_weighting.py [--profile NAME] [--cases N] [--seed S]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from generators.bulk import generate
from generators.coverage_weights import case_bins, corpus_bins, toward_unseen
from generators.profiles import load_profile
from tensix_diff.case import load_any
from tensix_diff.golden_run import run_golden

ROOT = Path(__file__).resolve().parents[1]


def reached(profile, seed: int, n: int, seen: set) -> tuple[set, int]:
    bins, ran = set(), 0
    for _, case in generate(seed, n, profile):
        if run_golden(case).ok:
            ran += 1
            bins |= case_bins(case)
    return bins - seen, ran


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="arith")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    t0 = time.monotonic()
    seen = corpus_bins(load_any([ROOT / "tests" / "corpus", ROOT / "tests" / "fuzz_corpus"]))
    print(f"corpus: {len(seen)} bins seen ({time.monotonic() - t0:.0f} s to read)")
    base = load_profile(args.profile)
    for label, p in (("plain", base), ("toward unseen", toward_unseen(base, seen))):
        new, ran = reached(p, args.seed, args.cases, seen)
        print(f"{label:>14} '{p.name}': {args.cases} cases (golden ran {ran}): {len(new)} bins the corpus never showed")


if __name__ == "__main__":
    main()
