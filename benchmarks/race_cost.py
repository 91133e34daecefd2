"""Race check cost: runs per case and CPU time per case, for one-thread and multi-thread generated cases,
against one golden run (tensix_diff.race; the verdict pays it for every multi-thread case).

    python benchmarks/race_cost.py [--cases N] [--profile NAME] [--seed S]
    python benchmarks/race_cost.py --bundle tests/fuzz_corpus/ttsim-pipeline-s4100-part01.cases.jsonl.gz [--every 4]

With --bundle: the recorded cases of a bundle (every Nth) instead of generated ones. Where some multi-thread cases
have race candidates and some not, each kind is also given apart (a candidate is confirmed or cleared by runs).
With --repeat N: the whole measurement N times, each in a fresh process (golden's first run of a case is its first
in that process, its memos empty), and per case the least CPU time of each of the two; one process's golden run
moves by a quarter from run to run with the host, so a single run's ratio does too.
With --split: where a multi-thread case's check goes, least CPU of 3 per case in one process: golden's
round-robin run, the same on the traced state with a recorder that ignores every report (the tracer's hooks),
the recorded run (tensix_diff.happens_before.Recorder), and the whole check.

Target (issue 25): at most 2x one golden run per multi-thread case.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from pathlib import Path

from generators.bulk import generate
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import load_bundle
from golden.analysis import traced_state
from golden.core import Tensix
from golden.errors import GoldenError
from golden.schedule import ROUND_ROBIN
from tensix_diff.golden_run import apply_init
from tensix_diff.happens_before import Recorder
from tensix_diff.race import _run, check, threads_in_use
from tensix_diff.state_parts import OWN, STRUCTURE


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--profile", default="counters")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--bundle", type=Path, help="recorded cases of this bundle instead of generated ones")
    ap.add_argument("--every", type=int, default=4, help="with --bundle: every Nth case")
    ap.add_argument("--repeat", type=int, default=1, help="runs, each in a fresh process; per case the least times")
    ap.add_argument("--split", action="store_true", help="where the check goes, by stage")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)       # one run's rows, for --repeat
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.split:
        return _split(args)
    if args.repeat > 1:
        argv = ["--cases", str(args.cases), "--profile", args.profile, "--seed", str(args.seed),
                "--every", str(args.every)] + (["--bundle", str(args.bundle)] if args.bundle else [])
        runs = [json.loads(subprocess.run([sys.executable, __file__, *argv, "--json"], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(args.repeat)]
        every = [[min(r[n][0] for r in runs), min(r[n][1] for r in runs), *runs[0][n][2:]]
                 for n in range(len(runs[0]))]
    else:
        every = _measure(args)
        if args.json:
            print(json.dumps(every))
            return
    rows: dict[bool, list] = {False: [], True: []}
    for g, c, tried, cands, multi in every:
        rows[multi].append((g, c, tried, cands))
    what = f"{args.bundle.name}, every {args.every}th" if args.bundle else f"'{args.profile}' (seed {args.seed})"
    fresh = f", least of {args.repeat} fresh processes per case" if args.repeat > 1 else ""
    print(f"{len(every)} cases of {what}, CPU time{fresh}")
    groups = [("one thread", rows[False]), ("several threads", rows[True])]
    if any(x[3] for x in rows[True]) and not all(x[3] for x in rows[True]):
        groups += [("  no candidates", [x for x in rows[True] if not x[3]]),
                   ("  candidates", [x for x in rows[True] if x[3]])]
    for label, r in groups:
        if r:
            g, c = (statistics.median(x[i] for x in r) for i in range(2))
            mg, mc = (statistics.mean(x[i] for x in r) for i in range(2))
            runs = statistics.mean(x[2] for x in r)
            print(f"{label:16s} {len(r):4d} cases ({sum(x[3] for x in r)} with race candidates): {runs:.2f} run(s)"
                  f" per case, race check {c * 1e3:.2f} ms per case (median; one golden run {g * 1e3:.2f} ms,"
                  f" {c / g:.1f}x; mean {mc * 1e3:.2f} ms, {mc / mg:.1f}x)")

class _Ignore:
    """A recorder (golden.analysis.traced_state) that keeps no report: the cost of the tracer's hooks alone."""

    def __init__(self):
        self.taken, self.written, self.mine, self.own = [], [], [], -1

    def whole(self, *_): ...
    def touch(self, *_): ...
    def read_array(self, *_): ...
    def field(self, *_): ...
    def read_bits(self, *_): ...
    def may_set(self, *_): ...
    def read_l1(self, *_): ...
    def wrote_l1(self, *_): ...


def _hooks_alone(case) -> None:
    m = Tensix()
    apply_init(m.s, case)
    traced_state.instrument(m.s, whole=OWN, quiet=STRUCTURE)
    r = _Ignore()

    def step(t, d, index):
        r.own, traced_state.ACTIVE = t, r
        try:
            m.step(t, d, index)
        finally:
            traced_state.ACTIVE = None
            r.taken, r.written, r.mine = [], [], []
    try:
        m.run(case.threads, case.actions, ROUND_ROBIN, step, None)
    except GoldenError:
        pass


def _split(args) -> None:
    cases = load_bundle(args.bundle)[::args.every] if args.bundle else [
        c for _, c in generate(args.seed, args.cases, args.profile)]
    cases = [c for c in cases if len(threads_in_use(c)) > 1]
    stages = [("golden, round-robin", lambda c: _run(c)),
              ("the same, tracer's hooks", _hooks_alone),
              ("recorded run", lambda c: _run(c, recorder=Recorder())),
              ("whole check", check)]
    for c in cases:                     # (golden's memos warm, as after golden's own run of each case)
        check(c)
    print(f"{len(cases)} multi-thread cases, CPU per case, least of 3")
    for name, f in stages:
        total = 0.0
        for c in cases:
            best = float("inf")
            for _ in range(3):
                t0 = time.process_time()
                f(c)
                best = min(best, time.process_time() - t0)
            total += best
        print(f"{name:26s} {total / len(cases) * 1e3:.2f} ms")


def _measure(args) -> list[list]:
    """Per case: golden's first run and the race check after it (CPU s), schedules tried, whether it has race
    candidates, whether several threads run."""
    if args.bundle:
        cases = load_bundle(args.bundle)[::args.every]
    else:
        cases = [c for _, c in generate(args.seed, args.cases, args.profile)]
    golden = GoldenBackend()
    out = []
    for c in cases:
        t0 = time.process_time()
        golden.run(c)
        t1 = time.process_time()
        r = check(c)
        t2 = time.process_time()
        out.append([t1 - t0, t2 - t1, len(r.tried), r.candidates > 0, len(threads_in_use(c)) > 1])
    return out


if __name__ == "__main__":
    main()
