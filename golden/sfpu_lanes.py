"""Shared plumbing of the SFPU ops: lane masks, per-lane updates, lane flags, result-register rules.

Facts: VectorUnit.md / LReg.md (WormholeB0) and ttsim v1.10.0 (Blackhole): a lane is enabled when lane
flags are off or its flag is set; results go to LReg[0..7] only; an SFPU instruction word whose result
field names LReg[12..15] is captured as an SFPLOADMACRO template instead of executing; with LaneConfig
ENABLE_DEST_INDEX set, results written to LReg[4..7] are corrupted (erratum TEN-2932).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .errors import NotModelled, UndefinedBehaviour

MASK32 = 0xFFFFFFFF
LANES = 32
LANE_CONFIG_ENABLE_DEST_INDEX = 0x4


def lanes_of(mask: int) -> list[int]:
    return [i for i in range(LANES) if (mask >> i) & 1]


def lane_bools(mask: int) -> np.ndarray:
    return ((mask >> np.arange(LANES, dtype=np.uint64)) & 1).astype(bool)


def u32(x: int) -> int:
    return x & MASK32


def s32(x: int) -> int:
    x &= MASK32
    return x - (1 << 32) if x >> 31 else x


def result_reg(m, vd: int, erratum: bool = True, limit: int = 8) -> int:
    """Check the result register of an SFPU op (4-bit VD) and return it."""
    if vd >= 12:
        raise NotModelled(f"LReg[{vd}] as a result captures an SFPLOADMACRO template (not modelled)")
    if erratum and (m.s.sfpu.lane_config & LANE_CONFIG_ENABLE_DEST_INDEX) and 4 <= vd < 8:
        raise UndefinedBehaviour(f"TEN-2932: result to LReg[{vd}] is corrupted while ENABLE_DEST_INDEX is set")
    if vd >= limit:
        raise NotModelled(f"result to LReg[{vd}] (ttsim v1.10.0 refuses it)")
    return vd


def flag_only(m, vd: int) -> None:
    """Flag-stack / lane-flag ops carry no result register; their VD must be 0."""
    if vd:
        result_reg(m, vd)   # 12..15 is a template capture
        raise NotModelled(f"flag-only SFPU instruction with VD={vd}")


def map_lanes(m, vd: int, fn: Callable[..., int], *srcs: int, mask: int | None = None) -> None:
    """LReg[vd][lane] = fn(LReg[s][lane] for s in srcs) on each enabled lane (all reads precede writes)."""
    L = m.s.sfpu.lreg
    if mask is None:
        mask = m.s.sfpu.lane_mask()
    lanes = lanes_of(mask)
    cols = [[int(v) for v in L[s]] for s in srcs]
    out = [(lane, fn(*(c[lane] for c in cols)) & MASK32) for lane in lanes]
    for lane, v in out:
        L[vd, lane] = v


def set_flags(m, lanes_true: int, lanes_touched: int) -> None:
    """Lane flags: bits in lanes_touched become the matching bits of lanes_true."""
    s = m.s.sfpu
    s.cc = (s.cc & ~lanes_touched | lanes_true & lanes_touched) & MASK32


def flags_from(m, pred: Callable[[int], bool], src: int, mask: int) -> int:
    """Bit i set when pred(LReg[src][i]) holds, for lanes in mask."""
    col = m.s.sfpu.lreg[src]
    out = 0
    for lane in lanes_of(mask):
        if pred(int(col[lane])):
            out |= 1 << lane
    return out


def require(cond: bool, rule: str, undefined: bool = False) -> None:
    if not cond:
        raise (UndefinedBehaviour if undefined else NotModelled)(rule)
