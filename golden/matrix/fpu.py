"""Matrix unit (FPU): MVMUL, ELWADD, ELWSUB, ELWMUL, GMPOOL, GAPOOL — addressing, waits, bank flips, counters.

Structure from tt-isa-documentation WormholeB0 MVMUL.md, ELWADD.md, ELWSUB.md, ELWMUL.md, GMPOOL.md,
GAPOOL.md; Blackhole behaviour as ttsim v1.10.0 models it (blackhole-deltas #1, #5, #9, #17).
Where ttsim refuses an encoding or configuration the documents define, golden raises NotModelled rather
than guess which of the two the device follows. Arithmetic lives in golden.matrix.fpu_math.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from .. import fpu_formats as ff
from ..addrmod import apply_addr_mod
from ..dest_view import DstView
from ..errors import Blocked
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..memo import by_value
from ..registers import config_field, thread_config_field
from ..state import DEST_ROWS, MATRIX_UNIT, UNPACKERS
from . import fpu_math as fm


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


_MVMUL_A = ff.BF16_FAMILY
_MVMUL_B = ff.BF16_FAMILY | {ff.INT16}
_ELW_A = ff.BF16_FAMILY | {ff.BFP2}
_ELW_B = ff.BF16_FAMILY | {ff.INT32, ff.INT16, ff.BFP2}


def _refuse(cond: bool, rule: str) -> None:
    if cond:
        raise NotModelled(rule)


def _check_encoding(name: str, addr_mode: int, dst: int, dst_align: int, mod: int = 0, mod_bits: int = 2) -> None:
    """Bits ttsim's decoder rejects as invalid opcode bits first (UB), then the encodings it refuses."""
    if addr_mode > 7 or dst > 0x3FF or mod >> mod_bits:
        raise UndefinedBehaviour(f"{name} addr_mode={addr_mode} dst={dst:#x} instr_mod19={mod}: bits ttsim rejects "
                                 "as invalid opcode bits (AddrMod is 3 bits, delta #1; dst is 10 bits)")
    if dst % dst_align != 0:
        raise NotModelled(f"{name} dst={dst} not a multiple of {dst_align}: ttsim refuses")


def _wait_for_banks(m) -> None:
    sa, sb = m.s.srca, m.s.srcb
    if sa.banks[sa.matrix_bank].allowed_client != MATRIX_UNIT:
        raise Blocked(f"SrcA bank {sa.matrix_bank} is not owned by the matrix unit")
    if sb.banks[sb.matrix_bank].allowed_client != MATRIX_UNIT:
        raise Blocked(f"SrcB bank {sb.matrix_bank} is not owned by the matrix unit")


def _src_format(cfg, tc, which: str, bank) -> int:
    if _get(tc, _T[f"DISABLE_IMPLIED_SRC{which}_FMT_Base"]):
        return _get(cfg, _C["ALU_FORMAT_SPEC_REG0_SrcA" if which == "A" else "ALU_FORMAT_SPEC_REG1_SrcB"])
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


_C = {n: config_field(n) for n in (
    "ALU_ROUNDING_MODE_Fpu_srnd_en", "ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcB_override",
    "ALU_FORMAT_SPEC_REG_Dstacc_override", "DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b",
    "ALU_ACC_CTRL_INT8_math_enabled", "ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_Zero_Flag_disabled_src",
    "DEST_REGW_BASE_Base", "ALU_FORMAT_SPEC_REG0_SrcA", "ALU_FORMAT_SPEC_REG1_SrcB")}
_T = {n: thread_config_field(n) for n in (
    "FP16A_FORCE_Enable", "DISABLE_IMPLIED_SRCA_FMT_Base", "DISABLE_IMPLIED_SRCB_FMT_Base",
    "DEST_TARGET_REG_CFG_MATH_Offset", "FIDELITY_BASE_Phase", "CLR_DVALID_SrcA_Disable", "CLR_DVALID_SrcB_Disable",
    "CFG_STATE_ID_StateID")}
_STATE = _T["CFG_STATE_ID_StateID"]


def _get(words, f) -> int:
    """Field ``f`` of a register file's words (one Config state, or a thread's ThreadConfig)."""
    return f.get(words[f.index])


def _check_config(cfg, tc, name: str) -> None:
    """Configuration ttsim's matrix unit refuses or ignores (``cfg``, ``tc``: the thread's Config state and
    ThreadConfig words)."""
    if _get(cfg, _C["ALU_ROUNDING_MODE_Fpu_srnd_en"]) == 1:
        raise NotModelled(f"{name} with stochastic rounding (Fpu_srnd_en)")
    for field in ("ALU_FORMAT_SPEC_REG_SrcA_override", "ALU_FORMAT_SPEC_REG_SrcB_override",
                  "ALU_FORMAT_SPEC_REG_Dstacc_override"):
        if _get(cfg, _C[field]) == 1:
            raise NotModelled(f"{name} with {field}: ttsim refuses")
    if _get(tc, _T["FP16A_FORCE_Enable"]) == 1:
        raise NotModelled(f"{name} with FP16A_FORCE_Enable: ttsim has no such state")
    if _get(cfg, _C["DEST_ACCESS_CFG_remap_addrs"]) == 1 or _get(cfg, _C["DEST_ACCESS_CFG_swizzle_32b"]) == 1:
        raise NotModelled(f"{name} with Dst remap_addrs/swizzle_32b: ttsim's matrix unit ignores them, "
                          "Dst.md applies them")


def _configured(cfg, tc, name: str, a_bank, b_bank, ok_a: frozenset, ok_b: frozenset, ok_b_int8: frozenset,
                allow_int8: bool) -> tuple:
    """What the configuration (and the banks' implied formats) alone decide, refusals first: (fmt_a, fmt_b,
    style, dst32, flush_b, Dst row offset, fidelity phase base)."""
    _check_config(cfg, tc, name)
    int8 = _get(cfg, _C["ALU_ACC_CTRL_INT8_math_enabled"]) == 1
    _refuse(int8 and not allow_int8, f"{name} with INT8 math: ttsim refuses")
    fmt_a, fmt_b = _src_format(cfg, tc, "A", a_bank), _src_format(cfg, tc, "B", b_bank)
    style = _styles(name, fmt_a, fmt_b, int8, ok_a, ok_b, ok_b_int8)
    return (fmt_a, fmt_b, style, int8 or _get(cfg, _C["ALU_ACC_CTRL_Fp32_enabled"]) == 1,
            _get(cfg, _C["ALU_ACC_CTRL_Zero_Flag_disabled_src"]) == 0,
            _get(cfg, _C["DEST_REGW_BASE_Base"]) + _get(tc, _T["DEST_TARGET_REG_CFG_MATH_Offset"]),
            _get(tc, _T["FIDELITY_BASE_Phase"]))


# _configured results by everything they read: the Config and ThreadConfig words of the fields above, the
# implied formats and the instruction's accepted formats (configurations it refuses are not kept)
_CFG_WORDS = itemgetter(*sorted({f.index for f in _C.values()}))
_CFG_BITS = {i: sum(f.mask for f in _C.values() if f.index == i) for i in sorted({f.index for f in _C.values()})}
_TC_WORDS = itemgetter(*sorted({f.index for f in _T.values()}))
_CONFIGURED: dict[tuple, tuple] = {}


def resolve(m, t, name: str, dst_field: int, *, a_align: int, dst_align: int, dst_wraps: bool,
            ok_a: frozenset, ok_b: frozenset, ok_b_int8: frozenset = frozenset({ff.INT8}),
            allow_int8: bool = True) -> Setup:
    """Wait for both banks, read the configuration and form the row addresses (no side effects)."""
    _wait_for_banks(m)
    tc = m.s.thread_config[t]
    cfg = m.s.config[_get(tc, _STATE)]
    sa, sb = m.s.srca, m.s.srcb
    a_bank, b_bank = sa.banks[sa.matrix_bank], sb.banks[sb.matrix_bank]
    if cfg.__class__ is not list:       # a traced state: the fields above are read, not their whole words
        cfg = cfg.fields(_CFG_BITS)
    key = (name, a_bank.implied_format, b_bank.implied_format, ok_a, ok_b, ok_b_int8, allow_int8,
           _CFG_WORDS(cfg), _TC_WORDS(tc))
    configured = _CONFIGURED.get(key)
    if configured is None:
        configured = _configured(cfg, tc, name, a_bank, b_bank, ok_a, ok_b, ok_b_int8, allow_int8)
        if len(_CONFIGURED) >= 4096:
            _CONFIGURED.clear()
        _CONFIGURED[key] = configured
    fmt_a, fmt_b, style, dst32, flush_b, dst_offset, phase_base = configured

    rwc = m.s.rwc[t]
    a_row, b_row = rwc.srca, rwc.srcb
    if a_row % a_align != 0:
        raise NotModelled(f"{name} SrcA row {a_row} not a multiple of {a_align}" + (
            " (delta #5: the ISA page masks with 0x38; ttsim requires 16-row alignment)" if a_align == 16 else ""))
    if b_row % 8 != 0:
        raise NotModelled(f"{name} SrcB row {b_row} not a multiple of 8: ttsim refuses")
    dst_row = rwc.dst + dst_offset + dst_field
    if dst_wraps:
        dst_row &= DEST_ROWS - 1
    elif dst_row >= DEST_ROWS:
        raise NotModelled(f"{name} Dst row {dst_row} beyond {DEST_ROWS - 1}: ttsim refuses")
    if dst_row % dst_align != 0:
        raise NotModelled(f"{name} Dst row {dst_row} not a multiple of {dst_align}: the ISA page aligns down, "
                          "ttsim refuses")
    phase = (rwc.fidelity + phase_base) & 3
    if m.matrix_trace is not None:
        m.matrix_trace.append((name, fmt_a, fmt_b, 32 if dst32 else 16, phase))
    return Setup(a_bank, b_bank, a_row, b_row, dst_row, phase, fmt_a, fmt_b, style, dst32, flush_b)


def clear_dvalid(m, t, clear: int) -> None:
    """Bit 0 / bit 1: hand the matrix unit's SrcA / SrcB bank back to the unpackers (unless
    CLR_DVALID_Src*_Disable) and flip the matrix unit to the other bank."""
    for bit, src, which in ((1, m.s.srca, "A"), (2, m.s.srcb, "B")):
        if clear & bit:
            if not _get(m.s.thread_config[t], _T[f"CLR_DVALID_Src{which}_Disable"]):
                src.banks[src.matrix_bank].allowed_client = UNPACKERS
            src.matrix_bank ^= 1


def finish(m, t, addr_mode: int, clear: int, commit=None) -> None:
    """Post-instruction effects in an order that leaves state untouched if AddrMod refuses."""
    apply_addr_mod(m, t, addr_mode)
    if commit is not None:
        commit()
    clear_dvalid(m, t, clear)


# --- Dst as the matrix unit sees it: invalid rows read as the identity; writes make rows valid ---

def _read_dst(view: DstView, s: Setup, first: int, n: int) -> tuple[np.ndarray, ...]:
    """Dst rows as the matrix unit reads them: (high, low) halves of Dst32b cells, or (Dst16b cells,)."""
    if s.dst32:
        return view.read32_halves_or(first, n)
    return (view.read16_or(first, n),)


def _acc(style: str, dst32: bool, *dst: np.ndarray):
    """Dst rows read by _read_dst as the adder's Dst input (fpu_math.acc_from_*)."""
    if dst32:
        return fm.acc_from_dst32(*dst)
    return fm.acc_from_dst16(dst[0], style == ff.STYLE_FP16)


def _fp_committer(view: DstView, s: Setup, first: int, out: np.ndarray):
    """Writing FP32-layout results ``out`` to Dst in its format."""
    if s.style == ff.STYLE_FP16 and not s.dst32:
        raw = ff.bits_to_dst16_fp16((out >> 16) & 0x8000 | (out & 0x0FFFE000) >> 13)
        return lambda: view.write16(first, raw, len(out))
    hi, lo = ff.halves(np.asarray(out, dtype=np.uint32))
    hi = ff.bf16_storage_table()[hi]
    if s.dst32:
        return lambda: view.write32_halves(first, hi, lo, len(out))
    return lambda: view.write16(first, hi, len(out))


def _committer(view: DstView, s: Setup, first: int, raw: np.ndarray):
    if s.dst32:
        return lambda: view.write32(first, raw.astype(np.uint32), len(raw))
    return lambda: view.write16(first, raw.astype(np.uint16), len(raw))


def _check_five_bit_exponents(name: str, s: Setup, *cells: np.ndarray) -> None:
    """FP16-family and INT8 operands must leave the top three exponent bits clear (ttsim refuses)."""
    if s.style in (ff.STYLE_FP16, ff.STYLE_INT8) and any(np.bitwise_or.reduce(c, axis=None) & 0xE0 for c in cells):
        raise NotModelled(f"{name}: a 5-bit-exponent Src datum has its high 3 exponent bits set: ttsim refuses")


def _matmul(m, t, f, name: str, n_rows: int, addr_mode: int) -> None:
    """MVMUL / GAPOOL: Dst[n_rows x 16] += SrcB[n_rows x 16] @ SrcA[16 x 16]."""
    s = resolve(m, t, name, f.dst, a_align=16, dst_align=n_rows, dst_wraps=True, ok_a=_MVMUL_A, ok_b=_MVMUL_B)
    if not s.flush_b:
        raise NotModelled(f"{name} with ALU_ACC_CTRL_Zero_Flag_disabled_src=1: ttsim refuses")
    _check_five_bit_exponents(name, s, s.a_bank.rows[s.a_row:s.a_row + 16], s.b_bank.rows[s.b_row:s.b_row + n_rows])
    view = DstView(m, t)
    a_cells = s.a_bank.rows[s.a_row:s.a_row + 16]       # [k, col]
    b_cells = s.b_bank.rows[s.b_row:s.b_row + n_rows]   # [row, k]
    if s.style == ff.STYLE_INT8:
        raw = _int8_matmul(s.phase, a_cells, b_cells, view.read32_or(s.dst_row, n_rows))
        commit = _committer(view, s, s.dst_row, raw)
    else:
        out = _fp_matmul(s.fmt_a, s.fmt_b, s.phase, s.style, s.dst32, a_cells, b_cells,
                         *_read_dst(view, s, s.dst_row, n_rows))
        commit = _fp_committer(view, s, s.dst_row, out)
    finish(m, t, addr_mode, f.clear_dvalid, commit)


@by_value
def _int8_matmul(phase: int, a_cells: np.ndarray, b_cells: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """MVMUL.md's INT8 arithmetic: Dst32b cells ``dst`` + b_cells @ a_cells, saturated, as raw Dst32b cells."""
    a, b = ff.src_split(a_cells.astype(np.int64)), ff.src_split(b_cells.astype(np.int64))
    mask_a, mask_b = fm.int8_masks(phase)
    va = np.where(a.exp != 0, fm.int8_value(a, mask_a), 0)
    vb = np.where(b.exp != 0, fm.int8_value(b, mask_b), 0)
    return ff.int_to_dst32(fm.saturate(ff.dst32_to_int(dst.astype(np.int64)) + vb @ va))


@by_value
def _fp_matmul(fmt_a: int, fmt_b: int, phase: int, style: str, dst32: bool, a_cells: np.ndarray,
               b_cells: np.ndarray, *dst: np.ndarray) -> np.ndarray:
    """MVMUL.md's arithmetic: Dst rows (raw, _read_dst) + b_cells @ a_cells, as FP32-layout results."""
    exp8 = style != ff.STYLE_FP16
    bias = fm.product_bias(dst32, phase, exp8)
    fa, xa = fm.product_factors(a_cells[:, None, :], fmt_a, phase, False, bias=bias, nudged=True)  # [k, 1, col]
    fb, xb = fm.product_factors(b_cells.T[:, :, None], fmt_b, phase, True, nudged=True)            # [k, row, 1]
    return fm.dot16_factors(fa, xa, fb, xb, _acc(style, dst32, *dst), dst32, exp8, bias)


@semantics("MVMUL")
def mvmul(m, t, f) -> None:
    """MVMUL.md (WormholeB0): Dst[8x16] += SrcB[8x16] @ SrcA[16x16]; BH: deltas #1, #5."""
    _check_encoding("MVMUL", f.addr_mode, f.dst, 8, f.instr_mod19, 1)
    if f.instr_mod19 != 0:
        raise NotModelled(f"MVMUL instr_mod19={f.instr_mod19} (SrcB row broadcast): ttsim refuses")
    _matmul(m, t, f, "MVMUL", 8, f.addr_mode)


@semantics("GAPOOL")
def gapool(m, t, f) -> None:
    """GAPOOL.md (WormholeB0): MVMUL on 4 rows of SrcB and Dst; BH as ttsim (instr_mod19 must be 1)."""
    _check_pool_encoding("GAPOOL", f)
    _matmul(m, t, f, "GAPOOL", 4, f.pool_addr_mode)


def _check_pool_encoding(name: str, f) -> None:
    _check_encoding(name, f.pool_addr_mode, f.dst, 4, f.instr_mod19, 1)
    if f.instr_mod19 != 1:
        raise NotModelled(f"{name} instr_mod19={f.instr_mod19}: ttsim accepts only 1")
    if f.max_pool_index_en != 0:
        raise NotModelled(f"{name} max_pool_index_en=1 (argmax): ttsim refuses")


def _elementwise(m, t, f, name: str) -> None:
    _check_encoding(name, f.addr_mode, f.dst, 8)
    is_mul, is_sub = name == "ELWMUL", name == "ELWSUB"
    _refuse(is_mul and f.dest_accum_en == 1, "ELWMUL dest_accum_en=1: ttsim rejects it (ELWMUL always accumulates)")
    s = resolve(m, t, name, f.dst, a_align=8, dst_align=8, dst_wraps=False, ok_a=_ELW_A, ok_b=_ELW_B,
                ok_b_int8=frozenset({ff.INT8, ff.BFP2}))
    if not is_mul and s.phase != 0:
        raise NotModelled(f"{name} with fidelity phase {s.phase}: the ISA page divides the sum, ttsim calls it "
                          "non-contractual")
    accumulate = is_mul or f.dest_accum_en == 1
    a_cells = s.a_bank.rows[s.a_row:s.a_row + 8]
    b_cells = s.b_bank.rows[s.b_row:s.b_row + 8]
    if f.instr_mod19 & 2:
        b_cells = np.repeat(b_cells[:1], 8, axis=0)
    if f.instr_mod19 & 1:
        b_cells = np.repeat(b_cells[:, :1], 16, axis=1)
    if is_sub:
        b_cells = b_cells ^ ff.SRC_SIGN
    _check_five_bit_exponents(name, s, a_cells, b_cells)
    view = DstView(m, t)
    if s.style == ff.STYLE_INT8:
        dst = (view.read32_or(s.dst_row, 8),) if accumulate else ()
        commit = _committer(view, s, s.dst_row, _int8_elementwise(is_mul, s.phase, s.flush_b, a_cells, b_cells, *dst))
    else:
        if not is_mul and not s.flush_b:
            exp_a, _ = ff.read_masks(s.fmt_a)
            exp_b, man_b = ff.read_masks(s.fmt_b)
            minus_zero_b = (b_cells & (ff.SRC_SIGN | man_b << 8 | exp_b)) == ff.SRC_SIGN
            _refuse(bool((minus_zero_b & ((a_cells & exp_a) == 0)).any()),
                    f"{name}: zero SrcA with an unflushed negative-zero SrcB wraps ttsim's arithmetic")
        dst = _read_dst(view, s, s.dst_row, 8) if accumulate else ()
        out = _fp_elementwise(is_mul, s.fmt_a, s.fmt_b, s.phase, s.style, s.dst32, s.flush_b, a_cells, b_cells, *dst)
        commit = _fp_committer(view, s, s.dst_row, out)
    finish(m, t, f.addr_mode, f.clear_dvalid, commit)


@by_value
def _int8_elementwise(is_mul: bool, phase: int, flush_b: bool, a_cells: np.ndarray, b_cells: np.ndarray,
                      *dst: np.ndarray) -> np.ndarray:
    """ELWMUL.md / ELWADD.md's INT8 arithmetic, plus Dst32b cells ``dst`` when given, as raw Dst32b cells."""
    a, b = ff.src_split(a_cells.astype(np.int64)), ff.src_split(b_cells.astype(np.int64))
    a_zero, b_zero = a.exp == 0, (b.exp == 0) & flush_b
    mask_a, mask_b = fm.int8_masks(phase) if is_mul else (0x3FF, 0x3FF)
    va = np.where(a_zero, 0, fm.int8_value(a, mask_a))
    vb = np.where(b_zero, 0, fm.int8_value(b, mask_b))
    value = va * vb if is_mul else va + vb
    if dst:
        value = fm.saturate(ff.dst32_to_int(dst[0].astype(np.int64)) + value)
    return ff.int_to_dst32(value)


@by_value
def _fp_elementwise(is_mul: bool, fmt_a: int, fmt_b: int, phase: int, style: str, dst32: bool, flush_b: bool,
                    a_cells: np.ndarray, b_cells: np.ndarray, *dst: np.ndarray) -> np.ndarray:
    """ELWMUL.md / ELWADD.md's arithmetic on SrcA and (broadcast, negated for ELWSUB) SrcB cells, plus Dst
    rows (raw, _read_dst) when given, as FP32-layout results."""
    exp8 = style != ff.STYLE_FP16
    acc = _acc(style, dst32, *dst) if dst else None
    if is_mul:
        bias = fm.product_bias(dst32, phase, exp8)
        fa, xa = fm.product_factors(a_cells, fmt_a, phase, side_b=False, bias=bias)
        fb, xb = fm.product_factors(b_cells, fmt_b, phase, side_b=True, flush=flush_b)
        return fm.mul_factors(fa, xa, fb, xb, acc, dst32, exp8, bias)
    sa, ea = fm.adder_operand(a_cells, fmt_a)
    sb, eb = fm.adder_operand(b_cells, fmt_b, flush=flush_b)
    return fm.add_operands(sa, ea, sb, eb, acc, dst32, exp8, flushed=flush_b)


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


ONE = ff.src_from_fp32(0x3F800000)
MINUS_INF_32 = 0xFFFFFFFF   # what GMPOOL reads from an invalid Dst row
MINUS_INF_16 = 0xFFFF


def _max_key(bits: np.ndarray) -> np.ndarray:
    """Total order of sign-magnitude 32-bit patterns (uint32; -0 below +0) as int32 keys; its own inverse."""
    x = bits.view(np.int32)
    return (x ^ ((x >> 31) & 0x7FFFFFFF)).view(np.uint32)


@semantics("GMPOOL")
def gmpool(m, t, f) -> None:
    """GMPOOL.md (WormholeB0): Dst row = max(Dst row, column maxima of SrcA[16x16]); BH as ttsim:
    no argmax, BF16/TF32 only, SrcB scaling row must be 1.0."""
    _check_pool_encoding("GMPOOL", f)
    s = resolve(m, t, "GMPOOL", f.dst, a_align=16, dst_align=4, dst_wraps=False, ok_a=ff.BF16_FAMILY,
                ok_b=ff.BF16_FAMILY, allow_int8=False)
    _refuse(s.style == ff.STYLE_FP16, "GMPOOL with FP16-family formats: ttsim refuses")
    _refuse(np.count_nonzero(s.b_bank.rows[s.b_row] != ONE) > 0,
            "GMPOOL with a SrcB scaling row other than 1.0: ttsim refuses")
    view = DstView(m, t)
    if s.dst32:             # as an FP32 pattern (dst32_to_fp32) with mantissa bits 12:0 clear
        hi, lo = view.read32_halves_or(s.dst_row, 1, MINUS_INF_32)
        best = ff.bf16_bits_table()[hi] << 16 | lo & 0xE000
    else:
        best = ff.bf16_bits_table()[view.read16_or(s.dst_row, 1, MINUS_INF_16)] << 16
    cells = s.a_bank.rows[s.a_row:s.a_row + 16]          # as FP32 patterns, BF16 unless TF32; exponent 0: +0
    exp = cells & 0xFF
    v = ((cells & ff.SRC_SIGN) << 13 | exp << 23 | (cells & (0x3FF00 if s.fmt_a == ff.TF32 else 0x3F800)) << 5)
    column_max = np.maximum.reduce(_max_key(v * (exp != 0)).view(np.int32), axis=0)
    best = _max_key(np.maximum(column_max, _max_key(best).view(np.int32)).view(np.uint32))
    if s.dst32:
        hi, lo = np.zeros((4, 16), dtype=np.uint16), np.zeros((4, 16), dtype=np.uint16)
        hi[0], lo[0] = ff.bf16_storage_table()[best >> 16], best & 0xFFFF
        commit = lambda: view.write32_halves(s.dst_row, hi, lo, 4)     # noqa: E731
    else:
        raw = np.zeros((4, 16), dtype=np.uint16)
        raw[0] = ff.bf16_storage_table()[best >> 16]
        commit = lambda: view.write16(s.dst_row, raw, 4)               # noqa: E731
    finish(m, t, f.pool_addr_mode, f.clear_dvalid, commit)
