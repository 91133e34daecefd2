"""Scalar Unit (ThCon) GPR instructions against the functional models of the ISA pages."""
import pytest

from golden.config_words import THCON_BASE
from golden.core import Tensix
from golden.errors import NotModelled, UndefinedBehaviour
from golden.isa import encode

from machine_util import adc, run

M32 = 0xFFFFFFFF


def machine(**gprs) -> Tensix:
    m = Tensix()
    for k, v in gprs.items():
        m.s.gpr[0][int(k[1:])] = v
    return m


def gpr(m, i, t=0):
    return m.s.gpr[t][i]


# ---- SETDMAREG ------------------------------------------------------------------------------------

def test_setdmareg_writes_one_half_keeping_the_other():
    m = machine(r5=0x11112222)
    # NewValue = Payload_SigSelSize << 14 | Payload_SigSel: 0xBEEF = 2 << 14 | 0x3EEF
    run("SETDMAREG payload_sigselsize=2 payload_sigsel=0x3EEF regindex16b=11", m)
    assert gpr(m, 5) == 0xBEEF2222
    run("SETDMAREG payload_sigsel=0x1234 regindex16b=10", m)
    assert gpr(m, 5) == 0xBEEF1234


def test_setdmareg_pair_sets_all_32_bits_of_top_gpr():
    m = run("SETDMAREG payload_sigselsize=3 payload_sigsel=0x3FFF regindex16b=127;"
            "SETDMAREG payload_sigsel=1 regindex16b=126")
    assert gpr(m, 63) == 0xFFFF0001


def signals(size, source, in_half=0, out_half=0):
    return encode("SETDMAREG", {"payload_sigselsize": size, "payload_sigsel": source << 3 | in_half,
                                "setsignalsmode": 1, "regindex16b": out_half})


def test_setdmareg_signals_zero_source_clears_four_aligned_gprs():
    m = machine(r4=1, r5=2, r6=3, r7=4, r8=5)
    m.run({0: [signals(2, 12, out_half=2 * 6 + 1)]})      # ResultHalfReg 13 -> GPR 6 -> group 4..7
    assert [gpr(m, i) for i in range(4, 9)] == [0, 0, 0, 0, 5]


def test_setdmareg_signals_tile_header_form_keeps_reserved_bits():
    m = machine(r8=M32, r9=M32, r10=M32, r11=M32)
    m.run({0: [signals(3, 15, out_half=16)]})
    assert [gpr(m, i) for i in range(8, 12)] == [0xFFFF0000, 0xFF00FFFF, 0, M32]


def test_setdmareg_signals_16_and_32_bit_forms():
    m = machine(r3=0xAAAABBBB, r9=7)
    m.run({0: [signals(0, 10, in_half=3, out_half=7), signals(1, 10, out_half=18)]})
    assert gpr(m, 3) == 0x0000BBBB and gpr(m, 9) == 0


def test_setdmareg_signals_packer_sources_not_modelled():
    with pytest.raises(NotModelled, match="InputSource=2"):
        Tensix().run({0: [signals(3, 2)]})


def test_setdmareg_signals_reserved_bits_undefined():
    word = encode("SETDMAREG", {"payload_sigsel": 1 << 11 | 10 << 3, "setsignalsmode": 1})
    with pytest.raises(UndefinedBehaviour):
        Tensix().run({0: [word]})


# ---- arithmetic -----------------------------------------------------------------------------------

def test_adddmareg_register_and_immediate_wrap_mod_2_32():
    m = machine(r1=0xFFFFFFF0, r2=0x20)
    run("ADDDMAREG resultregindex=3 opbregindex=2 oparegindex=1;"
        "ADDDMAREG opbisconst=1 resultregindex=4 opbregindex=63 oparegindex=1", m)
    assert gpr(m, 3) == 0x10 and gpr(m, 4) == 0x2F


def test_subdmareg_wraps_below_zero():
    m = machine(r1=5, r2=7)
    run("SUBDMAREG resultregindex=3 opbregindex=2 oparegindex=1;"
        "SUBDMAREG opbisconst=1 resultregindex=4 opbregindex=5 oparegindex=1", m)
    assert gpr(m, 3) == 0xFFFFFFFE and gpr(m, 4) == 0


def test_muldmareg_uses_low_16_bits_full_product():
    m = machine(r1=0x1234FFFF, r2=0xABCDFFFF)
    run("MULDMAREG resultregindex=3 opbregindex=2 oparegindex=1;"
        "MULDMAREG opbisconst=1 resultregindex=4 opbregindex=63 oparegindex=1", m)
    assert gpr(m, 3) == 0xFFFE0001 and gpr(m, 4) == 0xFFFF * 63


def test_arith_result_reserved_bits_undefined():
    with pytest.raises(UndefinedBehaviour, match="22:18"):
        run("ADDDMAREG resultregindex=64")


def test_shiftdmareg_left_right_register_amount_masked_to_5_bits():
    m = machine(r1=0x80000001, r2=0x21)          # 0x21 & 0x1F = 1
    run("SHIFTDMAREG opsel=0 resultregindex=3 opbregindex=2 oparegindex=1;"
        "SHIFTDMAREG opsel=1 resultregindex=4 opbregindex=2 oparegindex=1;"
        "SHIFTDMAREG opbisconst=1 opsel=1 resultregindex=5 opbregindex=31 oparegindex=1", m)
    assert (gpr(m, 3), gpr(m, 4), gpr(m, 5)) == (2, 0x40000000, 1)


def test_shiftdmareg_undefined_mode():
    with pytest.raises(UndefinedBehaviour, match="mode 2"):
        run("SHIFTDMAREG opsel=2")


def test_bitwopdmareg_and_or_xor():
    m = machine(r1=0xF0F0F0F0, r2=0xFF00FF00)
    run("BITWOPDMAREG opsel=0 resultregindex=3 opbregindex=2 oparegindex=1;"
        "BITWOPDMAREG opsel=1 resultregindex=4 opbregindex=2 oparegindex=1;"
        "BITWOPDMAREG opsel=2 resultregindex=5 opbregindex=2 oparegindex=1;"
        "BITWOPDMAREG opbisconst=1 opsel=2 resultregindex=6 opbregindex=63 oparegindex=1", m)
    assert [gpr(m, i) for i in (3, 4, 5, 6)] == [0xF000F000, 0xFFF0FFF0, 0x0FF00FF0, 0xF0F0F0CF]


@pytest.mark.parametrize("mode", [3, 7])
def test_bitwopdmareg_undefined_modes(mode):
    with pytest.raises(UndefinedBehaviour):
        run(f"BITWOPDMAREG opsel={mode}")


def test_cmpdmareg_unsigned_gt_lt_eq():
    m = machine(r1=M32, r2=1)
    run("CMPDMAREG opsel=0 resultregindex=3 opbregindex=2 oparegindex=1;"   # 0xFFFFFFFF > 1 unsigned
        "CMPDMAREG opsel=1 resultregindex=4 opbregindex=2 oparegindex=1;"
        "CMPDMAREG opsel=2 resultregindex=5 opbregindex=1 oparegindex=1;"
        "CMPDMAREG opbisconst=1 opsel=2 resultregindex=6 opbregindex=1 oparegindex=2", m)
    assert [gpr(m, i) for i in (3, 4, 5, 6)] == [1, 0, 1, 1]


def test_cmpdmareg_undefined_mode():
    with pytest.raises(UndefinedBehaviour):
        run("CMPDMAREG opsel=3")


def test_flushdma_is_satisfied_and_reserved_bits_undefined():
    m = run("FLUSHDMA flushspec=0; FLUSHDMA flushspec=15")
    assert m.executed == 2
    with pytest.raises(UndefinedBehaviour):
        run("FLUSHDMA flushspec=16")


# ---- REG2FLOP -------------------------------------------------------------------------------------

def reg2flop_adc(size, shift8, xyzw, cr, adcsel, channel, reg, override=0, thread=0):
    flop = channel << 5 | adcsel << 3 | cr << 2 | xyzw
    return encode("REG2FLOP", {"sizesel": size, "targetsel": 2 | override, "byteoffset": shift8,
                               "contextid_2": thread, "flopindex": flop, "regindex": reg})


def test_reg2flop_adc_16_bit_high_half_into_checkpoint():
    m = machine(r7=0xABCD1234)
    m.run({0: [reg2flop_adc(2, 2, 1, 1, 2, 1, 7)]})        # packers ch1 Y_Cr = 0xABCD & 13 bits
    assert adc(m, "pack", 1) == (0, 0, 0, 0xABCD & 0x1FFF, 0, 0, 0, 0)


def test_reg2flop_adc_8_bit_with_thread_override():
    m = machine(r1=0x11223344)
    m.run({0: [reg2flop_adc(3, 2, 0, 0, 1, 0, 1, override=1, thread=2),
               reg2flop_adc(1, 1, 0, 0, 1, 0, 1, override=1, thread=1)]})   # 32-bit with Shift8 != 0 -> 0
    assert adc(m, "unpack1", 0, t=2)[0] == 0x22 and adc(m, "unpack1", 0, t=0)[0] == 0


def test_reg2flop_adc_invalid_thread_writes_nothing():
    m = machine(r1=5)
    m.run({0: [reg2flop_adc(1, 0, 0, 0, 0, 0, 1, override=1, thread=3)]})
    assert all(adc(m, "unpack0", c, t=t) == (0,) * 8 for c in (0, 1) for t in range(3))


def test_reg2flop_configuration_32_and_128_bit():
    m = machine(r4=0x11, r5=0x22, r6=0x33, r7=0x44, r9=0x1234)
    # THCON word 69 (THCON_SEC0_REG1_L1_Dest_addr) is index 5 from THCON_BASE
    m.run({0: [encode("REG2FLOP", {"sizesel": 1, "flopindex": 69 - THCON_BASE, "regindex": 9})]})
    assert m.s.config[0][69] == 0x1234
    # 128-bit: both indices align down to 4 -> words 68..71 from GPRs 4..7
    m.run({0: [encode("REG2FLOP", {"sizesel": 0, "flopindex": 71 - THCON_BASE, "regindex": 6})]})
    assert m.s.config[0][68:72] == [0x11, 0x22, 0x33, 0x44]


def test_reg2flop_configuration_outside_thcon_undefined():
    with pytest.raises(UndefinedBehaviour, match="THCON"):
        Tensix().run({0: [encode("REG2FLOP", {"sizesel": 1, "flopindex": 116})]})


def test_dmanop_changes_nothing():
    from golden import isa
    from golden.core import Tensix
    m = Tensix()
    m.s.gpr[0][3] = 0x1234
    before = [list(g) for g in m.s.gpr]
    m.run({0: [isa.encode("DMANOP")]})
    assert m.s.gpr == before and m.executed == 1
