"""The matrix unit datapath (golden.matrix.fpu_math) on hand-derived cases; results are raw FP32-layout bits."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from golden import fpu_formats as ff
from golden.matrix import fpu_math as fm

ONE = ff.SrcDatum(0, 127, 0)
ZERO = ff.SrcDatum(0, 0, 0)


def d(bits: int) -> ff.SrcDatum:
    return ff.src_split(ff.src_from_fp32(bits))


def dot(a, b, acc=0, wide=True, phase=0, exp8=True):
    a = ff.SrcDatum(*map(np.array, zip(*(list(a) + [ZERO] * (16 - len(a))))))
    b = ff.SrcDatum(*map(np.array, zip(*(list(b) + [ZERO] * (16 - len(b))))))
    return int(fm.dot16(a, b, acc, wide, phase, exp8, fm.product_bias(wide, phase, exp8)))


def test_fidelity_selects_five_srca_and_seven_srcb_bits():
    # 11-bit mantissa 1_0000000010 (SrcA) and 1_0000000001 (SrcB)
    assert fm.fidelity_a(0b0000000010, 0) == 0b10000
    assert fm.fidelity_a(0b0000000010, 1) == 0b00001
    assert fm.fidelity_b(0b0000000001, 0) == 0b1000000
    assert fm.fidelity_b(0b0000000001, 2) == 0b0001000
    assert fm.product_bias(False, 3, True) == -127 - 12
    assert fm.product_bias(True, 0, False) == 97


def test_four_fidelity_phases_sum_to_the_exact_tf32_product():
    """(1 + 2**-9) * (1 + 2**-10) = 1 + 2**-9 + 2**-10 + 2**-19, one phase term at a time."""
    a, b = d(0x3F804000), d(0x3F802000)       # TF32 mantissas 0b0000000010 and 0b0000000001
    acc, seen = 0, []
    for phase in range(4):
        acc = dot([a], [b], acc, phase=phase)
        seen.append(acc)
    assert seen == [0x3F800000, 0x3F804000, 0x3F806000, 0x3F806010]


def test_one_times_x_is_x_when_x_fits_the_phase_0_bits():
    x = d(0x40D40000)                          # 6.625: hidden bit + 6 mantissa bits
    assert dot([ONE], [x]) == 0x40D40000
    assert dot([ONE], [x], wide=False) == 0x40D40000


def test_exact_cancellation_gives_plus_zero():
    x, minus_x = d(0x3FC00000), d(0xBFC00000)
    assert dot([ONE, ONE], [x, minus_x]) == 0
    assert dot([ONE], [minus_x], acc=0x3FC00000) == 0       # -x + Dst(x)
    assert fm.add(minus_x, x, False, False, 0, True, True) == 0


def test_add_ties_round_half_up_in_magnitude_into_bf16():
    one, tiny = d(0x3F800000), d(0x3B800000)                 # 1 and 2**-8: half a BF16 ulp of 1
    assert fm.add(one, tiny, False, False, 0, False, True) == 0x3F810000
    assert fm.add(d(0xBF800000), d(0xBB800000), False, False, 0, False, True) == 0xBF810000
    assert fm.add(one, tiny, False, False, 0, True, True) == 0x3F808000     # FP32 Dst keeps it


def test_aligned_sum_ties_round_towards_plus_infinity():
    """Dst 1.0 plus a product of +-2**-24: the product is half a unit of the aligned Dst."""
    plus, minus = d(0x33800000), d(0xB3800000)               # +-2**-24
    assert dot([ONE], [plus], acc=0x3F800000) == 0x3F800001
    assert dot([ONE], [minus], acc=0x3F800000) == 0x3F800000  # IEEE would give 0x3F7FFFFF


def test_products_align_to_the_group_maximum_with_rounding():
    # group 0: 1.0 and 2**-11 (product mantissa 1024 shifted right by 11: 0.5 rounds up to 1)
    small = d(0x3A000000)                                      # 2**-11
    assert dot([ONE, ONE], [ONE, small]) == 0x3F800000 | 1 << 13
    # the same two products in different groups are not pre-rounded within a group
    a = [ONE] + [ZERO] * 7 + [ONE]
    b = [ONE] + [ZERO] * 7 + [small]
    assert dot(a, b) == 0x3F800000 | 1 << 12


def test_zero_products_carry_exponent_97_into_fp16_sums_with_fp32_dst():
    """FP16 sources, FP32 Dst: a zero product still has exponent max(97, 0), so a tiny Dst is shifted
    out of range by the alignment and the sum is +0 (a ttsim fact)."""
    tiny = 57 << 23                                            # 2**-70
    assert dot([ZERO], [ZERO], acc=tiny, exp8=False) == 0
    big = 100 << 23
    assert dot([ZERO], [ZERO], acc=big, exp8=False) == big


def test_overflow_saturates_to_infinity_or_fp16_top():
    huge = ff.SrcDatum(0, 254, 0)
    assert dot([huge], [huge]) == 0x7F800000
    big16 = ff.SrcDatum(1, 30, 0)
    assert dot([big16], [ff.SrcDatum(0, 30, 0)], wide=False, exp8=False) == 0x80000000 | fm.FP16_TOP


def test_underflow_and_denormal_operands_give_plus_zero():
    tiny = ff.SrcDatum(1, 1, 0)
    assert dot([tiny], [tiny]) == 0
    denormal = ff.SrcDatum(0, 0, 0x3FF)
    assert dot([denormal], [ONE], acc=0x40000000) == 0x40000000
    assert fm.mul(denormal, ONE, True, False, 0, True, 0, True) == 0


def test_bf16_dst_rounds_each_addend_to_11_bits_before_adding():
    """Dst 1.0 plus 2**-8 - 2**-12 (just under half a BF16 ulp): the addend is first rounded to a
    multiple of 2**-10 (giving 2**-8, a tie) and the tie then rounds up: double rounding."""
    addend = d(0x3B700000)                                     # 1.875 * 2**-9
    assert dot([ONE], [addend], acc=0x3F800000) == 0x3F807800
    assert dot([ONE], [addend], acc=0x3F800000, wide=False) == 0x3F810000


@given(st.integers(1, 254), st.integers(0, 0x3FF), st.integers(0, 1))
def test_x_plus_zero_is_x_in_tf32(exp, man, sign):
    x = ff.SrcDatum(sign, exp, man)
    assert fm.add(x, ZERO, False, True, 0, True, True) == sign << 31 | exp << 23 | man << 13


def test_int8_phase_masks_cover_the_used_magnitude_bits_once():
    a_masks = {fm.int8_masks(p)[0] for p in range(4)}
    b_masks = {fm.int8_masks(p)[1] for p in range(4)}
    assert a_masks == {0xE0, 0x1F} and b_masks == {0x3F0, 0xF}
    assert fm.saturate(0x7FFFFFFF + 5) == 0x7FFFFFFF and fm.saturate(-0x80000000) == -0x7FFFFFFF
