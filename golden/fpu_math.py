"""The matrix unit's multiply/accumulate datapath, bit-exact with Blackhole as ttsim v1.10.0 models it.

Facts (ttsim src/tensix.cpp; the ISA pages MVMUL.md/ELWMUL.md call their own arithmetic a rough guide):
- operands are 19-bit (sign, 8-bit exponent, 10-bit mantissa); an exponent of zero reads as zero;
- a multiplier takes 5 mantissa bits of SrcA and 7 of SrcB, chosen by the fidelity phase: SrcA the top
  five (hidden bit included) or the next five, SrcB the top seven or the low four; each lower choice
  also lowers the product exponent (by 5 for SrcA, by 7 for SrcB);
- MVMUL sums its 16 products in two groups of eight, each aligned to the group's largest exponent with
  round-half-up on magnitude; zero products carry exponent max(bias adjustment, 0) into that maximum;
- the (one or two) sums and the Dst value are aligned to their common largest exponent (sums round ties
  towards +infinity, Dst rounds ties up in magnitude), added, normalised and rounded half-up in
  magnitude to 24 significant bits (FP32 Dst), 8 (BF16 Dst) or 11 (FP16 Dst); a 16-bit Dst also rounds
  each aligned addend to 11 bits first; exact cancellation gives +0; underflow gives +0; overflow gives
  infinity (8-bit exponent) or the largest FP16 pattern.

Values travel as (sign, exponent, magnitude) int64 numpy arrays (scalars work too) with magnitudes
scaled so that a normal number has its hidden bit at bit 23; results are 32-bit patterns in the FP32
layout (an FP16 Dst keeps its 5-bit exponent in the FP32 exponent field).
"""
from __future__ import annotations

import numpy as np

from .fpu_formats import SrcDatum

HIDDEN = 1 << 23
FP16_TOP = 31 << 23 | 0x3FF << 13   # largest 16-bit-Dst FP16 result
INF = 0xFF << 23
NARROW = ~0x1FFF                    # a 16-bit Dst keeps addends to multiples of 2**13


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _clamp(x, lo: int, hi: int):
    return np.minimum(np.maximum(x, lo), hi)


def product_bias(wide: bool, phase: int, exp8: bool) -> int:
    """Exponent adjustment of a product for the Dst exponent bias and the fidelity phase."""
    bias = -127 if exp8 else (97 if wide else -15)
    return bias - (5 if phase & 1 else 0) - (7 if phase & 2 else 0)


def fidelity_a(man, phase: int):
    """The five SrcA mantissa bits (of 11, hidden bit included) a fidelity phase uses."""
    full = man | 0x400
    return (full >> 1) & 0x1F if phase & 1 else full >> 6


def fidelity_b(man, phase: int):
    """The seven SrcB mantissa bits a fidelity phase uses (the low four are scaled up by 8)."""
    full = man | 0x400
    return (full & 0xF) << 3 if phase & 2 else full >> 4


def _align(value, by, away=0):
    """value / 2**by rounded to nearest, ties towards +infinity (``away`` 1: away from zero, for negative
    values): with arithmetic shifts (2v + 2**s - away) >> (s + 1). ``by`` is capped at 40 by the callers; every
    magnitude here is below 2**29, so shifts of 31 or more give 0."""
    return ((value << 1) + (np.int64(1) << by) - away) >> (by + 1)


def _sum_aligned(acc, value, exp, wide: bool, exp8: bool) -> np.ndarray:
    """The Dst adder: ``acc`` (FP32 layout; None: +0) plus terms on the last axis as signed magnitudes ``value``
    (hidden bit at bit 23 for a normal exponent ``exp``). Every addend is aligned to the largest exponent and
    rounded to nearest, the terms' ties towards +infinity and the Dst value's away from zero; a 16-bit Dst also
    rounds each to a multiple of 2**13. The sum is normalised and rounded half-up in magnitude to the Dst
    format."""
    if acc is None:                        # no Dst value: the adder's third input is +0 (exponent 0)
        top = np.maximum(exp.max(axis=-1), 0)
    else:
        acc = _i64(acc)
        acc_neg, acc_exp = (acc >> 31) & 1, (acc >> 23) & 0xFF
        acc_mag = np.where(acc_exp != 0, (acc & 0x7FFFFF) | HIDDEN, 0)
        top = np.maximum(exp.max(axis=-1), acc_exp)
        by = np.minimum(top - acc_exp, 40)
        acc_aligned = _align(acc_mag, by)      # rounded in magnitude, the sign applied below
        if not wide:
            acc_aligned = (acc_aligned + 0x1000) & NARROW
    by = np.minimum(top[..., None] - exp, 40)
    aligned = _align(value, by)
    if not wide:
        aligned = (aligned + 0x1000) & NARROW
    total = aligned.sum(axis=-1)
    if acc is not None:
        total = total + np.where(acc_neg == 1, -acc_aligned, acc_aligned)
    sign = (total < 0).astype(np.int64)
    mag = np.abs(total)
    width = np.frexp(mag.astype(np.float64))[1].astype(np.int64)   # bit length; exact below 2**53
    keep = 24 if wide else (8 if exp8 else 11)
    cut = width - keep
    c = np.maximum(cut, 0)
    mag = ((mag + ((np.int64(1) << c) >> 1)) >> c) << (np.maximum(-cut, 0) + (24 - keep))
    exp = top + width - 24 + (mag >> 24)
    result = sign << 31 | exp << 23 | (mag & 0x7FFFFF)      # exponents out of range are replaced below
    if wide or exp8:
        result = np.where(exp >= 255, sign << 31 | INF, result)
    else:
        result = np.where(exp >= 32, sign << 31 | FP16_TOP, result)
    return np.where((top <= 0) | (total == 0) | (exp <= 0), 0, result)


def dot16(a: SrcDatum, b: SrcDatum, acc, wide: bool, phase: int, exp8: bool, bias: int) -> np.ndarray:
    """MVMUL outputs: acc + sum over the last axis k of b[k] * a[k], in two groups of eight products.
    a and b hold arrays whose shapes broadcast against each other, with 16 as the last axis.

    Each product is a signed fidelity-bit product; a zero product (either operand's exponent zero) carries
    exponent max(bias, 0) into its group's maximum. Products align to that maximum, rounding half-up in
    magnitude, and each group's sum enters the Dst adder with exponent its maximum (none when that is <= 0)."""
    a_exp, b_exp = _i64(a.exp), _i64(b.exp)
    a_zero, b_zero = a_exp == 0, b_exp == 0
    fa = np.where(a_zero, 0, fidelity_a(_i64(a.man), phase))
    fb = np.where(b_zero, 0, fidelity_b(_i64(b.man), phase))
    product = np.where(_i64(a.sign) == 1, -fa, fa) * np.where(_i64(b.sign) == 1, -fb, fb)
    exp = np.where(a_zero | b_zero, max(bias, 0), (a_exp + bias) + b_exp)
    grouped = product.shape[:-1] + (2, 8)
    product, exp = product.reshape(grouped), exp.reshape(grouped)
    top = exp.max(axis=-1)
    shift = np.minimum(top[..., None] - exp, 40)
    total = _align(product, shift, product < 0).sum(axis=-1)      # half-up in magnitude
    live = top > 0
    return _sum_aligned(acc, (total << 13) * live, top * live, wide, exp8)


def mul(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, phase: int, exp8: bool) -> np.ndarray:
    """ELWMUL outputs: acc + a * b (a product whose exponent is <= 0 is zero)."""
    bias = product_bias(wide, phase, exp8)
    exp = _i64(a.exp) + _i64(b.exp) + bias
    zero = np.asarray(a_zero) | np.asarray(b_zero) | (exp <= 0)
    mag = _i64(fidelity_a(_i64(a.man), phase)) * fidelity_b(_i64(b.man), phase) << 13
    value = np.where(zero, 0, np.where((_i64(a.sign) ^ _i64(b.sign)) == 1, -mag, mag))
    return _sum_aligned(acc, value[..., None], np.where(zero, max(bias, 0), exp)[..., None], wide, exp8)


def add(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, exp8: bool) -> np.ndarray:
    """ELWADD outputs: acc + a + b (acc None or 0 for assignment). The operand of larger (exponent, mantissa)
    leads; a set sign, exponent or mantissa bit gives an operand its hidden bit (so an unflushed -0 reads as
    -1 x 2**(0 - bias)); the other is aligned to it, rounding half-up."""
    sa, sb = np.where(a_zero, 0, _i64(a.sign)), np.where(b_zero, 0, _i64(b.sign))
    ka = np.where(a_zero, 0, _i64(a.exp) << 10 | _i64(a.man))     # (exponent, mantissa) as one ordered key
    kb = np.where(b_zero, 0, _i64(b.exp) << 10 | _i64(b.man))
    swap = ka < kb
    big_s, small_s = np.where(swap, sb, sa), np.where(swap, sa, sb)
    big_k, small_k = np.maximum(ka, kb), np.minimum(ka, kb)
    mag_big = np.where((big_s | big_k) != 0, (big_k & 0x3FF) | 0x400, 0)
    mag_small = np.where((small_s | small_k) != 0, (small_k & 0x3FF) | 0x400, 0)
    exp = big_k >> 10
    shift = np.minimum(exp - (small_k >> 10), 40)
    mag_small = _align(mag_small, shift)    # 0 from a shift of 12 up
    mag = np.where(big_s == small_s, mag_big + mag_small, mag_big - mag_small) << 13
    if wide and not exp8:
        exp = np.where(exp != 0, exp + 112, 97)
    return _sum_aligned(acc, np.where(big_s == 1, -mag, mag)[..., None], exp[..., None], wide, exp8)


# --- integer "8" datapath: Dst holds sign-magnitude INT32 ---
INT32_LIMIT = 0x7FFFFFFF


def saturate(value):
    return _clamp(value, -INT32_LIMIT, INT32_LIMIT)


def int8_value(d: SrcDatum, mask: int = 0x3FF):
    mag = _i64(d.man) & mask
    return np.where(_i64(d.sign) == 1, -mag, mag)


def int8_masks(phase: int) -> tuple[int, int]:
    """Magnitude bits a fidelity phase multiplies: SrcA bits 7:5 or 4:0, SrcB bits 9:4 or 3:0."""
    return (0x1F if phase & 1 else 0xE0), (0xF if phase & 2 else 0x3F0)
