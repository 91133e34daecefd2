"""Dst views (Adj16/Adj32, Dst32b halves, validity) and ZEROACC in every mode (hand-computed from
Dst.md / ZEROACC.md; Blackhole field widths and half-relative mode are in test_blackhole_deltas_regfiles)."""
from __future__ import annotations

import numpy as np
import pytest

from golden.dest_view import DstView, adj16, adj32, uses_dst32b
from golden.errors import NotModelled, UndefinedBehaviour

from regfile_util import T, dst_addr_mod, machine, run1, set_cfg, set_tcfg


# --- Adj16 / Adj32 ---
def test_adj16_identity_without_remap():
    assert [adj16(r, False) for r in (0, 8, 0x10, 0x20, 0x3FF)] == [0, 8, 0x10, 0x20, 0x3FF]


def test_adj16_remap_rotates_bits_5_to_3():
    # bit 3 -> bit 5, bit 4 -> bit 3, bit 5 -> bit 4; bits 9:6 and 2:0 stay
    assert adj16(0x008, True) == 0x020
    assert adj16(0x010, True) == 0x008
    assert adj16(0x020, True) == 0x010
    assert adj16(0x3C7, True) == 0x3C7
    assert sorted(adj16(r, True) for r in range(1024)) == list(range(1024))


def test_adj32_interleaves_eight_row_groups():
    # Dst32b rows 0..7 -> DstBits 0..7 (low halves 8..15); rows 8..15 -> 16..23; bit 9 passes through
    assert [adj32(r, False, False) for r in (0, 7, 8, 15, 0x1FF, 0x200)] == [0, 7, 16, 23, 0x3F7, 0x200]


def test_adj32_swizzle():
    # swizzle_32b before the interleave: new bit 2 = bit 3, new bit 3 = bit 2 ^ bit 4, bit 4 kept
    assert adj32(4, False, True) == 16      # -> 8 -> 16
    assert adj32(8, False, True) == 4       # -> 4 -> 4
    assert adj32(0x10, False, True) == 0x30  # -> 0x18 -> 0x30
    assert sorted(adj32(r, False, True) for r in range(512)) == sorted(adj32(r, False, False) for r in range(512))


def test_view_follows_the_threads_config_state():
    m = machine()
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1, state=1)
    assert DstView(m, T).row16(8) == 8
    set_tcfg(m, T, "CFG_STATE_ID_StateID", 1)
    assert DstView(m, T).row16(8) == 0x20


# --- Dst32b cells and validity ---
def test_write32_splits_halves_and_marks_only_the_high_row_valid():
    m = machine()
    m.s.dest.valid[:] = False
    v = DstView(m, T)
    v.write32(9, np.full(16, 0x12345678, dtype=np.uint32))     # Dst32b row 9 -> DstBits 17 and 25
    assert (m.s.dest.bits[17] == 0x1234).all() and (m.s.dest.bits[25] == 0x5678).all()
    assert m.s.dest.valid[17] and not m.s.dest.valid[25]
    assert (v.read32(9) == 0x12345678).all()


def test_matrix_unit_reads_invalid_rows_as_identity():
    m = machine()
    m.s.dest.bits[3] = 0xBEEF
    m.s.dest.valid[3] = False
    v = DstView(m, T)
    assert (v.read16(3) == 0xBEEF).all()              # raw storage is untouched
    assert (v.read16_or(3) == 0).all()
    assert (v.read16_or(3, identity=0xFFFF) == 0xFFFF).all()
    m.s.dest.bits[1] = 0x1234
    m.s.dest.valid[1] = False                          # Dst32b row 1: DstBits 1 (high) and 9 (low)
    cells = v.read32_or(1, 2)
    assert cells.shape == (2, 16) and (cells[0] == 0).all() and (cells[1] == 0).all()
    m.s.dest.valid[1] = True
    assert (v.read32_or(1) == 0x12340000).all()


@pytest.mark.parametrize("field", ["ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_INT8_math_enabled"])
def test_dst32b_mode_selection(field):
    m = machine()
    assert not uses_dst32b(m, T)
    set_cfg(m, field, 1)
    assert uses_dst32b(m, T)


# --- ZEROACC ---
def zeroacc(m, clear_mode, where=0, use_32_bit_mode=0, clear_zero_flags=0, addr_mode=0):
    return run1(m, "ZEROACC", clear_mode=clear_mode, use_32_bit_mode=use_32_bit_mode,
                clear_zero_flags=clear_zero_flags, addr_mode=addr_mode, where=where)


def invalid_rows(m):
    return [int(r) for r in np.flatnonzero(~m.s.dest.valid)]


def test_zeroacc_one_row_adds_offset_rwc_and_base_and_applies_addr_mod():
    m = machine()
    m.s.dest.bits[:] = 0x1111
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", 100)
    set_cfg(m, "DEST_REGW_BASE_Base", 2)
    m.s.rwc[T].dst = 10
    dst_addr_mod(m, 1, 3)
    zeroacc(m, 0, where=5, addr_mode=1)
    assert invalid_rows(m) == [117]
    assert (m.s.dest.bits == 0x1111).all()          # ZEROACC never writes zeroes
    assert m.s.rwc[T].dst == 13


def test_zeroacc_one_row_wraps_at_1024():
    m = machine()
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", 100)
    zeroacc(m, 0, where=1000)
    assert invalid_rows(m) == [(1100) & 0x3FF]


@pytest.mark.parametrize("field", ["ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_INT8_math_enabled"])
def test_zeroacc_one_row_dst32b_clears_the_high_half_row(field):
    m = machine()
    set_cfg(m, field, 1)
    zeroacc(m, 0, where=13)                           # Adj32(13) = 21; its low half 29 keeps its bit
    assert invalid_rows(m) == [21]


def test_zeroacc_one_row_under_remap():
    m = machine()
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1)
    zeroacc(m, 0, where=8)
    assert invalid_rows(m) == [0x20]


def test_zeroacc_sixteen_rows_and_addr_mod():
    m = machine()
    dst_addr_mod(m, 2, 4)
    zeroacc(m, 1, where=3, addr_mode=2)
    assert invalid_rows(m) == list(range(48, 64))
    assert m.s.rwc[T].dst == 4


def test_zeroacc_sixteen_rows_32bit_scatters_over_high_half_rows():
    m = machine()
    zeroacc(m, 1, where=2, use_32_bit_mode=1, clear_zero_flags=0)
    # Dst32b rows 32..47 -> DstBits 64..71 and 80..87
    assert invalid_rows(m) == list(range(64, 72)) + list(range(80, 88))


def test_zeroacc_sixteen_rows_32bit_revert_marks_valid():
    m = machine()
    m.s.dest.valid[:] = False
    zeroacc(m, 1, where=0, use_32_bit_mode=1, clear_zero_flags=1)
    assert [int(r) for r in np.flatnonzero(m.s.dest.valid)] == list(range(0, 8)) + list(range(16, 24))


@pytest.mark.parametrize("where", [64, 100])
def test_zeroacc_sixteen_rows_beyond_dst_is_undefined(where):
    with pytest.raises(UndefinedBehaviour):
        zeroacc(machine(), 1, where=where)


@pytest.mark.parametrize("half", [0, 1])
def test_zeroacc_half_and_no_addr_mod(half):
    m = machine()
    dst_addr_mod(m, 1, 5)
    zeroacc(m, 2, where=half, addr_mode=1)
    assert invalid_rows(m) == list(range(512 * half, 512 * half + 512))
    assert m.s.rwc[T].dst == 0


def test_zeroacc_all():
    m = machine()
    zeroacc(m, 3, addr_mode=1)
    assert not m.s.dest.valid.any()


@pytest.mark.parametrize("mode,where", [(2, 2), (3, 1)])
def test_zeroacc_half_or_all_with_other_where_is_undefined(mode, where):
    with pytest.raises(UndefinedBehaviour):
        zeroacc(machine(), mode, where=where)


@pytest.mark.parametrize("mode,use32", [(0, 0), (1, 0), (2, 0), (3, 1)])
def test_zeroacc_revert_outside_the_32bit_16row_mode_is_undefined(mode, use32):
    with pytest.raises(UndefinedBehaviour):
        zeroacc(machine(), mode, use_32_bit_mode=use32, clear_zero_flags=1)


def test_zeroacc_refuses_wide_where():
    with pytest.raises(NotModelled):
        zeroacc(machine(), 0, where=1024)


def test_zeroacc_sixteen_rows_under_remap_scatters():
    m = machine()
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1)
    zeroacc(m, 1, where=0)                           # Dst16b rows 8..15 live at DstBits 32..39
    assert invalid_rows(m) == list(range(0, 8)) + list(range(32, 40))
