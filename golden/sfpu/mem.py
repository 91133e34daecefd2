"""SFPU memory instructions: SFPLOADI (immediate -> LReg), SFPLOAD (Dest -> LReg), SFPSTORE (LReg -> Dest).

Sources: SFPLOAD.md, SFPSTORE.md, SFPLOADI.md (WormholeB0); Blackhole mode list from tt-llk
tt_llk_blackhole assembly.yaml / llk_defs.h InstrModLoadStore; behaviour of ttsim v1.10.0 (Blackhole),
which golden matches bit for bit where it implements a form. Blackhole facts:
- the AddrMod selector is 3 bits, 15:13 (blackhole-deltas #1); SFPLOAD/SFPSTORE advance RWCs but not Fidelity;
- dest_reg_addr is 10 bits (9:0); bits 12:10 are reserved (UndefinedBehaviour, as in ttsim); address bit 0 is unused;
- INT32_2S_COMP (12) does no conversion on Blackhole (ttsim; llk_defs comment), unlike Wormhole's INT32_SM;
- SFPSTORE FP32 (3) and BF16 (2) flush denormals to signed zero; INT32 (4) and mode 12 store raw bits;
- rows go through Adj16 / Adj32 (golden.dest_view; ttsim v1.10.0 ignores DEST_ACCESS_CFG remap/swizzle);
- the SFPU stack pointer (SETRWC BitMask bit 4, blackhole-deltas #7) has an undocumented address effect:
  golden refuses to address Dest while it is nonzero.
Forms ttsim refuses, modelled from the Wormhole page (Blackhole lists the mode): explicit FP16A (1),
SFPLOAD HI16 (7), INT8 (5) and INT32_ALL (10, whose Blackhole existence rests on blackhole-deltas #7 only).
"""
from __future__ import annotations

import numpy as np

from ..addrmod import apply_addr_mod
from ..errors import NotModelled, UndefinedBehaviour
from ..fpu_formats import bits_to_dst16_bf16 as bf16_to_dst
from ..fpu_formats import bits_to_dst16_fp16 as fp16_to_dst
from ..fpu_formats import dst16_bf16_to_bits as bf16_from_dst
from ..fpu_formats import dst16_fp16_to_bits as fp16_from_dst
from ..fpu_formats import dst32_to_fp32 as fp32_from_dst
from ..fpu_formats import fp32_to_dst32 as fp32_to_dst
from .dest import SfpuDest
from .lanes import MASK32, lane_index, lanes_of, sfpu_op

FP16A, BF16, FP32, INT32, INT8, LO16, HI16, INT32_ALL, INT32_COMP, INT8_COMP, LO16_ONLY, HI16_ONLY = (
    1, 2, 3, 4, 5, 6, 7, 10, 12, 13, 14, 15)
LO16_ROT = 9     # SFPSTORE only: 32-bit cell gets the LReg rotated by 16 (ttsim implements it on BH)

# ALU_FORMAT_SPEC_REG1_SrcB codes for which the default mode means BF16 (FP32, TF32, BF16, BFP8b, BFP4b,
# INT32, INT16, BFP2b); any other SrcB format means FP16.
_BF16_SRCB = {0, 4, 5, 6, 7, 8, 9, 15}


def _resolve_default(m, t: int) -> int:
    if m.cfg(t, "ALU_ACC_CTRL_SFPU_Fp32_enabled"):
        return FP32
    if m.cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_override"):
        raise NotModelled("SFPLOAD/SFPSTORE default format with ALU_FORMAT_SPEC_REG_SrcB_override set "
                          "(the ISA page honours it, ttsim v1.10.0 ignores it)")
    return BF16 if m.cfg(t, "ALU_FORMAT_SPEC_REG1_SrcB") in _BF16_SRCB else FP16A


def _dest_addr(m, t: int, imm: int, int32_all: bool) -> int:
    """The Dst address whose bits 9:2 pick a group of four rows and bit 1 the odd columns."""
    if m.s.sfpu.sp:
        raise NotModelled("SFPLOAD/SFPSTORE while the Blackhole SFPU stack pointer is nonzero")
    moving = m.s.rwc[t].dst + m.cfg(t, "DEST_REGW_BASE_Base")
    if int32_all:
        moving &= 3
    return ((imm & 0x3FF) + m.tcfg(t, "DEST_TARGET_REG_CFG_MATH_Offset") + moving) & 0x3FF


def _fp16a_to_fp32(h: np.ndarray) -> np.ndarray:
    """FP16 (plain IEEE field order, int64 lanes) to FP32 by exponent rebias; no infinity/NaN/denormal
    handling."""
    e = (h >> 10) & 0x1F
    return ((h & 0x8000) << 16) | (np.where(e != 0, e + 112, 0) << 23) | ((h & 0x3FF) << 13)


def _fp32_to_fp16a(x: np.ndarray) -> np.ndarray:
    """FP32 to FP16 (int64 lanes): underflow and denormals -> signed zero, overflow/Inf/NaN -> largest
    magnitude, truncate."""
    sign = (x >> 16) & 0x8000
    e = ((x >> 23) & 0xFF) - 112
    return np.where(e <= 0, sign, np.where(e > 31, sign | 0x7FFF, sign | (e << 10) | ((x >> 13) & 0x3FF)))


def _flush_denormal(x: np.ndarray) -> np.ndarray:
    return np.where(x & 0x7F800000 == 0, x & 0x80000000, x)


# SFPLOAD: mode -> (reads a 32-bit cell, conversion(cell values, old LReg lanes; int64 arrays) -> new lanes)
_LOAD = {
    FP16A: (False, lambda v, old: _fp16a_to_fp32(fp16_from_dst(v))),
    BF16: (False, lambda v, old: bf16_from_dst(v) << 16),
    FP32: (True, lambda v, old: fp32_from_dst(v)),
    INT32: (True, lambda v, old: fp32_from_dst(v)),
    INT32_COMP: (True, lambda v, old: fp32_from_dst(v)),
    INT32_ALL: (True, lambda v, old: fp32_from_dst(v)),
    INT8: (False, lambda v, old: ((v & 0x8000) << 16) | ((v >> 5) & 0x7F)),
    LO16: (False, lambda v, old: v),
    HI16: (False, lambda v, old: v << 16),
    LO16_ONLY: (False, lambda v, old: (old & 0xFFFF0000) | v),
    HI16_ONLY: (False, lambda v, old: (v << 16) | (old & 0xFFFF)),
}

# SFPSTORE: mode -> (writes a 32-bit cell, conversion(LReg lanes as int64) -> cell values)
_STORE = {
    FP16A: (False, lambda x: fp16_to_dst(_fp32_to_fp16a(x))),
    BF16: (False, lambda x: bf16_to_dst(_flush_denormal(x) >> 16)),
    FP32: (True, lambda x: fp32_to_dst(_flush_denormal(x))),
    INT32: (True, fp32_to_dst),
    INT32_COMP: (True, fp32_to_dst),
    INT32_ALL: (True, fp32_to_dst),
    INT8: (False, lambda x: fp16_to_dst(((x >> 16) & 0x8000) | (16 << 10) | (x & 0x3FF))),
    LO16: (False, lambda x: x & 0xFFFF),
    HI16: (True, lambda x: x),
    LO16_ROT: (True, lambda x: ((x << 16) | (x >> 16)) & MASK32),
    LO16_ONLY: (False, lambda x: x & 0xFFFF),
    HI16_ONLY: (False, lambda x: x >> 16),
}


def _mode(m, t: int, mod0: int, table: dict) -> int:
    mode = _resolve_default(m, t) if mod0 == 0 else mod0
    if mode not in table:
        raise NotModelled(f"instr_mod0={mod0}: not a Blackhole SFPLOAD/SFPSTORE format golden models "
                          "(INT8_COMP's Blackhole conversion is unknown; 8, 9, 11 are Wormhole-only)")
    return mode


def _cells(m, t: int, f, table: dict):
    """(32-bit cells?, conversion, lanes, their rows, their columns) for one SFPLOAD / SFPSTORE (arrays)."""
    mode = _mode(m, t, f.instr_mod0, table)
    wide, conv = table[mode]
    addr = _dest_addr(m, t, f.dest_reg_addr, mode == INT32_ALL)
    lanes = lane_index(MASK32 if mode == INT32_ALL else m.s.sfpu.lane_mask())
    return wide, conv, lanes, (addr & ~3) + (lanes >> 3), ((lanes & 7) << 1) + ((addr >> 1) & 1)


@sfpu_op("SFPLOAD")
def sfpload(m, t, f):
    """SFPLOAD.md (WormholeB0); BH: assembly.yaml mode list, ttsim v1.10.0; blackhole-deltas #1, #7."""
    vd = f.lreg_ind
    wide, conv, lanes, rows, cols = _cells(m, t, f, _LOAD)
    if vd < 8 and lanes.size:
        lreg = m.s.sfpu.lreg[vd]
        dst = SfpuDest(m, t)
        cells = dst.cells(rows, cols, wide)          # None: a row is not valid; read lane by lane (it raises)
        if cells is None:
            read = dst.read32 if wide else dst.read16
            cells = [read(row, col) for row, col in zip(rows.tolist(), cols.tolist())]
        lreg[lanes] = conv(np.asarray(cells, dtype=np.int64), lreg[lanes].astype(np.int64)) & MASK32
    apply_addr_mod(m, t, f.sfpu_addr_mode, update_fidelity=False)


@sfpu_op("SFPSTORE")
def sfpstore(m, t, f):
    """SFPSTORE.md (WormholeB0); BH: assembly.yaml mode list, ttsim v1.10.0; blackhole-deltas #1, #7."""
    wide, conv, lanes, rows, cols = _cells(m, t, f, _STORE)
    if lanes.size:
        values = conv(m.s.sfpu.lreg[f.lreg_ind][lanes].astype(np.int64))
        SfpuDest(m, t).write_cells(rows, cols, values & MASK32, wide)
    apply_addr_mod(m, t, f.sfpu_addr_mode, update_fidelity=False)


def _loadi_value(mod0: int, imm: int, old: int) -> int:
    if mod0 == 0:
        return imm << 16
    if mod0 == 1:
        return ((imm & 0x8000) << 16) | (((imm & 0x7FFF) + (112 << 10)) << 13)   # rebias even a zero exponent
    if mod0 == 2:
        return imm
    if mod0 == 4:
        return imm | 0xFFFF0000 if imm & 0x8000 else imm
    if mod0 == 8:
        return (imm << 16) | (old & 0xFFFF)
    return (old & 0xFFFF0000) | imm          # mod0 == 10


@sfpu_op("SFPLOADI")
def sfploadi(m, t, f):
    """SFPLOADI.md (WormholeB0); ttsim v1.10.0 (Blackhole)."""
    if f.instr_mod0 not in (0, 1, 2, 4, 8, 10):
        raise UndefinedBehaviour(f"SFPLOADI instr_mod0={f.instr_mod0} is undefined")
    vd = f.lreg_ind
    if vd >= 8:
        raise NotModelled(f"SFPLOADI to LReg[{vd}] (ttsim v1.10.0 refuses it)")
    lreg = m.s.sfpu.lreg[vd]
    mask = m.s.sfpu.lane_mask()
    if f.instr_mod0 in (8, 10):           # keeps half of each lane's old value
        lanes = lanes_of(mask)
        old = lreg.tolist()
        lreg[lanes] = [_loadi_value(f.instr_mod0, f.imm16, old[lane]) & MASK32 for lane in lanes]
    elif mask == MASK32:
        lreg[:] = _loadi_value(f.instr_mod0, f.imm16, 0) & MASK32
    elif mask:
        lreg[lane_index(mask)] = _loadi_value(f.instr_mod0, f.imm16, 0) & MASK32
