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

Values travel as (sign, exponent, magnitude) with magnitudes scaled so that a normal number has its
hidden bit at bit 23; results are returned as 32-bit patterns (FP32 layout; FP16 Dst keeps its 5-bit
exponent in the FP32 exponent field).
"""
from __future__ import annotations

from typing import Sequence

from .fpu_formats import SrcDatum

HIDDEN = 1 << 23
FP16_TOP = 31 << 23 | 0x3FF << 13   # largest 16-bit-Dst FP16 result
INF = 0xFF << 23


def product_bias(wide: bool, phase: int, exp8: bool) -> int:
    """Exponent adjustment of a product for the Dst exponent bias and the fidelity phase."""
    bias = -127 if exp8 else (97 if wide else -15)
    return bias - (5 if phase & 1 else 0) - (7 if phase & 2 else 0)


def fidelity_a(man: int, phase: int) -> int:
    """The five SrcA mantissa bits (of 11, hidden bit included) a fidelity phase uses."""
    full = man | 0x400
    return (full >> 1) & 0x1F if phase & 1 else full >> 6


def fidelity_b(man: int, phase: int) -> int:
    """The seven SrcB mantissa bits a fidelity phase uses (the low four are scaled up by 8)."""
    full = man | 0x400
    return (full & 0xF) << 3 if phase & 2 else full >> 4


def _round_shift(mag: int, by: int, negative: int = 0) -> int:
    """mag / 2**by rounded to nearest; ties go up in magnitude, or down when ``negative`` is 1."""
    if by <= 0:
        return mag
    if by >= 31:
        return 0
    return (mag + (1 << (by - 1)) - negative) >> by


def accumulate(terms: Sequence[tuple[int, int, int]], acc: int, wide: bool, exp8: bool) -> int:
    """Add (sign, exponent, magnitude) terms to ``acc`` (FP32 layout) and round as the Dst format needs."""
    acc_sign, acc_exp = acc >> 31, (acc >> 23) & 0xFF
    acc_mag = (acc & 0x7FFFFF) | HIDDEN if acc_exp else 0
    top = max(acc_exp, *(e for _, e, _ in terms))
    if top <= 0:
        return 0
    total = _round_shift(acc_mag, top - acc_exp)
    if not wide:
        total = (total + 0x1000) & ~0x1FFF
    if acc_sign:
        total = -total
    for sign, exp, mag in terms:
        mag = _round_shift(mag, top - exp, sign)
        if not wide:
            mag = (mag + 0x1000 - sign) & ~0x1FFF
        total += -mag if sign else mag
    if total == 0:
        return 0
    sign = 1 if total < 0 else 0
    mag = -total if sign else total
    width = mag.bit_length()
    exp = top + width - 24
    keep = 24 if wide else (8 if exp8 else 11)
    if width > keep:
        mag = (mag + (1 << (width - keep - 1))) >> (width - keep)
    else:
        mag <<= keep - width
    mag <<= 24 - keep
    if mag >> 24:
        exp += 1
    if exp <= 0:
        return 0
    if wide or exp8:
        if exp >= 255:
            return sign << 31 | INF
    elif exp >= 32:
        return sign << 31 | FP16_TOP
    return sign << 31 | exp << 23 | (mag & 0x7FFFFF)


def dot16(a: Sequence[SrcDatum], b: Sequence[SrcDatum], acc: int, wide: bool, phase: int, exp8: bool,
          bias: int) -> int:
    """One MVMUL output: acc + sum over k of b[k] * a[k], two groups of eight products."""
    zero_exp = max(bias, 0)
    terms = []
    for g in (0, 8):
        prods = []
        for k in range(g, g + 8):
            x, y = a[k], b[k]
            if x.exp == 0 or y.exp == 0:
                prods.append((0, zero_exp, 0))
            else:
                prods.append((x.sign ^ y.sign, x.exp + y.exp + bias,
                              fidelity_a(x.man, phase) * fidelity_b(y.man, phase)))
        top = max(e for _, e, _ in prods)
        if top <= 0:
            continue
        total = 0
        for sign, exp, mag in prods:
            shift = min(top - exp, 30)
            mag = ((mag << 1) + (1 << shift)) >> (shift + 1)
            total += -mag if sign else mag
        terms.append((1 if total < 0 else 0, top, abs(total) << 13))
    if not terms:
        terms.append((0, 0, 0))
    return accumulate(terms, acc, wide, exp8)


def mul(a: SrcDatum, b: SrcDatum, a_zero: bool, b_zero: bool, acc: int, wide: bool, phase: int,
        exp8: bool) -> int:
    """One ELWMUL output: acc + a * b."""
    bias = product_bias(wide, phase, exp8)
    exp = a.exp + b.exp + bias
    if a_zero or b_zero or exp <= 0:
        term = (0, max(bias, 0), 0)
    else:
        term = (a.sign ^ b.sign, exp, (fidelity_a(a.man, phase) * fidelity_b(b.man, phase)) << 13)
    return accumulate([term], acc, wide, exp8)


def add(a: SrcDatum, b: SrcDatum, a_zero: bool, b_zero: bool, acc: int, wide: bool, exp8: bool) -> int:
    """One ELWADD output: acc + a + b (pass acc=0 for assignment)."""
    zero = SrcDatum(0, 0, 0)
    if a_zero:
        a = zero
    if b_zero:
        b = zero
    if (a.exp, a.man) < (b.exp, b.man):
        a, b = b, a
    mag_a = a.man | 0x400 if a != zero else 0
    mag_b = b.man | 0x400 if b != zero else 0
    exp = a.exp
    if b.exp < exp:
        shift = exp - b.exp
        mag_b = _round_shift(mag_b, shift) if shift < 12 else 0
    mag = (mag_a + mag_b if a.sign == b.sign else mag_a - mag_b) << 13
    if wide and not exp8:
        exp = exp + 112 if exp else 97
    return accumulate([(a.sign, exp, mag)], acc, wide, exp8)


# --- integer "8" datapath: Dst holds sign-magnitude INT32 ---
INT32_LIMIT = 0x7FFFFFFF


def saturate(value: int) -> int:
    return max(-INT32_LIMIT, min(INT32_LIMIT, value))


def int8_value(d: SrcDatum, mask: int = 0x3FF) -> int:
    mag = d.man & mask
    return -mag if d.sign else mag


def int8_masks(phase: int) -> tuple[int, int]:
    """Magnitude bits a fidelity phase multiplies: SrcA bits 7:5 or 4:0, SrcB bits 9:4 or 3:0."""
    return (0x1F if phase & 1 else 0xE0), (0xF if phase & 2 else 0x3F0)
