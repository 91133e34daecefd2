"""Matrix unit side effects: waits, row addressing, refusals (delta #5), AddrMod, bank flips."""
from __future__ import annotations

import pytest

from golden import fpu_formats as ff
from golden.core import Tensix, decode
from golden.errors import Blocked
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.isa import encode
from golden.registers import config_field, thread_config_field
from golden.state import MATRIX_UNIT, UNPACKERS

T = 1  # the math thread


def set_cfg(m, name, value, state=0):
    f = config_field(name)
    m.s.config[state][f.index] = f.put(m.s.config[state][f.index], value)


def set_tcfg(m, name, value, t=T):
    f = thread_config_field(name)
    m.s.thread_config[t][f.index] = f.put(m.s.thread_config[t][f.index], value)


def machine(fmt=ff.BF16, give=True):
    """Both matrix-unit banks owned by the matrix unit, implied formats set, Dst rows valid."""
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        for b in src.banks:
            b.implied_format = fmt
            if give:
                b.allowed_client = MATRIX_UNIT
    return m


def addr_mod(m, section, a=0, b=0, d=0, fid=0, a_cr=0, b_cr=0, d_cr=0, a_clr=0, b_clr=0, d_clr=0, fid_clr=0):
    ab = a | a_cr << 6 | a_clr << 7 | b << 8 | b_cr << 14 | b_clr << 15
    dst = (d & 0x3FF) | d_cr << 10 | d_clr << 11 | fid << 13 | fid_clr << 15
    m.s.thread_config[T][thread_config_field("ADDR_MOD_AB_SEC0_SrcAIncr").index + section] = ab
    m.s.thread_config[T][thread_config_field("ADDR_MOD_DST_SEC0_DestIncr").index + section] = dst


def run1(m, name, t=T, **fields):
    """Execute one instruction; tolerate only the 'arithmetic not modelled' refusal."""
    try:
        m.run({t: [encode(name, fields)]})
    except NotModelled as e:
        if "arithmetic" not in str(e):
            raise


def rwc(m, t=T):
    r = m.s.rwc[t]
    return (r.srca, r.srca_cr, r.srcb, r.srcb_cr, r.dst, r.dst_cr, r.fidelity)


@pytest.mark.parametrize("name", ["MVMUL", "ELWADD", "ELWSUB", "ELWMUL"])
def test_waits_for_both_banks_then_hangs_without_an_unpacker(name):
    m = machine(give=False)
    with pytest.raises(Hang):
        m.run({T: [encode(name)]})
    assert rwc(m) == (0,) * 7
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    with pytest.raises(Blocked):
        m.step(T, decode(encode(name)))


@pytest.mark.parametrize("name", ["MVMUL", "ELWADD", "ELWSUB", "ELWMUL"])
def test_addr_mod_applied_with_fidelity(name):
    m = machine()
    addr_mod(m, 3, a=0, b=8, d=8, fid=1)
    run1(m, name, addr_mode=3)
    assert rwc(m) == (0, 0, 8, 0, 8, 0, 1)


def test_addr_mode_4_reaches_upper_section_delta_1():
    m = machine()
    addr_mod(m, 4, a=16, a_cr=1, b=48, b_cr=1, d_cr=1)
    m.s.rwc[T].srca_cr, m.s.rwc[T].srcb_cr = 16, 32
    run1(m, "MVMUL", addr_mode=4)
    assert rwc(m)[:4] == (32, 32, 16, 16)


def test_mvmul_srca_row_8_refused_delta_5():
    """Delta #5: the ISA page aligns the SrcA row to 8 (& 0x38); ttsim demands 16. Golden refuses."""
    m = machine()
    m.s.rwc[T].srca = 8
    with pytest.raises(NotModelled, match="delta #5"):
        m.run({T: [encode("MVMUL")]})
    assert rwc(m)[0] == 8 and m.s.srca.matrix_bank == 0


def test_elementwise_accepts_srca_row_8():
    m = machine()
    m.s.rwc[T].srca = 8
    run1(m, "ELWADD")


@pytest.mark.parametrize("name,dst,rwc_dst,offset,ok", [
    ("MVMUL", 8, 0, 0, True), ("MVMUL", 4, 0, 0, False), ("MVMUL", 0, 4, 0, False),
    ("MVMUL", 0, 1016, 16, True),       # MVMUL wraps the Dst row to 10 bits
    ("ELWADD", 0, 1016, 16, False),     # element-wise ops refuse rows beyond 1023
    ("ELWADD", 0, 0, 512, True), ("ELWADD", 0, 0, 516, False),
])
def test_dst_row_alignment(name, dst, rwc_dst, offset, ok):
    m = machine()
    m.s.rwc[T].dst = rwc_dst
    set_tcfg(m, "DEST_TARGET_REG_CFG_MATH_Offset", offset)
    if ok:
        run1(m, name, dst=dst)
    else:
        with pytest.raises(NotModelled):
            m.run({T: [encode(name, {"dst": dst})]})


@pytest.mark.parametrize("clear,disable_a,disable_b", [(1, 0, 0), (2, 0, 0), (3, 0, 0), (3, 1, 0), (3, 0, 1)])
def test_clear_dvalid_flips_banks_and_releases_unless_disabled(clear, disable_a, disable_b):
    m = machine()
    set_tcfg(m, "CLR_DVALID_SrcA_Disable", disable_a)
    set_tcfg(m, "CLR_DVALID_SrcB_Disable", disable_b)
    run1(m, "MVMUL", clear_dvalid=clear)
    for bit, src, disabled in ((1, m.s.srca, disable_a), (2, m.s.srcb, disable_b)):
        flipped = bool(clear & bit)
        assert src.matrix_bank == int(flipped)
        released = flipped and not disabled
        assert src.banks[0].allowed_client == (UNPACKERS if released else MATRIX_UNIT)
        assert src.banks[1].allowed_client == MATRIX_UNIT


def test_stochastic_rounding_not_modelled():
    m = machine()
    set_cfg(m, "ALU_ROUNDING_MODE_Fpu_srnd_en", 1)
    with pytest.raises(NotModelled, match="stochastic"):
        m.run({T: [encode("MVMUL")]})


def test_unknown_implied_format_refused_but_config_format_used_when_disabled():
    m = machine()
    for src in (m.s.srca, m.s.srcb):
        src.banks[0].implied_format = None
    with pytest.raises(NotModelled, match="implied"):
        m.run({T: [encode("ELWADD")]})
    set_tcfg(m, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    set_tcfg(m, "DISABLE_IMPLIED_SRCB_FMT_Base", 1)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcA", ff.BF16)
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", ff.BF16)
    run1(m, "ELWADD")


@pytest.mark.parametrize("fields,error", [
    ({"addr_mode": 8}, UndefinedBehaviour), ({"dst": 0x400}, UndefinedBehaviour),
    ({"instr_mod19": 2}, UndefinedBehaviour), ({"instr_mod19": 1}, NotModelled),
])
def test_mvmul_encodings_ttsim_rejects(fields, error):
    m = machine()
    with pytest.raises(error):
        m.run({T: [encode("MVMUL", fields)]})
    assert rwc(m) == (0,) * 7


def test_addrmod_refusal_leaves_state_untouched():
    m = machine()
    m.s.rwc[T].bias = 1
    with pytest.raises(NotModelled, match="ExtraAddrModBit"):
        m.run({T: [encode("MVMUL", {"clear_dvalid": 3})]})
    assert m.s.srca.matrix_bank == 0 and m.s.srcb.matrix_bank == 0
