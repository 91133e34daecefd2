"""Case-file parse speed (issue 12, target >= 1,000 files/s): N cases of the default generator profile, written
as `tensix-diff fuzz --write-cases` writes them (dump_case), then loaded through load_case; and the curated
corpus (tests/corpus/**/*.yaml).

    python benchmarks/case_parse.py [--count N] [--seed S]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from generators.bulk import generate
from tensix_diff.case import dump_case, load_case

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1000.0


def rate(files: list[Path], repeat: int = 3) -> float:
    """Files per second, best of ``repeat`` passes over all of ``files``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for f in files:
            load_case(f)
        best = min(best, time.perf_counter() - t0)
    return len(files) / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=300, metavar="N", help="generated case files (default: 300)")
    ap.add_argument("--seed", type=int, default=1, metavar="S", help="campaign seed (default: 1)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        files = []
        for _, case in generate(args.seed, args.count, "default"):
            files.append(Path(d) / f"{case.name}.yaml")
            files[-1].write_text(dump_case(case))
        size = sum(f.stat().st_size for f in files) / len(files)
        r = rate(files)
    verdict = "met" if r >= TARGET else "NOT met"
    print(f"generated (profile default, seed {args.seed}): {len(files)} files, {size / 1e3:.1f} kB average: "
          f"{r:.0f} files/s (target {TARGET:.0f}/s: {verdict})")
    corpus = sorted((ROOT / "tests" / "corpus").rglob("*.yaml"))
    print(f"curated corpus (tests/corpus): {len(corpus)} files: {rate(corpus):.0f} files/s")


if __name__ == "__main__":
    main()
