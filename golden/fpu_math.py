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

from typing import Sequence

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


def _round_shift(mag, by, negative=0):
    """mag / 2**by rounded to nearest; ties go up in magnitude, or down where ``negative`` is 1."""
    mag, by = _i64(mag), _i64(by)
    b = _clamp(by, 1, 30)
    shifted = (mag + (np.int64(1) << (b - 1)) - negative) >> b
    return np.where(by <= 0, mag, np.where(by >= 31, 0, shifted))


def accumulate(terms: Sequence[tuple], acc, wide: bool, exp8: bool) -> np.ndarray:
    """Add (sign, exponent, magnitude) terms to ``acc`` (FP32 layout) and round as the Dst format needs."""
    acc = _i64(acc)
    acc_sign, acc_exp = (acc >> 31) & 1, (acc >> 23) & 0xFF
    acc_mag = np.where(acc_exp != 0, (acc & 0x7FFFFF) | HIDDEN, 0)
    top = acc_exp
    for _, exp, _ in terms:
        top = np.maximum(top, exp)
    total = _round_shift(acc_mag, top - acc_exp)
    if not wide:
        total = (total + 0x1000) & NARROW
    total = np.where(acc_sign == 1, -total, total)
    for sign, exp, mag in terms:
        sign = _i64(sign)
        mag = _round_shift(mag, top - exp, sign)
        if not wide:
            mag = (mag + 0x1000 - sign) & NARROW
        total = total + np.where(sign == 1, -mag, mag)
    sign = (total < 0).astype(np.int64)
    mag = np.abs(total)
    width = np.frexp(mag.astype(np.float64))[1].astype(np.int64)   # bit length; exact below 2**53
    exp = top + width - 24
    keep = 24 if wide else (8 if exp8 else 11)
    cut = width - keep
    rounded = (mag + (np.int64(1) << _clamp(cut - 1, 0, 62))) >> _clamp(cut, 0, 62)
    mag = np.where(cut > 0, rounded, mag << _clamp(-cut, 0, 62)) << (24 - keep)
    exp = exp + (mag >> 24)
    result = sign << 31 | _clamp(exp, 0, 0xFF) << 23 | (mag & 0x7FFFFF)
    if wide or exp8:
        result = np.where(exp >= 255, sign << 31 | INF, result)
    else:
        result = np.where(exp >= 32, sign << 31 | FP16_TOP, result)
    return np.where((top <= 0) | (total == 0) | (exp <= 0), 0, result)


def dot16(a: SrcDatum, b: SrcDatum, acc, wide: bool, phase: int, exp8: bool, bias: int) -> np.ndarray:
    """MVMUL outputs: acc + sum over the last axis k of b[k] * a[k], in two groups of eight products.
    a and b hold arrays whose shapes broadcast against each other, with 16 as the last axis."""
    zero = (_i64(a.exp) == 0) | (_i64(b.exp) == 0)
    exp = np.where(zero, max(bias, 0), _i64(a.exp) + _i64(b.exp) + bias)
    mag = np.where(zero, 0, _i64(fidelity_a(_i64(a.man), phase)) * fidelity_b(_i64(b.man), phase))
    neg = np.where(zero, 0, _i64(a.sign) ^ _i64(b.sign))
    shape = exp.shape[:-1] + (2, 8)
    exp, mag, neg = exp.reshape(shape), mag.reshape(shape), neg.reshape(shape)
    top = exp.max(axis=-1)
    shift = np.minimum(top[..., None] - exp, 30)
    aligned = ((mag << 1) + (np.int64(1) << shift)) >> (shift + 1)
    total = np.where(neg == 1, -aligned, aligned).sum(axis=-1)
    live = top > 0
    terms = [(np.where(live[..., g], total[..., g] < 0, 0).astype(np.int64),
              np.where(live[..., g], top[..., g], 0),
              np.where(live[..., g], np.abs(total[..., g]) << 13, 0)) for g in (0, 1)]
    return accumulate(terms, acc, wide, exp8)


def mul(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, phase: int, exp8: bool) -> np.ndarray:
    """ELWMUL outputs: acc + a * b."""
    bias = product_bias(wide, phase, exp8)
    exp = _i64(a.exp) + _i64(b.exp) + bias
    zero = np.asarray(a_zero) | np.asarray(b_zero) | (exp <= 0)
    mag = _i64(fidelity_a(_i64(a.man), phase)) * fidelity_b(_i64(b.man), phase) << 13
    term = (np.where(zero, 0, _i64(a.sign) ^ _i64(b.sign)), np.where(zero, max(bias, 0), exp), np.where(zero, 0, mag))
    return accumulate([term], acc, wide, exp8)


def add(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, exp8: bool) -> np.ndarray:
    """ELWADD outputs: acc + a + b (pass acc=0 for assignment)."""
    a = SrcDatum(*(np.where(a_zero, 0, _i64(x)) for x in a))
    b = SrcDatum(*(np.where(b_zero, 0, _i64(x)) for x in b))
    swap = (a.exp < b.exp) | ((a.exp == b.exp) & (a.man < b.man))
    big = SrcDatum(*(np.where(swap, y, x) for x, y in zip(a, b)))
    small = SrcDatum(*(np.where(swap, x, y) for x, y in zip(a, b)))

    def magnitude(d):
        return np.where((d.sign | d.exp | d.man) != 0, d.man | 0x400, 0)

    shift = big.exp - small.exp
    mag_small = np.where(shift < 12, _round_shift(magnitude(small), shift), 0)
    mag_big = magnitude(big)
    mag = np.where(big.sign == small.sign, mag_big + mag_small, mag_big - mag_small) << 13
    exp = big.exp
    if wide and not exp8:
        exp = np.where(exp != 0, exp + 112, 97)
    return accumulate([(big.sign, exp, mag)], acc, wide, exp8)


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
