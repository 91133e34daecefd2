"""Observed-effect accounting (tensix_diff.effects): which instructions' effects reach the compared state.

Golden ablation: an instruction is observed when replacing it by a NOP changes golden's final state cut down
to what the other side compared; a hang counts, a golden refusal of the ablated program does not.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from generators.bulk import generate
from generators.profiles import load_profile
from hwbridge.golden_backend import GoldenBackend
from hwbridge.hw.platform import load as load_platform
from hwbridge.hw.observation import required
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import NOTHING_OBSERVABLE, assess
from tensix_diff.case import load_cases, parse_case
from tensix_diff.effects import Effects, any_observed, observed_effects

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ALL = ("dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config")
SET_A5 = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=5 bitmask=1"


def case(*lines: str, thread: int = 1, extra: str = "") -> object:
    body = "\n".join(f"    - {x}" for x in lines)
    return parse_case(f"name: t\ndescription: ''\nthreads:\n  {thread}:\n{body}\n{extra}")


def device_mask(c):
    """What ttsim's read-back observes for the case (no rwc bias, no Dest valid bits)."""
    return required(c, load_platform("ttsim"))


def both(c, mask) -> tuple[bool, Effects]:
    return any_observed(c, mask), observed_effects(c, mask)


@pytest.mark.parametrize("line", ["SETC16 setc16_reg=12 setc16_value=0x0808", "NOP"], ids=["setc16-addrmod", "nop"])
def test_an_instruction_nothing_reads_back_has_no_observed_effect(line):
    c = case(line)
    for mask in (ALL, device_mask(c)):
        assert both(c, mask) == (False, Effects(1, ()))


def test_a_counter_write_is_observed():
    c = case("NOP", SET_A5)
    assert both(c, device_mask(c)) == (True, Effects(2, ((1, 1),)))


def test_an_overwritten_write_has_no_observed_effect():
    c = case(SET_A5, "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=3 bitmask=1")
    assert observed_effects(c, ALL) == Effects(2, ((1, 1),))


def test_a_write_undone_later_is_found_by_ablating_the_undoing_instruction():
    """All-NOP equals the full run (A back to 0), yet removing the clear leaves A = 5."""
    c = case(SET_A5, "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=1")
    assert both(c, ALL) == (True, Effects(2, ((1, 1),)))


def test_a_write_made_twice_is_attributed_to_one_of_them():
    """Neither copy alone is needed, both together are: the earlier one is credited, so any_observed and
    observed_effects agree."""
    c = case(SET_A5, "NOP", SET_A5)
    assert both(c, ALL) == (True, Effects(3, ((1, 0),)))


def test_only_the_masked_regions_count():
    c = case(SET_A5)
    assert not any_observed(c, ("dest", "gpr")) and any_observed(c, ("rwc",))
    rmw = "RMWCIB0 mask=0xff data=0xab cfgregaddr=70"
    assert not any_observed(case(rmw), ALL)                                   # Config word 70 not observed
    assert any_observed(case(rmw, extra="observe:\n  config:\n    0: [70]\n"), ALL)


def test_golden_only_state_is_not_an_observed_effect_for_a_device_that_cannot_see_it():
    """ZEROACC only clears Dest valid bits: golden sees them, ttsim's read-back does not."""
    c = case("ZEROACC clear_mode=3 use_32_bit_mode=0 clear_zero_flags=0 addr_mode=0 where=0")
    assert any_observed(c, ("dest", "dest_valid"))
    assert not any_observed(c, ("dest",)) and not any_observed(c, device_mask(c))


def test_a_state_dump_as_mask_keeps_only_its_own_keys():
    c = case(SET_A5)
    full = GoldenBackend().run(c).state
    srca_only = {"rwc": {"1": {"srca": 0}}}
    assert any_observed(c, srca_only, full)
    assert not any_observed(c, {"rwc": {"1": {"srcb": 0}}, "dest": []}, full)


def test_threads_and_indices_are_reported_per_case_program_word():
    text = ("name: t\ndescription: ''\nthreads:\n"
            "  0:\n    - SETADCXY cntsetmask=1 ch1_y=0 ch1_x=0 ch0_y=3 ch0_x=2 bitmask=3\n"
            f"  1:\n    - NOP\n    - {SET_A5}\n")
    c = parse_case(text)
    assert observed_effects(c, ALL) == Effects(3, ((0, 0), (1, 1)))


def test_replay_is_accounted_per_case_program_word():
    """A REPLAY load of two INCRWCs played twice: the accounting names the five words of the case, not the
    seven instructions that run (the words the plays issue are accounted apart). Each INCRWC word and each
    play is credited; the load is not, because without it the plays replay entries never loaded, which golden
    refuses (undefined): no prediction."""
    c = case("REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=1",
             "INCRWC rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=1",
             "INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0",
             "REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=0",
             "REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=0")
    e = observed_effects(c, ALL)
    assert (e.total, e.observed) == (5, ((1, 1), (1, 2), (1, 3), (1, 4)))
    assert e.expanded == e.issued and len(e.issued) == 2     # the two INCRWC words, each by its own ablation


def test_an_ablation_that_hangs_is_an_observed_effect():
    """Thread 0's SEMPOST releases thread 1's wait; without it thread 1's math instruction never issues.
    Semaphores are not read back, so the hang is the only way the SEMPOST's effect shows."""
    text = ("name: t\ndescription: ''\nthreads:\n"
            "  0:\n    - SEMPOST sem_sel=1\n"
            "  1:\n    - SEMWAIT stall_res=0 sem_sel=1 wait_sem_cond=1\n"
            "    - SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=0\n")
    c = parse_case(text)
    assert GoldenBackend().run(c).status == "ok"
    assert (0, 0) in observed_effects(c, ALL).observed
    assert any_observed(c, ALL)


def test_an_ablation_golden_refuses_is_not_an_observed_effect():
    """delta-10: without the UNPACR_NOP that sets SrcA's implied format, golden refuses the MOVD2A
    (not-modelled): that predicts nothing, so the UNPACR_NOP is not credited; the moves are."""
    c = load_cases([CORPUS / "deltas" / "delta-10-shuffle-tf32.yaml"])[0]
    e = observed_effects(c, device_mask(c))
    assert (1, 9) not in e.observed and {(1, 11), (1, 12)} <= set(e.observed)


def test_golden_full_state_given_or_not_gives_the_same_answer():
    golden = GoldenBackend()
    for _, c in generate(11, 6, load_profile("default")):
        full = golden.run(c)
        if full.status == "ok":
            mask = device_mask(c)
            assert observed_effects(c, mask, full.state) == observed_effects(c, mask)
            assert any_observed(c, mask, full.state) == any_observed(c, mask)


@pytest.mark.parametrize("profile", ["default", "scalar", "regfile"])
def test_any_observed_is_exactly_observed_effects_being_nonempty(profile):
    golden = GoldenBackend()
    for _, c in generate(3, 8, load_profile(profile)):
        state = golden.run(c).state
        mask = device_mask(c)
        assert any_observed(c, mask, state) == (observed_effects(c, mask, state).count > 0), c.name


def test_every_curated_case_observes_what_it_changes():
    """Each curated case that golden runs has an instruction whose effect ttsim's read-back sees, and none
    is judged "nothing observable" against its recording (the cases golden refuses are uncompared for that
    reason, each listed in configs/expected_refusals.yaml or refused by ttsim too). any_observed is exactly
    observed_effects(...).count > 0 (test_any_observed_is_exactly_observed_effects_being_nonempty) without
    ablating every instruction of the tt-llk kernels one by one."""
    golden, replay = GoldenBackend(), ReplayBackend()
    blind, vacuous = [], []
    for c in load_cases([CORPUS]):
        g = golden.run(c)
        if g.status == "ok" and not any_observed(c, device_mask(c), g.state):
            blind.append(c.name)
        if assess(c, g, replay.run(c), ("golden", "ttsim"), "replay").why == NOTHING_OBSERVABLE:
            vacuous.append(c.name)
    assert blind == [] and vacuous == []


@pytest.mark.parametrize("name, probed", [
    ("deltas/delta-13-unpack-misc-cfg", (0, 2)),          # SETC16 setc16_reg=41 (UNPACK_MISC_CFG)
    ("deltas/delta-11-zeroacc-half-relative", (1, 6)),   # ZEROACC 16-row mode
    ("deltas/delta-11-zeroacc-half-relative", (1, 8)),   # ZEROACC one-row mode
])
def test_reworked_curated_cases_observe_the_instruction_they_probe(name, probed):
    c = load_cases([CORPUS / f"{name}.yaml"])[0]
    assert probed in observed_effects(c, device_mask(c)).observed


def test_words_a_replay_issues_are_credited_by_their_own_ablation():
    """The replay buffer issues SET_A5 (an effect) and a SETC16 of an AddrMod (none): only the first counts."""
    from golden.isa import assemble_line
    c = case("REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=1", SET_A5,
             "SETC16 setc16_reg=12 setc16_value=0x0808", "REPLAY start_idx=0 len=2 execute_while_loading=0 load_mode=0")
    set_a5, setc16 = (assemble_line(x) for x in (SET_A5, "SETC16 setc16_reg=12 setc16_value=0x0808"))
    e = observed_effects(c, ALL)
    assert set(e.issued) == {(1, set_a5), (1, setc16)}
    assert e.expanded == ((1, set_a5),)
    assert (1, 3) in e.observed                # the REPLAY that issues them, as before
    assert observed_effects(case(SET_A5), ALL).issued == ()     # no MOP or REPLAY: nothing expanded
