"""The README's test command, `pytest` (CI runs it through .ci/run), timed as it runs: wall and CPU seconds,
its last line and the replay summary (how many cases it compared); target <= 8 minutes on an idle 2-core
machine. It spreads over every core (conftest.py); the load average says what else the machine was doing.

    python benchmarks/suite_time.py [--log FILE] [-- PYTEST ARGS]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cli_timing import load_note, timed

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", metavar="FILE", help="also write pytest's whole output here")
    ap.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = ap.parse_args()
    print(f"before: {load_note()}")
    wall, cpu, code, out = timed([sys.executable, "-m", "pytest", *args.pytest_args], dict(os.environ), str(ROOT))
    if args.log:
        Path(args.log).write_text(out)
    lines = out.strip().splitlines() or ["(no output)"]
    print(f"pytest: {wall:.0f} s wall ({wall / 60:.1f} min; target 8 min: {'met' if wall <= 480 else 'NOT met'}),"
          f" {cpu:.0f} CPU-s, exit {code}")
    print(f"  {lines[-1]}")
    for ln in lines:
        if ln.startswith(("tensix-diff (", "created:")):
            print(f"  {ln}")
    print(f"after: {load_note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
