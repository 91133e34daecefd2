"""UNPACR (regular form): move uncompressed, non-BFP datums from L1 into SrcA, SrcB or Dst.

Facts: tt-isa-documentation WormholeB0 UNPACR_Regular.md (context selection, input address from the
tile descriptor and Channel 0 of the unpacker ADCs, datum count Channel[1].X - Channel[0].X + 1, output
position from Channel 1 Y/Z/W and the UNP{0,1}_ADDR_CTRL_*_REG_1 strides, the four skipped SrcA rows,
counter increments from the 8-bit AddrMode field, FlipSrc, Unpack_Src_Reg_Set_Upd). Blackhole per ttsim
v1.10.0: word 1 of the descriptor holds YDim (bits 7:0) and ZDim (23:16); SrcA rows wrap at 64 when
SRCA_SET_SetOvrdWithAddr is set; SrcB rows past 63 are undefined; FlipSrc records out_data_format as the
bank's implied format (blackhole-deltas #17); a SrcA burst of more than 16 datums whose first row is not
aligned to the burst size may drop writes (not modelled). Conversions: golden.pack_formats.

Block floats (UNPACR_Regular.md, ttsim v1.10.0): BFP8/BFP4/BFP2 datums are 8/4/2 bits (sub-byte datums low
bits first) after an exponent section of one byte per 16 datums of the tile, rounded up to 16 bytes (unless
Force_shared_exp supplies UNP{0,1}_FORCED_SHARED_EXP); each datum becomes BF16 (pack_formats.bfp_to_bf16).

Haloize_mode (unpacker 0, into Src): each 16x16 block of SrcA is written transposed (the low four row bits
swap with the column); the input must start on a 16-byte boundary, and Dst is not a target.

Tileize_mode (unpacker 0, into Src; ttsim v1.10.0): the input is read in rows of 32 datums (16 for 8-bit
formats) spaced by the Shift_amount fields as a byte stride, written to SrcA contiguously.

Refused (NotModelled): compressed tiles, Haloize_mode and Tileize_mode on unpacker 1, Tileize_mode into Dst, BFP into Dst and BFP with NoBFPExpSection
(ttsim refuses both), the 5-bit-exponent BFP "a" formats and FP8, upsample/column shift, per-context
format overrides, contexts above 1, row search, cache flush, context counters, ContextADC,
Last=0 (ttsim requires Last), L1 FIFO wrap, and MultiContextMode from a thread other than 0 (the pages
take the ADC from ContextADC = 0, ttsim from the issuing thread).
"""
from __future__ import annotations

import numpy as np

from .. import pack_formats as pf
from ..dest_view import DstView, config_words
from ..errors import Blocked
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..matrix.srcs import give_to_matrix, src_files
from ..memo import ConfigMemo, by_value
from ..registers import config_field, thread_config_field
from ..state import ADC_Y_MASK, ADC_ZW_MASK, COLS, DST_MASK, SRC_MASK, SRC_ROWS, UNPACKERS

SKIPPED_SRCA_ROWS = 4          # unpacker 0's output positions 0..63 fall before SrcA row 0
MAX_DATUMS = SRC_ROWS * COLS   # golden refuses larger single transfers (they would overwrite themselves)
TILEIZE_ROW_DATUMS = 32        # Blackhole's tileize reads rows of 32 datums of 16 or 32 bits (16 of 8 bits)
_OVRD_WITH_ADDR = thread_config_field("SRCA_SET_SetOvrdWithAddr")
_SET_BASE = (thread_config_field("SRCA_SET_Base"), thread_config_field("SRCB_SET_Base"))
_CONTEXT_OFFSET = (thread_config_field("UNPACK_MISC_CFG_CfgContextOffset_0"),
                   thread_config_field("UNPACK_MISC_CFG_CfgContextOffset_1"))
_UNSIGNED = ("ALU_FORMAT_SPEC_REG0_SrcAUnsigned", "ALU_FORMAT_SPEC_REG0_SrcBUnsigned")
_UNITS = ("unpack0", "unpack1")
# the conversions, kept by their operands (golden.memo)
_L1_TO_DST, _L1_TO_SRC, _BFP_TO_SRC = by_value(pf.l1_to_dst), by_value(pf.l1_to_src), by_value(pf.bfp_to_src)


def _cfg(words, name: str) -> int:
    """Config field ``name`` of ``words`` (the instruction's Config state, ``config_words``)."""
    f = config_field(name)
    return f.get(words[f.index] if words.__class__ is list else words.bits(f.index, f.mask))


def _tcfg(m, t: int, f) -> int:
    return f.get(m.s.thread_config[t][f.index])


def _check_fields(f) -> None:
    if not f.last:
        raise NotModelled("UNPACR with Last=0: ttsim requires Last=1 and its Blackhole meaning is undocumented")
    for name in ("searchcacheflush", "rowsearch", "autoinccontextid", "srcb_bcast", "addrcntcontextid",
                 "cfgcontextid", "cfgcontextcntinc"):
        if getattr(f, name):
            raise NotModelled(f"UNPACR with {name}={getattr(f, name)} (not modelled; ttsim refuses it)")


def _descriptor(words, which: int) -> tuple[int, int]:
    """Words 0 and 1 of THCON_SEC{which}_REG0_TileDescriptor in ``words`` (``config_words``)."""
    index = config_field(f"THCON_SEC{which}_REG0_TileDescriptor").index
    if words.__class__ is list:
        return words[index], words[index + 1]
    return words.bits(index, 0xFFFFFFFF), words.bits(index + 1, 0xFFFFFFFF)


def _refused_modes(cfg, which: int, ctx: int) -> None:
    """Unpacker modes golden does not model: upsampling, a column shift, an L1 FIFO (NotModelled)."""
    sec = f"THCON_SEC{which}_REG2_"
    for name in ("Upsample_rate", "Upsample_and_interleave"):
        if cfg(sec + name):
            raise NotModelled(f"UNPACR with {sec}{name} set (not modelled)")
    if which == 0 and not cfg(sec + "Tileize_mode") and cfg(f"{sec}Shift_amount_cntx{ctx}"):
        raise NotModelled("UNPACR with a column shift (Shift_amount) (not modelled)")
    for name in (f"{sec}Unpack_fifo_size", f"THCON_SEC{which}_REG10_Unpack_fifo_size"):
        if cfg(name):
            raise NotModelled(f"UNPACR with {name} nonzero: L1 FIFO wrap not modelled (ttsim ignores it)")


def _input_address(words, which: int, ctx: int) -> int:
    """Byte address of datum 0 of the tile: (Base + (Offset & 0xffff) + 1) * 16 (one 16-byte header)."""
    sec = f"THCON_SEC{which}_"
    if ctx:
        base, off = _cfg(words, sec + "REG3_Base_cntx1_address"), _cfg(words, sec + "REG7_Offset_cntx1_address")
    else:
        base, off = _cfg(words, sec + "REG3_Base_address"), _cfg(words, sec + "REG7_Offset_address")
    return ((base + (off & 0xFFFF) + 1) * 16) & 0xFFFFFFFF


def _output_strides(cfg, which: int) -> tuple[int, int, int, int]:
    """UNP{which}_ADDR_BASE_REG_1_Base and the Y, Z, W strides of UNP{which}_ADDR_CTRL_*_REG_1."""
    unp = f"UNP{which}_"
    return (cfg(unp + "ADDR_BASE_REG_1_Base"), cfg(unp + "ADDR_CTRL_XY_REG_1_Ystride"),
            cfg(unp + "ADDR_CTRL_ZW_REG_1_Zstride"), cfg(unp + "ADDR_CTRL_ZW_REG_1_Wstride"))


_REFUSED_MODES, _OUTPUT_STRIDES = ConfigMemo(_refused_modes), ConfigMemo(_output_strides)


def _output_position(m, t: int, words, which: int, multi: bool, ctx: int, to_dst: bool, out_fmt: int) -> int:
    """Datum index of the first output position: Channel 1 Y/Z/W times the REG_1 strides (bytes) over the
    output datum size, then (unpacker 0, MultiContextMode) the context's Dest address added or substituted."""
    ch1 = m.s.adc[t][_UNITS[which]][1]
    base, ystride, zstride, wstride = _OUTPUT_STRIDES(m, t, (which,))
    out = base + ch1.y * ystride + ch1.z * zstride + ch1.w * wstride
    size = max(pf.element_bits(out_fmt) // 8, 1)    # sub-byte (BFP4/BFP2) outputs need no alignment
    if out % size:
        raise UndefinedBehaviour(f"UNPACR output byte offset {out} is not a multiple of the {size}-byte datum")
    out //= size
    if multi and which == 0:
        ctx_addr = _cfg(words, f"THCON_SEC0_REG5_Dest_cntx{ctx}_address")
        add = to_dst or _cfg(words, "UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr")
        out = out + ctx_addr if add else ctx_addr
    return out


def _check_srca_burst(words, out: int, count: int, in_bits: int) -> None:
    """ttsim: a SrcA transfer of more than one row whose first row is not aligned to the unpacker's burst
    (its L1 bytes per cycle over the bytes of two rows, 1..8 rows) may drop writes on silicon."""
    if count <= COLS:
        return
    mode = _cfg(words, "THCON_SEC0_REG2_Throttle_mode")
    if in_bits == 2:
        mode = 0                                    # BFP2 always runs at x1
    elif _cfg(words, "THCON_SEC0_REG2_Tileize_mode"):
        mode = 2                                    # tileize always runs at x4
    elif not _cfg(words, "THCON_SEC0_REG1_ovrd_default_throttle_mode"):
        mode = 3 if in_bits == 8 else 2
    per_cycle = 128 if mode == 2 and in_bits >= 16 else 16 << mode
    burst = min(max(per_cycle // (2 * in_bits), 1), 8)
    start = out // COLS - SKIPPED_SRCA_ROWS
    if out % COLS or start % burst:
        raise NotModelled(f"UNPACR of {count} datums into SrcA starting at row {start} (column {out % COLS}): "
                          f"bursts of {burst} rows may drop writes on silicon (ttsim refuses)")


def _src_targets(m, t: int, which: int, out: int, count: int, transpose: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keep mask, Src row, column of each kept datum) for ``count`` datums from output position ``out``;
    ``transpose`` (Haloize_mode, unpacker 0) swaps the low four row bits with the column, transposing each
    16x16 block of SrcA."""
    src = src_files(m)[which]
    ovrd = which == 0 and bool(_tcfg(m, t, _OVRD_WITH_ADDR))
    return _targets(which, src.unpacker_row[t], ovrd, transpose, out, count)


@by_value
def _targets(which: int, cursor: int, ovrd: bool, transpose: bool, out: int, count: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_src_targets from the unpacker's row cursor and SRCA_SET_SetOvrdWithAddr: (kept datums, rows, columns)."""
    pos = out + np.arange(count, dtype=np.int64)
    r, c = pos // COLS, pos % COLS
    if which == 1:
        if (r >= SRC_ROWS).any():
            raise UndefinedBehaviour(f"UNPACR to SrcB row {int(r.max())} (past row 63; ttsim: undefined)")
        return np.ones(len(pos), dtype=bool), (r + cursor) & SRC_MASK, c
    keep = r >= SKIPPED_SRCA_ROWS
    r = r - SKIPPED_SRCA_ROWS
    if ovrd:
        r = r & SRC_MASK
    else:
        if (r[keep] >= 16).any():
            raise UndefinedBehaviour("UNPACR to SrcA row >= 16 relative to the row cursor without SetOvrdWithAddr")
        r = r + cursor
        if (r[keep] >= SRC_ROWS).any():
            raise UndefinedBehaviour("UNPACR to SrcA past row 63 (row cursor + row)")
    if transpose:
        r, c = (r & ~15) | c, r & 15
    return keep, r[keep], c[keep]


def _write_dst(m, t: int, pos: np.ndarray, values: np.ndarray, is32: bool) -> None:
    if _tcfg(m, t, _OVRD_WITH_ADDR):
        raise UndefinedBehaviour("UNPACR to Dst with SRCA_SET_SetOvrdWithAddr set (ttsim: undefined)")
    rows = (pos // COLS - SKIPPED_SRCA_ROWS) & DST_MASK
    cols = pos % COLS
    view = DstView(m, t)
    phys = view.row32(rows) if is32 else view.row16(rows)
    for p in np.unique(phys):
        if not view.valid[p] and np.count_nonzero(phys == p) != COLS:
            raise UndefinedBehaviour(f"UNPACR writes only some columns of invalid Dst row {int(p)}")
    if is32:
        view.bits[phys, cols] = (values >> 16).astype(np.uint16)
        view.bits[phys + 8, cols] = (values & 0xFFFF).astype(np.uint16)
    else:
        view.bits[phys, cols] = values.astype(np.uint16)
    view.valid[phys] = True


def _tileize_row_stride(words, which: int, in_bits: int, to_dst: bool) -> int:
    """Tileize_mode (ttsim v1.10.0): the input is read in rows of 32 datums (16 for 8-bit formats) whose
    starts are THCON_SEC0_REG2_Shift_amount_cntx0/1/2 << 4/8/12 bytes apart; 0 when not tileizing."""
    sec = f"THCON_SEC{which}_REG2_"
    if not _cfg(words, sec + "Tileize_mode"):
        return 0
    if which == 1:
        raise NotModelled("UNPACR of unpacker 1 with Tileize_mode (ttsim does not implement it)")
    if in_bits < 8:
        raise UndefinedBehaviour("UNPACR with Tileize_mode of a 4- or 2-bit block-float format")
    if to_dst:
        raise NotModelled("UNPACR into Dst with Tileize_mode (not modelled)")
    return sum(_cfg(words, f"{sec}Shift_amount_cntx{k}") << (4 + 4 * k) for k in range(3))


def _read_datums(m, start_bit: int, count: int, bits: int) -> np.ndarray:
    """``count`` datums of ``bits`` bits from L1 bit address ``start_bit`` (sub-byte datums low bits first)."""
    if bits >= 8:
        data = m.s.l1.read(start_bit // 8, count * bits // 8)
        return np.frombuffer(data, dtype={32: "<u4", 16: "<u2", 8: "u1"}[bits]).astype(np.uint32)
    first_byte = start_bit // 8
    at = start_bit - 8 * first_byte + bits * np.arange(count)
    data = np.frombuffer(m.s.l1.read(first_byte, int(at[-1]) // 8 + 1), dtype="u1").astype(np.uint32)
    return (data[at >> 3] >> (at & 7)) & ((1 << bits) - 1)


def _bfp_exponents(m, words, which: int, w0: int, base: int, first: int, count: int,
                   elements: int) -> tuple[int, np.ndarray]:
    """(byte address of datum 0, shared exponent of each datum read): the exponent section holds one byte per
    16 datums at ``base`` and is skipped, rounded up to 16 bytes; Force_shared_exp uses one exponent instead."""
    if _cfg(words, f"THCON_SEC{which}_REG2_Force_shared_exp"):
        return base, np.full(count, _cfg(words, f"UNP{which}_FORCED_SHARED_EXP_shared_exp"), dtype=np.uint32)
    if w0 >> 5 & 1:
        raise NotModelled("UNPACR of a block-float tile with NoBFPExpSection (ttsim refuses it)")
    section = -(-elements // 16)
    index = (first + np.arange(count)) // 16
    exps = np.frombuffer(m.s.l1.read(base + int(index[0]), int(index[-1] - index[0]) + 1), dtype="u1")
    return base + (-(-section // 16)) * 16, exps[index - index[0]].astype(np.uint32)


def _advance(m, t: int, which: int, addr_mode: int) -> None:
    """Channel 0 Z += bits 1:0, Y += bits 3:2; Channel 1 Z += bits 5:4, Y += bits 7:6."""
    ch0, ch1 = m.s.adc[t][_UNITS[which]]
    ch0.z = (ch0.z + (addr_mode & 3)) & ADC_ZW_MASK
    ch0.y = (ch0.y + (addr_mode >> 2 & 3)) & ADC_Y_MASK
    ch1.z = (ch1.z + (addr_mode >> 4 & 3)) & ADC_ZW_MASK
    ch1.y = (ch1.y + (addr_mode >> 6 & 3)) & ADC_Y_MASK


@semantics("UNPACR")
def unpacr(m, t, f) -> None:
    """UNPACR_Regular.md (WormholeB0); BH: ttsim v1.10.0 facts above, implied Src format (delta #17)."""
    _check_fields(f)
    which = f.unpack_block_selection
    multi = bool(f.ovrdthreadid)
    if multi and t != 0:
        raise NotModelled("UNPACR MultiContextMode from thread != 0: the pages use ADCs[ContextADC=0], "
                          "ttsim the issuing thread's")
    src = src_files(m)[which]
    if src.banks[src.unpacker_bank].allowed_client != UNPACKERS:
        raise Blocked(f"Src{'AB'[which]} bank {src.unpacker_bank} is not owned by the unpackers")
    ctx = _tcfg(m, t, _CONTEXT_OFFSET[which]) if multi else 0
    if ctx > 1:
        raise NotModelled(f"UNPACR context {ctx} (ttsim models contexts 0 and 1)")
    sec = f"THCON_SEC{which}_"
    words = config_words(m, t)        # (UNPACR sets neither Config nor ThreadConfig)
    w0, w1 = _descriptor(words, which)
    uncompressed = _cfg(words, f"{sec}REG2_Disable_zero_compress_cntx{ctx}") if multi else w0 >> 4 & 1
    if not uncompressed:
        raise NotModelled("UNPACR of a compressed tile (not modelled)")
    if multi and _cfg(words, sec + "REG2_Ovrd_data_format"):
        raise NotModelled("UNPACR with per-context data formats (Ovrd_data_format; ttsim refuses it)")
    in_fmt, out_fmt = w0 & 0xF, _cfg(words, sec + "REG2_Out_data_format")
    pf.unpack_pair_check(in_fmt, out_fmt)
    if in_fmt == pf.FP8:
        raise NotModelled("UNPACR of FP8 (not modelled)")
    in_bits = pf.element_bits(in_fmt)
    to_dst = which == 0 and bool(_cfg(words, f"{sec}REG2_Unpack_if_sel_cntx{ctx}" if multi
                                       else sec + "REG2_Unpack_If_Sel"))
    _REFUSED_MODES(m, t, (which, ctx))

    x_dim = _cfg(words, f"THCON_SEC0_REG5_Tile_x_dim_cntx{ctx}") if multi and which == 0 else w0 >> 16
    y_dim, z_dim = w1 & 0xFF, (w1 >> 16 & 0xFF) or 1
    ch0, ch1 = m.s.adc[t][_UNITS[which]]
    if ch0.x > ch1.x:
        raise NotModelled(f"UNPACR with Channel 0 X {ch0.x} past Channel 1 X {ch1.x}")
    count = ch1.x - ch0.x + 1
    if count > MAX_DATUMS:
        raise NotModelled(f"UNPACR of {count} datums in one instruction (more than a Src bank holds)")
    first = ch0.x + x_dim * (ch0.y + y_dim * (ch0.z + z_dim * ch0.w))
    base = _input_address(words, which, ctx)
    exps = None
    if in_fmt in pf.BFP_BITS:
        if to_dst:
            raise NotModelled("UNPACR of a block-float format into Dst (ttsim refuses it)")
        base, exps = _bfp_exponents(m, words, which, w0, base, first, count, x_dim * y_dim * z_dim)
    row_stride = _tileize_row_stride(words, which, in_bits, to_dst)
    transpose = bool(_cfg(words, sec + "REG2_Haloize_mode"))
    if transpose:
        if which == 1:
            raise NotModelled("UNPACR of unpacker 1 with Haloize_mode (the page ignores it, ttsim: non-contractual)")
        if to_dst:
            raise UndefinedBehaviour("UNPACR into Dst with Haloize_mode (transpose)")
    if (transpose or row_stride) and (base * 8 + first * in_bits) % 128:
        raise UndefinedBehaviour("UNPACR with Haloize_mode or Tileize_mode from an input address not 16-byte aligned")
    if row_stride:
        width = TILEIZE_ROW_DATUMS if in_bits >= 16 else COLS
        raw = np.concatenate([_read_datums(m, base * 8 + first * in_bits + 8 * row_stride * k, min(width, count - i),
                                           in_bits) for k, i in enumerate(range(0, count, width))])
    else:
        raw = _read_datums(m, base * 8 + first * in_bits, count, in_bits)
    unsigned = bool(_cfg(words, _UNSIGNED[which]))

    out = _output_position(m, t, words, which, multi, ctx, to_dst, out_fmt)
    if to_dst:
        pos = out + np.arange(count, dtype=np.int64)
        values = _L1_TO_DST(in_fmt, out_fmt, raw.astype(np.uint32), unsigned)
        if f.zerowrite2:
            values = np.zeros_like(values)
        _write_dst(m, t, pos, values, pf.unpack_to_dst_is32(out_fmt))
    else:
        if which == 0:
            _check_srca_burst(words, out, count, in_bits)
        if exps is not None:
            cells = _BFP_TO_SRC(raw, exps, in_bits)
        else:
            cells = _L1_TO_SRC(in_fmt, out_fmt, raw.astype(np.uint32), unsigned)
        if f.zerowrite2:
            cells = np.zeros_like(cells)
        keep, rows, cols = _src_targets(m, t, which, out, count, transpose)
        src.banks[src.unpacker_bank].rows[rows, cols] = cells[keep]

    _advance(m, t, which, f.addrmode)
    if f.setdatvalid:
        give_to_matrix(m, t, which, out_fmt)
    elif _cfg(words, sec + "REG2_Unpack_Src_Reg_Set_Upd"):
        base = _tcfg(m, t, _SET_BASE[which]) << 4
        src.unpacker_row[t] = (src.unpacker_row[t] + 16 + base) & SRC_MASK
