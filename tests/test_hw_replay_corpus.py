"""CI's replay suite over the recorded ttsim fuzz corpus: golden against what ttsim returned, case by case.

tests/fuzz_corpus/*.cases.jsonl.gz hold derandomized fuzz cases (profile and seed in the file name);
recordings/ holds what ttsim 1.10.0 returned for each (``tensix-diff record``). Every case must have
its recording, and golden must agree bit for bit wherever both observe, except for divergences that
configs/known_divergences.yaml lists. A case the simulator refused is counted, not compared.
Runs under the default ``--backend=replay``; each bundle is split in chunks so pytest-xdist spreads it.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from hwbridge.base import REFUSED
from hwbridge.golden_backend import GoldenBackend
from hwbridge.hw_corpus import load_bundle
from hwbridge.replay import ReplayBackend
from tensix_diff.case import case_hash
from tensix_diff.compare import DIVERGED, MATCHED, NothingCompared, judge
from tensix_diff.store import Store
from tensix_diff.triage import known_for, load_known, signature

CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
BUNDLES = sorted(CORPUS.glob("*.cases.jsonl.gz"))
CHUNKS = 4


@cache
def _cases(path: Path):
    return load_bundle(path)


@pytest.fixture(scope="module")
def replay(request):
    if request.config.getoption("backend") != "replay":
        pytest.skip("the recorded ttsim corpus is compared under --backend=replay")
    rec = request.config.getoption("recordings")
    return ReplayBackend(store=Store(Path(rec) if rec else None))


def test_the_corpus_holds_at_least_5000_cases():
    assert sum(len(_cases(b)) for b in BUNDLES) >= 5000


@pytest.mark.parametrize("bundle, chunk", [(b, k) for b in BUNDLES for k in range(CHUNKS)],
                         ids=lambda v: v.name.split(".")[0] if isinstance(v, Path) else str(v))
def test_golden_agrees_with_recorded_ttsim(bundle, chunk, replay, request):
    golden, known = GoldenBackend(), load_known()
    summary = request.config.pluginmanager.get_plugin("tensix_diff").outcomes  # the closing summary line
    problems, counts = [], {"matched": 0, "known": 0, "refused": 0, "uncompared": 0}
    for case in _cases(bundle)[chunk::CHUNKS]:
        actual = replay.run(case)
        if actual.status in ("missing", "stale"):
            problems.append(f"{case.name}: {actual.message}")
            summary[case_hash(case)] = actual.status
            continue
        assert actual.provenance["device"].startswith("ttsim"), f"{case.name}: recorded on {actual.provenance['device']}"
        if actual.status == REFUSED:
            counts["refused"] += 1
            summary[case_hash(case)] = "uncompared"
            continue
        try:
            verdict = judge(golden.run(case), actual, ("golden", "ttsim"))
        except NothingCompared:
            counts["uncompared"] += 1
            summary[case_hash(case)] = "uncompared"
            continue
        summary[case_hash(case)] = verdict.outcome
        if verdict.outcome == MATCHED:
            counts["matched"] += 1
        elif verdict.outcome == DIVERGED:
            sig = signature(case, verdict)
            if sig is not None and known_for(sig, known, "replay"):
                counts["known"] += 1
                summary[case_hash(case)] = "known"
            else:
                problems.append(f"{case.name} ({sig}):\n{verdict.report(8)}")
        else:
            counts["uncompared"] += 1
    assert not problems, f"{len(problems)} case(s) in {bundle.name} chunk {chunk}:\n" + "\n".join(problems[:10])
    assert counts["matched"] + counts["known"] > 0
