"""SFPU sign/exponent/mantissa field instructions and conversions: SFPABS, SFPMOV, SFPSETSGN, SFPSETEXP,
SFPSETMAN, SFPEXEXP, SFPEXMAN, SFPDIVP2, SFPCAST, SFP_STOCH_RND (round-to-nearest modes only).

Sources: the WormholeB0 page of each instruction, narrowed to the forms ttsim v1.10.0 models on Blackhole.
Anything drawing on the PRNG (SFPMOV mode 8, stochastic rounding) is NotModelled.
"""
from __future__ import annotations

from .fp import SIGN
from .lanes import MASK32, flags_from, map_lanes, require, result_reg, set_flags, sfpu_op

EXP_BITS = 0x7F800000
MAN_BITS = 0x007FFFFF


@sfpu_op("SFPABS")
def sfpabs(m, t, f):
    """SFPABS.md (WormholeB0): mod1=1 float |x| (negative NaNs kept), mod1=0 two's complement |x|."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 1, f"SFPABS instr_mod1={f.instr_mod1} (reserved bits)", undefined=True)
    if f.instr_mod1:
        fn = lambda x: x & 0x7FFFFFFF if x <= 0xFF800000 else x  # noqa: E731
    else:
        fn = lambda x: -x if x >> 31 else x  # noqa: E731
    map_lanes(m, vd, fn, f.lreg_c)


@sfpu_op("SFPMOV")
def sfpmov(m, t, f):
    """SFPMOV.md (WormholeB0): VD = VC, sign flipped with bit 0; mod1=2 writes every lane."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(not mod & 4, f"SFPMOV instr_mod1={mod} (reserved bit)", undefined=True)
    require(mod in (0, 1, 2), f"SFPMOV instr_mod1={mod} (PRNG and configuration reads not modelled)")
    flip = SIGN if mod & 1 else 0
    map_lanes(m, vd, lambda c: c ^ flip, f.lreg_c, mask=MASK32 if mod == 2 else None)


@sfpu_op("SFPSETSGN")
def sfpsetsgn(m, t, f):
    """SFPSETSGN.md (WormholeB0): VD = {VD.Sign or imm1, VC.Exp, VC.Man}."""
    vd = result_reg(f.lreg_dest)
    mod, imm = f.instr_mod1, f.imm12_math
    require(mod <= 1, f"SFPSETSGN instr_mod1={mod} (reserved bits)", undefined=True)
    require(imm <= 1 and (mod & 1 or imm == 0), f"SFPSETSGN instr_mod1={mod} imm12={imm}")
    if mod & 1:
        map_lanes(m, vd, lambda c: (c & 0x7FFFFFFF) | (imm << 31), f.lreg_c)
    else:
        map_lanes(m, vd, lambda c, d: (c & 0x7FFFFFFF) | (d & SIGN), f.lreg_c, vd)


@sfpu_op("SFPSETEXP")
def sfpsetexp(m, t, f):
    """SFPSETEXP.md (WormholeB0): exponent of VC replaced by VD[7:0] (0), imm8 (1) or VD's exponent (2)."""
    vd = result_reg(f.lreg_dest)
    mod, imm = f.instr_mod1, f.imm12_math & 0xFF
    require(mod <= 2 and (mod == 1 or imm == 0), f"SFPSETEXP instr_mod1={mod} imm={imm}")
    keep = SIGN | MAN_BITS
    if mod == 1:
        map_lanes(m, vd, lambda c: (c & keep) | (imm << 23), f.lreg_c)
    elif mod == 2:
        map_lanes(m, vd, lambda c, d: (c & keep) | (d & EXP_BITS), f.lreg_c, vd)
    else:
        map_lanes(m, vd, lambda c, d: (c & keep) | ((d & 0xFF) << 23), f.lreg_c, vd)


@sfpu_op("SFPSETMAN")
def sfpsetman(m, t, f):
    """SFPSETMAN.md (WormholeB0): mantissa of VC replaced by VD's (mod1=0) or by imm12 << 11 (ttsim: imm 0)."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 1 and f.imm12_math == 0, f"SFPSETMAN instr_mod1={f.instr_mod1} imm12={f.imm12_math}")
    if f.instr_mod1:
        map_lanes(m, vd, lambda c: c & (SIGN | EXP_BITS), f.lreg_c)
    else:
        map_lanes(m, vd, lambda c, d: (c & (SIGN | EXP_BITS)) | (d & MAN_BITS), f.lreg_c, vd)


@sfpu_op("SFPEXEXP")
def sfpexexp(m, t, f):
    """SFPEXEXP.md (WormholeB0): VD = exponent of VC, debiased unless bit 0; mod1 2 / 10 set flags to < 0 / >= 0."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(not mod & 4, f"SFPEXEXP instr_mod1={mod} (reserved bit)", undefined=True)
    require(mod <= 2 or mod == 10, f"SFPEXEXP instr_mod1={mod}")
    bias = 0 if mod & 1 else 127
    mask = m.s.sfpu.lane_mask()
    map_lanes(m, vd, lambda c: ((c >> 23) & 0xFF) - bias, f.lreg_c, mask=mask)
    if mod in (2, 10):
        negative = flags_from(m, lambda x: bool(x >> 31), vd, mask)
        set_flags(m, negative if mod == 2 else ~negative & mask, mask)


@sfpu_op("SFPEXMAN")
def sfpexman(m, t, f):
    """SFPEXMAN.md (WormholeB0): VD = mantissa of VC with (mod1=0) or without (mod1=1) the hidden bit."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 1, f"SFPEXMAN instr_mod1={f.instr_mod1} (reserved bits)", undefined=True)
    hidden = 0 if f.instr_mod1 else 0x800000
    map_lanes(m, vd, lambda c: (c & MAN_BITS) | hidden, f.lreg_c)


@sfpu_op("SFPDIVP2")
def sfpdivp2(m, t, f):
    """SFPDIVP2.md (WormholeB0): exponent of VC set to imm8 (mod1=0) or increased by it mod 256 (mod1=1,
    Inf/NaN untouched); imm12 must be a sign-extended 8-bit value."""
    vd = result_reg(f.lreg_dest)
    mod, imm = f.instr_mod1, f.imm12_math
    require(mod <= 1, f"SFPDIVP2 instr_mod1={mod} (reserved bits)", undefined=True)
    require(imm <= 0x7F or imm >= 0xF80, f"SFPDIVP2 imm12={imm:#x} is not a sign-extended byte", undefined=True)
    imm &= 0xFF

    def lane(c: int) -> int:
        e = (c >> 23) & 0xFF
        if mod:
            e = e if e == 255 else (e + imm) & 0xFF
        else:
            e = imm
        return (e << 23) | (c & (SIGN | MAN_BITS))

    map_lanes(m, vd, lane, f.lreg_c)


def _signmag_to_fp32(x: int) -> int:
    """Sign-magnitude 32-bit integer to FP32, round to nearest even; -0 stays -0."""
    sign, mag = x & SIGN, x & 0x7FFFFFFF
    if not mag:
        return sign
    lz = 32 - mag.bit_length()
    mag = (mag << lz) & MASK32
    r = sign | (((157 - lz) << 23) + (mag >> 8))
    if mag & 0x80 and mag & 0x17F:
        r += 1
    return r


@sfpu_op("SFPCAST")
def sfpcast(m, t, f):
    """SFPCAST.md (WormholeB0): mod1=0 sign-magnitude int -> FP32 (nearest even); BH mod1=3 swaps between
    sign-magnitude and two's complement. Stochastic mod1=1 and mod1=2 are not modelled (ttsim)."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(mod <= 3, f"SFPCAST instr_mod1={mod}", undefined=True)
    require(mod in (0, 3), f"SFPCAST instr_mod1={mod} (stochastic rounding / SFPABS form)")
    if mod == 3:
        fn = lambda x: (x & SIGN) | (-x if x >> 31 else x)  # noqa: E731
    else:
        fn = _signmag_to_fp32
    map_lanes(m, vd, fn, f.lreg_src_c & 0xF)


def _to_bf16_nearest(x: int) -> int:
    """FP32 -> BF16 in the high half: zero/denormal -> +0, Inf/NaN -> Inf, else round half away from zero."""
    e = (x >> 23) & 0xFF
    if e == 0:
        return 0
    if e == 255:
        return x & 0xFF800000
    low = x & 0xFFFF
    return (x - low + (0x10000 if low >= 0x8000 else 0)) & MASK32


def _to_small_int(x: int, limit: int, signed: bool) -> int:
    """FP32 -> sign-magnitude integer of at most `limit`, round half up on magnitude (|x| when unsigned)."""
    sign = x & SIGN if signed else 0
    e = ((x >> 23) & 0xFF) - 127
    if e < -1:
        return 0
    if e >= 16:
        return sign | limit
    sig = (x & MAN_BITS) | 0x800000
    sig = sig << e if e >= 0 else sig >> 1
    mag = min((sig >> 23) + (1 if sig & MAN_BITS >= 0x400000 else 0), limit)
    return (sign if mag else 0) | mag


_INT_LIMITS = {2: (255, False), 3: (127, True), 6: (65535, False), 7: (32767, True)}


@sfpu_op("SFP_STOCH_RND")
def sfp_stoch_rnd(m, t, f):
    """SFPSTOCHRND_FloatFloat.md / _FloatInt.md (WormholeB0) with rnd_mode 0 (nearest): FP32 -> BF16 (mod1=1),
    -> uint8/int8/uint16/int16 (2/3/6/7). Stochastic rounding and the integer-input modes are NotModelled."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(mod <= 7 or mod in (12, 13), f"SFP_STOCH_RND instr_mod1={mod}", undefined=True)
    require(mod in (1, 2, 3, 6, 7), f"SFP_STOCH_RND instr_mod1={mod}")
    require(f.rnd_mode & 3 == 0, "SFP_STOCH_RND stochastic rounding (out of bit-exact scope)")
    require(f.imm8_math == 0, f"SFP_STOCH_RND imm8={f.imm8_math}")
    if mod == 1:
        map_lanes(m, vd, _to_bf16_nearest, f.lreg_src_c)
    else:
        limit, signed = _INT_LIMITS[mod]
        map_lanes(m, vd, lambda x: _to_small_int(x, limit, signed), f.lreg_src_c)
