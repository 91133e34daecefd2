"""Survivors of benchmarks/mutation_score.py re-checked against the whole recorded fuzz corpus, each on the cases
that execute its mutated line (docs/mutation.md).

    python benchmarks/mutation_recheck.py --workdir DIR [--cap N]

1. reach: unmutated golden runs every case of tests/fuzz_corpus under coverage.py, one dynamic context per
   case, so each golden line maps to the cases that execute it (DIR/reach.sqlite, kept for later runs);
2. the baseline: this tree's verdicts on every case some survivor's line reaches;
3. each survivor applied in DIR's copy (cosmic-ray's use_mutation, undone afterwards) and judged by
   benchmarks/mutation_evidence.py on its reached cases (``--cap``: at most N of them, seeded, for a line
   nearly every case executes). Prints each survivor's outcome and writes DIR/recheck.json.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FUZZ = ROOT / "tests" / "fuzz_corpus"
SEP = "|"

from mutation_score import copy_tree, mutant_id  # noqa: E402  (beside this script)


def reach(work: Path) -> Path:
    """DIR/reach.sqlite: per case (context "bundle|name"), the golden lines unmutated golden executes."""
    out = work / "reach.sqlite"
    if out.exists():
        return out
    import coverage
    from tensix_diff.case import BUNDLE_SUFFIX, load_bundle
    from tensix_diff.golden_run import run_golden
    cov = coverage.Coverage(data_file=str(out.with_suffix(".tmp")), source=[str(ROOT / "golden")], branch=False)
    cov.start()
    t0 = time.process_time()
    for b in sorted(FUZZ.glob(f"*{BUNDLE_SUFFIX}")):
        for case in load_bundle(b):
            cov.switch_context(f"{b}{SEP}{case.name}")
            run_golden(case)
        cov.switch_context("")
    cov.stop()
    cov.save()
    out.with_suffix(".tmp").rename(out)
    print(f"reach: every fuzz case under coverage in {time.process_time() - t0:.0f} CPU-s")
    return out


def reached(data_path: Path, survivors: list[str]) -> dict[str, list[str]]:
    """survivor id -> contexts ("bundle|name") that execute its line."""
    import coverage
    data = coverage.CoverageData(basename=str(data_path))
    data.read()
    files = {Path(f).resolve().relative_to(ROOT).as_posix(): f for f in data.measured_files()}
    by_file: dict[str, dict[int, list[str]]] = {}
    out = {}
    for m in survivors:
        path, line = m.split(" ")[0].rsplit(":", 1)
        if path not in by_file:
            by_file[path] = data.contexts_by_lineno(files[path]) if path in files else {}
        out[m] = sorted(c for c in by_file[path].get(int(line), []) if c)
    return out


def select_file(contexts: list[str], path: Path) -> Path:
    sel: dict[str, list[str]] = defaultdict(list)
    for c in contexts:
        b, name = c.split(SEP, 1)
        sel[b].append(name)
    path.write_text(json.dumps(sel))
    return path


def specs_of(session: Path, mutants) -> dict:
    """mutant id -> its cosmic-ray MutationSpec, from the session."""
    from cosmic_ray.work_db import WorkDB, use_db
    wanted = set(mutants)
    with use_db(str(session), WorkDB.Mode.open) as db:
        return {mutant_id(it.mutations[0]): it.mutations[0] for it in db.work_items
                if mutant_id(it.mutations[0]) in wanted}


def judge(work: Path, session: Path, runs: dict[str, list[str]], out: Path) -> None:
    """Each survivor applied in ``work`` and judged by the evidence command with its arguments; out: report."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import use_mutation
    report = json.loads(out.read_text()) if out.exists() else {}
    specs = specs_of(session, [m for m in runs if m not in report])
    for m, argv in runs.items():
        if m in report:
            continue
        if not argv:
            report[m] = {"outcome": "no fuzz case executes the line"}
            print(f"{m}: no fuzz case executes the line")
            continue
        spec = specs[m]
        op = cosmic_ray.plugins.get_operator(spec.operator_name)(**(spec.operator_args or {}))
        with use_mutation(work / spec.module_path, op, spec.occurrence):
            r = subprocess.run([sys.executable, "-B", "benchmarks/mutation_evidence.py", *argv], cwd=work,
                               capture_output=True, text=True)
        last = (r.stdout.strip().splitlines() or [""])[-1]
        report[m] = {"outcome": "survived" if r.returncode == 0 else "killed", "by": last}
        print(f"{m}: {report[m]['outcome']}: {last}")
        out.write_text(json.dumps(report, indent=1) + "\n")
    out.write_text(json.dumps(report, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True, metavar="DIR")
    ap.add_argument("--survivors", metavar="FILE", help="survivor ids (JSON list; default DIR/survivors.json)")
    ap.add_argument("--session", metavar="FILE", help="cosmic-ray's session (default DIR/session.sqlite)")
    ap.add_argument("--cap", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--against", nargs="+", metavar="CASES", help="judge on these cases instead (DIR/against.json)")
    ap.add_argument("--recordings", metavar="DIR", default=str(ROOT / "recordings"), help="with --against")
    args = ap.parse_args()
    work = Path(args.workdir).resolve()
    copy_tree(work)                       # the copy the survivors are applied to (mutation_score's layout)
    session = Path(args.session or work / "session.sqlite")
    survivors = json.loads(Path(args.survivors or work / "survivors.json").read_text())
    evidence = [sys.executable, "-B", "benchmarks/mutation_evidence.py", "--recordings", args.recordings]
    if args.against:
        paths = [str(Path(p).resolve()) for p in args.against]
        base = work / "against-baseline.json"      # one set of cases per DIR: kept for later survivors
        if not base.exists():
            subprocess.run(evidence + ["--write-baseline", str(base), *paths], cwd=ROOT, check=True)
        runs = {m: ["--recordings", args.recordings, "--baseline", str(base), *paths] for m in survivors}
        return judge(work, session, runs, work / "against.json")
    cases = reached(reach(work), survivors)
    rng = random.Random(args.seed)
    for m, cs in cases.items():
        if len(cs) > args.cap:
            cases[m] = sorted(rng.sample(cs, args.cap))
    base = work / "recheck-baseline.json"
    known = json.loads(base.read_text()) if base.exists() else {}
    todo = sorted({c for cs in cases.values() for c in cs if c.split(SEP, 1)[1] not in known})
    if todo:                  # this tree's verdicts (unmutated) on the cases not judged yet
        part = work / "baseline-part.json"
        subprocess.run(evidence + ["--select", str(select_file(todo, work / "todo.json")),
                                   "--write-baseline", str(part)], cwd=ROOT, check=True)
        base.write_text(json.dumps({**known, **json.loads(part.read_text())}))
    runs = {}
    for m, cs in cases.items():
        sel = select_file(cs, work / f"select-{len(runs)}.json") if cs else None
        runs[m] = ["--recordings", args.recordings, "--baseline", str(base), "--select", str(sel)] if cs else []
    judge(work, session, runs, work / "recheck.json")


if __name__ == "__main__":
    main()
