"""Blackhole deltas (shared/spec/blackhole-deltas.md) that the counter, scalar, config and sync semantics
must get right; one test per delta point, named after it."""
import pytest

from golden import isa
from golden.core import Tensix
from golden.errors import NotModelled, UndefinedBehaviour
from golden.registers import thread_config_field

from machine_util import adc, run


def test_delta_03_setrwc_c_to_cr_condition():
    m = Tensix()
    r = m.s.rwc[0]
    r.dst, r.dst_cr = 40, 4
    run("SETRWC rwc_cr=8 rwc_d=3 bitmask=0", m)          # CToCR alone updates Dst: base is the counter
    assert (r.dst, r.dst_cr) == (43, 43)
    r.dst, r.dst_cr, r.fidelity = 40, 4, 2
    run("SETRWC rwc_cr=0 rwc_d=3 bitmask=8", m)          # SET_F alone: the spec's BitMask & C_TO_CR would fire
    assert (r.dst, r.dst_cr, r.fidelity) == (40, 4, 0)


def test_delta_03_setrwc_bitmask_bit4_sets_sfpu_stack_pointer():
    m = Tensix()
    m.s.rwc[0].srca = 9
    run("SETRWC rwc_d=3 rwc_b=2 rwc_a=1 bitmask=16", m)
    assert m.s.sfpu.sp == 0x321
    assert m.s.rwc[0].srca == 9                          # SET_A not requested


def test_delta_04_stream_words_are_rotated():
    word = isa.encode("SETADCZW", {"cntsetmask": 4, "bitmask": 15})
    assert isa.to_stream(word) == 0x5200003D != (word << 2) & 0xFFFFFFFF


def test_delta_06_adc_z_and_w_are_13_bits():
    m = run("SETADC cntsetmask=4 channelindex=0 dimensionindex=2 value=0x1FFF;"
            "SETADC cntsetmask=4 channelindex=0 dimensionindex=3 value=0x0100;"
            "INCADCZW cntsetmask=4 ch0_x=1")
    assert adc(m, "pack", 0)[4:] == (0, 0x1FFF, 0x100, 0x100)   # Z wraps at 13 bits, not 8; W keeps bit 8


def test_delta_06_adc_x_is_18_bits():
    m = Tensix()
    m.s.adc[0]["unpack0"][0].x_cr = (1 << 18) - 1
    run("ADDRCRXY cntsetmask=1 ch0_x=2 bitmask=1", m)
    assert adc(m, "unpack0", 0)[:2] == (1, 1)


def test_delta_12_wrcfg_fields():
    w = isa.encode("WRCFG", {"gpraddress": 63, "wr128b": 1, "cfgreg": 0x7FF})
    assert w == 0xB0 << 24 | 63 << 16 | 1 << 15 | 0x7FF
    m = Tensix()
    m.s.gpr[0][5] = 0xA5A5A5A5
    run("WRCFG gpraddress=5 cfgreg=69", m)                 # THCON_SEC0_REG1_L1_Dest_addr
    assert m.s.config[0][69] == 0xA5A5A5A5
    with pytest.raises(UndefinedBehaviour):
        run("WRCFG cfgreg=0x800")                          # bit 11: beyond CfgReg 10:0
    with pytest.raises(UndefinedBehaviour):
        run("WRCFG gpraddress=0x40")                       # bit 22: beyond GprAddress 21:16


def test_delta_13_unpack_misc_cfg_is_threadconfig_41():
    f = thread_config_field("UNPACK_MISC_CFG_CfgContextOffset_0")
    assert f.index == 41
    m = run("SETC16 setc16_reg=41 setc16_value=0x0101", thread=0)
    assert m.s.thread_config[0][41] == 0x0101 and m.s.config[0][41] == 0


def test_delta_16_shiftdmareg_immediate_is_6_bits():
    w = isa.encode("SHIFTDMAREG", {"opbisconst": 1, "opbregindex": 33})
    assert w >> 6 & 0x3F == 33
    m = Tensix()
    m.s.gpr[0][0] = 1
    run("SHIFTDMAREG opbisconst=1 opsel=0 resultregindex=1 opbregindex=31 oparegindex=0", m)
    assert m.s.gpr[0][1] == 0x80000000
    with pytest.raises(UndefinedBehaviour, match="6-bit immediate"):
        run("SHIFTDMAREG opbisconst=1 opsel=0 resultregindex=1 opbregindex=33 oparegindex=0", m)


def test_delta_16_ops_ttsim_lacks_are_modelled():
    for name in ("SUBDMAREG", "SHIFTDMAREG", "BITWOPDMAREG", "CMPDMAREG"):
        ins = isa.lookup(name)
        assert ins.ttsim_unsupported and ins.golden == "modelled"


def test_delta_18_stallwait_conditions_c0_to_c12():
    m = run("STALLWAIT stall_res=1 wait_res=0x1000; SETADC cntsetmask=1 value=1")
    assert adc(m, "unpack0", 0)[0] == 1
    with pytest.raises(UndefinedBehaviour, match="C0..C12"):
        run("STALLWAIT stall_res=1 wait_res=0x2000")


@pytest.mark.parametrize("text", ["SETADC cntsetmask=1 value=0x10000",
                                  "SETADCXY cntsetmask=1 ch1_y=8 bitmask=1",
                                  "INCADCXY cntsetmask=1 ch1_y=16",
                                  "ADDRCRZW cntsetmask=1 ch1_y=24 bitmask=1"])
def test_delta_19_thread_override_bits_refused(text):
    with pytest.raises(NotModelled):
        run(text)
