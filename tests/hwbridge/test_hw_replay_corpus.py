"""CI's replay suite over the recorded ttsim fuzz corpus: golden against what ttsim returned, case by case.

tests/fuzz_corpus/*.cases.jsonl.gz hold derandomized fuzz cases (profile and seed in the file name);
recordings/ holds what ttsim 1.10.0 returned for each (``tensix-diff record``). Every case must have
its recording (a missing or stale one fails), and golden must agree bit for bit wherever both observe,
except for differences configs/known_divergences.yaml explains; golden refusing a case ttsim ran fails
unless configs/expected_refusals.yaml expects it. Cases ttsim refused, and cases in which nothing observable
happened, are counted as uncompared (with why) in the closing summary.
Runs under the default ``--backend=replay``; each bundle is split in chunks so pytest-xdist spreads it.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import count_cases, load_bundle
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import assess
from tensix_diff.compare import KNOWN, MATCHED, UNCOMPARED
from tensix_diff.store import Store
from tensix_diff.triage import signature

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
BUNDLES = sorted(CORPUS.glob("*.cases.jsonl.gz"))
CHUNKS = 4


@lru_cache(maxsize=4)      # a bundle's chunks run near one another; all 56,400 cases at once took GiBs
def _cases(path: Path):
    return load_bundle(path)


@pytest.fixture(scope="module")
def replay(request):
    if request.config.getoption("backend") != "replay":
        pytest.skip("the recorded ttsim corpus is compared under --backend=replay")
    rec = request.config.getoption("recordings")
    return ReplayBackend(store=Store(Path(rec) if rec else None), device=request.config.getoption("device"))


def test_the_corpus_holds_at_least_5000_cases():
    """Counted by lines (each chunk test below parses its own cases: a line that is no case fails there),
    bundle by bundle until there are 5,000."""
    total = 0
    for b in BUNDLES:
        total += count_cases(b)
        if total >= 5000:
            break
    assert total >= 5000


@pytest.mark.parametrize("bundle, chunk", [(b, k) for b in BUNDLES for k in range(CHUNKS)],
                         ids=lambda v: v.name.split(".")[0] if isinstance(v, Path) else str(v))
def test_golden_agrees_with_recorded_ttsim(bundle, chunk, replay, request):
    golden = GoldenBackend()
    plugin = request.config.pluginmanager.get_plugin("tensix_diff")   # the closing summary line
    problems, counts = [], Counter()
    for case in _cases(bundle)[chunk::CHUNKS]:
        actual = replay.run(case)
        if actual.status not in ("missing", "stale"):
            assert actual.provenance["device"].startswith("ttsim"), \
                f"{case.name}: recorded on {actual.provenance['device']}"
        verdict = assess(case, golden.run(case), actual, ("golden", "ttsim"), "replay")
        plugin.note(case, verdict, request.node.nodeid, actual.provenance.get("device"),
                    actual.provenance.get("recording"))    # the case hash the store answered for
        counts[verdict.outcome] += 1
        if verdict.outcome not in (MATCHED, KNOWN, UNCOMPARED):
            problems.append(f"{case.name} ({signature(case, verdict) or verdict.outcome}):\n{verdict.report(8)}")
    assert not problems, f"{len(problems)} case(s) in {bundle.name} chunk {chunk}:\n" + "\n".join(problems[:10])
    assert counts[MATCHED] + counts[KNOWN] > 0, f"nothing compared in {bundle.name} chunk {chunk}: {dict(counts)}"
