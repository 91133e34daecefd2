"""CLI start-up: wall time of `tensix-diff disasm 0x3700000f` (target <= 120 ms on an idle machine; before
the YAML table cache and lazy command imports it took 0.77-0.99 s), median of N runs, and a bare interpreter.

    python benchmarks/cli_start.py [--runs N]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def _wall(cmd: list[str], runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    script = shutil.which("tensix-diff") or sys.exit("tensix-diff is not installed (pip install -e .)")
    bare = _wall([sys.executable, "-c", "pass"], args.runs)
    cli = _wall([script, "disasm", "0x3700000f"], args.runs)
    print(f"python -c pass:                 {bare * 1e3:6.0f} ms")
    print(f"tensix-diff disasm 0x3700000f:  {cli * 1e3:6.0f} ms (target 120 ms: {'met' if cli <= 0.120 else 'NOT met'})")


if __name__ == "__main__":
    main()
