"""Idle words (tensix_diff.idle_steps): a saturating ablation skips a program word whose one issue changed no
state only where that is a proof that its ablation cannot show; a word captured by a replay load on its way, or
held, is ablated as before, and on recorded multi-thread cases no idle position is one full ablation credits."""
from __future__ import annotations

import glob
from pathlib import Path

import pytest

from golden.core import Tensix
from tensix_diff import effects
from tensix_diff.case import load_any, parse_case
from tensix_diff.golden_run import apply_init, run_golden
from tensix_diff.idle_steps import IdleSteps

ROOT = Path(__file__).resolve().parents[2]
ALL = ("dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config")
A5, A0 = (f"SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a={a} bitmask=1" for a in (5, 0))


class _Needs:
    """A saturation that needs every ablation: only the proofs (quiet and idle words) skip."""

    def needed(self, word: int) -> bool:
        return True

    def note(self, word: int) -> None:
        pass


def _case(threads: dict[int, list[str]]) -> object:
    body = "".join(f"  {t}:\n" + "".join(f"    - {x}\n" for x in xs) for t, xs in threads.items())
    return parse_case(f"name: t\ndescription: ''\nthreads:\n{body}")


def _idle(c) -> set:
    m = Tensix()
    apply_init(m.s, c)
    watch = IdleSteps(m, c.threads, lambda word: True)
    m.run(c.threads, c.actions, step=lambda t, d, i: watch.step(t, d, i, lambda: m.step(t, d, i)))
    return watch.idle()


def test_a_word_that_changes_nothing_is_idle_and_skipped_and_one_that_changes_state_is_not():
    c = _case({1: [A5, A5, A0, A5]})      # the second A=5 finds A=5 already
    assert _idle(c) == {(1, 1)}
    e = effects.observed_effects(c, ALL, saturation=_Needs())
    assert e.observed == ((1, 3),) and (1, 1) not in e.unablated


def test_a_word_a_replay_load_captures_is_not_idle_though_its_step_changes_nothing():
    """The captured A=5 (index 2) changes nothing where it runs, but its replay after A=0 does: made a NOP, the
    replay plays a NOP. An idle-step proof that ignored the capture would skip it and lose that effect."""
    c = _case({1: [A5, "REPLAY start_idx=0 len=1 execute_while_loading=1 load_mode=1", A5, A0,
                   "REPLAY start_idx=0 len=1 execute_while_loading=0 load_mode=0"]})
    assert run_golden(c).ok
    assert (1, 2) not in _idle(c)
    assert (1, 2) in effects.observed_effects(c, ALL, saturation=_Needs()).observed
    assert (1, 2) in effects.observed_effects(c, ALL).observed


def test_a_held_word_is_not_idle():
    """Thread 0's second A=5 waits on the STALLWAIT until thread 1's SETDVALID; A is 5 already where it runs, but
    a NOP in its place would not be held (and its issue forgets the latch), so it is not idle."""
    c = _case({0: [A5, "STALLWAIT stall_res=0x1FF wait_res=0x80", A5], 1: ["SETDVALID setvalid=1"]})
    m = Tensix()
    apply_init(m.s, c)
    watch = IdleSteps(m, c.threads, lambda word: True)
    m.run(c.threads, c.actions, step=lambda t, d, i: watch.step(t, d, i, lambda: m.step(t, d, i)))
    assert (0, 2) in watch.held and (0, 2) not in watch.idle()


@pytest.mark.parametrize("bundle", ["ttsim-pipeline-s4100-part01", "ttsim-counters-s2026-part01"])
def test_on_recorded_cases_no_idle_position_is_credited_by_full_ablation(bundle):
    cases = load_any(glob.glob(str(ROOT / "tests/fuzz_corpus" / f"{bundle}.cases.jsonl.gz")))[:6]
    idle_seen = 0
    for c in cases:
        if not run_golden(c).ok:
            continue
        idle = _idle(c)
        idle_seen += len(idle)
        assert not idle & set(effects.observed_effects(c, ALL).observed), c.name
    assert idle_seen > 0
