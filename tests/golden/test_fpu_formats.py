"""Src cell layout and Dst encodings (SrcASrcB.md, Dst.md, blackhole-deltas #9), raw bits only."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from golden import fpu_formats as ff


def test_src_cell_layout_is_sign_mantissa_exponent():
    # 1.5f = 0x3FC00000: sign 0, exponent 127, mantissa 0b1000000000
    assert ff.src_from_fp32(0x3FC00000) == 0b0_1000000000_01111111
    assert ff.src_split(0b1_0000000011_10000000) == (1, 128, 3)
    # FP16 1.0 = 0x3C00: exponent 15 in the low five exponent bits
    assert ff.src_from_fp16(0x3C00) == 15
    assert ff.src_from_int8(-5) == (1 << 18) | (5 << 8) | 16
    assert ff.src_from_int8(0) == 0


@given(st.integers(0, 0xFFFFFFFF))
def test_src_keeps_the_top_19_bits_of_fp32(bits):
    assert ff.src_to_fp32(ff.src_from_fp32(bits)) == bits & 0xFFFFE000


def test_reduce_to_format_drops_what_each_format_lacks():
    d = ff.SrcDatum(1, 0xF3, 0x3FF)
    assert ff.reduce_to_format(d, ff.BF16) == (1, 0xF3, 0x3F8)
    assert ff.reduce_to_format(d, ff.FP32) == (1, 0xF3, 0x3F8)
    assert ff.reduce_to_format(d, ff.TF32) == d
    assert ff.reduce_to_format(d, ff.FP16) == (1, 0x13, 0x3FF)


def test_dst16_bf16_storage_is_sign_mantissa_exponent():
    assert ff.bits_to_dst16_bf16(0x3F80) == 0x007F            # 1.0
    assert ff.bits_to_dst16_bf16(0xC049) == 0xC980            # -3.140625
    assert ff.dst16_bf16_to_bits(0xC980) == 0xC049


def test_dst16_fp16_storage_is_sign_mantissa_exponent():
    assert ff.bits_to_dst16_fp16(0x3C00) == 0x000F            # 1.0
    assert ff.bits_to_dst16_fp16(0xBE01) == 0x8000 | 0x201 << 5 | 0x0F
    assert ff.dst16_fp16_to_bits(0x8000 | 0x201 << 5 | 0x0F) == 0xBE01


def test_dst32_fp32_low_half_holds_mantissa_bits_15_to_0_delta_9():
    raw = ff.fp32_to_dst32(0x40490FDB)                         # pi
    assert raw >> 16 == 0x4980                                 # BF16 storage of 0x4049
    assert raw & 0xFFFF == 0x0FDB                              # not "3 mantissa bits and 13 zeros"
    assert ff.dst32_to_fp32(raw) == 0x40490FDB


@given(st.integers(-0x7FFFFFFF, 0x7FFFFFFF))
def test_dst32_int32_is_sign_magnitude_in_the_fp32_layout(v):
    raw = ff.int_to_dst32(v)
    assert ff.dst32_to_int(raw) == v
    assert ff.dst32_to_fp32(raw) == (abs(v) | (0x80000000 if v < 0 else 0))
