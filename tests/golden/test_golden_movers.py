"""MOVD2A, MOVD2B, MOVA2D, MOVB2D, MOVB2A: row addressing, broadcasts, bank waits, Dst16b/Dst32b paths
and the format shuffles on edge values (hand-computed from the WormholeB0 pages). Blackhole-only facts
(implied formats, TF32 shuffle mask, SrcB truncation) are in test_blackhole_deltas_regfiles."""
from __future__ import annotations

import numpy as np
import pytest

from golden import fpu_formats as ff
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.isa import encode
from golden.matrix.movers import (remove_high_exponent, remove_low_mantissa, shuffle_bf16, shuffle_fp16,
                               shuffle_tf32)
from golden.state import MATRIX_UNIT

from regfile_util import T, dst_addr_mod, machine, put32, row, run1, set_cfg, set_tcfg

U = np.uint32


def config_formats(m, srca=ff.BF16, srcb=ff.BF16):
    """Use ALU_FORMAT_SPEC rather than implied formats."""
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCB_FMT_Base", 1)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcA", srca)
    set_cfg(m, "ALU_FORMAT_SPEC_REG1_SrcB", srcb)


def mov(name, **fields):
    base = {"MOVB2A": {}, "MOVB2D": {"dest_32b_lo": 0}}.get(name, {"dest_32b_lo": 0})
    return encode(name, {**base, **fields})


# --- the shuffles on edge values ---
@pytest.mark.parametrize("x,want", [(0xFFFF, 0x7F8FF), (0x8000, 0x40000), (0x00FF, 0x000FF), (0x7F80, 0x3F880),
                                    (0x0000, 0)])
def test_shuffle_bf16(x, want):
    assert int(shuffle_bf16(U(x))) == want


@pytest.mark.parametrize("x,want", [(0xFFFF, 0x7FF1F), (0x8000, 0x40000), (0x001F, 0x1F), (0x0020, 0x100)])
def test_shuffle_fp16(x, want):
    assert int(shuffle_fp16(U(x))) == want


def test_shuffle_tf32_of_a_dst32b_cell():
    # Dst32b 0xABCDEF01: sign 1, mantissa 22:16 = 0x2B, exponent 0xCD, mantissa 15:0 = 0xEF01
    assert int(shuffle_tf32(U(0xABCDEF01) >> 13)) == 0x40000 | ((0x2B << 3 | 7) << 8) | 0xCD == 0x55FCD


@pytest.mark.parametrize("x,want", [(0x7F8FF, 0xFFFF), (0x12345, 0x2445), (0x40000, 0x8000), (0x00700, 0)])
def test_remove_low_mantissa(x, want):
    assert int(remove_low_mantissa(U(x))) == want


@pytest.mark.parametrize("x,want", [(0x7FF1F, 0xFFFF), (0x123E5, 0x2465), (0x000E0, 0)])
def test_remove_high_exponent(x, want):
    assert int(remove_high_exponent(U(x))) == want


# --- MOVD2A / MOVD2B ---
def test_movd2a_four_rows_bf16_with_rwcs_offset_and_addr_mod():
    m = machine()
    config_formats(m)
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", 16)
    m.s.rwc[T].dst, m.s.rwc[T].srca = 4, 8
    for r in range(20, 26):
        m.s.dest.bits[r] = row([0xFFFF, 0x8000, r])
    dst_addr_mod(m, 3, 2)
    run1(m, "MOVD2A", src=1, addr_mode=3, instr_mod=2, dst=1)    # Dst 16+4+1=21 -> 20; SrcA 8+1=9 -> 8
    rows = m.s.srca.banks[0].rows
    for i in range(4):
        assert (rows[8 + i] == row([0x7F8FF, 0x40000, 20 + i])).all()
    assert (rows[12] == 0).all() and (rows[7] == 0).all()
    assert m.s.rwc[T].dst == 6


def test_movd2a_one_row_fp16_style():
    m = machine()
    config_formats(m, srca=ff.FP8)          # FP8 moves as FP16
    m.s.dest.bits[7] = row([0xFFFF, 0x0020])
    run1(m, "MOVD2A", src=3, addr_mode=0, instr_mod=0, dst=7)
    assert (m.s.srca.banks[0].rows[3] == row([0x7FF1F, 0x100])).all()
    assert (m.s.srca.banks[0].rows[2] == 0).all() and (m.s.srca.banks[0].rows[4] == 0).all()


def test_movd2a_writes_the_matrix_bank_without_waiting():
    m = machine()
    config_formats(m)
    m.s.srca.matrix_bank = 1
    m.s.dest.bits[0] = 0x00FF
    run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[1].rows[0] == 0xFF).all() and (m.s.srca.banks[0].rows[0] == 0).all()


def test_movd2a_reads_invalid_rows_as_zero():
    m = machine()
    config_formats(m)
    m.s.dest.bits[0] = 0x1234
    m.s.dest.valid[0] = False
    m.s.srca.banks[0].rows[0] = 5
    run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[0].rows[0] == 0).all()


def test_movd2a_dst32b_bf16_and_use_dst32b_lo():
    m = machine()
    config_formats(m)
    set_cfg(m, "ALU_ACC_CTRL_Fp32_enabled", 1)
    put32(m, 16, 0x12345678)                 # Dst32b row 8 -> DstBits 16 / 24
    run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=0, dst=8)
    assert (m.s.srca.banks[0].rows[0] == 0x9034).all()          # ShuffleBF16(0x1234)
    run1(m, "MOVD2A", dest_32b_lo=1, src=1, addr_mode=0, instr_mod=0, dst=8)
    assert (m.s.srca.banks[0].rows[1] == 0x2B078).all()         # ShuffleBF16(0x5678)


def test_movd2a_dst32b_tf32_lo_gives_the_discarded_13_bits():
    m = machine()
    config_formats(m, srca=ff.TF32)
    set_cfg(m, "ALU_ACC_CTRL_Fp32_enabled", 1)
    put32(m, 0, 0xABCDEF01)
    run1(m, "MOVD2A", dest_32b_lo=1, src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[0].rows[0] == 0x0F01).all()      # (lo << 16 | lo) & 0x1fff


def test_movd2a_dst32b_fp16_style_uses_the_high_half():
    m = machine()
    config_formats(m, srca=ff.FP16)
    set_cfg(m, "ALU_ACC_CTRL_INT8_math_enabled", 1)
    put32(m, 0, 0xFFFF0000)
    run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[0].rows[0] == 0x7FF1F).all()


@pytest.mark.parametrize("name", ["MOVD2A", "MOVD2B"])
@pytest.mark.parametrize("lo,fmt", [(1, ff.BF16), (0, ff.TF32)])
def test_dst16b_has_no_32bit_data(name, lo, fmt):
    m = machine()
    config_formats(m, srca=fmt)
    with pytest.raises(UndefinedBehaviour):
        m.run({T: [mov(name, dest_32b_lo=lo, src=0, addr_mode=0, instr_mod=0, dst=0)]})


def test_movd2b_uses_srcb_bank_and_srcb_rwc_but_srca_format():
    m = machine()
    config_formats(m, srca=ff.FP16, srcb=ff.BF16)
    m.s.rwc[T].srcb = 4
    m.s.dest.bits[0:4] = 0x0020
    run1(m, "MOVD2B", src=0, addr_mode=0, instr_mod=2, dst=0)
    assert (m.s.srcb.banks[0].rows[4:8] == 0x100).all()          # FP16 shuffle
    assert (m.s.srca.banks[0].rows == 0).all()


@pytest.mark.parametrize("name,bad", [("MOVD2A", dict(instr_mod=1)), ("MOVD2A", dict(dst=0x400)),
                                      ("MOVA2D", dict(instr_mod=3)), ("MOVB2D", dict(dst=0x400))])
def test_mov_encodings_outside_the_pages_are_not_modelled(name, bad):
    m = machine(implied=ff.BF16, give=True)
    fields = {"src": 0, "addr_mode": 0, "dst": 0, **({"movb2d_instr_mod": 0} if name == "MOVB2D" else {"instr_mod": 0})}
    with pytest.raises(NotModelled):
        m.run({T: [mov(name, **{**fields, **bad})]})


def test_blocked_dest_mov_lanes_not_modelled():
    m = machine(implied=ff.BF16)
    m.s.sfpu.lane_config = 1 << 9
    with pytest.raises(NotModelled):
        run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=0, dst=0)


# --- MOVA2D ---
def test_mova2d_waits_for_srca_then_moves_eight_rows():
    m = machine(implied=ff.BF16)
    m.s.srca.banks[0].rows[8:16] = row([0x7F8FF, 0x12345])
    with pytest.raises(Hang):
        run1(m, "MOVA2D", src=8, addr_mode=0, instr_mod=2, dst=21)
    assert (m.s.dest.bits == 0).all()
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    m.s.dest.valid[16:24] = False
    run1(m, "MOVA2D", src=9, addr_mode=0, instr_mod=2, dst=21)      # rows align down: SrcA 8.., Dst 16..
    assert (m.s.dest.bits[16:24] == row([0xFFFF, 0x2445])).all()
    assert m.s.dest.valid[16:24].all()
    assert (m.s.dest.bits[24] == 0).all() and (m.s.dest.bits[15] == 0).all()


def test_mova2d_proceeds_when_another_thread_gives_the_bank():
    m = machine()
    config_formats(m)                      # SETDVALID leaves the implied format unknown
    m.s.srca.banks[0].rows[0] = 0x12345
    m.run({T: [mov("MOVA2D", src=0, addr_mode=0, instr_mod=0, dst=0)], 2: [encode("SETDVALID", {"setvalid": 1})]})
    assert (m.s.dest.bits[0] == 0x2445).all()


def test_mova2d_flushes_zero_exponent_unless_disabled():
    m = machine(implied=ff.BF16, give=True)
    m.s.srca.banks[0].rows[0] = row([0x40000, 0x7FF00, 0x00001])   # exponents 0, 0, 1
    run1(m, "MOVA2D", src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.dest.bits[0] == row([0, 0, 0x0001])).all()
    set_cfg(m, "ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)
    run1(m, "MOVA2D", src=0, addr_mode=0, instr_mod=0, dst=1)
    assert (m.s.dest.bits[1] == row([0x8000, 0xFF00, 0x0001])).all()


def test_mova2d_fp16_style_drops_high_exponent_bits():
    m = machine(implied=ff.FP16, give=True)
    m.s.srca.banks[0].rows[0] = row([0x7FF1F, 0x123E5])
    run1(m, "MOVA2D", src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.dest.bits[0] == row([0xFFFF, 0x2465])).all()


def test_mova2d_tf32_writes_dst32b_with_low_mantissa():
    m = machine(implied=ff.TF32, give=True)
    m.s.srca.banks[0].rows[0] = 0x55FCD
    m.s.dest.valid[:] = False
    run1(m, "MOVA2D", src=0, addr_mode=0, instr_mod=0, dst=9)      # Dst32b row 9 -> DstBits 17 / 25
    assert (m.s.dest.bits[17] == 0xABCD).all() and (m.s.dest.bits[25] == 0xE000).all()
    assert m.s.dest.valid[17] and not m.s.dest.valid[25]


def test_mova2d_use_dst32b_lo_keeps_high_half_of_valid_rows_only():
    m = machine(implied=ff.BF16, give=True)
    m.s.srca.banks[0].rows[0] = 0x12345
    put32(m, 0, 0xAAAA5555)
    put32(m, 1, 0xBBBB5555)
    m.s.dest.valid[1] = False                     # Dst32b row 1 reads as 0 (identity)
    run1(m, "MOVA2D", dest_32b_lo=1, src=0, addr_mode=0, instr_mod=0, dst=0)
    run1(m, "MOVA2D", dest_32b_lo=1, src=0, addr_mode=0, instr_mod=0, dst=1)
    assert (m.s.dest.bits[0] == 0xAAAA).all() and (m.s.dest.bits[8] == 0x2445).all()
    assert (m.s.dest.bits[1] == 0).all() and (m.s.dest.bits[9] == 0x2445).all() and m.s.dest.valid[1]


# --- MOVB2D ---
def srcb_rows(m):
    cells = np.array([[(r << 8 | c) << 3 | 0x40000 | 0x1 for c in range(16)] for r in range(64)], dtype=np.uint32)
    m.s.srcb.banks[0].rows[:] = cells                       # exponent 1, mantissa encodes row/col
    return [[int(remove_low_mantissa(U(x))) for x in r] for r in cells]


@pytest.mark.parametrize("mod,rows_written,source", [
    (0, [5], lambda d, i: d[5]),
    (1, [5], lambda d, i: [d[5][0]] * 16),
    (2, list(range(0, 8)), lambda d, i: d[5]),
    (3, list(range(0, 8)), lambda d, i: [d[5][0]] * 16),
    (4, list(range(4, 8)), lambda d, i: d[4 + i]),
    (5, list(range(4, 8)), lambda d, i: [d[4 + i][0]] * 16),
    (6, list(range(0, 8)), lambda d, i: d[5]),                 # Broadcast1RowTo8 wins over Move4Rows
])
def test_movb2d_row_and_column_broadcasts(mod, rows_written, source):
    m = machine(implied=ff.BF16, give=True)
    expect = srcb_rows(m)
    run1(m, "MOVB2D", dest_32b_lo=0, src=5, addr_mode=0, movb2d_instr_mod=mod, dst=5)
    for i, r in enumerate(rows_written):
        assert m.s.dest.bits[r].tolist() == list(source(expect, i))
    untouched = [r for r in range(12) if r not in rows_written]
    assert all((m.s.dest.bits[r] == 0).all() for r in untouched)


def test_movb2d_waits_for_srcb():
    m = machine(implied=ff.BF16)
    with pytest.raises(Hang):
        run1(m, "MOVB2D", dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=0)


# --- MOVB2A ---
def test_movb2a_four_rows_with_rwcs_flush_and_addr_mod():
    m = machine(give=True)
    m.s.srca.banks[0].allowed_client = "unpackers"       # SrcA ownership is not waited for
    m.s.rwc[T].srca, m.s.rwc[T].srcb = 16, 32
    m.s.srcb.banks[0].rows[32:36] = row([0x12745, 0x40000])
    dst_addr_mod(m, 1, 8)
    run1(m, "MOVB2A", srca=1, addr_mode=1, instr_mod=2, srcb=2)        # rows align down to 16 and 32
    assert (m.s.srca.banks[0].rows[16:20] == row([0x12745, 0])).all()
    assert m.s.rwc[T].dst == 8


def test_movb2a_one_row_waits_for_srcb():
    m = machine()
    m.s.srcb.banks[0].rows[3] = 0x101
    with pytest.raises(Hang):
        run1(m, "MOVB2A", srca=0, addr_mode=0, instr_mod=0, srcb=3)
    m.s.srcb.banks[0].allowed_client = MATRIX_UNIT
    run1(m, "MOVB2A", srca=7, addr_mode=0, instr_mod=0, srcb=3)
    assert (m.s.srca.banks[0].rows[7] == 0x101).all() and (m.s.srca.banks[0].rows[4] == 0).all()


def test_mova2d_block_follows_remap_addrs():
    m = machine(implied=ff.BF16, give=True)
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1)
    m.s.srca.banks[0].rows[0:8] = 0x12345
    run1(m, "MOVA2D", src=0, addr_mode=0, instr_mod=2, dst=8)         # Dst16b 8..15 -> DstBits 32..39
    assert (m.s.dest.bits[32:40] == 0x2445).all() and (m.s.dest.bits[8:16] == 0).all()


def test_movd2a_dst32b_block_follows_swizzle():
    m = machine(implied=ff.BF16)
    set_cfg(m, "ALU_ACC_CTRL_Fp32_enabled", 1)
    set_cfg(m, "DEST_ACCESS_CFG_swizzle_32b", 1)
    put32(m, 4, 0x3F800000)                  # where Dst32b row 4 would be without swizzle
    put32(m, 16, 0x40400000)
    put32(m, 17, 0x40800000)
    run1(m, "MOVD2A", src=0, addr_mode=0, instr_mod=2, dst=4)   # Dst32b 4..7 -> DstBits 16, 17, 18, 19
    assert m.s.srca.banks[0].rows[0:2, 0].tolist() == [int(shuffle_bf16(U(0x4040))), int(shuffle_bf16(U(0x4080)))]
