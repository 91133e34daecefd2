"""Cases on N cores of one device side by side give, case by case, what they give one at a time on one core.

    python -m tensix_cli.core_equivalence CASES... [--simulator=PATH] [--jobs 8] [--core ...] [--isolation ...]

Runs the cases twice on the hw backend: on the first chosen core alone, then on ``--jobs`` cores at once
(HwBackend.run_many), and compares per case what a recording holds: status, observed state bit for bit, the
message (ttsim's ERROR line carries its global clock, which depends on the run's history: compared without it)
and the cycle count. Prints the cases that differ and a summary line; exit 0 when none does, 1 otherwise,
2 bad input, 3 the device failed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time

from hwbridge.hw.backend import HwBackend
from tensix_diff.case import load_each
from tensix_diff.result import dump_form

from .hw_options import add_hw_arguments, hw_opts

CLOCK_STAMP = re.compile(r"\[\d+\] ERROR")


def outcome(result) -> tuple:
    """What a recording holds about the device, in a form two runs can be compared by."""
    state = None if result.state is None else dump_form(result.state)
    return (result.status, state, CLOCK_STAMP.sub("[clock] ERROR", result.message), result.provenance.get("cycles"))


def digest(result) -> str:
    return hashlib.sha256(json.dumps(outcome(result), sort_keys=True).encode()).hexdigest()


def digests(backend, cases: list, chunk: int = 256) -> list[str]:
    """One digest per case, in case order (results are dropped chunk by chunk: 2,000 Dests do not fit twice)."""
    out: list[str] = []
    for k in range(0, len(cases), chunk):
        out += [digest(r) for r in backend.run_many(cases[k:k + chunk])]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tensix_cli.core_equivalence", description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", help="case files, directories, *.cases.jsonl.gz bundles")
    add_hw_arguments(ap, jobs=True)
    args = ap.parse_args(argv)
    cases, problems = load_each(args.cases)
    if problems or not cases:
        print("\n".join(problems) or f"no cases in {' '.join(args.cases)}", file=sys.stderr)
        return 2
    opts = hw_opts(args)
    opts.setdefault("jobs", 8)
    try:
        many = HwBackend(**opts)
        one = HwBackend(**{**opts, "jobs": 1, "core": [many.cores[0]]})
    except ValueError as e:
        print(f"core_equivalence: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the device could not be brought up
        print(f"core_equivalence: the hw backend failed to start: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    with one, many:
        t0 = time.monotonic()
        alone = digests(one, cases)
        t1 = time.monotonic()
        side = digests(many, cases)
        t2 = time.monotonic()
    differ = [c.name for c, a, b in zip(cases, alone, side) if a != b]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(cases)} cases on {many.device}: {len(cases) - len(differ)} the same on {len(many.cores)} cores"
          f" as on core {many.cores[0][0]},{many.cores[0][1]} alone, {len(differ)} differ"
          f" (1 core {len(cases) / (t1 - t0):.1f} cases/s, {len(many.cores)} cores {len(cases) / (t2 - t1):.1f}"
          f" cases/s; isolation {many.isolation})")
    return 1 if differ else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("core_equivalence: interrupted", file=sys.stderr)
        sys.exit(130)
