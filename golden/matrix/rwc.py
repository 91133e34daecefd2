"""RWC instructions: SETRWC and INCRWC (the matrix unit's SrcA / SrcB / Dst row counters).

Sources: tt-isa-documentation WormholeB0 SETRWC.md, INCRWC.md, RWCs.md; Blackhole differences from
blackhole-deltas #3 (the Dst update runs when SET_D or rwc_cr's CToCR bit is set; BitMask bit 4 sets the
SFPU stack pointer from rwc_d:rwc_b:rwc_a, per tt-llk assembly.yaml). SETIBRWC has no functional
description in any source on disk, so it stays unmodelled.
"""
from __future__ import annotations

from ..errors import UndefinedBehaviour
from ..handlers import semantics
from ..state import DST_MASK, SRC_MASK, Rwc
from .fpu import clear_dvalid

SET_A, SET_B, SET_D, SET_F, SET_SP = 1, 2, 4, 8, 16
CR_A, CR_B, CR_D, C_TO_CR = 1, 2, 4, 8
SFPU_SP_BITS = 12    # rwc_a supplies SP bits 3:0, rwc_b 7:4, rwc_d 11:8 (assembly.yaml)


def _reserved(name: str, value: int, allowed: int, what: str) -> None:
    if value & ~allowed:
        raise UndefinedBehaviour(f"{name} {what}={value:#x}: bits {value & ~allowed:#x} have no documented meaning")


@semantics("SETRWC")
def setrwc(m, t, f) -> None:
    """SETRWC.md (WormholeB0); BH: blackhole-deltas #3 (condition SET_D or CToCR; BitMask bit 4 = SFPU SP)."""
    _reserved("SETRWC", f.bitmask, 0x1F, "BitMask")
    rwc: Rwc = m.s.rwc[t]
    if f.bitmask & SET_A:
        base = rwc.srca_cr if f.rwc_cr & CR_A else 0
        rwc.srca = rwc.srca_cr = (base + f.rwc_a) & SRC_MASK
    if f.bitmask & SET_B:
        base = rwc.srcb_cr if f.rwc_cr & CR_B else 0
        rwc.srcb = rwc.srcb_cr = (base + f.rwc_b) & SRC_MASK
    if f.bitmask & SET_D or f.rwc_cr & C_TO_CR:
        if f.rwc_cr & C_TO_CR:
            base = rwc.dst
        elif f.rwc_cr & CR_D:
            base = rwc.dst_cr
        else:
            base = 0
        rwc.dst = rwc.dst_cr = (base + f.rwc_d) & DST_MASK
    if f.bitmask & SET_F:
        rwc.fidelity = 0
    if f.bitmask & SET_SP:
        m.s.sfpu.sp = (f.rwc_d << 8 | f.rwc_b << 4 | f.rwc_a) & ((1 << SFPU_SP_BITS) - 1)
    clear_dvalid(m, t, f.clear_ab_vld)


def _increment(cur: int, cr: int, inc: int, use_cr: int, mask: int) -> tuple[int, int]:
    if use_cr:
        cr = (cr + inc) & mask
        return cr, cr
    return (cur + inc) & mask, cr


@semantics("INCRWC")
def incrwc(m, t, f) -> None:
    """INCRWC.md (WormholeB0): add to each counter, or to its checkpoint and copy it back; rwc_cr bits 5:3 reserved."""
    _reserved("INCRWC", f.rwc_cr, 0x7, "rwc_cr")
    rwc: Rwc = m.s.rwc[t]
    rwc.srca, rwc.srca_cr = _increment(rwc.srca, rwc.srca_cr, f.rwc_a, f.rwc_cr & CR_A, SRC_MASK)
    rwc.srcb, rwc.srcb_cr = _increment(rwc.srcb, rwc.srcb_cr, f.rwc_b, f.rwc_cr & CR_B, SRC_MASK)
    rwc.dst, rwc.dst_cr = _increment(rwc.dst, rwc.dst_cr, f.rwc_d, f.rwc_cr & CR_D, DST_MASK)
