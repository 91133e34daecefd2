"""Property: generated whole-program cases agree between golden and the selected backend (conftest
``--backend``; golden against itself with --backend=golden). Under ``--backend=hw`` (and golden) Hypothesis
draws fresh cases from the generator's strategies; under replay it draws from the recorded fuzz corpus of
the same profile (tests/fuzz_corpus), so every example it draws has a recording and is compared: an
example drawn fresh could never have been recorded by the run that recorded the corpus."""
from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.strategies import can_generate, cases
from tensix_diff.case import load_bundle

BOUND = 20
CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"


@cache
def _recorded(profile: str) -> tuple:
    return tuple(c for b in sorted(CORPUS.glob(f"ttsim-{profile}-s*.cases.jsonl.gz")) for c in load_bundle(b))


def _cases(profile: str):
    if os.environ.get("TENSIX_DIFF_BACKEND", "replay") == "replay":   # loaded when the test runs, not collected
        return st.deferred(lambda: st.sampled_from(_recorded(profile)))
    return cases(profile)


@pytest.mark.skipif(not can_generate("default"), reason="golden models none of the default mix yet")
@settings(max_examples=BOUND)
@given(case=_cases("default"))
def test_default_mix_agrees(case, golden_backend, check_case):
    result = golden_backend.run(case)
    assert result.status in ("ok", "not-modelled"), f"{case.name}: generated case left defined behaviour: " \
                                                     f"{result.message}"
    check_case(case)


@pytest.mark.skipif(not can_generate("counters"), reason="golden models none of the counters mix yet")
@settings(max_examples=BOUND)
@given(case=_cases("counters"))
def test_counters_mix_agrees(case, golden_backend, check_case):
    assert golden_backend.run(case).status == "ok"
    check_case(case)
