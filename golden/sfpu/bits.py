"""SFPU integer and bitwise instructions: SFPAND, SFPOR, SFPXOR, SFPNOT, SFPSHFT, SFPSHFT2, SFPIADD, SFPLZ.

Sources: the WormholeB0 pages of each instruction; Blackhole extensions as ttsim v1.10.0 models them
(SFPAND/SFPOR take VB from imm12[3:0] when instr_mod1 = 1; SFPSHFT bit 1 = arithmetic right shift, bit 2 =
shift VC instead of VD; SFPSHFT2 mode 4 shifts lanes right within a row filling zero).
"""
from __future__ import annotations

from .lanes import MASK32, flags_from, lanes_of, map_lanes, require, result_reg, s32, set_flags, sfpu_op


def _two_operand(m, f, op) -> None:
    """SFPAND / SFPOR: VD = VB op VC, where VB is VD, or (Blackhole, instr_mod1 = 1) LReg[imm12[3:0]]."""
    vd = result_reg(f.lreg_dest)
    imm = f.imm12_math & 0xF
    if f.instr_mod1 == 1:
        vb = imm
    else:
        require(f.instr_mod1 == 0 and imm == 0, f"instr_mod1={f.instr_mod1} imm12={imm}")
        vb = vd
    map_lanes(m, vd, op, vb, f.lreg_c)


@sfpu_op("SFPAND")
def sfpand(m, t, f):
    """SFPAND.md (WormholeB0); BH VB-from-immediate form (ttsim v1.10.0)."""
    _two_operand(m, f, lambda b, c: b & c)


@sfpu_op("SFPOR")
def sfpor(m, t, f):
    """SFPOR.md (WormholeB0); BH VB-from-immediate form (ttsim v1.10.0)."""
    _two_operand(m, f, lambda b, c: b | c)


@sfpu_op("SFPXOR")
def sfpxor(m, t, f):
    """SFPXOR.md (WormholeB0): VD ^= VC."""
    vd = result_reg(f.lreg_dest)
    map_lanes(m, vd, lambda d, c: d ^ c, vd, f.lreg_c)


@sfpu_op("SFPNOT")
def sfpnot(m, t, f):
    """SFPNOT.md (WormholeB0): VD = ~VC."""
    vd = result_reg(f.lreg_dest)
    map_lanes(m, vd, lambda c: ~c, f.lreg_c)


def _shift(x: int, amount: int, arithmetic: bool) -> int:
    """Shift left by amount % 32 when amount >= 0, else right by (-amount) % 32."""
    if amount >= 0:
        return x << (amount & 31)
    n = (-amount) & 31
    return s32(x) >> n if arithmetic else x >> n


def _sext12(v: int) -> int:
    return v - 0x1000 if v & 0x800 else v


@sfpu_op("SFPSHFT")
def sfpshft(m, t, f):
    """SFPSHFT.md (WormholeB0); BH mode bits: 1 immediate amount, 2 arithmetic, 4 shift VC (ttsim v1.10.0)."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(mod in (0, 1, 2, 3, 5, 7), f"SFPSHFT instr_mod1={mod}", undefined=True)
    require(mod & 1 or f.imm12_math == 0, f"SFPSHFT register amount with imm12={f.imm12_math}")
    imm = _sext12(f.imm12_math)
    arith = bool(mod & 2)
    src = f.lreg_c if mod & 4 else vd
    if mod & 1:
        map_lanes(m, vd, lambda x: _shift(x, imm, arith), src)
    else:
        map_lanes(m, vd, lambda x, c: _shift(x, s32(c), arith), src, f.lreg_c)


@sfpu_op("SFPSHFT2")
def sfpshft2(m, t, f):
    """SFPSHFT2.md (WormholeB0), modes 3 (rotate lanes right in each row of 8), 4 (BH: shift right, zero
    fill) and 5 (VD = LReg[imm12] shifted by VC); the LReg-shuffling modes 0..2 are not modelled (ttsim)."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(mod <= 6, f"SFPSHFT2 instr_mod1={mod}", undefined=True)
    require(mod in (3, 4, 5), f"SFPSHFT2 instr_mod1={mod}")
    imm = f.imm12_math
    require(imm < 16 if mod == 5 else imm == 0, f"SFPSHFT2 instr_mod1={mod} imm12={imm}")
    if mod == 5:
        map_lanes(m, vd, lambda b, c: _shift(b, s32(c), False), imm, f.lreg_src_c)
        return
    L = m.s.sfpu.lreg
    vc = [int(v) for v in L[f.lreg_src_c]]
    for lane in lanes_of(m.s.sfpu.lane_mask()):
        if lane & 7:
            L[vd, lane] = vc[lane - 1]
        else:
            L[vd, lane] = vc[lane + 7] if mod == 3 else 0


@sfpu_op("SFPIADD")
def sfpiadd(m, t, f):
    """SFPIADD.md (WormholeB0): VD = VC +- VD or VC + imm12; flags from the sign unless bit 2 (bit 3 inverts)."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(mod <= 10 and (mod & 3) <= 2, f"SFPIADD instr_mod1={mod}")
    mask = m.s.sfpu.lane_mask()
    if mod & 1:
        imm = _sext12(f.imm12_math)
        fn = lambda c, d: c + imm  # noqa: E731
    elif mod & 2:
        fn = lambda c, d: c - d  # noqa: E731
    else:
        fn = lambda c, d: c + d  # noqa: E731
    map_lanes(m, vd, fn, f.lreg_c, vd, mask=mask)
    if mod & 8:
        set_flags(m, flags_from(m, lambda x: not x >> 31, vd, mask), mask)
    elif not mod & 4:
        set_flags(m, flags_from(m, lambda x: bool(x >> 31), vd, mask), mask)


@sfpu_op("SFPLZ")
def sfplz(m, t, f):
    """SFPLZ.md (WormholeB0): VD = leading zeros of VC (of |VC| with bit 2); bit 1 sets flags to VC != 0."""
    vd = result_reg(f.lreg_dest)
    mod = f.instr_mod1
    require(not mod & 1, f"SFPLZ instr_mod1={mod} (reserved bit)", undefined=True)
    require(mod <= 4, f"SFPLZ instr_mod1={mod}")
    mask = m.s.sfpu.lane_mask()
    keep = 0x7FFFFFFF if mod & 4 else MASK32
    nonzero = flags_from(m, lambda x: bool(x & keep), f.lreg_c, mask)
    map_lanes(m, vd, lambda c: 32 - (c & keep).bit_length(), f.lreg_c, mask=mask)
    if mod & 2:
        set_flags(m, nonzero, mask)
