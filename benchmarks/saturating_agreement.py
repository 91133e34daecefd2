"""Saturating ablation (the `coverage` default) against full ablation (`--exhaustive`) on the same cases, each
with a cold effects cache: CPU time of each effects pass, positions ablated, golden runs made for ablation,
and whether the report is the same (summary, table with counts capped, mode values per field).

    python benchmarks/saturating_agreement.py [--first N] [--cap C] [--no-quiet] PATHS...
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tensix_cli import coverage as cov_mod            # noqa: E402
from tensix_cli import coverage_effects as CE         # noqa: E402
from tensix_diff import effects as E                  # noqa: E402
from tensix_diff.case import load_any, write_bundle   # noqa: E402


def report(cov) -> tuple:
    rows = [tuple(str(cov.observed_cases(cov.instructions[r[0]])) if i == 4 else x for i, x in enumerate(r))
            for r in cov.rows()]
    return [x for x in cov.summary_lines() if not x.startswith("(observed:")], rows, cov.mode_rows()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--first", type=int, default=0, help="only the first N cases of each bundle")
    ap.add_argument("--cap", type=int, default=CE.CAP, help=f"the count cap (default {CE.CAP}, the report's bar)")
    ap.add_argument("--no-quiet", action="store_true", help="ablate quiet words too (no proof that they cannot show)")
    args = ap.parse_args()
    CE.CAP = args.cap
    if args.no_quiet:
        E._QUIET = frozenset()
    with tempfile.TemporaryDirectory(prefix="saturating-") as tmp:
        paths = []
        for p in args.paths:
            if args.first and p.endswith(".cases.jsonl.gz"):
                cut = Path(tmp) / Path(p).name
                write_bundle(cut, load_any([p])[:args.first])
                p = str(cut)
            paths.append(p)
        out, runs_made = {}, [0]

        def counted(real):
            def run(*a, **k):
                runs_made[0] += 1
                return real(*a, **k)
            return run
        # jobs=1: every effects run is here (an ablation from a one-thread prefix and its walk count as runs)
        E._run, E._traced_full, E.ablated_run, E.walk = map(counted, (E._run, E._traced_full, E.ablated_run, E.walk))
        for method in ("saturating", "ablation"):
            runs_made[0] = 0
            os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / f"cache-{method}")
            cpu = time.process_time()
            runs = cov_mod.collect(paths, jobs=1, method=method)
            cpu = time.process_time() - cpu
            cov = cov_mod.measure(runs, method)
            cov.method = "saturating"          # both printed with counts capped
            effs = [r[3] for r in runs if r[3] is not None]
            skipped = sum(len(e.unablated) + len(e.unablated_words) for e in effs)
            items = sum(e.total + len(e.issued) for e in effs)
            out[method] = report(cov)
            print(f"{method}: {len(runs)} cases, {len(effs)} matched; CPU {cpu:.1f} s (assessment included); "
                  f"{skipped} of {items} program words and expansion words left unablated; {runs_made[0]} golden "
                  "runs for effects")
    print(f"cap {args.cap}: the saturating report {'equals' if out['saturating'] == out['ablation'] else 'DIFFERS FROM'}"
          " full ablation's (summary, table with counts capped, mode values per field)")


if __name__ == "__main__":
    main()
