"""`tensix-diff record [CASE...]`: run cases on the hw backend and write what it returned into the replay store.

Cases are YAML files, directories of them, or case bundles (``*.cases.jsonl.gz``); the default is the curated
corpus ``tests/corpus``. ``--simulator PATH`` records on ttsim (labelled ``ttsim <version>``), otherwise on
the first card found. Device errors and cases tainted by a hang (run before a health check passed) are never
recorded (the store refuses them); they are listed and make the exit status 3. ``--jobs N`` runs N workers
(each its own simulator) side by side.
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from tensix_diff.result import DEVICE_ERROR, TAINTED

from .hw_options import add_hw_arguments, hw_opts
from .progress import Progress

from .exits import EXIT_DEVICE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

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
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="workers side by side (default: 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="only problems and the summary")
    add_hw_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from tensix_diff.case import CaseError, case_hash
    from tensix_diff.store import Store

    from hwbridge.hw.backend import HwBackend
    from tensix_diff.bundle import load_any

    try:
        cases = load_any(args.cases or [REPO / "tests" / "corpus"])
    except CaseError as e:
        print(f"tensix-diff: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.jobs < 1 or (args.jobs > 1 and not (args.simulator or os.environ.get("TENSIX_DIFF_SIMULATOR"))):
        print("tensix-diff: error: --jobs must be at least 1, and above 1 only with a simulator (one card, one"
              " worker)", file=sys.stderr)
        return EXIT_USAGE
    store = Store(args.recordings)
    try:
        backends = [HwBackend(**hw_opts(args)) for _ in range(max(1, args.jobs))]
    except Exception as e:  # noqa: BLE001 - the device could not be brought up
        print(f"tensix-diff: error: hw backend failed to start: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_DEVICE
    device = backends[0].device
    if args.mode == "verify":
        todo = [c for c in cases if store.has(case_hash(c), device)]
    else:
        todo = [c for c in cases if args.mode == "all" or not store.has(case_hash(c), device)]
    skipped = len(cases) - len(todo)
    print(f"record: {len(todo)} cases to run ({skipped} {'not recorded on ' + device if args.mode == 'verify' else 'already recorded'})"
          f" into {store.root}", file=sys.stderr)
    changed: list[str] = []
    counts: Counter = Counter()
    lock = threading.Lock()
    work: queue.Queue = queue.Queue()
    for c in todo:
        work.put(c)
    t0 = time.monotonic()
    progress = Progress("record", len(todo), quiet=args.quiet)

    stop = threading.Event()       # Ctrl-C: each worker finishes the case in flight (kept), then stops

    def serve(backend) -> None:
        while not stop.is_set():
            try:
                case = work.get_nowait()
            except queue.Empty:
                return
            result = backend.run(case)
            if args.mode == "verify" and result.status not in UNRECORDED:
                old = store.lookup(case, device).recording
                if old.status == result.status and old.state == result.state:
                    with lock:
                        counts["unchanged"] += 1
                        progress.step()
                    continue
                with lock:
                    changed.append(f"changed {case.name}: {old.status} -> {result.status}")
            if result.status not in UNRECORDED:
                store.record(case, result, "all")
            with lock:
                counts[result.status] += 1
                if result.status in UNRECORDED or (not args.quiet and not result.ok):
                    print(f"{result.status} {case.name}: {result.message}")
                bad = sum(counts[k] for k in UNRECORDED)
                progress.step(note=f"{bad} device errors or tainted" if bad else "")

    threads = [threading.Thread(target=serve, args=(b,)) for b in backends]
    def wait() -> None:            # polled, not join(): a Ctrl-C lands in sleep, never inside a join
        while any(t.is_alive() for t in threads):
            time.sleep(0.05)
    try:
        for t in threads:
            t.start()
        wait()
    except KeyboardInterrupt:
        stop.set()
        print("record: interrupted; finishing the cases in flight (Ctrl-C again to abandon them)", file=sys.stderr)
        wait()
    finally:
        progress.close()
        for b in backends:
            b.close()
    elapsed = time.monotonic() - t0
    for line in sorted(changed):
        print(line)
    print(("INTERRUPTED, partial: " if stop.is_set() else "")
          + f"{'verified' if args.mode == 'verify' else 'recorded'} on {device}: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
          + f" ({skipped} already recorded; {len(todo) / max(elapsed, 1e-9):.1f} cases/s)")
    if stop.is_set():
        return EXIT_INTERRUPTED
    return EXIT_DEVICE if any(counts[k] for k in UNRECORDED) else EXIT_OK


if __name__ == "__main__":
    from tensix_cli.cli import main
    sys.exit(main(["record", *sys.argv[1:]]))
