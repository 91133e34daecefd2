"""Floating-point arithmetic of the Blackhole SFPU, bit for bit as ttsim v1.10.0 (src/fma.cpp) models it.

Facts (ttsim's Blackhole SFPU multiply-add, written here from scratch):
- denormal inputs count as zero (their sign kept); results whose exponent field ends up 0 become a zero
  with the result's sign; there is no denormal output;
- any NaN input, Inf*0, or Inf-Inf gives the canonical NaN 0x7FC00000; otherwise an Inf addend is returned
  as is, and an Inf or overflowing product (biased exponent sum - 127 >= 255) gives a signed Inf;
- the 48-bit product keeps 3 guard bits and is cut to 28 bits with a sticky bit; a product whose exponent is
  negative is dropped (the addend is returned unchanged, or a zero signed as addend AND product);
- the smaller operand is aligned with a "semi-sticky" shift (a value shifted out entirely leaves nothing);
- ties on magnitude take the product's sign; exact cancellation gives +0;
- after normalising, a result at or below exponent 0 is shifted one place only and its sticky bit ORs
  just the bits selected by (shift | 1), then round-to-nearest-even on the 3 guard bits.
"""
from __future__ import annotations


SIGN = 0x80000000
QNAN = 0x7FC00000
INF = 0x7F800000


def _unpack(x: int) -> tuple[int, int, int]:
    """(sign bit, biased exponent, 24-bit significand with hidden bit; 0 for zero/denormal)."""
    e = (x >> 23) & 0xFF
    return x & SIGN, e, ((x & 0x7FFFFF) | 0x800000) if e else 0


def _shift_out(v: int, n: int) -> int:
    """Right shift that ORs lost bits into bit 0, unless nothing is left at all."""
    kept = v >> n
    if kept and kept << n != v:
        kept |= 1
    return kept


def fma(x: int, y: int, z: int) -> int:
    """x * y + z on FP32 bit patterns, as the Blackhole SFPU MAD computes it."""
    xs, xe, xm = _unpack(x)
    ys, ye, ym = _unpack(y)
    zs, ze, zm = _unpack(z)
    ps = xs ^ ys
    pe = xe + ye - 127
    full = xm * ym << 3
    pm = (full >> 23) | (1 if full & 0x7FFFFF else 0)
    zm <<= 3

    if xe == 255 or ye == 255 or ze == 255 or pe >= 255:
        x_nan = xe == 255 and (x & 0x7FFFFF or not ym)
        y_nan = ye == 255 and (y & 0x7FFFFF or not xm)
        z_nan = ze == 255 and z & 0x7FFFFF
        opposite_infs = ze == 255 and (xe == 255 or ye == 255) and zs != ps
        if x_nan or y_nan or z_nan or opposite_infs:
            return QNAN
        return z if ze == 255 else ps | INF

    if pm == 0 or pe < 0:
        return z if zm else zs & ps

    e = max(pe, ze)
    pm = _shift_out(pm, e - pe)
    zm = _shift_out(zm, e - ze)
    if pm >= zm:
        sign, mag = ps, (pm + zm if ps == zs else pm - zm)
    else:
        sign, mag = zs, (pm + zm if ps == zs else zm - pm)
    if mag == 0:
        return zs & ps

    n = mag.bit_length() - 27          # bring the leading one to bit 26
    e += n
    if e >= 255:
        return sign | INF
    if e <= 0:
        n += 1
        e = 0
    if n <= 0:
        mag <<= -n
    else:
        mag = (mag >> n) | (1 if mag & (n | 1) else 0)

    r = (e << 23) + ((mag >> 3) & 0x7FFFFF)
    guard = mag & 7
    if guard > 4 or (guard == 4 and r & 1):
        r += 1
    if r < 0x800000:
        r = 0
    return sign | r


def total_order(x: int) -> int:
    """Signed key ordering sign-magnitude words: -0 just below +0, NaNs beyond the infinities."""
    return -(x & 0x7FFFFFFF) - 1 if x & SIGN else x


def flush_denormal(x: int) -> int:
    return x & SIGN if x & 0x7F800000 == 0 else x


def lut8_to_fp32(b: int) -> int:
    """SFPLUT coefficient byte: Sign, 3-bit negative exponent, 4-bit mantissa; 0xFF means zero."""
    if b == 0xFF:
        return 0
    return ((b & 0x80) << 24) | ((127 - ((b >> 4) & 7)) << 23) | ((b & 0xF) << 19)


def lut16_to_fp32(h: int) -> int:
    """SFPLUTFP32 coefficient half: FP16 fields rebiased, exponent 31 meaning zero exponent."""
    e = (h >> 10) & 0x1F
    return ((h & 0x8000) << 16) | ((0 if e == 31 else e + 112) << 23) | ((h & 0x3FF) << 13)


def _recip_seed(i: int) -> int:
    """7-bit reciprocal mantissa for mantissa bucket i: round(256 / (1 + (i + 1/2) / 128)) - 128."""
    d = 257 + 2 * i                  # 256 / (1 + (i + 1/2) / 128) = 65536 / d, and it exceeds 128
    return (2 * 65536 - 255 * d) // (2 * d)     # floor(65536 / d - 128 + 1/2) in integers


RECIP_SEED = tuple(_recip_seed(i) for i in range(128))


def approx_recip(x: int) -> int:
    """SFPARECIP magnitude: zero/denormal -> +Inf, below 2**126 -> 7-bit estimate, else 0."""
    if x < 0x800000:
        return INF
    if x < 0x7E800000:
        return ((253 - (x >> 23)) << 23) | (RECIP_SEED[(x >> 16) & 0x7F] << 16)
    return 0
