"""The hw backend's program builder and job (no device needed): layout, refusals, and the Dest fill.

The Dest fill is checked on a small model of the SFPU operations it uses (facts from ttsim's
src/tensix.cpp: SFPLOADI, SFPIADD with lane-flag update, SFPENCC, SFPSTORE instr_mod0 6 lane mapping),
so a wrong lane mapping or flag trick fails here, before any simulator run.
"""
from __future__ import annotations

import random

import pytest

from golden import isa
from golden.state import DEST_ROWS, L1_SIZE, THREADS
from hwbridge.hw import l1_map as M
from hwbridge.hw import program as hw_program
from hwbridge.hw.platform import load
from tensix_diff.case import Case, Init, Observe

TTSIM = load("ttsim")


def _case(**init) -> Case:
    words = isa.assemble("SETDMAREG payload_sigselsize=0 payload_sigsel=0x1234 setsignalsmode=0 regindex16b=8;"
                         " SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=5 rwc_b=3 rwc_a=2 bitmask=7")
    return Case("hw-program-probe", "", {0: words, 2: words[:1]}, init=Init(**init))


def _tensix_words(code: bytes) -> list[int]:
    words = [int.from_bytes(code[i:i + 4], "little") for i in range(0, len(code), 4)]
    return [isa.from_stream(w) for w in words if w & 3 != 3]


def _program_bytes(job: hw_program.Job, t: int) -> bytes:
    return dict(job.writes)[M.TRISC_RESET_PC[t]]


def test_job_layout():
    case = _case(l1=[(0x20000, b"\x01\x02")])
    job = hw_program.build(case, TTSIM)
    assert dict(job.regs)[M.TRISC_RESET_PC_OVERRIDE] == 0b111
    for t in range(THREADS):
        assert dict(job.regs)[M.TRISC_RESET_PC_REG[t]] == M.TRISC_RESET_PC[t]
        assert len(_program_bytes(job, t)) <= M.CODE_SIZE[t]
    assert job.reads[0] == (M.RESULTS, M.RESULTS_END - M.RESULTS) and job.reads[1:] == [(0x20000, 2)]
    # everything outside the harness area is zeroed, then the case's L1 init is written
    assert sum(n for _, n in job.zero) == L1_SIZE - (M.RESERVED[1] - M.RESERVED[0])
    assert (0x20000, b"\x01\x02") in job.writes
    assert job.release & sum(M.RESET_TRISC) == 0 and job.release & M.RESET_BRISC


def test_case_words_are_issued_in_order_after_the_prologue():
    case = _case()
    job = hw_program.build(case, TTSIM)
    for t in range(THREADS):
        issued = _tensix_words(_program_bytes(job, t))
        body = case.threads.get(t, [])
        n = len(body)
        # the body is the last run of case words before the epilogue (which issues RDCFG/SETC16 only for t=0)
        starts = [i for i in range(len(issued) - n + 1) if issued[i:i + n] == body]
        assert starts, f"thread {t}: case words not issued contiguously"


@pytest.mark.parametrize("init, why", [
    ({"l1": [(M.RESERVED[0] + 0x100, b"\0" * 4)]}, "overlaps the harness area"),
    ({"config": {0: {5: 1}}}, "cannot be written on ttsim"),
    ({"thread_config": {1: {6: 1}}}, "cannot be set on ttsim"),
    ({"thread_config": {1: {1: 0x10000}}}, "cannot be set on ttsim"),
])
def test_refusals(init, why):
    with pytest.raises(hw_program.Refusal, match=why):
        hw_program.build(_case(**init), TTSIM)


def test_instructions_ttsim_lacks_are_refused_before_running():
    case = Case("hw-shift", "", {0: isa.assemble("SHIFTDMAREG opbisconst=1 opsel=0 resultregindex=3"
                                                 " opbregindex=1 oparegindex=1")})
    with pytest.raises(hw_program.Refusal, match="SHIFTDMAREG is not supported by ttsim"):
        hw_program.build(case, TTSIM)
    hw_program.check(case, load("blackhole"))      # silicon runs it


def test_observed_config_splits_into_readable_and_unobservable():
    case = _case(config={0: {12: 7}, 1: {12: 9}})
    case.observe = Observe(config={0: [20, 1]})
    job = hw_program.build(case, TTSIM)
    assert job.cfg_reads == {0: [1, 12], 1: [12]}
    assert job.unobserved_config == ["config.0.20"]


class _SfpuModel:
    """Lane-level model of the SFPU operations the Dest fill uses (ttsim semantics)."""

    def __init__(self):
        self.lreg = [[0] * 32 for _ in range(16)]
        self.lreg[15] = [2 * lane for lane in range(32)]
        self.cc_en, self.cc = True, (1 << 32) - 1
        self.dest = [[None] * 16 for _ in range(DEST_ROWS)]

    def lanes(self):
        mask = self.cc if self.cc_en else (1 << 32) - 1
        return [lane for lane in range(32) if mask >> lane & 1]

    def step(self, word: int) -> None:
        ins, f = isa.decode(word)
        if ins.name == "SFPENCC":
            if f["instr_mod1"] == 10:
                self.cc_en, self.cc = bool(f["imm12_math"] & 1), (1 << 32) - 1 if f["imm12_math"] & 2 else 0
            else:
                assert f["instr_mod1"] == 0
                self.cc = (1 << 32) - 1
        elif ins.name == "SFPLOADI":
            mode, imm, r = f["instr_mod0"], f["imm16"], f["lreg_ind"]
            for lane in self.lanes():
                old = self.lreg[r][lane]
                self.lreg[r][lane] = {2: imm, 8: (old & 0xFFFF) | imm << 16, 10: (old & 0xFFFF0000) | imm}[mode]
        elif ins.name == "SFPIADD":
            assert f["instr_mod1"] == 1
            imm = f["imm12_math"] - (1 << 12) if f["imm12_math"] & 0x800 else f["imm12_math"]
            for lane in self.lanes():
                v = (self.lreg[f["lreg_c"]][lane] + imm) & 0xFFFFFFFF
                self.lreg[f["lreg_dest"]][lane] = v
                self.cc = self.cc | (1 << lane) if v >> 31 else self.cc & ~(1 << lane)
        elif ins.name == "SFPSTORE":
            assert f["instr_mod0"] == 6
            row0 = f["dest_reg_addr"]
            assert row0 % 2 == 0
            for lane in self.lanes():
                row, col = (row0 & ~3) + lane // 8, 2 * (lane & 7) + ((row0 & 2) >> 1)
                self.dest[row][col] = self.lreg[f["lreg_ind"]][lane] & 0xFFFF


def test_dest_fill_writes_every_cell_once_with_the_init_values():
    rng = random.Random(11)
    rows = {r: [rng.choice([0, 0x1234, rng.randrange(1 << 16)]) for _ in range(16)]
            for r in rng.sample(range(DEST_ROWS), 48)}
    rows[1023] = [0xFFFF] * 16
    job = hw_program.build(_case(dest=sorted(rows.items())), TTSIM)
    model = _SfpuModel()
    for w in _tensix_words(_program_bytes(job, 0)):
        model.step(w)
    for r in range(DEST_ROWS):
        assert model.dest[r] == rows.get(r, [0] * 16), f"Dest row {r}"
    assert model.cc_en and model.cc == (1 << 32) - 1        # SFPU left as at power-on


def test_a_large_dest_init_still_fits_the_code_area():
    rng = random.Random(3)
    rows = [(r, [rng.randrange(1 << 16) for _ in range(16)]) for r in range(64)]
    job = hw_program.build(_case(dest=rows), TTSIM)
    assert len(_program_bytes(job, 0)) <= M.CODE_SIZE[0]
