"""`tensix-diff record [CASE...]`: run cases on the hw backend and write what it returned into the replay store.

Cases are YAML files, directories of them, or case bundles (``*.cases.jsonl.gz``); the default is the curated
corpus ``tests/corpus``. ``--simulator PATH`` records on ttsim (labelled ``ttsim <version>``), otherwise on
the first card found. Device errors and cases tainted by a hang (run before a health check passed) are never
recorded (the store refuses them); they are listed and make the exit status 3. ``--jobs N`` runs N cases side
by side on N cores of the one device (one simulator).
"""
from __future__ import annotations

import signal
import sys
import time
from collections import Counter
from pathlib import Path

from hwbridge.registry import batch_size, hangs_last, run_cases, run_last_line
from tensix_diff.case import CaseError, case_hash, load_any
from tensix_diff.result import DEVICE_ERROR, TAINTED, same_value
from tensix_diff.store import Store

from .backends import open_backend
from .exits import EXIT_DEVICE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from .hw_options import add_hw_arguments, hw_opts
from .progress import Progress

UNRECORDED = (DEVICE_ERROR, TAINTED)     # what the device could not vouch for

REPO = Path(__file__).resolve().parents[1]


def add_parser(sub) -> None:
    p = sub.add_parser("record", help="record cases on the hw backend (a card, or ttsim) into the replay store")
    p.add_argument("cases", nargs="*", metavar="CASE",
                   help="case YAML files, directories or *.cases.jsonl.gz bundles (default: tests/corpus)")
    p.add_argument("--recordings", metavar="DIR", help="replay store directory (default: the project's)")
    p.add_argument("--mode", choices=("new", "all", "verify"), default="new",
                   help="new: only cases without a recording on this device (default); all: overwrite; verify: run"
                        " the recorded cases again and rewrite only those whose status or state changed")
    p.add_argument("-q", "--quiet", action="store_true", help="only problems and the summary")
    add_hw_arguments(p, jobs=True)
    p.set_defaults(func=run)


def run(args) -> int:


    try:
        cases = load_any(args.cases or [REPO / "tests" / "corpus"])
    except CaseError as e:
        print(f"tensix-diff: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    store = Store(args.recordings)
    backend = open_backend("hw", hw=hw_opts(args))     # a bad choice: exit 2; a device that does not start: 3
    device = backend.device
    if args.mode == "verify":
        todo = [c for c in cases if store.has(case_hash(c), device)]
    else:
        todo = [c for c in cases if args.mode == "all" or not store.has(case_hash(c), device)]
    skipped = len(cases) - len(todo)
    first, held = hangs_last(todo, backend)       # tagged expect:hang: after every other case (card isolation)
    todo = first + held
    print(f"record: {len(todo)} cases to run ({skipped} {'not recorded on ' + device if args.mode == 'verify' else 'already recorded'})"
          f" into {store.root} on {len(backend.cores)} core(s)", file=sys.stderr)
    changed: list[str] = []
    counts: Counter = Counter()
    t0 = time.monotonic()
    progress = Progress("record", len(todo), quiet=args.quiet)
    size = batch_size(backend)
    stop = _Interrupts()       # Ctrl-C: the batch in flight finishes (kept), then no more; again: abandon it
    try:
        with stop:
            for k in range(0, len(todo), size):
                if stop.is_set():
                    break
                chunk = todo[k:k + size]
                for case, result in zip(chunk, run_cases(backend, chunk)):
                    _keep(case, result, store, device, args, counts, changed)
                    bad = sum(counts[k] for k in UNRECORDED)
                    progress.step(note=f"{bad} device errors or tainted" if bad else "")
    finally:
        progress.close()
        backend.close()
    elapsed = time.monotonic() - t0
    if held:
        print(run_last_line(held))
    for line in sorted(changed):
        print(line)
    print(("INTERRUPTED, partial: " if stop.is_set() else "")
          + f"{'verified' if args.mode == 'verify' else 'recorded'} on {device}: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
          + f" ({skipped} already recorded; {len(todo) / max(elapsed, 1e-9):.1f} cases/s)")
    if stop.is_set():
        return EXIT_INTERRUPTED
    return EXIT_DEVICE if any(counts[k] for k in UNRECORDED) else EXIT_OK


class _Interrupts:
    """Within ``with``: the first SIGINT only sets a flag (``is_set``) and says so; a second one interrupts."""

    def __init__(self):
        self._set = False

    def is_set(self) -> bool:
        return self._set

    def _first(self, signum, frame) -> None:
        self._set = True
        print("record: interrupted; finishing the cases in flight (Ctrl-C again to abandon them)", file=sys.stderr)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> "_Interrupts":
        self._old = signal.signal(signal.SIGINT, self._first)
        return self

    def __exit__(self, *exc) -> bool:
        signal.signal(signal.SIGINT, self._old)
        if exc[0] is KeyboardInterrupt:      # the second Ctrl-C: what was kept is summarised as partial
            self._set = True
        return self._set and exc[0] is KeyboardInterrupt


def _keep(case, result, store, device: str, args, counts: Counter, changed: list[str]) -> None:
    """Store one result (verify: only one whose status or state changed) and count it."""
    if args.mode == "verify" and result.status not in UNRECORDED:
        old = store.lookup(case, device).recording
        if old.status == result.status and same_value(old.state, result.state):
            counts["unchanged"] += 1
            return
        changed.append(f"changed {case.name}: {old.status} -> {result.status}")
    if result.status not in UNRECORDED:
        store.record(case, result, "all")
    counts[result.status] += 1
    if result.status in UNRECORDED or (not args.quiet and not result.ok):
        print(f"{result.status} {case.name}: {result.message}")


if __name__ == "__main__":
    from tensix_cli.cli import main
    sys.exit(main(["record", *sys.argv[1:]]))
