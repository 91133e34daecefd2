"""CLI start-up: wall time of `tensix-diff disasm 0x3700000f` (target <= 120 ms on an idle machine; before
the YAML table cache and lazy command imports it took 0.77-0.99 s), median of N runs, and a bare interpreter.

    python benchmarks/cli_start.py [--runs N]
"""
from __future__ import annotations

import argparse
import statistics
import sys

from cli_timing import command, command_note, load_note, user_env, walls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    env, note = user_env()
    print(command_note(command()))
    if note:
        print(note)
    bare = statistics.median(walls([sys.executable, "-c", "pass"], args.runs, env))
    cli = statistics.median(walls([command(), "disasm", "0x3700000f"], args.runs, env))
    print(f"python -c pass:                 {bare * 1e3:6.0f} ms")
    print(f"tensix-diff disasm 0x3700000f:  {cli * 1e3:6.0f} ms (target 120 ms: {'met' if cli <= 0.120 else 'NOT met'})")
    print(load_note())


if __name__ == "__main__":
    main()
