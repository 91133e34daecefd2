"""Cases per second against the number of Tensix cores one ttsim process drives side by side (``--jobs N``).

    python benchmarks/hw_cores.py --simulator=PATH [--count 400] [--profile default] [--cores 1,2,4,8,16,32]
                                  [--isolation replace|card]

Each core count gets a fresh HwBackend on one simulator (ttsim clocks every core at once), one warm-up case,
then the same derandomized fuzz cases through ``run_many``; prints cases/s, the speed-up over one core,
simulator replacements (replace isolation: after a batch that left state) and the outcome mix. Numbers only;
nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.bulk import generate  # noqa: E402
from generators.profiles import load_profile  # noqa: E402
from hwbridge.hw.backend import HwBackend  # noqa: E402


def measure(sim: str, cases: list, cores: int, isolation: str | None) -> tuple[float, int, Counter]:
    with HwBackend(sim, jobs=cores, isolation=isolation) as backend:
        backend.run(cases[0])
        starts = backend.worker.starts
        t0 = time.perf_counter()
        results = backend.run_many(cases)
        elapsed = time.perf_counter() - t0
        return len(cases) / elapsed, backend.worker.starts - starts, Counter(r.status for r in results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulator", default=os.environ.get("TENSIX_DIFF_SIMULATOR"))
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--cores", default="1,2,4,8,16,32", help="core counts to measure (comma-separated)")
    ap.add_argument("--isolation", choices=("replace", "card"), help="default: the ttsim default (replace)")
    args = ap.parse_args()
    if not args.simulator:
        sys.exit("give --simulator=PATH (a Blackhole libttsim.so) or set TENSIX_DIFF_SIMULATOR")
    cases = [c for _, c in generate(args.seed, args.count, load_profile(args.profile))]
    print(f"{len(cases)} fuzz cases, profile {args.profile}, seed {args.seed}; isolation"
          f" {args.isolation or 'replace (default)'}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    base = None
    for n in (int(x) for x in args.cores.split(",")):
        rate, replaced, outcomes = measure(args.simulator, cases, n, args.isolation)
        base = base or rate
        print(f"cores={n:>3}: {rate:7.1f} cases/s  x{rate / base:4.2f}  {replaced:>3} simulator replacements;"
              f" outcomes " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())), flush=True)


if __name__ == "__main__":
    main()
