"""SFPU lane flags (conditional execution): SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC, SFPCOMPC, and the Blackhole
comparisons SFPGT / SFPLE.

Sources: VectorUnit.md "Lane Predication Masks" and the instruction pages (WormholeB0); ttsim v1.10.0's
Blackhole model, which golden follows: flags and their enable reset to all-true, the flag stack holds
(enable, flags) pairs and is 8 deep (overflow/underflow undefined), SFPSETCC only narrows the flags of
enabled lanes and is refused while flags are disabled; comparisons use sign-magnitude total order.
"""
from __future__ import annotations

from ..errors import UndefinedBehaviour
from ..state import SFPU_CC_STACK_DEPTH
from .fp import total_order
from .lanes import MASK32, flag_only, flags_from, lanes_of, require, result_reg, s32, set_flags, sfpu_op

_SETCC = {0: lambda v: v < 0, 2: lambda v: v != 0, 4: lambda v: v >= 0, 6: lambda v: v == 0}


@sfpu_op("SFPSETCC")
def sfpsetcc(m, t, f):
    """SFPSETCC.md (WormholeB0), integer-sign forms 0/2/4/6 (VC < 0, != 0, >= 0, == 0)."""
    flag_only(f.lreg_dest)
    mod = f.instr_mod1
    require(mod in _SETCC and f.imm12_math == 0, f"SFPSETCC instr_mod1={mod} imm12={f.imm12_math}")
    s = m.s.sfpu
    require(s.cc_en, "SFPSETCC while lane flags are disabled (ttsim v1.10.0 refuses)")
    pred = _SETCC[mod]
    set_flags(m, flags_from(m, lambda x: pred(s32(x)), f.lreg_c, s.cc), s.cc)


@sfpu_op("SFPENCC")
def sfpencc(m, t, f):
    """SFPENCC.md (WormholeB0): mod1=0 sets every flag; mod1=10 sets flags to imm[1] and their enable to imm[0]."""
    flag_only(f.lreg_dest)
    s = m.s.sfpu
    imm = f.imm12_math & 3
    if f.instr_mod1 == 0:
        require(imm == 0, f"SFPENCC instr_mod1=0 imm={imm}")
        s.cc = MASK32
    else:
        require(f.instr_mod1 == 10, f"SFPENCC instr_mod1={f.instr_mod1}")
        s.cc = MASK32 if imm & 2 else 0
        s.cc_en = bool(imm & 1)


@sfpu_op("SFPPUSHC")
def sfppushc(m, t, f):
    """SFPPUSHC.md (WormholeB0), plain push of (enable, flags)."""
    flag_only(f.lreg_dest)
    require(f.instr_mod1 == 0, f"SFPPUSHC instr_mod1={f.instr_mod1}")
    s = m.s.sfpu
    if len(s.cc_stack) >= SFPU_CC_STACK_DEPTH:
        raise UndefinedBehaviour("SFPPUSHC: lane flag stack overflow")
    s.cc_stack.append((s.cc_en, s.cc))


@sfpu_op("SFPPOPC")
def sfppopc(m, t, f):
    """SFPPOPC.md (WormholeB0), plain pop of (enable, flags)."""
    flag_only(f.lreg_dest)
    require(f.instr_mod1 == 0, f"SFPPOPC instr_mod1={f.instr_mod1}")
    s = m.s.sfpu
    if not s.cc_stack:
        raise UndefinedBehaviour("SFPPOPC: lane flag stack underflow")
    s.cc_en, s.cc = s.cc_stack.pop()


@sfpu_op("SFPCOMPC")
def sfpcompc(m, t, f):
    """SFPCOMPC.md (WormholeB0): flags = top-of-stack flags AND NOT flags (NOT flags on an empty stack)."""
    flag_only(f.lreg_dest)
    s = m.s.sfpu
    require(s.cc_en, "SFPCOMPC while lane flags are disabled")
    if s.cc_stack:
        top_en, top_cc = s.cc_stack[-1]
        require(top_en, "SFPCOMPC with a disabled top of stack")
        s.cc = top_cc & ~s.cc & MASK32
    else:
        s.cc = ~s.cc & MASK32


def _compare(m, f, holds) -> None:
    """mod1=1: flags of enabled lanes = holds(VD, VC); mod1=8: VD = all ones where it holds, else 0."""
    vd = result_reg(f.lreg_dest)
    require(f.instr_mod1 in (1, 8), f"instr_mod1={f.instr_mod1}")
    s = m.s.sfpu
    mask = s.lane_mask()
    L = s.lreg
    c_col, d_col = [int(v) for v in L[f.lreg_c]], [int(v) for v in L[vd]]
    true = 0
    for lane in lanes_of(mask):
        if holds(total_order(d_col[lane]), total_order(c_col[lane])):
            true |= 1 << lane
    if f.instr_mod1 == 1:
        set_flags(m, true, mask)
    else:
        for lane in lanes_of(mask):
            L[vd, lane] = MASK32 if true >> lane & 1 else 0


@sfpu_op("SFPGT")
def sfpgt(m, t, f):
    """Blackhole SFPGT (ttsim v1.10.0): VD > VC in sign-magnitude order, to flags or to VD."""
    _compare(m, f, lambda d, c: d > c)


@sfpu_op("SFPLE")
def sfple(m, t, f):
    """Blackhole SFPLE (ttsim v1.10.0): VD <= VC in sign-magnitude order, to flags or to VD."""
    _compare(m, f, lambda d, c: d <= c)
