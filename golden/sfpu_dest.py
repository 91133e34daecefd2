"""Dest (DstBits) as the SFPU sees it: Dst16b / Dst32b cells and the Dst field shuffles.

Private helper of the SFPU ops. NOTE for the team: when golden/dest_view.py (Adj16/Adj32, shared by
the FPU and packers) exists, these accessors should delegate to it; until then they live here.

Facts: Dst.md (BlackholeA0 per ../shared/spec/dest-srca-srcb-registers.txt), SFPLOAD.md / SFPSTORE.md
(WormholeB0), and ttsim v1.10.0's Blackhole model, which keeps one valid bit per 16-bit row and, for a
32-bit cell, tests and sets only the valid bit of the row holding the high half.
"""
from __future__ import annotations

from .errors import NotModelled, UndefinedBehaviour

DST32_LO_OFFSET = 8     # the low 16 bits of a Dst32b cell live 8 DstBits rows below its high 16 bits


def check_no_remap(m, t: int) -> None:
    """ttsim ignores DEST_ACCESS_CFG remap_addrs / swizzle_32b; golden refuses rather than pick a side."""
    if m.cfg(t, "DEST_ACCESS_CFG_remap_addrs") or m.cfg(t, "DEST_ACCESS_CFG_swizzle_32b"):
        raise NotModelled("SFPU Dest access with DEST_ACCESS_CFG remap_addrs/swizzle_32b set")


def row32(row: int) -> int:
    """DstBits row holding the high half of Dst32b row ``row`` (Adj32 with remap and swizzle off)."""
    return ((row & 0x1F8) << 1) | (row & 0x207)


def read16(m, row: int, col: int) -> int:
    d = m.s.dest
    if not d.valid[row]:
        raise UndefinedBehaviour(f"SFPU read of Dest row {row}, which is not valid (ZEROACC'd)")
    return int(d.bits[row, col])


def write16(m, row: int, col: int, value: int) -> None:
    d = m.s.dest
    d.bits[row, col] = value & 0xFFFF
    d.valid[row] = True


def read32(m, row: int, col: int) -> int:
    hi = row32(row)
    d = m.s.dest
    if not d.valid[hi]:
        raise UndefinedBehaviour(f"SFPU read of Dst32b row {row} (DstBits row {hi}), which is not valid")
    return (int(d.bits[hi, col]) << 16) | int(d.bits[hi + DST32_LO_OFFSET, col])


def write32(m, row: int, col: int, value: int) -> None:
    hi = row32(row)
    d = m.s.dest
    d.bits[hi, col] = (value >> 16) & 0xFFFF
    d.bits[hi + DST32_LO_OFFSET, col] = value & 0xFFFF
    d.valid[hi] = True


# Dst keeps BF16 as Sign,Man(7),Exp(8) and FP16 as Sign,Man(10),Exp(5); FP32 is BF16-shuffled in its high half.

def bf16_from_dst(x: int) -> int:
    return (x & 0x8000) | ((x & 0xFF) << 7) | ((x >> 8) & 0x7F)


def bf16_to_dst(x: int) -> int:
    return (x & 0x8000) | ((x & 0x7F) << 8) | ((x >> 7) & 0xFF)


def fp16_from_dst(x: int) -> int:
    return (x & 0x8000) | ((x & 0x1F) << 10) | ((x >> 5) & 0x3FF)


def fp16_to_dst(x: int) -> int:
    return (x & 0x8000) | ((x & 0x3FF) << 5) | ((x >> 10) & 0x1F)


def fp32_from_dst(x: int) -> int:
    return (bf16_from_dst(x >> 16) << 16) | (x & 0xFFFF)


def fp32_to_dst(x: int) -> int:
    return (bf16_to_dst(x >> 16) << 16) | (x & 0xFFFF)
