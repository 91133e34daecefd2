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

Values travel as float64 numpy arrays (scalars work too) holding integers times powers of two, so every
product, power-of-two scaling and sum below is exact and each rounding is an explicit floor (or trunc) of
such a value; exponents travel as the powers of two themselves. Operands enter as factors of their Src
cells, read through small tables: X = 2**exponent (0 for a zero operand) and F = X * (signed fidelity
bits); the Dst value as (V, P): P = 2**exponent, V = P * signed magnitude (hidden bit at bit 23). The sum is
rounded on its float64 bits and, for 8-bit exponents, cast to float32, whose bits are the result. Results
are 32-bit patterns in the FP32 layout (an FP16 Dst keeps its 5-bit exponent in the FP32 exponent field).
"""
from __future__ import annotations

from functools import cache

import numpy as np

from .. import fpu_formats as ff
from ..fpu_formats import SrcDatum

HIDDEN = 1 << 23
FP16_TOP = 31 << 23 | 0x3FF << 13   # largest 16-bit-Dst FP16 result
INF = 0xFF << 23
NARROW = ~0x1FFF                    # a 16-bit Dst keeps addends to multiples of 2**13
# Rounding x to an integer half-up, then to a multiple of 2**13 as (n + 0x1000) & NARROW, is one floor:
# floor(x / 2**13 + NARROW_HALF) multiples of 2**13.
NARROW_HALF = 0.5 + 2.0 ** -14


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


# --- Src cells as the datapath reads them: tables over the cell's sign|mantissa bits (cell >> 8) and its
# exponent bits (cell & 0xFF), so reading a block of cells is two lookups ---
_SIGN_MAN = np.arange(1 << 11)
_EXP = np.arange(1 << 8)


# dot16 (and ELWADD's pre-adder) read negative factors NUDGE larger in magnitude, so that floor(y + 1/2)
# rounds aligned products (operands) y half-up in magnitude: a negative value's exact tie now lies just below
# the tie and rounds down, a positive product is exact or (negative times negative) a little larger, which
# moves no positive rounding; the nudge (under 2**-28 of a unit for the values that can round to nonzero)
# moves nothing else, and every value stays exact in float64 apart from that harmless upward error.
NUDGE = 2.0 ** -40


@cache
def _pow2(exp_bits: int, flush: bool, bias: int = 0) -> np.ndarray:
    """By exponent field: 2**(e + bias), or 0 for e == 0 when zero exponents read as zero (``flush``)."""
    e = _EXP & exp_bits
    return np.where((e != 0) | (not flush), np.ldexp(1.0, e + bias), 0.0)


@cache
def _signed_fidelity(side_b: bool, phase: int, man_bits: int, nudged: bool) -> np.ndarray:
    man = _SIGN_MAN & man_bits
    bits = (fidelity_b(man, phase) if side_b else fidelity_a(man, phase)).astype(np.float64)
    return np.where(_SIGN_MAN >> 10 == 1, -bits * (1 + NUDGE if nudged else 1), bits)


@cache
def _signed_magnitude(man_bits: int) -> np.ndarray:
    """By sign|mantissa bits: the signed magnitude with the hidden bit (negative ones nudged, see NUDGE)."""
    full = ((_SIGN_MAN & man_bits) | 0x400).astype(np.float64)
    return np.where(_SIGN_MAN >> 10 == 1, -full * (1 + NUDGE), full)


def product_factors(cells, fmt: int, phase: int, side_b: bool, flush: bool = True, bias: int = 0,
                    nudged: bool = False):
    """Src cells read as ``fmt`` at a multiplier input (SrcA, or SrcB when ``side_b``): (F, X) with
    X = 2**(exponent + bias) (0 for a zero operand) and F = X * the signed fidelity bits of the phase
    (negative ones times 1 + NUDGE when ``nudged``, for dot16_factors)."""
    exp_bits, man_bits = ff.read_masks(fmt)
    cells = cells.astype(np.intp)                # (intp indices take numpy's fast indexing path)
    x = _pow2(exp_bits, flush, bias)[cells & 0xFF]
    return _signed_fidelity(side_b, phase & (2 if side_b else 1), man_bits, nudged)[cells >> 8] * x, x


def adder_operand(cells, fmt: int, flush: bool = True):
    """Src cells read as ``fmt`` at ELWADD's pre-adder: (S, P) with P = 2**exponent and S = P * the signed
    magnitude with its hidden bit at bit 10 (nudged), or 0 for a zero operand: one with a zero exponent when
    ``flush``; otherwise only a cell with no sign, exponent or mantissa bit set, the others keeping their
    hidden bit (so -0 reads as -1 x 2**(0 - bias))."""
    exp_bits, man_bits = ff.read_masks(fmt)
    cells = cells.astype(np.intp)
    e = cells & 0xFF
    p = _pow2(exp_bits, False)[e]
    if flush:
        return _signed_magnitude(man_bits)[cells >> 8] * _pow2(exp_bits, True)[e], p
    read = (cells & (ff.SRC_SIGN | man_bits << 8 | exp_bits)) != 0
    return _signed_magnitude(man_bits)[cells >> 8] * p * read, p


def _cells(d: SrcDatum):
    return ff.src_join(np.asarray(d.sign, dtype=np.int64), np.asarray(d.exp, dtype=np.int64), np.asarray(d.man))


# --- the Dst value entering the adder: (V, P) with P = 2**exponent and V = P * the signed magnitude with
# its hidden bit at bit 23 (0 for a zero exponent) ---

def acc_from_fp32(bits):
    """An FP32-layout pattern (array or int; None: no Dst value) as the adder's Dst input."""
    if bits is None:
        return None
    bits = np.asarray(bits, dtype=np.int64)
    exp = (bits >> 23) & 0xFF
    mag = np.where(exp != 0, (bits & 0x7FFFFF) | HIDDEN, 0)
    return np.ldexp(np.where((bits >> 31) & 1 == 1, -mag, mag).astype(np.float64), exp), np.ldexp(1.0, exp)


@cache
def _storage_table(fp16: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """By 16-bit Dst storage pattern of a high half: V, V's sign times P (a Dst32b low half's unit; 0 for a
    zero exponent), P."""
    raw = np.arange(1 << 16, dtype=np.int64)
    if fp16:
        h = ff.dst16_fp16_to_bits(raw)
        fp32 = (h & 0x8000) << 16 | (h & 0x7FFF) << 13
    else:
        fp32 = ff.dst16_bf16_to_bits(raw) << 16
    v, p = acc_from_fp32(fp32)
    return v, np.sign(v) * p, p


def acc_from_dst32(hi, lo):
    """Dst32b storage halves (uint16 arrays) as the adder's Dst input."""
    v, unit, p = _storage_table(False)
    hi = hi.astype(np.intp)
    return v[hi] + lo * unit[hi], p[hi]


def acc_from_dst16(raw, fp16: bool):
    """Dst16b storage (BF16 or FP16 layout) as the adder's Dst input."""
    v, _, p = _storage_table(fp16)
    raw = raw.astype(np.intp)
    return v[raw], p[raw]


# --- the Dst adder ---

def _dst_adder(acc, w, top_p, wide: bool, exp8: bool, grouped: bool = False, zero_top: bool = False):
    """The Dst value ``acc`` (None: +0) plus terms ``w`` (two, on the first axis, when ``grouped``): each a
    signed magnitude with its hidden bit at bit 10 times 2**exponent. All align to top, the largest exponent
    of the terms (``top_p`` = 2**that) and the Dst value, rounding to nearest, the terms' ties towards
    +infinity and the Dst value's away from zero; a 16-bit Dst also rounds each to a multiple of 2**13.
    The sum is normalised and rounded half-up in magnitude to the Dst format (+0 where top <= 0 when
    ``zero_top``; callers whose terms are all zero there leave it off)."""
    pt = np.maximum(top_p, 1.0 if acc is None else acc[1])           # 2**top
    if wide:                                     # units of 2**(top - 23)
        total = np.floor(w / (pt * 2.0 ** -13) + 0.5)
    else:                                        # units of 2**(top - 10)
        total = np.floor(w / pt + NARROW_HALF)
    if grouped:
        total = np.add.reduce(total)             # the two groups' sums: one addition each
    if acc is not None:
        y = acc[0] / (pt if wide else pt * 2.0 ** 13)
        total = total + np.trunc(y + np.copysign(0.5 if wide else NARROW_HALF, y))
    result = _normalise(total, pt, -23 if wide else -10, wide, exp8)
    return result * (pt > 1.0) if zero_top else result


def _normalise(total, pt, unit: int, wide: bool, exp8: bool) -> np.ndarray:
    """The sum ``total`` (float64, exact) in units of ``pt`` * 2**``unit`` as an FP32-layout pattern, rounded
    half-up in magnitude to the Dst format's significant bits by adding half the last kept bit to the
    float64's bits (a carry bumps the exponent) and clearing the bits below. Exact cancellation and
    underflow give +0, overflow infinity or the largest FP16."""
    keep = 24 if wide else (8 if exp8 else 11)
    if wide or exp8:        # the value scaled by 2**-127 is float32's, exactly: its bits are the pattern
        r = ((total * (pt * 2.0 ** (unit - 127))).view(np.int64) + (1 << (52 - keep))) & -(1 << (53 - keep))
        f = r.view(np.float64)
        with np.errstate(over="ignore"):        # 2**128 and up: infinity
            pattern = f.astype(np.float32).view(np.uint32)
        return pattern * (np.abs(f) >= 2.0 ** -126)       # exponent <= 0: +0
    r = (total * (pt * 2.0 ** unit)).view(np.int64) + (1 << (52 - keep))
    pattern = np.minimum(((r >> 29) & (0x7FF << 23 | 0x7FE000)) - (1023 << 23), FP16_TOP)
    return (pattern | (r >> 32) & 0x80000000) * (pattern >= HIDDEN)


# --- the three operations ---

def dot16_factors(fa, xa, fb, xb, acc, wide: bool, exp8: bool, bias: int) -> np.ndarray:
    """MVMUL outputs from nudged operand factors (product_factors, the bias on one side) whose shapes
    broadcast, with 16 as the first axis k: acc + sum over k of b[k] * a[k], in two groups of eight products.

    Each product is a signed fidelity-bit product; a zero product (either operand's exponent zero) carries
    exponent max(bias, 0) into its group's maximum. Products align to that maximum, rounding half-up in
    magnitude, and each group's sum enters the Dst adder with exponent its maximum (none when that is <= 0)."""
    x = xa * xb                                  # 2**product exponent, 0 for a zero product
    grouped = (2, 8) + x.shape[1:]
    g = np.maximum(np.maximum.reduce(x.reshape(grouped), axis=1), 2.0 ** max(bias, 0))    # 2**group maximum
    y = np.multiply(fa, fb, out=x).reshape(grouped)
    y /= g[:, None]
    y += 0.5
    total = np.add.reduce(np.floor(y, out=y), axis=1)      # half-up in magnitude (NUDGE)
    return _dst_adder(acc, total * (g * (g > 1.0)), np.maximum.reduce(g), wide, exp8, grouped=True)


def mul_factors(fa, xa, fb, xb, acc, wide: bool, exp8: bool, bias: int) -> np.ndarray:
    """ELWMUL outputs from operand factors (product_factors, the bias on one side): acc + a * b (a product
    whose exponent is <= 0 is zero and, like a zero product, carries exponent max(bias, 0))."""
    x = xa * xb
    return _dst_adder(acc, fa * fb * (x > 1.0), np.maximum(x, 2.0 ** max(bias, 0)), wide, exp8)


def add_operands(sa, pa, sb, pb, acc, wide: bool, exp8: bool, flushed: bool = False) -> np.ndarray:
    """ELWADD outputs from adder operands: acc + a + b. Both align to the larger exponent, rounding half-up
    in magnitude (only the smaller one moves), and their sum enters the Dst adder with that exponent.
    ``flushed``: every operand with a zero exponent is zero (so a result with top <= 0 is +0 anyway)."""
    p = np.maximum(pa, pb)
    value = np.floor(sa / p + 0.5) + np.floor(sb / p + 0.5)      # half-up in magnitude (NUDGE)
    if wide and not exp8:
        p = np.where(p != 1.0, p * 2.0 ** 112, 2.0 ** 97)
    if acc is not None:
        return _dst_adder(acc, value * p, p, wide, exp8, zero_top=not flushed)
    # alone in the adder (p >= 1, so top is its exponent) the sum is already on the grid: no alignment
    result = _normalise(value * 2.0 ** 13 if wide else value, p, -23 if wide else -10, wide, exp8)
    return result if flushed else result * (p > 1.0)


# --- the same on SrcDatum fields and FP32-layout Dst values (arrays or scalars) ---

def dot16(a: SrcDatum, b: SrcDatum, acc, wide: bool, phase: int, exp8: bool, bias: int) -> np.ndarray:
    """dot16_factors of fields already reduced to their format, with k as their last axis."""
    fa, xa = product_factors(np.moveaxis(_cells(a), -1, 0), ff.TF32, phase, side_b=False, bias=bias, nudged=True)
    fb, xb = product_factors(np.moveaxis(_cells(b), -1, 0), ff.TF32, phase, side_b=True, nudged=True)
    return dot16_factors(fa, xa, fb, xb, acc_from_fp32(acc), wide, exp8, bias)


def mul(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, phase: int, exp8: bool) -> np.ndarray:
    """mul_factors; an operand reads as zero where its ``*_zero`` is set."""
    bias = product_bias(wide, phase, exp8)
    fa, xa = product_factors(_cells(a), ff.TF32, phase, side_b=False, flush=False, bias=bias)
    fb, xb = product_factors(_cells(b), ff.TF32, phase, side_b=True, flush=False)
    ka, kb = ~np.asarray(a_zero), ~np.asarray(b_zero)
    return mul_factors(fa * ka, xa * ka, fb * kb, xb * kb, acc_from_fp32(acc), wide, exp8, bias)


def add(a: SrcDatum, b: SrcDatum, a_zero, b_zero, acc, wide: bool, exp8: bool) -> np.ndarray:
    """add_operands; an operand reads as zero where its ``*_zero`` is set, and otherwise has its hidden bit
    unless no sign, exponent or mantissa bit is set."""
    sa, pa = adder_operand(_cells(a), ff.TF32, flush=False)
    sb, pb = adder_operand(_cells(b), ff.TF32, flush=False)
    ka, kb = ~np.asarray(a_zero), ~np.asarray(b_zero)
    return add_operands(sa * ka, np.where(ka, pa, 1.0), sb * kb, np.where(kb, pb, 1.0), acc_from_fp32(acc),
                        wide, exp8)


# --- integer "8" datapath: Dst holds sign-magnitude INT32 ---
INT32_LIMIT = 0x7FFFFFFF


def _clamp(x, lo: int, hi: int):
    return np.minimum(np.maximum(x, lo), hi)


def saturate(value):
    return _clamp(value, -INT32_LIMIT, INT32_LIMIT)


def int8_value(d: SrcDatum, mask: int = 0x3FF):
    mag = np.asarray(d.man, dtype=np.int64) & mask
    return np.where(np.asarray(d.sign, dtype=np.int64) == 1, -mag, mag)


def int8_masks(phase: int) -> tuple[int, int]:
    """Magnitude bits a fidelity phase multiplies: SrcA bits 7:5 or 4:0, SrcB bits 9:4 or 3:0."""
    return (0x1F if phase & 1 else 0xE0), (0xF if phase & 2 else 0x3F0)
