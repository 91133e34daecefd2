"""Register-file moves of the matrix unit: MOVD2A, MOVD2B (Dst -> Src), MOVA2D, MOVB2D (Src -> Dst),
MOVB2A (SrcB -> SrcA), with the Dst <-> Src format shuffles.

Facts: tt-isa-documentation WormholeB0 MOVD2A.md, MOVD2B.md, MOVA2D.md, MOVB2D.md, MOVB2A.md; Blackhole
per ttsim v1.10.0 and blackhole-deltas #9 (Dst FP32 low half = mantissa 15:0), #10 (ShuffleTF32 mask
0x7F800), #17 (implied Src formats: MOVD2B, MOVB2D read SrcB's implied format under the SrcA switch;
MOVB2D drops SrcB bits by SrcB's format; MOVA2D/MOVB2D with TF32 and UseDst32bLo is undefined; MOVB2A
does not truncate). Where ttsim refuses a mode the pages define, golden follows the pages.

Src cells are 19 bits (sign 18, mantissa 17:8, exponent 7:0). Dst rows read while invalid give the
matrix unit's identity element, zero. Each function moves whole rows with numpy.
"""
from __future__ import annotations

from functools import cache

import numpy as np

from .. import fpu_formats as ff
from ..addrmod import apply_addr_mod
from ..dest_view import DstView, config_word, uses_dst32b
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..registers import config_field, thread_config_field
from ..state import DST_MASK, SRC_MASK
from .dest import dst_base
from .srcs import matrix_bank, wait_matrix_owns

# Src "styles" of MOVD2A.md / MOVD2B.md, and MOVA2D.md's Use8bExponent set.
BF16_STYLE = frozenset({ff.FP32, ff.BF16, ff.BFP8, ff.BFP4, ff.BFP2, ff.INT32, ff.INT16})
FP16_STYLE = frozenset({ff.FP16, ff.FP8, ff.BFP8A, ff.BFP4A, ff.BFP2A, ff.INT8})
EXP8 = BF16_STYLE | {ff.TF32}

_ALU_FMT = config_field("ALU_FORMAT_SPEC_REG_SrcA_val").index
_SRCA_VAL = config_field("ALU_FORMAT_SPEC_REG_SrcA_val")
_SRCA_OVR = config_field("ALU_FORMAT_SPEC_REG_SrcA_override")
_SRCB_OVR = config_field("ALU_FORMAT_SPEC_REG_SrcB_override")
_SRCA_CFG = config_field("ALU_FORMAT_SPEC_REG0_SrcA")
_SRCB_CFG = config_field("ALU_FORMAT_SPEC_REG1_SrcB")
_NO_FLUSH = config_field("ALU_ACC_CTRL_Zero_Flag_disabled_src")
_FMT_BITS = _SRCA_VAL.mask | _SRCA_OVR.mask | _SRCB_OVR.mask      # what _format reads of word _ALU_FMT
_IMPLIED_OFF = {"A": thread_config_field("DISABLE_IMPLIED_SRCA_FMT_Base"),
                "B": thread_config_field("DISABLE_IMPLIED_SRCB_FMT_Base")}
_FP16A_FORCE = thread_config_field("FP16A_FORCE_Enable")
BLOCK_DEST_MOV_SHIFT = 9   # LaneConfig bits 10:9 (SFPCONFIG.md)


# --- format shuffles on numpy uint32 arrays (MOVD2A.md, MOVA2D.md) ---
def shuffle_bf16(x):
    """Dst BF16 (Sign,Man7,Exp8) -> Src BF16 (Sign,Man10,Exp8) with the low three mantissa bits zero."""
    return ((x & 0xFF00) << 3) | (x & 0xFF)


def shuffle_fp16(x):
    """Dst FP16 (Sign,Man10,Exp5) -> Src FP16 (Sign,Man10,000,Exp5)."""
    return ((x & 0xFFE0) << 3) | (x & 0x1F)


def shuffle_tf32(x):
    """Dst32b >> 13 (Sign,HiMan7,Exp8,LoMan3) -> Src TF32 (Sign,Man10,Exp8); mask per blackhole-deltas #10."""
    return (x & 0x7F800) | ((x & 0x7) << 8) | ((x & 0x7F8) >> 3)


def remove_low_mantissa(x):
    """Src (Sign,Man10,Exp8) -> Dst BF16 (Sign,Man7,Exp8): the low three mantissa bits are dropped."""
    return ((x >> 3) & 0xFF00) | (x & 0xFF)


def remove_high_exponent(x):
    """Src (Sign,Man10,Exp8) -> Dst FP16 (Sign,Man10,Exp5): the high three exponent bits are dropped."""
    return ((x >> 3) & 0xFFE0) | (x & 0x1F)


@cache
def table(fn, bits: int, dtype) -> np.ndarray:
    """fn over every ``bits``-bit input: a lookup table standing in for fn on hot paths."""
    return fn(np.arange(1 << bits, dtype=np.uint32)).astype(dtype)


def flush_cell(x):
    """A Src cell with a zero exponent field reads as 0 when denormals are flushed."""
    return np.where((x & 0xFF) == 0, np.uint32(0), x)


# --- shared checks and lookups ---
def _refuse_field(name: str, field: str, value: int, bits: int) -> None:
    if value >> bits:
        raise NotModelled(f"{name} {field}={value:#x}: ttsim decodes only its low {bits} bits")


def _rows(name: str, instr_mod: int, many: int) -> int:
    if instr_mod not in (0, 2):
        raise NotModelled(f"{name} instr_mod={instr_mod}: only 0 (one row) and 2 ({many} rows) are defined")
    return many if instr_mod else 1


def _check_lanes(m, name: str) -> None:
    if (m.s.sfpu.lane_config >> BLOCK_DEST_MOV_SHIFT) & 3:
        raise NotModelled(f"{name} with LaneConfig BLOCK_DEST_MOV set (ttsim accepts no such LaneConfig)")


def _check_force(m, t, name: str) -> None:
    f = _FP16A_FORCE
    if f.get(m.s.thread_config[t][f.index]):
        raise NotModelled(f"{name} with FP16A_FORCE_Enable: Blackhole (ttsim) has no such state")


def _format(m, t, name: str, which: str, bank) -> int:
    """The SrcA- or SrcB-format input of a move: the bank's implied format (Blackhole, delta #17) unless
    ThreadConfig DISABLE_IMPLIED_SRC{which}_FMT_Base, else ALU_FORMAT_SPEC (SrcA honours its override)."""
    off = _IMPLIED_OFF[which]
    if not off.get(m.s.thread_config[t][off.index]):
        if bank.implied_format is None:
            raise NotModelled(f"{name}: the implied Src format of this bank is unknown (set by UNPACR_NOP "
                              f"with Set_Dvalid; delta #17); or set DISABLE_IMPLIED_SRC{which}_FMT_Base")
        return bank.implied_format
    word = config_word(m, t, _ALU_FMT, _FMT_BITS)
    if which == "A":
        return _SRCA_VAL.get(word) if _SRCA_OVR.get(word) else \
            _SRCA_CFG.get(config_word(m, t, _SRCA_CFG.index, _SRCA_CFG.mask))
    if _SRCB_OVR.get(word):
        raise NotModelled(f"{name} with ALU_FORMAT_SPEC_REG_SrcB_override: ttsim ignores it")
    return _SRCB_CFG.get(config_word(m, t, _SRCB_CFG.index, _SRCB_CFG.mask))


def _known(name: str, fmt: int) -> int:
    if fmt not in EXP8 and fmt not in FP16_STYLE:
        raise NotModelled(f"{name} with data format code {fmt}, which has no documented meaning")
    return fmt


def _flush(m, t, cells):
    """FlushDenormals unless ALU_ACC_CTRL_Zero_Flag_disabled_src."""
    if _NO_FLUSH.get(config_word(m, t, _NO_FLUSH.index, _NO_FLUSH.mask)):
        return cells
    return table(flush_cell, 19, np.uint32).take(cells)


# --- Dst -> Src ---
def _dst_to_src(m, t, f, name: str, src, rwc_row: int, fmt: int) -> None:
    n = _rows(name, f.instr_mod, 4)
    style = "tf32" if fmt == ff.TF32 else "bf16" if fmt in BF16_STYLE else "fp16"
    dst32 = uses_dst32b(m, t)
    if not dst32 and (f.dest_32b_lo or style == "tf32"):
        raise UndefinedBehaviour(f"{name}: Dst16b holds no 32-bit data (UseDst32bLo or TF32 SrcA format)")
    view = DstView(m, t)
    dst_row = ((f.dst + dst_base(m, t)) & DST_MASK) & ~(n - 1)
    src_row = ((f.src + rwc_row) & SRC_MASK) & ~(n - 1)
    if style == "tf32":
        v = view.read32_or(dst_row, n)
        matrix_bank(src).rows[src_row:src_row + n] = v & 0x1FFF if f.dest_32b_lo else shuffle_tf32(v >> 13)
    else:   # a 16-bit cell: Dst16b's, or the Dst32b cell's high half (its low half under UseDst32bLo)
        if dst32:
            hi, lo = view.read32_halves_or(dst_row, n)
            cells = lo if f.dest_32b_lo else hi
        else:
            cells = view.read16_or(dst_row, n)
        rows = matrix_bank(src).rows    # looked up into the Src rows ("wrap": every 16-bit index is in the table)
        table(shuffle_bf16 if style == "bf16" else shuffle_fp16, 16, np.uint32).take(
            cells, out=rows[src_row] if n == 1 else rows[src_row:src_row + n], mode="wrap")
    apply_addr_mod(m, t, f.addr_mode)


def _check_dst_to_src(m, t, f, name: str) -> None:
    if (f.dst >> 10 or (m.s.sfpu.lane_config >> BLOCK_DEST_MOV_SHIFT) & 3
            or _FP16A_FORCE.get(m.s.thread_config[t][_FP16A_FORCE.index])):    # one test on the hot path
        _refuse_field(name, "dst", f.dst, 10)
        _check_lanes(m, name)
        _check_force(m, t, name)


@semantics("MOVD2A")
def movd2a(m, t, f) -> None:
    """MOVD2A.md (WormholeB0); BH: implied SrcA format (delta #17), ShuffleTF32 mask (delta #10)."""
    _check_dst_to_src(m, t, f, "MOVD2A")
    src = m.s.srca
    fmt = _known("MOVD2A", _format(m, t, "MOVD2A", "A", matrix_bank(src)))
    _dst_to_src(m, t, f, "MOVD2A", src, m.s.rwc[t].srca, fmt)


@semantics("MOVD2B")
def movd2b(m, t, f) -> None:
    """MOVD2B.md (WormholeB0): SrcA's format picks the conversion; BH: it is SrcB's implied format
    under DISABLE_IMPLIED_SRCA_FMT (ttsim, delta #17)."""
    _check_dst_to_src(m, t, f, "MOVD2B")
    src = m.s.srcb
    fmt = _known("MOVD2B", _format(m, t, "MOVD2B", "A", matrix_bank(src)))
    _dst_to_src(m, t, f, "MOVD2B", src, m.s.rwc[t].srcb, fmt)


# --- Src -> Dst ---
def _src_to_dst(m, t, f, name: str, dst_row: int, n: int, cells, fmt_a: int) -> None:
    """Write Src cells (n x 16, already flushed/truncated) to Dst rows dst_row.. as MOVA2D.md describes."""
    if fmt_a == ff.TF32 and f.dest_32b_lo:
        raise UndefinedBehaviour(f"{name} with TF32 and UseDst32bLo (Blackhole erratum TEN-4245)")
    val16 = table(remove_low_mantissa if fmt_a in EXP8 else remove_high_exponent, 19, np.uint16).take(cells)
    view = DstView(m, t)
    if fmt_a == ff.TF32:
        view.write32(dst_row, (val16.astype(np.uint32) << 16) | (((cells >> 8) & 7) << 13), n)
    elif f.dest_32b_lo:
        view.write32(dst_row, (view.read32_or(dst_row, n) & 0xFFFF0000) | val16, n)
    else:
        view.write16(dst_row, val16, n)
    apply_addr_mod(m, t, f.addr_mode)


@semantics("MOVA2D")
def mova2d(m, t, f) -> None:
    """MOVA2D.md (WormholeB0); BH: implied SrcA format (delta #17), TF32 + UseDst32bLo undefined."""
    src = m.s.srca
    wait_matrix_owns(src, "SrcA")
    _refuse_field("MOVA2D", "dst", f.dst, 10)
    _check_lanes(m, "MOVA2D")
    _check_force(m, t, "MOVA2D")
    n = _rows("MOVA2D", f.instr_mod, 8)
    bank = matrix_bank(src)
    fmt_a = _known("MOVA2D", _format(m, t, "MOVA2D", "A", bank))
    dst_row = ((f.dst + dst_base(m, t)) & DST_MASK) & ~(n - 1)
    src_row = ((f.src + m.s.rwc[t].srca) & SRC_MASK) & ~(n - 1)
    cells = _flush(m, t, bank.rows[src_row:src_row + n])
    _src_to_dst(m, t, f, "MOVA2D", dst_row, n, cells, fmt_a)


@semantics("MOVB2D")
def movb2d(m, t, f) -> None:
    """MOVB2D.md (WormholeB0): 1 / 4 rows, one row broadcast to 8, column-0 broadcast; BH (ttsim, delta
    #17): SrcB's implied format stands in for both SrcA's and SrcB's, and SrcB's drops mantissa bits 2:0
    (FP16: exponent bits 7:5) unless TF32."""
    src = m.s.srcb
    wait_matrix_owns(src, "SrcB")
    _refuse_field("MOVB2D", "dst", f.dst, 10)
    _check_lanes(m, "MOVB2D")
    _check_force(m, t, "MOVB2D")
    bank = matrix_bank(src)
    fmt_a = _known("MOVB2D", _format(m, t, "MOVB2D", "A", bank))
    fmt_b = _format(m, t, "MOVB2D", "B", bank)
    col0, bcast8, four = f.movb2d_instr_mod & 1, f.movb2d_instr_mod >> 1 & 1, f.movb2d_instr_mod >> 2
    n = 8 if bcast8 else 4 if four else 1
    dst_row = ((f.dst + dst_base(m, t)) & DST_MASK) & ~(n - 1)
    src_row = (f.src + m.s.rwc[t].srcb) & SRC_MASK
    if bcast8:
        cells = np.repeat(bank.rows[src_row:src_row + 1], n, axis=0)
    else:
        src_row &= ~(n - 1)
        cells = bank.rows[src_row:src_row + n]
    if col0:
        cells = np.repeat(cells[:, :1], 16, axis=1)
    cells = _flush(m, t, cells)
    if fmt_b == ff.FP16:
        cells = cells & ~np.uint32(0xE0)
    elif fmt_b != ff.TF32:
        cells = cells & ~np.uint32(0x700)
    _src_to_dst(m, t, f, "MOVB2D", dst_row, n, cells, fmt_a)


@semantics("MOVB2A")
def movb2a(m, t, f) -> None:
    """MOVB2A.md (WormholeB0); BH: copied without TruncateSrc, as ttsim does (delta #17)."""
    srca, srcb = m.s.srca, m.s.srcb
    wait_matrix_owns(srcb, "SrcB")
    _refuse_field("MOVB2A", "srca", f.srca, 6)
    _refuse_field("MOVB2A", "srcb", f.srcb, 6)
    _check_lanes(m, "MOVB2A")
    n = _rows("MOVB2A", f.instr_mod, 4)
    rwc = m.s.rwc[t]
    a_row = ((f.srca + rwc.srca) & SRC_MASK) & ~(n - 1)
    b_row = ((f.srcb + rwc.srcb) & SRC_MASK) & ~(n - 1)
    cells = _flush(m, t, matrix_bank(srcb).rows[b_row:b_row + n])
    matrix_bank(srca).rows[a_row:a_row + n] = cells
    apply_addr_mod(m, t, f.addr_mode)
