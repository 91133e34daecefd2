"""Property: generated whole-program cases agree between golden and the selected backend (conftest
``--backend``; golden against itself with --backend=golden). Runs under the Hypothesis profile in force:
``ci`` by default, derandomized so the replay backend meets the same cases every run; the number of
examples is bounded here to keep the suite quick."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from generators.strategies import can_generate, cases

BOUND = 20


@pytest.mark.skipif(not can_generate("default"), reason="golden models none of the default mix yet")
@settings(max_examples=BOUND)
@given(case=cases("default"))
def test_default_mix_agrees(case, golden_backend, check_case):
    result = golden_backend.run(case)
    assert result.status in ("ok", "not-modelled"), f"{case.name}: generated case left defined behaviour: " \
                                                     f"{result.message}"
    check_case(case)


@pytest.mark.skipif(not can_generate("counters"), reason="golden models none of the counters mix yet")
@settings(max_examples=BOUND)
@given(case=cases("counters"))
def test_counters_mix_agrees(case, golden_backend, check_case):
    assert golden_backend.run(case).status == "ok"
    check_case(case)
