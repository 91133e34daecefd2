"""Saturating ablation (tensix_cli.coverage_effects) reports what full ablation (--exhaustive) reports: the same
observed instructions, mode values and field-value classes, case counts equal up to the cap."""
from __future__ import annotations

from pathlib import Path

import pytest

from golden import isa
from tensix_cli import coverage as cov_mod
from tensix_cli import coverage_effects as CE
from tensix_diff.case import load_bundle, parse_case, write_bundle
from tensix_diff.effects import Effects, observed_effects

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "corpus" / "kernels"
FUZZ = ROOT / "tests" / "fuzz_corpus"
SAMPLE = (("ttsim-pipeline-s4100-part01", 3), ("ttsim-arith-s2027-part01", 12), ("ttsim-sfpu-s3003-part01", 12),
          ("ttsim-counters-s2026-part01", 12))


def _sample(tmp_path) -> list[str]:
    """Two curated kernels (MOPs, REPLAY, RISC-V actions) and the first cases of four recorded bundles."""
    out = [str(KERNELS / "kernel-datacopy-bf16.yaml"), str(KERNELS / "matmul-addrmod-replay.yaml")]
    for name, n in SAMPLE:
        path = tmp_path / f"{name}.cases.jsonl.gz"
        write_bundle(path, load_bundle(FUZZ / f"{name}.cases.jsonl.gz")[:n])
        out.append(str(path))
    return out


def _capped(cov) -> tuple:
    rows = [tuple(str(cov.observed_cases(cov.instructions[r[0]])) if i == 4 else x for i, x in enumerate(r))
            for r in cov.rows()]
    return [x for x in cov.summary_lines() if not x.startswith("(observed:")], rows, cov.mode_rows()


def test_the_saturating_summary_is_full_ablations(tmp_path, monkeypatch):
    """Cap 2 (the report's bar with it) so that saturation skips much of a small sample; the exhaustive run
    shares the cache the saturating one wrote, whose partial answers it must not take for whole."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(CE, "CAP", 2)
    monkeypatch.setattr(cov_mod, "BATCH", 10)        # several batches: workers start again from what was gathered
    paths = _sample(tmp_path)
    sat_runs = cov_mod.collect(paths, jobs=1, method="saturating")
    full_runs = cov_mod.collect(paths, jobs=1, method="ablation")
    partial = [r[3] for r in sat_runs if r[3] is not None and not r[3].whole]
    assert len(partial) > 10 and all(r[3] is None or r[3].whole for r in full_runs)
    sat, full = cov_mod.measure(sat_runs, "saturating"), cov_mod.measure(full_runs, "ablation")
    full.method = "saturating"         # print full ablation's counts capped as the saturating run prints them
    assert _capped(sat) == _capped(full)
    assert any(str(r[4]).startswith(">=") for r in sat.rows()) and any(r[4] == 1 for r in sat.rows())
    for lv in ("observed", "compared"):
        for name, c in sat.instructions.items():
            assert c.seen("modes", lv) == full.instructions[name].seen("modes", lv), name
            assert c.seen("classes", lv) == full.instructions[name].seen("classes", lv), name
            assert min(c.cases["observed"], 2) == min(full.instructions[name].cases["observed"], 2), name


class _Everything:
    """A saturation under which no ablation is needed."""

    def needed(self, word: int) -> bool:
        return False

    def note(self, word: int) -> None:
        pass


def test_the_collective_rule_applies_only_where_no_single_ablation_shows():
    """A write made twice: no single ablation shows, all together do; with every position skipped, each is
    still ablated alone before the rule credits the earlier copy, as full ablation does."""
    set_a5 = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=5 bitmask=1"
    c = parse_case(f"name: t\ndescription: ''\nthreads:\n  1:\n    - {set_a5}\n    - NOP\n    - {set_a5}\n")
    mask = ("rwc",)
    assert observed_effects(c, mask, saturation=_Everything()).observed == observed_effects(c, mask).observed == ((1, 0),)
    one = parse_case(f"name: t\ndescription: ''\nthreads:\n  1:\n    - {set_a5}\n    - NOP\n    - NOP\n")
    assert observed_effects(one, mask, saturation=_Everything()) == Effects(3, ((1, 0),))   # shown: nothing left over


def _setrwc(bitmask: int) -> str:
    return f"SETRWC clear_ab_vld=0 rwc_cr=5 rwc_d=5 rwc_b=5 rwc_a=5 bitmask={bitmask}"


def test_a_word_credited_in_its_case_whose_keys_were_observed_is_skipped_and_said():
    """Two SETRWCs with the same keys, each observed alone (A and B, then D and CR): once the first is credited
    in the case, the second could add nothing; full ablation observes both."""
    c = parse_case(f"name: t\ndescription: ''\nthreads:\n  1:\n    - {_setrwc(3)}\n    - {_setrwc(12)}\n")
    first, second = c.threads[1]
    assert CE.word_keys(first)[1] == CE.word_keys(second)[1]
    assert observed_effects(c, ("rwc",)).observed == ((1, 0), (1, 1))
    sat = CE.Saturating(cap=5)
    sat.note(first)
    sat.end_case()                     # an earlier case observed the keys; SETRWC counted in 1 case of 5
    eff = observed_effects(c, ("rwc",), saturation=sat)
    assert (eff.observed, eff.unablated, eff.whole) == (((1, 0),), ((1, 1),), False)
    sat.end_case()
    assert sat.cases["SETRWC"] == 2 and sat.needed(second)
    assert sat.covers(c, eff) and not CE.Saturating(cap=5).covers(c, eff)   # covered only where keys are known


def test_at_the_cap_a_word_with_observed_keys_is_skipped_until_one_shows():
    """With SETRWC counted in as many cases as the cap and its keys observed, nothing is needed; since no
    ablation has shown yet, the skipped ones are ablated last first until one shows (the collective rule's
    condition), and the rest stay unablated."""
    c = parse_case(f"name: t\ndescription: ''\nthreads:\n  1:\n    - {_setrwc(3)}\n    - {_setrwc(12)}\n")
    sat = CE.Saturating(cap=1)
    sat.note(c.threads[1][0])
    sat.end_case()
    eff = observed_effects(c, ("rwc",), saturation=sat)
    assert (eff.observed, eff.unablated) == (((1, 1),), ((1, 0),))


@pytest.mark.parametrize("whole", [True, False])
def test_the_cache_never_gives_a_partial_answer_as_whole(tmp_path, monkeypatch, whole):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = CE.EffectsCache()
    eff = Effects(3, ((0, 1),), unablated=() if whole else ((0, 2),))
    cache.put_key("k", eff)
    assert cache.get_key("k", whole=False) == eff
    assert cache.get_key("k") == (eff if whole else None)
    cache.put_key("k", Effects(3, ((0, 1), (0, 2))))
    cache.put_key("k", Effects(3, (), unablated=((0, 0),)))      # a partial answer never replaces a whole one
    assert cache.get_key("k") == Effects(3, ((0, 1), (0, 2)))
