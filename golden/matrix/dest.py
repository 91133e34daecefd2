"""ZEROACC: mark Dst rows invalid (it clears DstRowValid; it never writes zeroes into DstBits).

Facts: tt-isa-documentation WormholeB0 ZEROACC.md; Blackhole per ttsim v1.10.0 and blackhole-deltas #11:
clear_mode is bits 20:19 with use_32_bit_mode (bit 18) as its third bit, `where` is bits 9:0, bits 23:22
clear SrcA/SrcB data valid (tt-llk assembly.yaml; not modelled), and the 16-row modes address the Dst half
the thread is working in unless Config DEST_ACCESS_CFG_zeroacc_absolute_tile_mode is set.
"""
from __future__ import annotations

from ..addrmod import apply_addr_mod
from ..dest_view import HALF_ROWS, DstView, config_word, uses_dst32b, zeroacc_absolute
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..registers import config_field, thread_config_field
from ..state import DST_MASK

ONE_ROW, SIXTEEN_ROWS, HALF, ALL = 0, 1, 2, 3
_MATH_OFFSET = thread_config_field("DEST_TARGET_REG_CFG_MATH_Offset")
_REGW_BASE = config_field("DEST_REGW_BASE_Base")


def dst_base(m, t: int) -> int:
    """DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst + DEST_REGW_BASE_Base: what a math instruction's Dst
    row field is relative to (not yet wrapped to 10 bits)."""
    return (_MATH_OFFSET.get(m.s.thread_config[t][_MATH_OFFSET.index]) + m.s.rwc[t].dst
            + _REGW_BASE.get(config_word(m, t, _REGW_BASE.index, _REGW_BASE.mask)))


def _sixteen_rows(m, t: int, where: int, use32: bool, revert: bool) -> None:
    """Modes 1 and 5 (Blackhole): 16 Dst16b rows at where*16, or 16 Dst32b rows at where*16 (which
    ttsim restricts to a hardware-bug workaround), in the thread's current Dst half unless absolute."""
    if not zeroacc_absolute(m, t):
        # The half bit of the thread's Dst offset: bit 9 of a Dst16b row; bit 8 or 9 of a Dst32b row.
        upper = dst_base(m, t) & (0x300 if use32 else 0x200)
        if upper:
            where += 16 if use32 else 32
    limit = 32 if use32 else 64
    if where >= limit:
        raise UndefinedBehaviour(f"ZEROACC 16-row mode block {where} is beyond Dst (ttsim: non-contractual)")
    view = DstView(m, t)
    first = where * 16
    blocks = [view.sel32(first, 8), view.sel32(first + 8, 8)] if use32 else [view.sel16(first, 16)]
    for rows in blocks:
        view.valid[rows] = revert


@semantics("ZEROACC")
def zeroacc(m, t, f) -> None:
    """ZEROACC.md (WormholeB0); BH: blackhole-deltas #11 (field widths, half-relative 16-row mode)."""
    if f.clear_mode >> 2:
        raise NotModelled(f"ZEROACC clear_mode bits 23:21 = {f.clear_mode >> 2:#x} "
                          "(bits 23:22 also clear Src data valid per assembly.yaml)")
    if f.where >> 10:
        raise NotModelled(f"ZEROACC where={f.where:#x}: ttsim decodes bits 9:0 only")
    mode, where = f.clear_mode & 3, f.where
    if f.clear_zero_flags and not (mode == SIXTEEN_ROWS and f.use_32_bit_mode):
        raise UndefinedBehaviour("ZEROACC clear_zero_flags (revert) outside the 32-bit 16-row mode")
    if mode == ONE_ROW:
        view = DstView(m, t)
        row = (where + dst_base(m, t)) & DST_MASK
        view.valid[view.row32(row) if uses_dst32b(m, t) else view.row16(row)] = False
    elif mode == SIXTEEN_ROWS:
        _sixteen_rows(m, t, where, bool(f.use_32_bit_mode), bool(f.clear_zero_flags))
    elif mode == HALF:
        if where > 1:
            raise UndefinedBehaviour(f"ZEROACC half mode where={where} (0 or 1; ttsim: non-contractual)")
        m.s.dest.valid[where * HALF_ROWS:(where + 1) * HALF_ROWS] = False
    else:
        if where:
            raise UndefinedBehaviour(f"ZEROACC all mode where={where} (0; ttsim: non-contractual)")
        m.s.dest.valid[:] = False
    if mode in (ONE_ROW, SIXTEEN_ROWS):
        apply_addr_mod(m, t, f.addr_mode)
