"""Provenance (tensix_diff.effects.provenance_effects, golden.analysis.provenance) against ablation (observed_effects),
the cross-check of the coverage figures: exact on small cases, close on a seeded sample of committed cases,
and where they differ, of the kinds docs/minimise-triage-coverage.md lists.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from golden.analysis.provenance import Traced
from golden.core import Tensix
from hwbridge.replay import ReplayBackend
from tensix_diff.case import load_bundle
from tensix_diff.case import load_cases, parse_case
from tensix_diff.effects import Effects, observed_effects, provenance_effects
from tensix_diff.golden_run import apply_init, observe
from tensix_diff.result import same_value
from test_effects import ALL, SET_A5, case, device_mask

HERE = Path(__file__).resolve().parents[1]
SET_A3 = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=3 bitmask=1"
CLEAR_A = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=1"
REPLAYED = ("REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=1", "INCRWC rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=1",
            "INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0", "REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=0",
            "REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=0")
SEMAPHORE = ("name: t\ndescription: ''\nthreads:\n  0:\n    - SEMPOST sem_sel=1\n"
             "  1:\n    - SEMWAIT stall_res=0 sem_sel=1 wait_sem_cond=1\n"
             "    - SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=5 bitmask=1\n")


@pytest.mark.parametrize("lines", [
    ("SETC16 setc16_reg=12 setc16_value=0x0808",), ("NOP", SET_A5), (SET_A5, SET_A3), (SET_A5, CLEAR_A),
    ("ZEROACC clear_mode=3 use_32_bit_mode=0 clear_zero_flags=0 addr_mode=0 where=0",), REPLAYED,
    ("SETRWC clear_ab_vld=0 rwc_cr=1 rwc_d=0 rwc_b=0 rwc_a=3 bitmask=1", "SETRWC clear_ab_vld=0 rwc_cr=1 rwc_d=0 "
     "rwc_b=0 rwc_a=2 bitmask=1"),          # the second adds to the first's checkpoint: both count
], ids=["unread-addrmod", "counter", "overwritten", "undone", "dest-valid-only", "replay", "checkpoint-chain"])
def test_provenance_is_ablation_on_small_cases(lines):
    c = case(*lines)
    for mask in (ALL, device_mask(c)):
        assert provenance_effects(c, mask) == observed_effects(c, mask)


def test_a_wait_released_by_another_thread_credits_the_release():
    c = parse_case(SEMAPHORE)
    assert provenance_effects(c, ALL).observed == observed_effects(c, ALL).observed == ((0, 0), (1, 1))


def test_a_value_written_twice_is_credited_to_the_copy_that_changed_it():
    """Ablation credits the earlier copy because nothing shows alone and both together do; provenance because
    the later copy changed nothing."""
    c = case(SET_A5, "NOP", SET_A5)
    assert observed_effects(c, ALL) == Effects(3, ((1, 0),))
    assert provenance_effects(c, ALL) == Effects(3, ((1, 0),))      # the earlier copy changed A; the later did not
    c = case(SET_A5, SET_A3, SET_A5)
    assert observed_effects(c, ALL).observed == ((1, 2),) and provenance_effects(c, ALL).observed == ((1, 2),)


def test_the_traced_run_leaves_golden_state_as_a_plain_run_and_slice_rolls_it_back():
    c = load_cases([HERE / "corpus" / "kernels" / "kernel-datacopy-bf16.yaml"])[0]
    plain, traced = Tensix(), Traced()
    apply_init(plain.s, c)
    apply_init(traced.s, c)
    before = observe(traced.s, c)
    traced.instrument()
    plain.run(c.threads, c.actions)
    traced.run(c.threads, c.actions)
    assert same_value(observe(traced.s, c), observe(plain.s, c))
    traced.slice([])
    assert same_value(observe(traced.s, c), before)


SAMPLE = ["ttsim-default-s2026-part01", "ttsim-sfpu-cc-s3004-part01", "ttsim-formats-s3001-part01",
          "ttsim-counters-s2026-part01", "ttsim-pipeline-int8-s4401-part01"]


def test_provenance_agrees_with_ablation_on_a_seeded_sample_of_the_corpus():
    """Four matched cases from each of five committed bundles (seed 0): the positions either credits, and the
    share both credit. Measured: see the assertion; the differences are the kinds the coverage page lists."""
    replay, both, either, only_ablation = ReplayBackend(), 0, 0, 0
    for name in SAMPLE:
        cases = load_bundle(HERE / "fuzz_corpus" / f"{name}.cases.jsonl.gz")
        random.Random(0).shuffle(cases)
        taken = 0
        for c in cases:
            if taken == 4:
                break
            rec = replay.run(c)
            if not rec.ok:
                continue
            taken += 1
            a, p = set(observed_effects(c, rec.state).observed), set(provenance_effects(c, rec.state).observed)
            both, either, only_ablation = both + len(a & p), either + len(a | p), only_ablation + len(a - p)
    assert either > 300
    assert both / either >= 0.85 and only_ablation / either <= 0.05, (both, either, only_ablation)
