"""The main job, `tensix-diff run tests/corpus`, on a fresh clone of this repository: the first run (cold: no
bytecode, no store index, no caches) and the next (warm); targets <= 15 s cold and <= 3 s warm on an idle
2-core machine. Also one case on the replay backend beyond interpreter start-up (target <= 0.3 s): the median
of `run CASE --backend replay --against replay` less that of `python -c pass`, in the same clone.

    python benchmarks/main_job.py [--runs N]

Wall times on a shared machine are inflated by the others' work: the load average and CPU seconds are printed
beside them. The clone runs this tree's committed code (HEAD) with `python -m tensix_cli.cli`.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cli_timing import load_note, timed, user_env

ROOT = Path(__file__).resolve().parents[1]
CASES = ("tests/corpus/spec/scalar-rmwcib.yaml", "tests/corpus/kernels/kernel-matmul-bf16-ct2-kt2.yaml")


def _medians(cmd: list[str], runs: int, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Median wall and CPU seconds of ``cmd`` over ``runs`` runs, after one untimed run."""
    timed(cmd, env, cwd)
    got = [timed(cmd, env, cwd) for _ in range(runs)]
    bad = [out for _, _, code, out in got if code != 0]
    if bad:
        sys.exit(f"{' '.join(cmd)} failed:\n{bad[0][-2000:]}")
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per median for the one-case figure")
    args = ap.parse_args()
    env, note = user_env()
    if note:
        print(note)
    cli = [sys.executable, "-m", "tensix_cli.cli"]
    with tempfile.TemporaryDirectory() as d:
        clone = Path(d) / "repo"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {**env, "XDG_CACHE_HOME": str(Path(d) / "cache")}    # no table, race or effects cache yet
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True, capture_output=True)
        print(f"fresh clone of {head.stdout.strip()}; {load_note()}")
        for label, target in (("cold", 15.0), ("warm", 3.0)):
            wall, cpu, code, out = timed(cli + ["run", "tests/corpus"], env, str(clone))
            if code != 0:
                print(out[-3000:])
                return 1
            summary = next((ln for ln in out.splitlines() if " cases (" in ln), "")
            print(f"main job {label}: {wall:5.2f} s wall, {cpu:5.2f} CPU-s (target {target:g} s:"
                  f" {'met' if wall <= target else 'NOT met'}); {summary}")
        bare = _medians([sys.executable, "-c", "pass"], args.runs, env, str(clone))
        for case in CASES:
            one = _medians(cli + ["run", case, "--backend", "replay", "--against", "replay"], args.runs, env,
                           str(clone))
            beyond = one[0] - bare[0]
            print(f"one case on replay, {Path(case).name}: {beyond:5.3f} s wall beyond start-up"
                  f" ({one[1] - bare[1]:5.3f} CPU-s; medians of {args.runs}: {one[0]:5.3f} s, python -c pass"
                  f" {bare[0]:5.3f} s; target 0.3 s: {'met' if beyond <= 0.3 else 'NOT met'})")
    print(load_note())
    return 0


if __name__ == "__main__":
    sys.exit(main())
