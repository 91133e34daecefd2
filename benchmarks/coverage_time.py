"""Cold `tensix-diff coverage` over the committed corpus (tests/corpus and tests/fuzz_corpus): wall and CPU
time, the load before and after, and the coverage summary it printed. Cold: every cache (effects, race checks,
the replay store's indexes) starts empty in a fresh $XDG_CACHE_HOME. Target (issue 25): <= 10 minutes on 2 cores.

``--sample N``: instead, every N-th case of each bundle of tests/fuzz_corpus, plus tests/corpus. ``--by-family``:
the same cold run in this process (one worker), CPU seconds per bundle family split into the assessment (golden,
replay lookup, verdict with its race check) and the effects, with the golden runs ablation made from scratch.

    python benchmarks/coverage_time.py [--jobs 2] [--provenance | --exhaustive] [--keep-cache DIR] [PATHS...]
    python benchmarks/coverage_time.py --sample 20 [--by-family]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def sample(n: int, into: Path) -> list[str]:
    """Every n-th case of each bundle of tests/fuzz_corpus, written as bundles of the same names into ``into``,
    and tests/corpus."""
    from tensix_diff.case import load_any, write_bundle
    for p in sorted((ROOT / "tests" / "fuzz_corpus").glob("*.cases.jsonl.gz")):
        write_bundle(into / p.name, load_any([p])[::n])
    return [str(into), str(ROOT / "tests" / "corpus")]


def by_family(paths: list[str]) -> None:
    """A cold saturating collect in this process, CPU per bundle family: assessment, effects, scratch runs."""
    from tensix_cli import coverage as cov_mod
    from tensix_cli import coverage_effects as CE
    from tensix_diff import effects as E
    cpu: dict[str, Counter] = defaultdict(Counter)

    def family(case) -> str:
        return re.sub(r"-s\d+-\d+$", "", case.name) if case.name.startswith("fuzz-") else "tests/corpus"

    def timed(fn, what, case_of):
        def run(*a):
            t = time.process_time()
            try:
                return fn(*a)
            finally:
                cpu[family(case_of(*a))][what] += time.process_time() - t
        return run
    assess, effects, scratch = cov_mod._assess_one, CE.effects, E._run
    cov_mod._assess_one = timed(assess, "assessment", lambda i: cov_mod._ASSESS[0][i])
    CE.effects = timed(effects, "effects", lambda work: work[0])
    E._run = timed(scratch, "scratch runs CPU", lambda case, *a: case)
    counts: dict[str, Counter] = defaultdict(Counter)
    runs = cov_mod.collect(paths, jobs=1, method="saturating")
    for case, *_ in runs:
        counts[family(case)]["cases"] += 1
        counts[family(case)]["multi-thread"] += len(case.threads) > 1
    total = Counter()
    print(f"{'family':28} {'cases':>6} {'multi':>6} {'assess s':>9} {'effects s':>9} {'of which scratch runs s':>24}")
    for f in sorted(cpu, key=lambda f: -sum(cpu[f].values())):
        c = cpu[f]
        total.update(c)
        print(f"{f:28} {counts[f]['cases']:6} {counts[f]['multi-thread']:6} {c['assessment']:9.1f} {c['effects']:9.1f} "
              f"{c['scratch runs CPU']:24.1f}")
    print(f"{'all':28} {len(runs):6} {'':6} {total['assessment']:9.1f} {total['effects']:9.1f} "
          f"{total['scratch runs CPU']:24.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="what to measure (default: the command's default, the whole corpus)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--provenance", action="store_true", help="effects by provenance (coverage --provenance)")
    ap.add_argument("--exhaustive", action="store_true", help="every instruction ablated (coverage --exhaustive)")
    ap.add_argument("--keep-cache", metavar="DIR", help="an empty directory to use as the cold cache and keep "
                    "(its effects/ file says what each case ablated)")
    ap.add_argument("--sample", type=int, metavar="N", help="every N-th case of each fuzz bundle, plus tests/corpus")
    ap.add_argument("--by-family", action="store_true", help="CPU per bundle family, in this process (one worker)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="coverage-sample-") as tmp:
        if args.sample:
            args.paths = sample(args.sample, Path(tmp))
        if args.by_family:
            os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
            by_family(args.paths or [str(ROOT / "tests" / "corpus"), str(ROOT / "tests" / "fuzz_corpus")])
            return
        timed_run(args)


def timed_run(args) -> None:
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
