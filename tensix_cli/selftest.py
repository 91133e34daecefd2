"""`tensix-diff selftest --backend hw [--simulator PATH] [--device-id N --core X,Y] [--isolation ...]`: the
self-check to run first on a card (hwbridge/hw/selftest.py; the same checks as ``pytest -m selftest``).

One line per check: name, ok / FAIL / skip, what differed in a few words. Exit status: 0 every check passed
(or was skipped: the platform lacks what it needs), 1 a check failed, 2 usage, 3 the device cannot be
opened; Ctrl-C 130.
"""
from __future__ import annotations

import sys

from .backends import open_backend
from .exits import EXIT_DIVERGED, EXIT_OK, EXIT_USAGE, BackendFailure
from .hw_options import add_hw_arguments, hw_opts


def add_parser(sub) -> None:
    p = sub.add_parser("selftest", help="check every path the hw backend sets and reads on this device, then"
                       " the curated corpus (run this first on a card)")
    p.add_argument("--backend", default="hw", choices=("hw",), help="the backend to check (only hw)")
    p.add_argument("--checks", metavar="NAMES", help="comma-separated subset of the checks, run in their usual"
                   " order (an unknown name lists them)")
    p.add_argument("--corpus", nargs="+", metavar="PATH", help="case files or directories for the corpus check"
                   " (default: tests/corpus)")
    add_hw_arguments(p)
    p.set_defaults(func=run)


def _names(text: str | None, known) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise BackendFailure(EXIT_USAGE, f"selftest --checks: unknown check {', '.join(unknown) or '(none given)'}"
                             f" (choose from {', '.join(known)})")
    return [n for n in known if n in names]


def run(args) -> int:
    from hwbridge.hw.selftest import CHECKS, FAIL, SKIP, Selftest, platform_note   # late for start-up cost (--help)
    names = _names(args.checks, CHECKS)
    hw = open_backend("hw", hw=hw_opts(args))        # exit 3 (one line) when the device cannot be opened
    counts = {"ok": 0, FAIL: 0, SKIP: 0}
    try:
        st = Selftest(hw, args.corpus)
        for outcome in st.run(names):
            print(outcome.line(), flush=True)
            counts[outcome.status] += 1
        note = platform_note(st)
    finally:
        hw.close()
    if note:
        print(note)
    print(f"selftest on {hw.device}: {counts['ok']} ok, {counts[FAIL]} failed, {counts[SKIP]} skipped")
    return EXIT_DIVERGED if counts[FAIL] else EXIT_OK     # 1: a check failed


if __name__ == "__main__":
    from tensix_cli.cli import main
    sys.exit(main(["selftest", *sys.argv[1:]]))
