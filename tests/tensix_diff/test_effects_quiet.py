"""Quiet words (tensix_diff.effects._QUIET): a saturating ablation skips an SFPNOP, DMANOP, GATESRCRST, STALLWAIT,
ATGETM or SFPPUSHC only where the traced full run shows that its NOP changes no step, so the skip never loses an
observed effect; where its wait held a step, its mutex was contended or its flag-stack entry was read, it is
ablated and credited as full ablation credits it."""
from __future__ import annotations

from pathlib import Path

import pytest

from hwbridge.hw.observation import required
from hwbridge.hw.platform import load as load_platform
from tensix_diff import effects
from tensix_diff.case import load_bundle, load_cases, parse_case
from tensix_diff.effects import observed_effects

ROOT = Path(__file__).resolve().parents[2]
ALL = ("dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config")
CFG70 = "observe:\n  config:\n    0: [70]\n"


class _Needs:
    """A saturation that needs every ablation: only the quiet-word skip applies."""

    def needed(self, word: int) -> bool:
        return True

    def note(self, word: int) -> None:
        pass


def _case(threads: dict[int, list[str]], extra: str = "") -> object:
    body = "".join(f"  {t}:\n" + "".join(f"    - {x}\n" for x in xs) for t, xs in threads.items())
    return parse_case(f"name: t\ndescription: ''\nthreads:\n{body}{extra}")


def _cc(name: str, mod: int = 0, c: int = 0, d: int = 0) -> str:
    return f"{name} imm12_math=0 lreg_c={c} lreg_dest={d} instr_mod1={mod}"


# Thread 0's STALLWAIT waits for SrcA valid, which only thread 1's SETDVALID gives: it holds thread 0's Config
# write until thread 1 has written the same word, so without it the other write lands last.
HELD_STALLWAIT = _case({0: ["STALLWAIT stall_res=0x1FF wait_res=0x80", "RMWCIB0 mask=0xff data=0x01 cfgregaddr=70"],
                        1: ["RMWCIB0 mask=0xff data=0x02 cfgregaddr=70", "SETDVALID setvalid=1"]}, CFG70)
# Thread 1's ATGETM waits while thread 0 holds the mutex across its held write: without thread 0's ATGETM,
# thread 1 writes first.
CONTENDED_ATGETM = _case({0: ["ATGETM mutex_index=0", "STALLWAIT stall_res=0x1FF wait_res=0x80",
                              "RMWCIB0 mask=0xff data=0x01 cfgregaddr=70", "ATRELM mutex_index=0"],
                          1: ["SETDVALID setvalid=1", "ATGETM mutex_index=0", "RMWCIB0 mask=0xff data=0x02 cfgregaddr=70",
                              "ATRELM mutex_index=0"]}, CFG70)
# The pushed flags (lane 0 only) are what SFPCOMPC complements against; with an empty stack every lane is
# enabled for the SFPMOV that SFPSTORE writes to Dest.
READ_SFPPUSHC = _case({1: [_cc("SFPSETCC", 6, 15), _cc("SFPPUSHC"), _cc("SFPSETCC", 0, 15), _cc("SFPCOMPC"),
                           _cc("SFPMOV", 0, 10, 3), _cc("SFPENCC"),
                           "SFPSTORE lreg_ind=3 instr_mod0=0 sfpu_addr_mode=0 dest_reg_addr=0"]})


@pytest.mark.parametrize("c, quiet", [(HELD_STALLWAIT, (0, 0)), (CONTENDED_ATGETM, (0, 0)), (READ_SFPPUSHC, (1, 1))],
                         ids=["held-stallwait", "contended-atgetm", "read-sfppushc"])
def test_a_quiet_word_whose_nop_changes_a_step_is_ablated_and_credited(c, quiet):
    full = observed_effects(c, ALL)
    assert quiet in full.observed
    assert observed_effects(c, ALL, saturation=_Needs()) == full


@pytest.mark.parametrize("c, quiet", [
    (_case({0: ["STALLWAIT stall_res=0x1FF wait_res=0x10", "RMWCIB0 mask=0xff data=0x01 cfgregaddr=70"],
            1: ["RMWCIB0 mask=0xff data=0x02 cfgregaddr=70", "SETDVALID setvalid=1"]}, CFG70), (0, 0)),
    (_case({1: [_cc("SFPSETCC", 6, 15), _cc("SFPPUSHC"), _cc("SFPMOV", 0, 10, 3),
                "SFPSTORE lreg_ind=3 instr_mod0=0 sfpu_addr_mode=0 dest_reg_addr=0"]}), (1, 1)),
], ids=["stallwait-on-a-busy-condition", "unread-sfppushc"])
def test_a_quiet_word_whose_nop_changes_no_step_is_not_ablated(c, quiet, monkeypatch):
    ablated = []           # the positions ablated alone (from scratch or from the full run's prefix)
    real = effects._ablated_outcome
    monkeypatch.setattr(effects, "_ablated_outcome", lambda case, mask, p, *a: ablated.append(p) or real(case, mask, p, *a))
    full = observed_effects(c, ALL)
    n = len(ablated)
    assert quiet not in full.observed and quiet in ablated
    assert observed_effects(c, ALL, saturation=_Needs()) == full
    assert sorted(ablated[n:]) == sorted(p for p in ablated[:n] if p != quiet)     # all but the quiet word


def test_on_recorded_cases_skipping_quiet_words_changes_no_answer():
    """tt-llk kernels and pipeline cases (STALLWAIT, ATGETM, mutexes, valid-bit handshakes, MOPs) and SFPU
    flag-stack cases: the answer with only the quiet-word skip is full ablation's, with fewer golden runs."""
    cases = load_cases([ROOT / "tests" / "corpus" / "kernels" / f"{n}.yaml"
                        for n in ("kernel-datacopy-bf16-to-fp32", "kernel-eltwise-add-bf16-bcast-col")])
    cases += load_bundle(ROOT / "tests" / "fuzz_corpus" / "ttsim-pipeline-s4100-part01.cases.jsonl.gz")[:2]
    cases += load_bundle(ROOT / "tests" / "fuzz_corpus" / "ttsim-sfpu-cc-s3004-part01.cases.jsonl.gz")[:6]
    skipped = 0
    for c in cases:
        mask = required(c, load_platform("ttsim"))
        full = observed_effects(c, mask)
        fewer = observed_effects(c, mask, saturation=_Needs())
        assert fewer == full, c.name
        inert = effects._traced_full(c, effects._mask(mask))[1]
        skipped += sum(inert(w) for ws in c.threads.values() for w in ws)
    assert skipped >= 20
