"""The device-evidence test command for mutation testing golden: golden against the replay store's ttsim
recordings, case by case, each verdict compared with the one unmutated golden gets (docs/mutation.md).

    python benchmarks/mutation_evidence.py --write-baseline FILE [--seed S] [CASES...]
    python benchmarks/mutation_evidence.py --baseline FILE [--seed S] [--select SEL.json] [CASES...]

Exit 0: every case's verdict is the baseline's (the mutant survives); 1: a verdict changed (killed; the first
change is printed); 2: no baseline. The cases: CASES (files, directories, bundles), or with none the seeded
evidence sample: the curated corpus (tests/corpus) and, for each fuzz profile, one bundle and one of its
CHUNKS chunks, both drawn from ``--seed``. ``--select`` names the cases to run ({bundle path: [case names]}).
A case where golden raises (anything but golden's typed refusals, which are Results) gets the verdict
``raised``; a mutant whose only changed verdicts are ``raised`` is killed (the verdict changed), but reported
apart ("RAISED") from one a comparison with the device kills ("KILLED").
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))          # the tree this script sits in (a mutated copy), not the installed one

from hwbridge.golden_backend import GoldenBackend  # noqa: E402
from hwbridge.replay import ReplayBackend  # noqa: E402
from tensix_diff.assess import assess  # noqa: E402
from tensix_diff.case import BUNDLE_SUFFIX, load_any, load_bundle  # noqa: E402
from tensix_diff.race import RaceReport, check as race_check  # noqa: E402
from tensix_diff.store import Store  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
FUZZ = ROOT / "tests" / "fuzz_corpus"
CHUNKS = 4
RAISED = "raised"
# golden code whose change the race check alone can show: the schedules it tries (their count, seeds) and
# the random interleaving (golden's own run is the sequential schedule)
RACE_ONLY = ("golden/schedule.py",)


def profile_of(bundle: Path) -> str:
    """ttsim-arith-s2026-part01.cases.jsonl.gz -> ttsim-arith"""
    return re.sub(r"-s\d+(-part\d+)?$", "", bundle.name.removesuffix(BUNDLE_SUFFIX))


def sample_chunks(seed: int) -> list[tuple[Path, int]]:
    """One (bundle, chunk) per fuzz profile, drawn from ``seed``."""
    rng = random.Random(seed)
    by_profile: dict[str, list[Path]] = defaultdict(list)
    for b in sorted(FUZZ.glob(f"*{BUNDLE_SUFFIX}")):
        by_profile[profile_of(b)].append(b)
    return [(rng.choice(by_profile[p]), rng.randrange(CHUNKS)) for p in sorted(by_profile)]


def evidence_cases(seed: int, paths: list[str], select: dict | None):
    """The cases to judge, cheapest-to-fail first: fuzz chunks, then the curated corpus."""
    if select is not None:
        for bundle, names in select.items():
            wanted = set(names)
            yield from (c for c in load_bundle(Path(bundle)) if c.name in wanted)
        return
    if paths:
        yield from load_any(paths)
        return
    for bundle, chunk in sample_chunks(seed):
        yield from load_bundle(bundle)[chunk::CHUNKS]
    yield from load_any([CORPUS])


class BaselineRaces:
    """The race check of a multi-thread case as unmutated golden answered it (saved with the baseline), so a
    mutant pays for its one golden run per case, not the 7 schedules; a case not saved is checked afresh, and
    every case is when a module only the race check's other schedules run (RACE_ONLY) differs from the
    baseline's: a mutant there changes which cases are racy and nothing else."""

    def __init__(self, path: Path, fresh: bool):
        self.path = path
        saved = json.loads(path.read_text()) if not fresh and path.exists() else {}
        if "reports" not in saved:             # a baseline written before the digest was kept: reused as is
            saved = {"sources": race_sources(), "reports": saved}
        self.data = saved["reports"] if saved["sources"] == race_sources() else {}

    def check(self, case) -> RaceReport:
        if case.name not in self.data:
            self.data[case.name] = asdict(race_check(case))
        return RaceReport(**self.data[case.name])

    def save(self) -> None:
        self.path.write_text(json.dumps({"sources": race_sources(), "reports": self.data}) + "\n")


def race_sources() -> dict[str, str]:
    """SHA-256 of each RACE_ONLY module in this tree (a mutated copy's differs from the baseline's)."""
    return {m: hashlib.sha256((ROOT / m).read_bytes()).hexdigest() for m in RACE_ONLY}


def verdict_of(case, golden: GoldenBackend, replay: ReplayBackend, races: BaselineRaces) -> str:
    """The case's outcome (and why, when uncompared) with this tree's golden; ``raised`` when golden raises."""
    actual = replay.run(case)
    try:
        v = assess(case, golden.run(case), actual, ("golden", "ttsim"), "replay", race_of=races.check)
    except Exception as e:     # a mutant's crash (a golden typed refusal is a Result, never raised)
        return f"{RAISED} {type(e).__name__}"
    return f"{v.outcome} {v.why}" if v.why else v.outcome


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", metavar="CASES")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--baseline", metavar="FILE", help="verdicts of unmutated golden to compare with")
    ap.add_argument("--write-baseline", metavar="FILE", help="write this tree's verdicts to FILE")
    ap.add_argument("--select", metavar="SEL.json", help="only these cases: {bundle path: [case names]}")
    ap.add_argument("--recordings", metavar="DIR", help="replay store (default: the repository's)")
    args = ap.parse_args(argv)
    if not (args.baseline or args.write_baseline):
        ap.error("give --baseline FILE or --write-baseline FILE")
    select = json.loads(Path(args.select).read_text()) if args.select else None
    base = json.loads(Path(args.baseline).read_text()) if args.baseline else {}
    golden = GoldenBackend()
    replay = ReplayBackend(store=Store(Path(args.recordings) if args.recordings else None), device="ttsim")
    races = BaselineRaces(Path(args.write_baseline or args.baseline).with_suffix(".races.json"),
                          fresh=bool(args.write_baseline))
    seen: dict[str, str] = {}
    raised: list[str] = []
    for case in evidence_cases(args.seed, args.cases, select):
        got = verdict_of(case, golden, replay, races)
        seen[case.name] = got
        if args.baseline:
            want = base.get(case.name)
            if want is None:
                print(f"{case.name}: not in the baseline {args.baseline}", file=sys.stderr)
                return 2
            if got != want and got.startswith(RAISED):
                raised.append(f"{case.name}: {want} -> {got}")
            elif got != want:
                print(f"KILLED {case.name}: {want} -> {got}")
                return 1
    if raised:             # every change was golden raising: killed, but not by a comparison with the device
        print(f"RAISED in {len(raised)} cases, no other verdict changed; first: {raised[0]}")
        return 1
    if args.write_baseline:
        Path(args.write_baseline).write_text(json.dumps(seen, indent=0, sort_keys=True) + "\n")
        races.save()
    print(f"{len(seen)} cases, every verdict {'as in the baseline' if args.baseline else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
