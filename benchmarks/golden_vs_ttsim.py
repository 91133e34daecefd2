"""Golden against the ttsim round trip on the same seeded cases, one run each (issue 25, target: golden per
arithmetic case >= 10x faster).

    python benchmarks/golden_vs_ttsim.py --simulator PATH [--count 200] [--profile arith] [--seed 4242]
                                         [--passes 3] [--cprofile] [--split]

Each case runs through golden as the harness runs it (tensix_diff.golden_run.run_golden: a new machine, the
case's initial state, the program, the observed state), once per pass (the pass with the least CPU time is
reported: a shared machine's noise), and once through the hw backend on ttsim (one worker, its default
isolation: build, device writes, clocking, read-back, decode, a fresh simulator where a case needs one).
Prints the time per case of each (mean and median, wall; CPU time beside it, the worker's and simulator's
included for ttsim), the outcome counts, and the ratios of the means. ``--cprofile`` prints where golden's
time goes instead of running ttsim; ``--split`` prints golden's CPU time per case by stage (a new machine, the
initial state, the run, the observed state) and the garbage collector's share, without a profiler's
overhead. Numbers only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.bulk import generate  # noqa: E402
from golden.core import Tensix  # noqa: E402
from golden.errors import GoldenError  # noqa: E402
from tensix_diff.golden_run import apply_init, observe, run_golden  # noqa: E402

TARGET = 10.0


def golden_times(cases: list) -> tuple[list[float], float, Counter]:
    """Wall seconds per case, the CPU seconds of them all, and the outcomes (after one untimed warm-up case)."""
    run_golden(cases[0])
    gc.collect()
    walls, outcomes = [], Counter()
    cpu = time.process_time()
    for case in cases:
        t0 = time.perf_counter()
        outcomes[run_golden(case).status] += 1
        walls.append(time.perf_counter() - t0)
    return walls, time.process_time() - cpu, outcomes


def golden_split(cases: list, passes: int) -> dict[str, float]:
    """CPU seconds per case of run_golden's stages (the least over ``passes`` passes, each stage on its own),
    the collector's time inside them (gc callbacks, wall clock) and how much of it fell in the observed state."""
    stages = ("new machine", "initial state", "run", "observed state")
    best: dict[str, float] = {}
    for _ in range(max(passes, 1)):
        spent = dict.fromkeys(stages + ("garbage collector", "garbage collector in the observed state"), 0.0)
        started, observing = [], [False]

        def collector(phase: str, _info: dict) -> None:
            if phase == "start":
                started.append(time.perf_counter())
                return
            dt = time.perf_counter() - started.pop()
            spent["garbage collector"] += dt
            if observing[0]:
                spent["garbage collector in the observed state"] += dt

        gc.collect()
        gc.callbacks.append(collector)
        for case in cases:
            t0 = time.process_time()
            m = Tensix()
            t1 = time.process_time()
            apply_init(m.s, case)
            t2 = time.process_time()
            try:
                m.run(case.threads, case.actions)
            except GoldenError:
                pass
            t3 = time.process_time()
            observing[0] = True
            observe(m.s, case)
            observing[0] = False
            t4 = time.process_time()
            for stage, dt in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                spent[stage] += dt
        gc.callbacks.remove(collector)
        best = {k: min(v, best.get(k, v)) for k, v in spent.items()}
    return {k: v / len(cases) for k, v in best.items()}


def tree_cpu() -> float:
    """CPU seconds of this process and every process under it (Linux /proc): each live one's own time and
    the time of the children it has reaped (a simulator worker the zygote replaced)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                f = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(d.name)] = (int(f[1]), sum(map(int, f[11:15])))   # ppid; utime stime cutime cstime
    mine, total, grew = {os.getpid()}, 0, True
    while grew:
        grew = False
        for pid, (ppid, _) in stats.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    for pid in mine:
        total += stats[pid][1] if pid in stats else 0
    return total / tick


def ttsim_times(sim: str, cases: list) -> tuple[list[float], float, Counter]:
    """As golden_times, for the hw backend; CPU is this process's and its workers' (simulator included)."""
    from hwbridge.hw.backend import HwBackend
    backend = HwBackend(sim)
    backend.run(cases[0])                      # the worker starts and imports
    walls, outcomes = [], Counter()
    cpu = tree_cpu()
    for case in cases:
        t0 = time.perf_counter()
        outcomes[backend.run(case).status] += 1
        walls.append(time.perf_counter() - t0)
    cpu = tree_cpu() - cpu
    backend.close()
    return walls, cpu, outcomes


def _per_case(walls: list[float]) -> str:
    return f"mean {1e3 * statistics.mean(walls):.2f} ms, median {1e3 * statistics.median(walls):.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulator", default=os.environ.get("TENSIX_DIFF_SIMULATOR"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--profile", default="arith")
    ap.add_argument("--passes", type=int, default=3, help="golden passes over the cases (default: 3)")
    ap.add_argument("--cprofile", action="store_true", help="profile golden's cases; ttsim is not run")
    ap.add_argument("--split", action="store_true", help="golden's time by stage; ttsim is not run")
    args = ap.parse_args()
    cases = [c for _, c in generate(args.seed, args.count, args.profile)]
    print(f"{len(cases)} cases, profile {args.profile}, seed {args.seed}; "
          f"{sum(c.instruction_count for c in cases) / len(cases):.1f} instructions a case; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.cprofile:
        prof = cProfile.Profile()
        prof.runcall(golden_times, cases)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    if args.split:
        run_golden(cases[0])
        for stage, sec in golden_split(cases, args.passes).items():
            print(f"golden, {stage}: {1e6 * sec:.0f} us a case" + (" (wall; inside the stages above)"
                                                                    if stage.startswith("garbage") else " CPU"))
        return
    if not args.simulator:
        sys.exit("give --simulator PATH (a Blackhole libttsim.so) or set TENSIX_DIFF_SIMULATOR")
    g, cpu, g_out = min((golden_times(cases) for _ in range(max(args.passes, 1))), key=lambda r: r[1])
    print(f"golden, best of {max(args.passes, 1)} passes: {_per_case(g)}; {1e3 * cpu / len(cases):.2f} CPU-ms "
          "a case; outcomes "
          + ", ".join(f"{n} {k}" for k, n in sorted(g_out.items())))
    h, h_cpu, h_out = ttsim_times(args.simulator, cases)
    print(f"ttsim round trip: {_per_case(h)}; {1e3 * h_cpu / len(cases):.2f} CPU-ms a case (worker and simulator "
          "included); outcomes " + ", ".join(f"{n} {k}" for k, n in sorted(h_out.items())))
    ratio = statistics.mean(h) / statistics.mean(g)
    print(f"golden is {ratio:.1f}x faster per case in wall time (mean against mean; target {TARGET:.0f}x: "
          f"{'met' if ratio >= TARGET else 'NOT met'}), {statistics.median(h) / statistics.median(g):.1f}x median "
          f"against median, {h_cpu / cpu:.1f}x in CPU time; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
