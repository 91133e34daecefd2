"""SFPU floating-point arithmetic: SFPMAD, SFPADD, SFPMUL, SFPMULI, SFPADDI, SFPLUT, SFPLUTFP32, and the
Blackhole-only SFPMUL24 and SFPARECIP. All multiply-adds go through golden.sfpu.fp.fma (ttsim's Blackhole
SFPU MAD). Forms ttsim v1.10.0 refuses raise NotModelled (e.g. SFPMAD's indirect-register modes, bits 3:2),
its "non-contractual" operand choices raise UndefinedBehaviour.
"""
from __future__ import annotations

from .fp import SIGN, approx_recip, fma, lut16_to_fp32, lut8_to_fp32
from .lanes import map_lanes, require, result_reg, sfpu_op

ONE = 0x3F800000
MINUS_ONE = 0xBF800000
ZERO_REG = 9
ONE_REG = 10


@sfpu_op("SFPMAD")
def sfpmad(m, t, f):
    """SFPMAD.md (WormholeB0); BH: instr_mod1 bit 0 negates VA, bit 1 negates VC (ttsim v1.10.0)."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 3, f"SFPMAD instr_mod1={f.instr_mod1} (indirect register modes)")
    na = SIGN if f.instr_mod1 & 1 else 0
    nc = SIGN if f.instr_mod1 & 2 else 0
    map_lanes(m, vd, lambda a, b, c: fma(a ^ na, b, c ^ nc), f.lreg_src_a & 0xF, f.lreg_src_b, f.lreg_src_c)


@sfpu_op("SFPADD")
def sfpadd(m, t, f):
    """SFPADD.md (WormholeB0): VD = (+-1.0) * VB + (+-VC), one multiplicand being LReg[10]; BH negation bits."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 3, f"SFPADD instr_mod1={f.instr_mod1}")
    a, b = f.lreg_src_a & 0xF, f.lreg_src_b
    require(a == ONE_REG or b == ONE_REG, "SFPADD with neither VA nor VB = LReg[10] (non-contractual)", undefined=True)
    other = b if a == ONE_REG else a
    x = MINUS_ONE if f.instr_mod1 & 1 else ONE
    nc = SIGN if f.instr_mod1 & 2 else 0
    map_lanes(m, vd, lambda b_, c: fma(x, b_, c ^ nc), other, f.lreg_src_c)


@sfpu_op("SFPMUL")
def sfpmul(m, t, f):
    """SFPMUL.md (WormholeB0): VD = VA * VB + 0 (VC must be LReg[9]); BH: instr_mod1 bit 0 negates VA."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 <= 1, f"SFPMUL instr_mod1={f.instr_mod1}")
    require(f.lreg_src_c == ZERO_REG, "SFPMUL with VC other than LReg[9] (non-contractual)", undefined=True)
    na = SIGN if f.instr_mod1 & 1 else 0
    map_lanes(m, vd, lambda a, b: fma(a ^ na, b, 0), f.lreg_src_a & 0xF, f.lreg_src_b)


@sfpu_op("SFPMULI")
def sfpmuli(m, t, f):
    """SFPMULI.md (WormholeB0): VD = VD * BF16(imm16)."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 == 0, f"SFPMULI instr_mod1={f.instr_mod1}")
    imm = f.imm16_math << 16
    map_lanes(m, vd, lambda d: fma(imm, d, 0), vd)


@sfpu_op("SFPADDI")
def sfpaddi(m, t, f):
    """SFPADDI.md (WormholeB0): VD = BF16(imm16) * 1.0 + VD."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 == 0, f"SFPADDI instr_mod1={f.instr_mod1}")
    imm = f.imm16_math << 16
    map_lanes(m, vd, lambda d: fma(imm, ONE, d), vd)


def _range3(b: int) -> int:
    """Which of three coefficient registers a |LReg[3]| picks: [0, 1), [1, 2), [2, inf]."""
    return 0 if b < 0x3F800000 else 1 if b < 0x40000000 else 2


@sfpu_op("SFPLUT")
def sfplut(m, t, f):
    """SFPLUT.md (WormholeB0): VD = lut8(coef >> 8) * |LReg[3]| + lut8(coef), result sign from LReg[3]."""
    vd = result_reg(f.lreg_ind)
    require(f.instr_mod0 == 4, f"SFPLUT instr_mod0={f.instr_mod0} (ttsim v1.10.0 takes 4 only)")

    def lane(l0: int, l1: int, l2: int, l3: int) -> int:
        b = l3 & 0x7FFFFFFF
        coef = (l0, l1, l2)[_range3(b)]
        r = fma(lut8_to_fp32((coef >> 8) & 0xFF), b, lut8_to_fp32(coef & 0xFF))
        return (r & 0x7FFFFFFF) | (l3 & SIGN)

    map_lanes(m, vd, lane, 0, 1, 2, 3)


@sfpu_op("SFPLUTFP32")
def sfplutfp32(m, t, f):
    """SFPLUTFP32.md (WormholeB0), mode 2 (FP16 coefficient pairs) only: VD = A * |LReg[3]| + C."""
    vd = result_reg(f.lreg_dest & 0xF)
    require(f.instr_mod1 == 2, f"SFPLUTFP32 instr_mod1={f.instr_mod1} (ttsim v1.10.0 takes 2 only)")

    def lane(*regs: int) -> int:
        b = regs[3] & 0x7FFFFFFF
        i = _range3(b)
        upper = b >= 0x40400000 if i == 2 else (b >= 0x3F000000 if i == 0 else b >= 0x3FC00000)
        j = 16 if upper else 0
        return fma(lut16_to_fp32((regs[i] >> j) & 0xFFFF), b, lut16_to_fp32((regs[4 + i] >> j) & 0xFFFF))

    map_lanes(m, vd, lane, *range(7))


@sfpu_op("SFPMUL24")
def sfpmul24(m, t, f):
    """Blackhole SFPMUL24 (ttsim v1.10.0): low (mod1=0) or high (mod1=1) 23 bits of the 23x23-bit product."""
    vd = result_reg(f.lreg_dest)
    require(not f.instr_mod1 & 2, f"SFPMUL24 instr_mod1={f.instr_mod1} (reserved bit)", undefined=True)
    require(f.instr_mod1 <= 1, f"SFPMUL24 instr_mod1={f.instr_mod1}")
    require(f.lreg_src_c == ZERO_REG, "SFPMUL24 with VC other than LReg[9] (non-contractual)", undefined=True)
    if f.instr_mod1:
        fn = lambda a, b: ((a & 0x7FFFFF) * (b & 0x7FFFFF)) >> 23  # noqa: E731
    else:
        fn = lambda a, b: (a * b) & 0x7FFFFF  # noqa: E731
    map_lanes(m, vd, fn, f.lreg_src_a & 0xF, f.lreg_src_b)


@sfpu_op("SFPARECIP")
def sfparecip(m, t, f):
    """Blackhole SFPARECIP (ttsim v1.10.0): sign kept, 1/|x| from a 7-bit table (Inf for zero, 0 from 2**126)."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 == 0 and f.imm12_math & 0xF == 0, f"SFPARECIP instr_mod1={f.instr_mod1}")
    map_lanes(m, vd, lambda x: (x & SIGN) | approx_recip(x & 0x7FFFFFFF), f.lreg_c)
