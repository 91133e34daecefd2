"""SFPLOADI / SFPLOAD / SFPSTORE in golden: raw-bit expectations derived by hand from the Dst layouts
(BF16 in Dst is Sign,Man7,Exp8; FP16 is Sign,Man10,Exp5; FP32 is BF16-shuffled high half + low half
8 DstBits rows below) and the lane map (lane L -> row base + L//8, column 2*(L%8) + odd)."""
from __future__ import annotations

import pytest

from golden.errors import NotModelled, UndefinedBehaviour
from test_golden_sfpu_support import (load, loadi32, lreg, machine, run, set_cfg, set_lreg, set_tcfg, store)

EVEN = list(range(0, 16, 2))
ODD = list(range(1, 16, 2))


def dest(m, row, cols):
    return [int(m.s.dest.bits[row, c]) for c in cols]


def test_loadi_bf16_then_store_fp32_fills_four_rows_of_even_columns():
    m = run(machine(), ("SFPLOADI", dict(lreg_ind=0, instr_mod0=0, imm16=0x3F80)), store(0, 3))
    assert lreg(m, 0) == [0x3F800000] * 32
    for r in range(4):
        assert dest(m, r, EVEN) == [0x007F] * 8        # 1.0: exponent 0x7F in the low byte
        assert dest(m, r + 8, EVEN) == [0] * 8         # low mantissa half
        assert dest(m, r, ODD) == [0] * 8
    assert not m.s.dest.bits[4:8].any() and not m.s.dest.bits[12:].any()


@pytest.mark.parametrize("mod0, imm, want", [
    (0, 0xBF80, 0xBF800000),        # BF16
    (1, 0x3C00, 0x3F800000),        # FP16 1.0
    (1, 0x0000, 0x38000000),        # FP16 zero: exponent rebiased anyway -> 2**-15
    (1, 0xFC00, 0xC7800000),        # FP16 -inf pattern: just exponent 31+112, no infinity
    (2, 0x8001, 0x00008001),        # unsigned
    (4, 0x8001, 0xFFFF8001),        # signed
])
def test_loadi_conversions(mod0, imm, want):
    m = run(machine(), ("SFPLOADI", dict(lreg_ind=3, instr_mod0=mod0, imm16=imm)))
    assert lreg(m, 3) == [want] * 32


def test_loadi_upper_and_lower_halves_compose_a_32_bit_constant():
    m = run(machine(), *loadi32(2, 0x12345678))
    assert lreg(m, 2) == [0x12345678] * 32


def test_loadi_undefined_mode_is_undefined_behaviour():
    with pytest.raises(UndefinedBehaviour):
        run(machine(), ("SFPLOADI", dict(lreg_ind=0, instr_mod0=3, imm16=0)))


@pytest.mark.parametrize("value, hi, lo", [
    (0x807FFFFF, 0x8000, 0x0000),   # negative denormal flushed to -0
    (0x00000001, 0x0000, 0x0000),   # positive denormal flushed to +0
    (0x7F800000, 0x00FF, 0x0000),   # +inf
    (0xFF7FFFFF, 0xFFFE, 0xFFFF),   # largest negative normal: man hi 0x7F, exp 0xFE
    (0x00800000, 0x0001, 0x0000),   # smallest normal
])
def test_store_fp32_flushes_denormals_and_shuffles_the_high_half(value, hi, lo):
    m = run(machine(), *loadi32(1, value), store(1, 3))
    assert dest(m, 0, [0]) == [hi] and dest(m, 8, [0]) == [lo]


def test_store_int32_keeps_denormal_bits_and_mode_12_does_not_convert_on_blackhole():
    m = run(machine(), *loadi32(1, 0x00000001), store(1, 4, addr=0), *loadi32(2, 0xFFFFFFFF), store(2, 12, addr=4))
    assert dest(m, 0, [0]) == [0] and dest(m, 8, [0]) == [1]
    # Dst32b row 4 lives in DstBits rows 4 (high) and 12 (low); 0xFFFF shuffled is still 0xFFFF
    assert dest(m, 4, [0]) == [0xFFFF] and dest(m, 12, [0]) == [0xFFFF]
    m = run(m, load(5, 12, addr=4))
    assert lreg(m, 5)[0] == 0xFFFFFFFF


@pytest.mark.parametrize("value, cell", [
    (0x3F80FFFF, 0x007F),           # truncation toward zero
    (0x7FC00000, 0x40FF),           # quiet NaN: man 0x40, exp 0xFF
    (0x80000001, 0x8000),           # denormal -> -0
])
def test_store_bf16(value, cell):
    m = run(machine(), *loadi32(0, value), store(0, 2))
    assert dest(m, 0, [0]) == [cell]


@pytest.mark.parametrize("value, cell", [
    (0x3F800000, 0x000F),           # 1.0 -> FP16 0x3C00 -> Man<<5 | Exp
    (0x38800000, 0x0001),           # 2**-14, smallest FP16 normal
    (0x38000000, 0x0000),           # 2**-15 underflows to +0
    (0xB8000000, 0x8000),           # ... and to -0
    (0x7F800000, 0x7FFF),           # +inf saturates to the largest pattern
    (0xC77FE000, 0xFFFE),           # -65504 is FP16 max: exp 30, man 0x3FF
    (0x477FF000, 0x7FFE),           # mantissa bits below FP16 precision are truncated
])
def test_store_fp16a_via_default_mode(value, cell):
    m = machine()
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", 1)       # FP16 SrcB: the default mode means FP16A
    run(m, *loadi32(0, value), store(0, 0))
    assert dest(m, 0, [0]) == [cell]


@pytest.mark.parametrize("cell, want", [
    (0x000F, 0x3F800000),
    (0x0000, 0x00000000),           # zero exponent is not rebiased on load
    (0x7FFF, 0x47FFE000),           # the largest pattern is a finite number, not inf
    (0x8001, 0xB8800000),
])
def test_load_fp16a(cell, want):
    m = machine()
    m.s.dest.bits[0, 0] = cell
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", 1)
    run(m, load(4, 0))
    assert lreg(m, 4)[0] == want


def test_default_mode_follows_sfpu_fp32_enable_then_srcb_format():
    m = machine()
    m.s.dest.bits[0, 0], m.s.dest.bits[8, 0] = 0x007F, 0x1234
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", 1)
    set_cfg(m, "ALU_ACC_CTRL_SFPU_Fp32_enabled", 1)
    run(m, load(0, 0))
    assert lreg(m, 0)[0] == 0x3F801234
    set_cfg(m, "ALU_ACC_CTRL_SFPU_Fp32_enabled", 0)
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", 5)
    run(m, load(1, 0))
    assert lreg(m, 1)[0] == 0x3F800000


def test_lane_map_odd_columns_and_address_composition():
    m = machine()
    set_tcfg(m, "DEST_TARGET_REG_CFG_MATH_Offset", 8)
    m.s.rwc[1].dst = 4
    set_lreg(m, 3, range(100, 132))
    run(m, store(3, 6, addr=6))        # 6 + 8 + 4 = 18: rows 16..19, odd columns
    for lane in range(32):
        assert int(m.s.dest.bits[16 + lane // 8, 2 * (lane % 8) + 1]) == 100 + lane
    assert not m.s.dest.bits[16:20, EVEN].any()


def test_lo16_only_and_hi16_only_merge_with_the_old_lreg():
    m = machine()
    m.s.dest.bits[0, 0] = 0xBEEF
    set_lreg(m, 0, [0x12345678] * 32)
    set_lreg(m, 1, [0x12345678] * 32)
    run(m, load(0, 14), load(1, 15))
    assert lreg(m, 0)[0] == 0x1234BEEF and lreg(m, 1)[0] == 0xBEEF5678


def test_store_hi16_and_lo16_rotated_write_32_bit_cells():
    m = run(machine(), *loadi32(0, 0xAABBCCDD), store(0, 7, addr=0), store(0, 9, addr=4))
    assert dest(m, 0, [0]) == [0xAABB] and dest(m, 8, [0]) == [0xCCDD]
    assert dest(m, 4, [0]) == [0xCCDD] and dest(m, 12, [0]) == [0xAABB]


def test_store_respects_lane_flags():
    m = run(machine(), *loadi32(0, 0x3F800000))
    m.s.sfpu.cc = 0x0000FFFF
    run(m, store(0, 4))
    assert dest(m, 0, EVEN) == [0x7F] * 8 and dest(m, 1, EVEN) == [0x7F] * 8
    assert not m.s.dest.bits[2:4].any()


def test_int32_all_ignores_lane_flags_and_uses_only_the_low_rwc_bits():
    m = run(machine(), *loadi32(0, 0x3F800000))
    m.s.sfpu.cc = 0
    m.s.rwc[1].dst = 16 + 2
    run(m, store(0, 10, addr=4))       # 4 + (18 & 3) = 6: rows 4..7, odd columns, all lanes
    assert dest(m, 4, ODD) == [0x7F] * 8 and dest(m, 7, ODD) == [0x7F] * 8
    assert not m.s.dest.bits[16:24].any()


def test_addr_mod_advances_dst_but_not_fidelity():
    m = machine()
    set_tcfg(m, "ADDR_MOD_DST_SEC5_DestIncr", 4)
    set_tcfg(m, "ADDR_MOD_DST_SEC5_FidelityIncr", 1)
    run(m, load(0, 6, am=5), store(0, 6, am=5))
    assert m.s.rwc[1].dst == 8 and m.s.rwc[1].fidelity == 0


def test_sfpu_read_of_invalid_row_is_undefined_and_store_revalidates():
    m = machine()
    m.s.dest.valid[2] = False
    with pytest.raises(UndefinedBehaviour):
        run(m, load(0, 6))
    m = machine()
    m.s.dest.valid[0:4] = False
    run(m, store(9, 6))
    assert m.s.dest.valid[0:4].all()


def test_store_to_dst32b_marks_only_the_high_row_valid():
    m = machine()
    m.s.dest.valid[:] = False
    run(m, store(10, 4))
    assert m.s.dest.valid[0:4].all() and not m.s.dest.valid[8:12].any()


@pytest.mark.parametrize("mutate", [
    lambda m: setattr(m.s.sfpu, "sp", 1),
    lambda m: set_cfg(m, "ALU_FORMAT_SPEC_REG_SrcB_override", 1),
])
def test_unmodelled_address_and_format_controls_refuse(mutate):
    m = machine()
    mutate(m)
    with pytest.raises(NotModelled):
        run(m, load(0, 0))


def test_remap_addrs_moves_sfpu_rows_through_adj16():
    m = machine()
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1)
    set_lreg(m, 3, [2 * lane for lane in range(32)])
    run(m, store(3, 6, addr=8))       # Dst16b rows 8..11 are DstBits rows 32..35 under Adj16
    assert int(m.s.dest.bits[32, 2]) == 2 and int(m.s.dest.bits[35, 14]) == 62
    assert not m.s.dest.bits[8:12].any()


def test_int8_comp_is_not_modelled():
    with pytest.raises(NotModelled):
        run(machine(), store(0, 13))
