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


def reach(work: Path) -> Path:
    """DIR/reach.sqlite: per case (context "bundle|name"), the golden lines unmutated golden executes."""
    out = work / "reach.sqlite"
    if out.exists():
        return out
    import coverage
    from tensix_diff.bundle import BUNDLE_SUFFIX, load_bundle
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


def spec_of(work: Path, mutant: str):
    from cosmic_ray.work_db import WorkDB, use_db
    from mutation_score import mutant_id
    with use_db(str(work / "session.sqlite"), WorkDB.Mode.open) as db:
        for item in db.work_items:
            if mutant_id(item.mutations[0]) == mutant:
                return item.mutations[0]
    raise KeyError(mutant)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True, metavar="DIR")
    ap.add_argument("--survivors", metavar="FILE", help="survivor ids (JSON list; default DIR/survivors.json)")
    ap.add_argument("--cap", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args()
    work = Path(args.workdir).resolve()
    survivors = json.loads(Path(args.survivors or work / "survivors.json").read_text())
    cases = reached(reach(work), survivors)
    rng = random.Random(args.seed)
    for m, cs in cases.items():
        if len(cs) > args.cap:
            cases[m] = sorted(rng.sample(cs, args.cap))
    union = sorted({c for cs in cases.values() for c in cs})
    evidence = [sys.executable, "-B", "benchmarks/mutation_evidence.py", "--recordings", str(ROOT / "recordings")]
    base = work / "recheck-baseline.json"
    if union and not base.exists():
        subprocess.run(evidence + ["--select", str(select_file(union, work / "union.json")),
                                   "--write-baseline", str(base)], cwd=ROOT, check=True)
    import cosmic_ray.plugins
    from cosmic_ray.mutating import use_mutation
    report = {}
    for m, cs in cases.items():
        if not cs:
            report[m] = {"reached": 0, "outcome": "no fuzz case executes the line"}
            print(f"{m}: no fuzz case executes the line")
            continue
        spec = spec_of(work, m)
        op = cosmic_ray.plugins.get_operator(spec.operator_name)(**(spec.operator_args or {}))
        sel = select_file(cs, work / "select.json")
        with use_mutation(work / spec.module_path, op, spec.occurrence):
            r = subprocess.run(evidence + ["--select", str(sel), "--baseline", str(base)], cwd=work,
                               capture_output=True, text=True)
        last = (r.stdout.strip().splitlines() or [""])[-1]
        report[m] = {"reached": len(cs), "outcome": "survived" if r.returncode == 0 else "killed", "by": last}
        print(f"{m}: {len(cs)} cases execute the line: {report[m]['outcome']} {last}")
        (work / "recheck.json").write_text(json.dumps(report, indent=1) + "\n")
    (work / "recheck.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
