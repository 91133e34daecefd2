"""Cold `tensix-diff coverage` over the committed corpus (tests/corpus and tests/fuzz_corpus): wall and CPU
time, the load before and after, and the coverage summary it printed. Cold: every cache (effects, race checks,
the replay store's indexes) starts empty in a fresh $XDG_CACHE_HOME. Target (issue 25): <= 10 minutes on 2 cores.

    python benchmarks/coverage_time.py [--jobs 2] [--provenance | --exhaustive] [--keep-cache DIR] [PATHS...]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="what to measure (default: the command's default, the whole corpus)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--provenance", action="store_true", help="effects by provenance (coverage --provenance)")
    ap.add_argument("--exhaustive", action="store_true", help="every instruction ablated (coverage --exhaustive)")
    ap.add_argument("--keep-cache", metavar="DIR", help="an empty directory to use as the cold cache and keep "
                    "(its effects/ file says what each case ablated)")
    args = ap.parse_args()
    if args.keep_cache and any(Path(args.keep_cache).glob("*")):
        sys.exit(f"{args.keep_cache} is not empty: the run would not be cold")
    with (contextlib.nullcontext(args.keep_cache) if args.keep_cache
          else tempfile.TemporaryDirectory(prefix="coverage-cold-")) as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
        out = Path(cache) / "coverage.json"
        cmd = [sys.executable, "-m", "tensix_cli.cli", "coverage", *args.paths, "--jobs", str(args.jobs), "--summary",
               "--json", str(out), *(["--provenance"] if args.provenance else []),
               *(["--exhaustive"] if args.exhaustive else [])]
        load0 = os.getloadavg()
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        load1 = os.getloadavg()
    if run.returncode:
        sys.exit(f"coverage failed ({run.returncode}):\n{run.stderr[-2000:]}")
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    how = "provenance" if args.provenance else "ablation" + ("" if args.exhaustive else ", saturating")
    print(f"cold coverage, effects by {how}, --jobs {args.jobs}, {' '.join(args.paths) or 'the whole committed corpus'}:")
    print(f"wall {wall / 60:.1f} min, CPU {cpu / 60:.1f} min (all processes); load average before "
          f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; "
          f"target <= 10 min wall")
    print(run.stdout.rstrip())


if __name__ == "__main__":
    main()
