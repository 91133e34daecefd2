"""Mutation score of golden under device evidence: a seeded, stratified sample of cosmic-ray's mutants of golden/,
each judged by benchmarks/mutation_evidence.py (golden against the recorded ttsim corpus sample), survivors
classified in configs/mutation/seed<SEED>.yaml (docs/mutation.md).

    python benchmarks/mutation_score.py [--mutants N] [--seed S] [--workdir DIR]

Prints the raw score (killed / sampled), the survivors' classes from the YAML (equivalent, not observable on
ttsim, gap, killed on re-check: benchmarks/mutation_recheck.py) and the adjusted score: (killed + killed on
re-check) / (sampled - equivalent - not observable). One process at a time:
the mutants run one after another in a copy of the tree (the working tree is never mutated). ``--workdir``
keeps the copy and cosmic-ray's session, so a run that was stopped resumes where it stopped.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "configs" / "mutation"    # seed<SEED>.yaml: one sample's outcomes and survivors, classified
PACKAGES = ("golden", "tensix_diff", "hwbridge", "generators", "tensix_cli", "configs")
# golden's tracer (coverage's provenance, the race check's accesses): it computes no state golden reports, so a
# mutant there changes only what coverage credits or which cases the race check flags; left out of the measure
EXCLUDED = ("golden/analysis/**/*.py",)
LINKED = ("tests", "recordings")        # read only: never mutated, so shared with the working tree
CLASSES = ("equivalent", "not observable on ttsim", "gap", "killed on re-check")


def mutant_id(m) -> str:
    """A mutant's name in the YAML: file:line operator #occurrence (stable while golden's source is)."""
    return f"{m.module_path.as_posix()}:{m.start_pos[0]} {m.operator_name} #{m.occurrence}"


def copy_tree(work: Path) -> None:
    """The packages copied into ``work``, the corpus and the store linked."""
    for name in PACKAGES:
        if not (work / name).exists():
            shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "benchmarks").mkdir(exist_ok=True)
    shutil.copy2(ROOT / "benchmarks" / "mutation_evidence.py", work / "benchmarks")
    for name in LINKED:
        link = work / name
        if link.is_symlink() and not link.exists():
            link.unlink()                   # the tree it linked to is gone: link this one
        if not link.exists():
            link.symlink_to(ROOT / name)


def stratified(items: list, n: int, seed: int, work: Path) -> list:
    """``n`` work items: shares per golden file proportional to its lines, each file's share drawn one per
    equal stretch of its mutants in line order."""
    rng = random.Random(seed)
    by_file: dict[str, list] = defaultdict(list)
    for it in items:
        by_file[it.mutations[0].module_path.as_posix()].append(it)
    lines = {f: len((work / f).read_text().splitlines()) for f in by_file}
    total = sum(lines.values())
    quota = {f: n * lines[f] / total for f in by_file}
    share = {f: min(int(q), len(by_file[f])) for f, q in quota.items()}
    for f in sorted(by_file, key=lambda f: quota[f] - int(quota[f]), reverse=True):
        if sum(share.values()) >= n:
            break
        if share[f] < len(by_file[f]):
            share[f] += 1
    picked = []
    for f in sorted(by_file):
        ordered = sorted(by_file[f], key=lambda it: (it.mutations[0].start_pos, it.job_id))
        k = share[f]
        for s in range(k):
            stretch = ordered[len(ordered) * s // k: len(ordered) * (s + 1) // k]
            picked.append(rng.choice(stretch))
    return picked


def prepare(work: Path, n: int, seed: int, timeout: float) -> None:
    """Baseline verdicts, cosmic-ray's session with every mutant outside the sample marked skipped."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    base = work / "baseline.json"
    evidence = [sys.executable, "-B", "benchmarks/mutation_evidence.py", "--seed", str(seed),
                "--recordings", str(ROOT / "recordings")]
    t0 = time.monotonic()
    subprocess.run(evidence + ["--write-baseline", str(base)], cwd=work, check=True)
    wall = time.monotonic() - t0
    print(f"baseline: {len(json.loads(base.read_text()))} cases in {wall:.0f} s wall")
    cmd = " ".join(evidence + ["--baseline", str(base)])
    (work / "cr.toml").write_text(
        "[cosmic-ray]\nmodule-path = \"golden\"\n"
        f"timeout = {max(timeout, 5 * wall):.0f}\nexcluded-modules = {json.dumps(list(EXCLUDED))}\n"
        f"test-command = \"{cmd}\"\n\n[cosmic-ray.distributor]\nname = \"local\"\n")
    subprocess.run(["cosmic-ray", "init", "cr.toml", "session.sqlite"], cwd=work, check=True)
    with use_db(str(work / "session.sqlite"), WorkDB.Mode.open) as db:
        items = list(db.work_items)
        keep = {it.job_id for it in stratified(items, n, seed, work)}
        db.set_multiple_results([it.job_id for it in items if it.job_id not in keep],
                                WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="outside the sample"))
    print(f"cosmic-ray: {len(items)} mutants of golden/, {len(keep)} in the sample (seed {seed})")


def results(work: Path) -> list[tuple[str, str, str]]:
    """(mutant id, outcome, first line of the evidence command's output) for each sampled mutant run."""
    from cosmic_ray.work_db import WorkDB, use_db
    out = []
    with use_db(str(work / "session.sqlite"), WorkDB.Mode.open) as db:
        for item, res in db.completed_work_items:
            if res.worker_outcome == "skipped":
                continue
            text = (res.output or "").strip().splitlines()
            first = next((t for t in text if t.startswith(("KILLED", "RAISED"))), text[-1] if text else "")
            outcome = getattr(res.test_outcome or res.worker_outcome, "value", "?")
            if outcome == "killed":
                outcome = "timeout" if first == "timeout" else "raised" if first.startswith("RAISED") else "killed"
            out.append((mutant_id(item.mutations[0]), outcome, first))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=100)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--workdir", metavar="DIR", help="keep the copy and the session here (resumable)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per mutant (at least 5x the baseline)")
    ap.add_argument("--survivors-out", metavar="FILE", help="also write the survivors' ids (JSON)")
    ap.add_argument("--sample-out", metavar="FILE", help="also write each sampled mutant's outcome (YAML)")
    args = ap.parse_args()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.monotonic(), time.process_time()
    copy_tree(work)
    if not (work / "session.sqlite").exists():
        prepare(work, args.mutants, args.seed, args.timeout)
    subprocess.run(["cosmic-ray", "exec", "cr.toml", "session.sqlite"], cwd=work, check=True)
    runs = results(work)
    counts = Counter(o for _, o, _ in runs)
    survivors = sorted(m for m, o, _ in runs if o == "survived")
    listed_file = SAMPLES / f"seed{args.seed}.yaml"
    listed = yaml.safe_load(listed_file.read_text()) if listed_file.exists() else {}
    table = listed.get("survivors") or {}
    classes = Counter(table[m]["class"] for m in survivors if m in table)
    if listed.get("seed") != args.seed or listed.get("mutants") != args.mutants:
        print(f"{listed_file.name} classifies the sample of seed {listed.get('seed')}, {listed.get('mutants')} mutants")
    stray = sorted(set(table) - set(survivors))
    if stray:
        print(f"{listed_file.name} lists {len(stray)} mutant(s) that did not survive: {', '.join(stray[:3])}")
    killed = counts["killed"] + counts["raised"] + counts["timeout"]
    n = len(runs)
    told = n - classes["equivalent"] - classes["not observable on ttsim"] - counts["incompetent"]
    rechecked = killed + classes["killed on re-check"]
    print(f"mutants run: {n} ({dict(sorted(counts.items()))})")
    print(f"killed: {killed} ({counts['killed']} by a verdict against ttsim's recordings, {counts['raised']} only"
          f" by golden raising, {counts['timeout']} by the timeout)")
    print(f"raw score: {killed}/{n} = {100 * killed / max(n, 1):.1f}%")
    print(f"survivors: {len(survivors)}: " + ", ".join(f"{classes[c]} {c}" for c in CLASSES)
          + f", {len(survivors) - sum(classes.values())} unclassified")
    print(f"killed with the survivors' re-check on the whole recorded corpus: {rechecked}/{n}"
          f" = {100 * rechecked / max(n, 1):.1f}%")
    print(f"adjusted score (killed, re-check included / mutants ttsim can tell apart): {rechecked}/{told}"
          f" = {100 * rechecked / max(told, 1):.1f}%")
    named = sum(1 for m in survivors if table.get(m, {}).get("class") == "gap" and " kills it" in table[m]["awaiting"])
    print(f"with the recorded cases the gaps name ({named} gaps): {rechecked + named}/{told}"
          f" = {100 * (rechecked + named) / max(told, 1):.1f}%")
    print(f"time: {time.monotonic() - t0:.0f} s wall; work in {work}")
    if args.survivors_out:
        Path(args.survivors_out).write_text(json.dumps(survivors, indent=1) + "\n")
    if args.sample_out:
        Path(args.sample_out).write_text(yaml.safe_dump({m: o for m, o, _ in sorted(runs)}, width=200))


if __name__ == "__main__":
    main()
