"""Matrix unit (FPU): MVMUL, ELWADD, ELWSUB, ELWMUL, GMPOOL, GAPOOL — addressing, waits, bank flips, counters.

Structure from tt-isa-documentation WormholeB0 MVMUL.md, ELWADD.md, ELWSUB.md, ELWMUL.md, GMPOOL.md,
GAPOOL.md; Blackhole behaviour as ttsim v1.10.0 models it (blackhole-deltas #1, #5, #9, #17).
Where ttsim refuses an encoding or configuration the documents define, golden raises NotModelled rather
than guess which of the two the device follows. Arithmetic lives in golden.fpu_math.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import fpu_formats as ff
from ..core import Blocked
from ..errors import NotModelled
from ..state import DEST_ROWS, MATRIX_UNIT, UNPACKERS
from . import semantics
from .addrmod import apply_addr_mod


@dataclass
class Setup:
    """Everything one matrix-unit instruction resolved before computing."""
    a_bank: object      # SrcBank of SrcA the matrix unit reads
    b_bank: object
    a_row: int
    b_row: int
    dst_row: int        # Dst16b row, or Dst32b row when dst32
    phase: int          # fidelity phase in effect
    fmt_a: int
    fmt_b: int
    style: str          # fpu_formats STYLE_*
    dst32: bool
    flush_b: bool       # SrcB denormals flushed (ALU_ACC_CTRL_Zero_Flag_disabled_src == 0)


def _refuse(cond: bool, rule: str) -> None:
    if cond:
        raise NotModelled(rule)


def _check_encoding(name: str, addr_mode: int, dst: int, dst_align: int) -> None:
    _refuse(addr_mode > 7, f"{name} addr_mode={addr_mode}: bits above 2 are not decoded by ttsim (delta #1)")
    _refuse(dst > 0x3FF, f"{name} dst={dst:#x}: bits 13:10 are not decoded by ttsim")
    _refuse(dst % dst_align != 0, f"{name} dst={dst} not a multiple of {dst_align}: ttsim refuses")


def _wait_for_banks(m) -> None:
    sa, sb = m.s.srca, m.s.srcb
    if sa.banks[sa.matrix_bank].allowed_client != MATRIX_UNIT:
        raise Blocked(f"SrcA bank {sa.matrix_bank} is not owned by the matrix unit")
    if sb.banks[sb.matrix_bank].allowed_client != MATRIX_UNIT:
        raise Blocked(f"SrcB bank {sb.matrix_bank} is not owned by the matrix unit")


def _src_format(m, t, which: str, bank) -> int:
    if m.tcfg(t, f"DISABLE_IMPLIED_SRC{which}_FMT_Base"):
        return m.cfg(t, "ALU_FORMAT_SPEC_REG0_SrcA" if which == "A" else "ALU_FORMAT_SPEC_REG1_SrcB")
    if bank.implied_format is None:
        raise NotModelled(f"Src{which} implied data format unknown (no unpack has set it, delta #17); "
                          f"set DISABLE_IMPLIED_SRC{which}_FMT_Base to use ALU_FORMAT_SPEC")
    return bank.implied_format


def _styles(name: str, fmt_a: int, fmt_b: int, int8: bool, ok_a: frozenset, ok_b: frozenset,
            ok_b_int8: frozenset) -> str:
    """Operand style from the formats; combinations ttsim refuses raise NotModelled."""
    if int8:
        _refuse(fmt_a != ff.INT8 or fmt_b not in ok_b_int8,
                f"{name} INT8 math with SrcA format {fmt_a}, SrcB format {fmt_b}: ttsim refuses")
        return ff.STYLE_INT8
    if fmt_a in ff.FP16_FAMILY:
        _refuse(fmt_b != fmt_a, f"{name} FP16-family SrcA format {fmt_a} with SrcB format {fmt_b}: ttsim refuses")
        return ff.STYLE_FP16
    _refuse(fmt_a not in ok_a or fmt_b not in ok_b,
            f"{name} SrcA format {fmt_a} with SrcB format {fmt_b}: not accepted by ttsim")
    return ff.STYLE_TF32 if fmt_a == ff.TF32 else ff.STYLE_BF16


def _check_config(m, t, name: str) -> None:
    _refuse(m.cfg(t, "ALU_ROUNDING_MODE_Fpu_srnd_en") == 1, f"{name} with stochastic rounding (Fpu_srnd_en)")
    for field in ("ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcB_override",
                  "ALU_FORMAT_SPEC_REG_Dstacc_override"):
        _refuse(m.cfg(t, field) == 1, f"{name} with {field}: ttsim refuses")
    _refuse(m.tcfg(t, "FP16A_FORCE_Enable") == 1, f"{name} with FP16A_FORCE_Enable: ttsim has no such state")
    _refuse(m.cfg(t, "DEST_ACCESS_CFG_remap_addrs") == 1 or m.cfg(t, "DEST_ACCESS_CFG_swizzle_32b") == 1,
            f"{name} with Dst remap_addrs/swizzle_32b: ttsim's matrix unit ignores them, Dst.md applies them")


def resolve(m, t, name: str, dst_field: int, *, a_align: int, dst_align: int, dst_wraps: bool,
            ok_a: frozenset, ok_b: frozenset, ok_b_int8: frozenset = frozenset({ff.INT8}),
            allow_int8: bool = True) -> Setup:
    """Wait for both banks, read the configuration and form the row addresses (no side effects)."""
    _wait_for_banks(m)
    _check_config(m, t, name)
    sa, sb = m.s.srca, m.s.srcb
    a_bank, b_bank = sa.banks[sa.matrix_bank], sb.banks[sb.matrix_bank]
    int8 = m.cfg(t, "ALU_ACC_CTRL_INT8_math_enabled") == 1
    _refuse(int8 and not allow_int8, f"{name} with INT8 math: ttsim refuses")
    fmt_a, fmt_b = _src_format(m, t, "A", a_bank), _src_format(m, t, "B", b_bank)
    style = _styles(name, fmt_a, fmt_b, int8, ok_a, ok_b, ok_b_int8)

    rwc = m.s.rwc[t]
    a_row, b_row = rwc.srca, rwc.srcb
    _refuse(a_row % a_align != 0,
            f"{name} SrcA row {a_row} not a multiple of {a_align}"
            + (" (delta #5: the ISA page masks with 0x38; ttsim requires 16-row alignment)" if a_align == 16 else ""))
    _refuse(b_row % 8 != 0, f"{name} SrcB row {b_row} not a multiple of 8: ttsim refuses")
    dst_row = rwc.dst + m.cfg(t, "DEST_REGW_BASE_Base") + dst_field + m.tcfg(t, "DEST_TARGET_REG_CFG_MATH_Offset")
    if dst_wraps:
        dst_row &= DEST_ROWS - 1
    else:
        _refuse(dst_row >= DEST_ROWS, f"{name} Dst row {dst_row} beyond {DEST_ROWS - 1}: ttsim refuses")
    _refuse(dst_row % dst_align != 0,
            f"{name} Dst row {dst_row} not a multiple of {dst_align}: the ISA page aligns down, ttsim refuses")
    phase = (rwc.fidelity + m.tcfg(t, "FIDELITY_BASE_Phase")) & 3
    dst32 = int8 or m.cfg(t, "ALU_ACC_CTRL_Fp32_enabled") == 1
    flush_b = m.cfg(t, "ALU_ACC_CTRL_Zero_Flag_disabled_src") == 0
    return Setup(a_bank, b_bank, a_row, b_row, dst_row, phase, fmt_a, fmt_b, style, dst32, flush_b)


def clear_dvalid(m, t, clear: int) -> None:
    """Bit 0 / bit 1: hand the matrix unit's SrcA / SrcB bank back to the unpackers (unless
    CLR_DVALID_Src*_Disable) and flip the matrix unit to the other bank."""
    for bit, src, which in ((1, m.s.srca, "A"), (2, m.s.srcb, "B")):
        if clear & bit:
            if not m.tcfg(t, f"CLR_DVALID_Src{which}_Disable"):
                src.banks[src.matrix_bank].allowed_client = UNPACKERS
            src.matrix_bank ^= 1


def finish(m, t, addr_mode: int, clear: int, commit=None) -> None:
    """Post-instruction effects in an order that leaves state untouched if AddrMod refuses."""
    apply_addr_mod(m, t, addr_mode)
    if commit is not None:
        commit()
    clear_dvalid(m, t, clear)


def effects_only(m, t, name: str, addr_mode: int, clear: int) -> None:
    finish(m, t, addr_mode, clear)
    raise NotModelled(f"{name} arithmetic (counters and banks updated, Dst untouched)")


_MVMUL_A = ff.BF16_FAMILY
_MVMUL_B = ff.BF16_FAMILY | {ff.INT16}
_ELW_A = ff.BF16_FAMILY | {ff.BFP2}
_ELW_B = ff.BF16_FAMILY | {ff.INT32, ff.INT16, ff.BFP2}


@semantics("MVMUL")
def mvmul(m, t, f) -> None:
    """MVMUL.md (WormholeB0): Dst[8x16] += SrcB[8x16] @ SrcA[16x16]; BH: deltas #1, #5."""
    _check_encoding("MVMUL", f.addr_mode, f.dst, 8)
    _refuse(f.instr_mod19 != 0, f"MVMUL instr_mod19={f.instr_mod19} (SrcB row broadcast): ttsim refuses")
    resolve(m, t, "MVMUL", f.dst, a_align=16, dst_align=8, dst_wraps=True, ok_a=_MVMUL_A, ok_b=_MVMUL_B)
    effects_only(m, t, "MVMUL", f.addr_mode, f.clear_dvalid)


def _elementwise(m, t, f, name: str) -> None:
    _check_encoding(name, f.addr_mode, f.dst, 8)
    if name == "ELWMUL":
        _refuse(f.dest_accum_en == 1, "ELWMUL dest_accum_en=1: ttsim rejects it (ELWMUL always accumulates)")
    resolve(m, t, name, f.dst, a_align=8, dst_align=8, dst_wraps=False, ok_a=_ELW_A, ok_b=_ELW_B,
            ok_b_int8=frozenset({ff.INT8, ff.BFP2}))
    effects_only(m, t, name, f.addr_mode, f.clear_dvalid)


@semantics("ELWADD")
def elwadd(m, t, f) -> None:
    """ELWADD.md (WormholeB0): Dst (+)= SrcA + SrcB, 8x16, SrcB row/column broadcast."""
    _elementwise(m, t, f, "ELWADD")


@semantics("ELWSUB")
def elwsub(m, t, f) -> None:
    """ELWSUB.md (WormholeB0): Dst (+)= SrcA - SrcB, 8x16, SrcB row/column broadcast."""
    _elementwise(m, t, f, "ELWSUB")


@semantics("ELWMUL")
def elwmul(m, t, f) -> None:
    """ELWMUL.md (WormholeB0): Dst += SrcA * SrcB, 8x16, SrcB row/column broadcast."""
    _elementwise(m, t, f, "ELWMUL")
