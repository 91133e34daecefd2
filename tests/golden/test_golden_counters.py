"""RWC and ADC instructions against hand-computed expectations (SETRWC.md, INCRWC.md, ADC pages)."""
import pytest

from golden.core import Tensix
from golden.errors import NotModelled, UndefinedBehaviour
from golden.state import MATRIX_UNIT, UNPACKERS

from machine_util import adc, run, rwc, set_tcfg


def machine_with_rwc(t=0, **values) -> Tensix:
    m = Tensix()
    for k, v in values.items():
        setattr(m.s.rwc[t], k, v)
    return m


# ---- SETRWC ---------------------------------------------------------------------------------------

def test_setrwc_sets_counter_and_checkpoint():
    m = machine_with_rwc(srca=9, srca_cr=9, srcb=9, srcb_cr=9, dst=9, dst_cr=9, fidelity=3)
    run("SETRWC rwc_a=1 rwc_b=2 rwc_d=3 bitmask=7", m)
    assert rwc(m) == (1, 1, 2, 2, 3, 3, 3)        # fidelity untouched without SET_F


def test_setrwc_bitmask_selects_counters():
    m = machine_with_rwc(srca=9, srca_cr=9, srcb=9, srcb_cr=9, dst=9, dst_cr=9, fidelity=3)
    run("SETRWC rwc_a=1 rwc_b=2 rwc_d=3 bitmask=10", m)   # SET_B | SET_F
    assert rwc(m) == (9, 9, 2, 2, 9, 9, 0)


def test_setrwc_cr_adds_to_checkpoint_and_wraps_at_6_bits():
    m = machine_with_rwc(srca=1, srca_cr=62, srcb=1, srcb_cr=40)
    run("SETRWC rwc_cr=3 rwc_a=5 rwc_b=15 bitmask=3", m)
    r = m.s.rwc[0]
    assert (r.srca, r.srca_cr) == (3, 3)          # (62 + 5) & 63
    assert (r.srcb, r.srcb_cr) == (55, 55)


def test_setrwc_cr_without_set_bit_changes_nothing():
    m = machine_with_rwc(srca=7, srca_cr=20)
    run("SETRWC rwc_cr=1 rwc_a=5 bitmask=0", m)
    assert (m.s.rwc[0].srca, m.s.rwc[0].srca_cr) == (7, 20)


def test_setrwc_dst_cr_and_c_to_cr_bases():
    m = machine_with_rwc(dst=100, dst_cr=1020)
    run("SETRWC rwc_cr=4 rwc_d=7 bitmask=4", m)     # CR_D: 1020 + 7 wraps at 10 bits
    assert (m.s.rwc[0].dst, m.s.rwc[0].dst_cr) == (3, 3)
    m = machine_with_rwc(dst=100, dst_cr=7)
    run("SETRWC rwc_cr=12 rwc_d=5 bitmask=4", m)    # CToCR wins over CR_D: base is the counter
    assert (m.s.rwc[0].dst, m.s.rwc[0].dst_cr) == (105, 105)


def test_setrwc_only_touches_issuing_thread():
    m = machine_with_rwc(t=1, srca=5, srca_cr=5)
    run("SETRWC rwc_a=0 bitmask=15", m, thread=0)
    assert m.s.rwc[1].srca == 5


def test_setrwc_clear_ab_vld_releases_and_flips_banks():
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        src.banks[0].allowed_client = MATRIX_UNIT
    run("SETRWC clear_ab_vld=1 bitmask=0", m)
    assert m.s.srca.banks[0].allowed_client == UNPACKERS and m.s.srca.matrix_bank == 1
    assert m.s.srcb.banks[0].allowed_client == MATRIX_UNIT and m.s.srcb.matrix_bank == 0
    run("SETRWC clear_ab_vld=2 bitmask=0", m)
    assert m.s.srcb.banks[0].allowed_client == UNPACKERS and m.s.srcb.matrix_bank == 1


def test_setrwc_clear_dvalid_disable_flips_without_release():
    m = Tensix()
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    set_tcfg(m, 0, "CLR_DVALID_SrcA_Disable", 1)
    run("SETRWC clear_ab_vld=1 bitmask=0", m)
    assert m.s.srca.banks[0].allowed_client == MATRIX_UNIT and m.s.srca.matrix_bank == 1


def test_setrwc_bitmask_bit5_is_undefined():
    with pytest.raises(UndefinedBehaviour, match="BitMask"):
        run("SETRWC bitmask=32")


# ---- INCRWC ---------------------------------------------------------------------------------------

def test_incrwc_adds_to_counters_leaving_checkpoints():
    m = machine_with_rwc(srca=60, srca_cr=4, srcb=1, srcb_cr=4, dst=1020, dst_cr=4, fidelity=2)
    run("INCRWC rwc_a=5 rwc_b=15 rwc_d=9", m)
    assert rwc(m) == (1, 4, 16, 4, 5, 4, 2)


def test_incrwc_cr_mode_adds_to_checkpoint_and_copies():
    m = machine_with_rwc(srca=60, srca_cr=4, srcb=1, srcb_cr=4, dst=1020, dst_cr=1022)
    run("INCRWC rwc_cr=7 rwc_a=5 rwc_b=15 rwc_d=9", m)
    assert rwc(m) == (9, 9, 19, 19, 7, 7, 0)


def test_incrwc_reserved_cr_bits_are_undefined():
    with pytest.raises(UndefinedBehaviour):
        run("INCRWC rwc_cr=8")


# ---- ADCs -----------------------------------------------------------------------------------------

def test_setadc_sets_one_dimension_of_selected_units():
    m = run("SETADC cntsetmask=5 channelindex=1 dimensionindex=1 value=0x1234")
    for unit in ("unpack0", "pack"):
        assert adc(m, unit, 1) == (0, 0, 0x1234, 0x1234, 0, 0, 0, 0)
    assert adc(m, "unpack1", 1) == (0,) * 8
    assert adc(m, "unpack0", 0) == (0,) * 8


@pytest.mark.parametrize("dim,value,stored", [(0, 0xFFFF, 0xFFFF), (1, 0xFFFF, 0x1FFF), (2, 0xFFFF, 0x1FFF),
                                              (3, 0x2ABC, 0x0ABC)])
def test_setadc_truncates_to_counter_width(dim, value, stored):
    m = run(f"SETADC cntsetmask=2 channelindex=0 dimensionindex={dim} value={value}")
    got = adc(m, "unpack1", 0)
    assert got[2 * dim] == got[2 * dim + 1] == stored


def test_setadc_zero_mask_changes_nothing():
    m = run("SETADC cntsetmask=0 value=5")
    assert all(adc(m, u, c) == (0,) * 8 for u in ("unpack0", "unpack1", "pack") for c in (0, 1))


def test_setadcxy_sets_selected_values_and_checkpoints():
    m = Tensix()
    m.s.adc[0]["unpack0"][1].x = m.s.adc[0]["unpack0"][1].x_cr = 99
    run("SETADCXY cntsetmask=1 ch1_y=7 ch1_x=6 ch0_y=5 ch0_x=4 bitmask=11", m)   # X0, Y0, Y1
    assert adc(m, "unpack0", 0)[:4] == (4, 4, 5, 5)
    assert adc(m, "unpack0", 1)[:4] == (99, 99, 7, 7)


def test_setadczw_sets_z_and_w():
    m = run("SETADCZW cntsetmask=4 ch1_y=1 ch1_x=2 ch0_y=3 ch0_x=4 bitmask=15")
    assert adc(m, "pack", 0)[4:] == (4, 4, 3, 3)
    assert adc(m, "pack", 1)[4:] == (2, 2, 1, 1)


def test_incadcxy_wraps_x_at_18_and_y_at_13_bits():
    m = Tensix()
    ch0, ch1 = m.s.adc[0]["pack"]
    ch0.x, ch0.y, ch1.x, ch1.y = (1 << 18) - 2, (1 << 13) - 1, 10, 20
    ch0.x_cr = ch0.y_cr = 77
    run("INCADCXY cntsetmask=4 ch1_y=2 ch1_x=1 ch0_y=1 ch0_x=3", m)
    assert (ch0.x, ch0.y, ch1.x, ch1.y) == (1, 0, 11, 22)
    assert ch0.x_cr == ch0.y_cr == 77


def test_incadczw_wraps_at_13_bits():
    m = Tensix()
    ch0 = m.s.adc[0]["unpack1"][0]
    ch0.z, ch0.w = 0x1FFF, 0x1FFE
    run("INCADCZW cntsetmask=2 ch0_y=3 ch0_x=1", m)
    assert (ch0.z, ch0.w) == (0, 1)


def test_addrcrxy_adds_to_checkpoint_and_copies():
    m = Tensix()
    ch0, ch1 = m.s.adc[0]["unpack0"]
    ch0.x, ch0.x_cr, ch0.y, ch0.y_cr = 50, 10, 60, 20
    ch1.x, ch1.x_cr, ch1.y, ch1.y_cr = 70, 30, 80, 40
    run("ADDRCRXY cntsetmask=1 ch1_y=4 ch1_x=3 ch0_y=2 ch0_x=1 bitmask=5", m)   # X0 and X1 only
    assert (ch0.x, ch0.x_cr, ch0.y, ch0.y_cr) == (11, 11, 60, 20)
    assert (ch1.x, ch1.x_cr, ch1.y, ch1.y_cr) == (33, 33, 80, 40)


def test_addrcrzw_wraps_checkpoint_at_13_bits():
    m = Tensix()
    ch1 = m.s.adc[0]["pack"][1]
    ch1.w, ch1.w_cr, ch1.z = 9, 0x1FFE, 4
    run("ADDRCRZW cntsetmask=4 ch1_y=7 ch1_x=1 bitmask=8", m)   # W1 only: (0x1FFE + 7) & 0x1FFF
    assert (ch1.w, ch1.w_cr, ch1.z, ch1.z_cr) == (5, 5, 4, 0)


def test_setadcxx_sets_both_channels_x():
    m = run("SETADCXX cntsetmask=3 x_end2=1023 x_start=15")
    for unit in ("unpack0", "unpack1"):
        assert adc(m, unit, 0)[:2] == (15, 15) and adc(m, unit, 1)[:2] == (1023, 1023)
    assert adc(m, "pack", 1) == (0,) * 8


def test_adc_instructions_use_the_issuing_thread():
    m = run("SETADCXY cntsetmask=7 ch0_x=3 bitmask=1", thread=2)
    assert adc(m, "pack", 0, t=2)[0] == 3 and adc(m, "pack", 0, t=0)[0] == 0


@pytest.mark.parametrize("text", ["SETADCXY cntsetmask=1 ch1_y=32 bitmask=1",      # bit 20
                                  "SETADCXY cntsetmask=1 bitmask=16",
                                  "SETADCXX cntsetmask=1 x_end2=1024"])
def test_adc_reserved_bits_are_undefined(text):
    with pytest.raises(UndefinedBehaviour):
        run(text)


def test_adc_thread_override_is_refused():
    with pytest.raises(NotModelled, match="ThreadOverride"):
        run("INCADCZW cntsetmask=1 ch1_y=8")

