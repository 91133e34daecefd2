"""Shared plumbing of the SFPU ops: lane masks, per-lane updates, lane flags, result-register rules.

Facts: VectorUnit.md / LReg.md (WormholeB0) and ttsim v1.10.0 (Blackhole): a lane is enabled when lane
flags are off or its flag is set; results go to LReg[0..7] only; an SFPU instruction word whose result
field names LReg[12..15] is captured as an SFPLOADMACRO template instead of executing; with LaneConfig
ENABLE_DEST_INDEX set, results written to LReg[4..7] are corrupted (erratum TEN-2932).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..isa import table

MASK32 = 0xFFFFFFFF
LANES = 32
LANE_CONFIG_ENABLE_DEST_INDEX = 0x4


def lanes_of(mask: int) -> list[int]:
    if mask == MASK32:
        return _ALL_LANES
    return [i for i in range(LANES) if (mask >> i) & 1]


_ALL_LANES = list(range(LANES))


def lane_bools(mask: int) -> np.ndarray:
    return ((mask >> np.arange(LANES, dtype=np.uint64)) & 1).astype(bool)


@lru_cache(maxsize=256)
def lane_index(mask: int) -> np.ndarray:
    """The enabled lanes of ``mask`` as a read-only index array (kept per mask: most masks repeat)."""
    lanes = np.flatnonzero(lane_bools(mask))
    lanes.flags.writeable = False
    return lanes


def u32(x: int) -> int:
    return x & MASK32


def s32(x: int) -> int:
    x &= MASK32
    return x - (1 << 32) if x >> 31 else x


# Bits of each SFPU instruction word that ttsim v1.10.0 decodes; a word with any other payload bit set is
# undefined there (its decoder rejects "invalid opcode bits"), and golden treats it the same way.
DECODED_BITS = {
    "SFPABS": 0x000FFF, "SFPADD": 0x0FFFFF, "SFPADDI": 0xFFFFFF, "SFPAND": 0x00FFFF, "SFPARECIP": 0x00FFFF,
    "SFPCAST": 0x000FFF, "SFPCOMPC": 0x0000F0, "SFPCONFIG": 0xFFFFFF, "SFPDIVP2": 0xFFFFFF, "SFPENCC": 0x0030FF,
    "SFPEXEXP": 0x000FFF, "SFPEXMAN": 0x000FFF, "SFPGT": 0x000FFF, "SFPIADD": 0xFFFFFF, "SFPLE": 0x000FFF,
    "SFPLOAD": 0xFFE3FF, "SFPLOADI": 0xFFFFFF, "SFPLUT": 0xFF0000, "SFPLUTFP32": 0x0000FF, "SFPLZ": 0x000FFF,
    "SFPMAD": 0x0FFFFF, "SFPMOV": 0x000FFF, "SFPMUL": 0x0FFFFF, "SFPMUL24": 0x0FFFFF, "SFPMULI": 0xFFFFFF,
    "SFPNOP": 0x000000, "SFPNOT": 0x000FF0, "SFPOR": 0x00FFFF, "SFPPOPC": 0x0000FF, "SFPPUSHC": 0x0000FF,
    "SFPSETCC": 0x001FFF, "SFPSETEXP": 0x0FFFFF, "SFPSETMAN": 0xFFFFFF, "SFPSETSGN": 0x001FFF,
    "SFPSHFT": 0xFFFFFF, "SFPSHFT2": 0xFFFFFF, "SFPSTORE": 0xFFE3FF, "SFPSWAP": 0x000FFF, "SFPTRANSP": 0x0000F0,
    "SFPXOR": 0x000FF0, "SFP_STOCH_RND": 0x7FFFFF,
}
SFPCONFIG_OP, SFPSWAP_OP, SFPLOADMACRO_OP, SFPLUT_OP = 0x91, 0x92, 0x93, 0x73


def _precheck(m, op: int, word: int) -> None:
    """What happens to an SFPU word before its own semantics: template capture, erratum, reserved bits."""
    vd = (word >> 4) & 0xF
    if op <= SFPLUT_OP and word >> 20 >= 12:
        raise NotModelled(f"LReg[{word >> 20}] in an SFPU memory-unit word (SFPLOADMACRO templates)")
    if op > SFPLUT_OP and op not in (SFPCONFIG_OP, SFPLOADMACRO_OP) and vd >= 12:
        raise NotModelled(f"result field {vd} captures the word as an SFPLOADMACRO template (not modelled)")
    if op >= SFPLUT_OP and op not in (SFPCONFIG_OP, SFPSWAP_OP, SFPLOADMACRO_OP):
        target = word >> 20 if op == SFPLUT_OP else vd
        if m.s.sfpu.lane_config & LANE_CONFIG_ENABLE_DEST_INDEX and 4 <= target < 8:
            raise UndefinedBehaviour(f"TEN-2932: result to LReg[{target}] is corrupted while ENABLE_DEST_INDEX is set")


# id(fields) -> (fields, the word they encode): golden.core keeps one fields object per distinct word, and an
# entry keeps its object alive (so its id is not reused while the entry stands)
_WORDS: dict[int, tuple[object, int]] = {}


def sfpu_op(name: str) -> Callable:
    """@semantics for an SFPU instruction, preceded by the checks every SFPU word goes through."""
    ins = table()[name]
    reserved = 0xFFFFFF & ~DECODED_BITS[name]

    def register(fn: Callable) -> Callable:
        def run(m, t, f):
            known = _WORDS.get(id(f))
            if known is not None and known[0] is f:
                word = known[1]
            else:
                word = 0
                for fd in ins.fields:
                    word |= getattr(f, fd.name) << fd.lo
                if len(_WORDS) >= 1 << 16:
                    _WORDS.clear()
                _WORDS[id(f)] = (f, word)
            _precheck(m, ins.opcode, word)
            if word & reserved:
                raise UndefinedBehaviour(f"{name} with reserved bits {word & reserved:#08x} set")
            fn(m, t, f)

        run.__doc__, run.__name__, run.__wrapped__ = fn.__doc__, fn.__name__, fn
        semantics(name)(run)
        return fn

    return register


def result_reg(vd: int, limit: int = 8) -> int:
    """Result register of an SFPU op: ttsim models writes to LReg[0..limit-1] only."""
    if vd >= limit:
        raise NotModelled(f"result to LReg[{vd}] (ttsim v1.10.0 refuses it)")
    return vd


def flag_only(vd: int) -> None:
    """Flag-stack / lane-flag ops carry no result register; their VD must be 0."""
    if vd:
        raise NotModelled(f"flag-only SFPU instruction with VD={vd}")


def map_lanes(m, vd: int, fn: Callable[..., int], *srcs: int, mask: int | None = None) -> None:
    """LReg[vd][lane] = fn(LReg[s][lane] for s in srcs) on each enabled lane (all reads precede writes).
    ``fn`` is a pure function of its arguments: lanes holding the same inputs share one call."""
    L = m.s.sfpu.lreg
    if mask is None:
        mask = m.s.sfpu.lane_mask()
    lanes = lanes_of(mask)
    if not lanes:
        return
    inputs = list(zip(*L[list(srcs)].tolist())) if len(srcs) > 1 else [(x,) for x in L[srcs[0]].tolist()]
    done: dict[tuple[int, ...], int] = {}
    out = []
    for lane in lanes:
        args = inputs[lane]
        v = done.get(args)
        if v is None:
            v = done[args] = fn(*args) & MASK32
        out.append(v)
    if mask == MASK32:
        L[vd] = out
    else:
        L[vd, lanes] = out


def set_flags(m, lanes_true: int, lanes_touched: int) -> None:
    """Lane flags: bits in lanes_touched become the matching bits of lanes_true."""
    s = m.s.sfpu
    s.cc = (s.cc & ~lanes_touched | lanes_true & lanes_touched) & MASK32


def flags_from(m, pred: Callable[[int], bool], src: int, mask: int) -> int:
    """Bit i set when pred(LReg[src][i]) holds, for lanes in mask."""
    col = m.s.sfpu.lreg[src].tolist()
    out = 0
    for lane in lanes_of(mask):
        if pred(col[lane]):
            out |= 1 << lane
    return out


def require(cond: bool, rule: str, undefined: bool = False) -> None:
    if not cond:
        raise (UndefinedBehaviour if undefined else NotModelled)(rule)
