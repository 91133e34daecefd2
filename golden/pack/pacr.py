"""PACR (regular form): read Dst rows, convert them to an uncompressed format and write them to L1.

Facts: tt-isa-documentation WormholeB0 PACR.md, Packers/InputAddressGenerator.md, OutputAddressGenerator.md
(addresses: golden.pack.addr), EdgeMasking.md; Blackhole per ttsim v1.10.0 (blackhole-deltas #8):
one packer whose four Dst read interfaces are chosen by ReadIntfSel (0: four consecutive rows, 1: one row
of 8 or 16 datums, 3: two rows, 5: rows +0 and +2, 10: rows +1 and +3; with DstAccessMode=1, strided, the
rows are 16 apart, which needs remap_addrs and swizzle_32b: tt-llk's pack untilize); the first row is
(Channel 0 Y/Z/W x PCK0_ADDR_CTRL_*_REG_0 strides) / datum size / 16 + DEST_TARGET_REG_CFG_PACK_SEC0_Offset;
Read_32b_data selects Dst32b; invalid rows read as zero; a masked column (PCK_EDGE_OFFSET_SEC{0,1} mask
chosen per row by TILE_ROW_SET_MAPPING) writes a raw zero; each datum goes to L1 as it is produced (the pages
buffer a partial 16-byte chunk until it fills, which leaves the same L1 once Last or Flush pads the tail), and
Last / Flush pad the data to the next 16-byte boundary with zeroes and make the next PACR start at fresh
addresses. Conversions: golden.pack_formats.

ReLU (STACC_RELU modes 1..3) acts between the Dst read and the output conversion. With Pack_L1_Acc (FP32, FP16
and BF16 outputs) each datum is added to the one already in L1 (golden.pack.l1_acc).

Block-float inputs (In_data_format = Dstacc = Bfp8_b or Bfp8a, read as BF16 / FP16 cut to six mantissa bits:
golden.pack_formats). Block-float outputs (BFP8/BFP4/BFP2): one shared exponent per 16 datums written to the
exponent stream (Exp_section_size units after the output address), datums to the data stream
(golden.pack_formats.bf16_to_bfp); Last / Flush pad both streams to 16 bytes.

Refused (NotModelled): the 5-bit-exponent BFP "a" and FP8 outputs, compression, L1 accumulation into other
formats, stochastic rounding, downsampling, exponent thresholding, tile headers, L1 source input, a remapped
Dst (remap_addrs, swizzle_32b) read without DstAccessMode, RowPadZero, Read_int8, and start positions not on a
row boundary.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import pack_formats as pf
from ..dest_view import DstView, config_word
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..memo import ConfigMemo, by_value
from ..registers import config_field
from ..state import COLS, DEST_ROWS
from . import l1_acc as pack_l1_acc
from .addr import _check_fields as check_packer_fields
from .addr import advance_pack_adcs, output_address

ROW_OFFSETS = {0: (0, 1, 2, 3), 1: (0,), 3: (0, 1), 5: (0, 2), 10: (1, 3)}   # ReadIntfSel -> rows read
STRIDED_OFFSETS = {0: (0, 16, 32, 48), 1: (0,), 3: (0, 16)}                      # the same, DstAccessMode=1
_REFUSED_CONFIG = (
    "THCON_SEC0_REG1_Row_start_section_size", "THCON_SEC0_REG1_Dis_shared_exp_assembler",
    "THCON_SEC0_REG1_Enable_out_fifo", "THCON_SEC0_REG1_Source_interface_selection",
    "THCON_SEC0_REG1_Exp_threshold_en", "THCON_SEC0_REG1_Add_tile_header_size",
    "THCON_SEC0_REG1_Downsample_mask", "THCON_SEC0_REG1_Downsample_rate",
    "THCON_SEC0_REG1_Auto_set_last_pacr_intf_sel", "THCON_SEC0_REG1_pack_start_intf_pos",
    "ALU_ROUNDING_MODE_Packer_srnd_en", "ALU_ROUNDING_MODE_Gasket_srnd_en",
    "PCK_EDGE_MODE_mode", "PACK_COUNTERS_SEC0_pack_yz_transposed",
    "DEST_TARGET_REG_CFG_PACK_SEC0_ZOffset", "PCK0_ADDR_BASE_REG_0_Base", "PCK_DEST_RD_CTRL_Read_int8")
_REMAP = ("DEST_ACCESS_CFG_remap_addrs", "DEST_ACCESS_CFG_swizzle_32b")


def _check(cfg, f) -> None:
    check_packer_fields(f)
    if f.rowpadzero or f.concat >> 1:
        raise NotModelled("PACR with RowPadZero or Concat bits 6:5 (not modelled)")
    if f.readintfsel not in ROW_OFFSETS:
        raise NotModelled(f"PACR ReadIntfSel={f.readintfsel} (ttsim models 0, 1, 3, 5 and 10)")
    remap = [cfg(name) for name in _REMAP]
    if f.dstaccessmode and not all(remap):
        raise NotModelled("PACR DstAccessMode=1 without both remap_addrs and swizzle_32b (ttsim requires them)")
    if f.dstaccessmode and f.readintfsel not in STRIDED_OFFSETS:
        raise NotModelled(f"PACR DstAccessMode=1 with ReadIntfSel={f.readintfsel} (ttsim models 0, 1 and 3)")
    if not f.dstaccessmode and any(remap):
        raise NotModelled("PACR reading a remapped Dst (remap_addrs / swizzle_32b) without DstAccessMode "
                          "(not modelled)")
    for name in _REFUSED_CONFIG:
        if cfg(name):
            raise NotModelled(f"PACR with {name} set (not modelled)")
    if not cfg("THCON_SEC0_REG1_Disable_zero_compress"):
        raise NotModelled("PACR with zero compression (Disable_zero_compress=0) (not modelled)")
    if not 1 <= cfg("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane") <= 16:
        raise NotModelled("PACR with pack_reads_per_xy_plane outside 1..16 (ttsim refuses it)")


def _mode(cfg) -> tuple[int, int, int]:
    read32 = cfg("PCK_DEST_RD_CTRL_Read_32b_data")
    in_fmt, out_fmt = cfg("THCON_SEC0_REG1_In_data_format"), cfg("THCON_SEC0_REG1_Out_data_format")
    if cfg("ALU_FORMAT_SPEC_REG2_Dstacc") != in_fmt:
        raise UndefinedBehaviour("PACR In_data_format differs from ALU_FORMAT_SPEC_REG2_Dstacc (ttsim: undefined)")
    mode = (read32, in_fmt, out_fmt)
    if mode not in pf.PACK_MODES:
        raise NotModelled(f"PACR conversion Read_32b_data={read32} In_data_format={in_fmt} "
                          f"Out_data_format={out_fmt} (not modelled)")
    if bool(cfg("PCK_DEST_RD_CTRL_Round_10b_mant")) != (mode in pf.ROUND_10B_MODES):
        raise NotModelled(f"PACR Round_10b_mant={cfg('PCK_DEST_RD_CTRL_Round_10b_mant')} with this "
                          "conversion (ttsim requires it for Dst32b FP16 and forbids it elsewhere)")
    return mode


def _configure(cfg, f) -> tuple:
    """_check and _mode, then the fields of the Config words they read that PACR uses later:
    (Read_32b_data, In_data_format, Out_data_format, Pack_L1_Acc, pack_reads_per_xy_plane, edge-mask row set,
    Read_unsigned, PACK_SEC0_Offset)."""
    _check(cfg, f)
    return (*_mode(cfg), cfg("THCON_SEC0_REG1_Pack_L1_Acc"), cfg("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane"),
            cfg("PCK_EDGE_TILE_ROW_SET_SELECT_select") & 3, cfg("PCK_DEST_RD_CTRL_Read_unsigned"),
            cfg("DEST_TARGET_REG_CFG_PACK_SEC0_Offset"))


def _input_strides(cfg, size: int) -> tuple[int, int, int, int]:
    """PCK0_ADDR_CTRL_*_REG_0 Y, Z, W and X strides, each a multiple of the ``size``-byte datum."""
    strides = [cfg(name) for name in ("PCK0_ADDR_CTRL_XY_REG_0_Ystride", "PCK0_ADDR_CTRL_ZW_REG_0_Zstride",
                                      "PCK0_ADDR_CTRL_ZW_REG_0_Wstride", "PCK0_ADDR_CTRL_XY_REG_0_Xstride")]
    if any(s % size for s in strides):
        raise UndefinedBehaviour(f"PACR input strides {strides} not multiples of the {size}-byte datum")
    return tuple(strides)


def _edge_config(cfg, select: int) -> tuple[tuple[int, int], tuple[int, ...]]:
    """The two edge masks (PCK_EDGE_OFFSET_SEC0/1) and row set ``select``'s row -> mask mapping."""
    masks = (cfg("PCK_EDGE_OFFSET_SEC0_mask"), cfg("PCK_EDGE_OFFSET_SEC1_mask"))
    return masks, tuple(cfg(f"TILE_ROW_SET_MAPPING_{select}_row_set_mapping_{r}") for r in range(16))


_CONFIGURE, _INPUT_STRIDES, _EDGE_CONFIG = ConfigMemo(_configure), ConfigMemo(_input_strides), ConfigMemo(_edge_config)
_RELU = (config_field("STACC_RELU_ApplyRelu"), config_field("STACC_RELU_ReluThreshold"))
_RELU_BITS = _RELU[0].mask | _RELU[1].mask
_ACCUMULATE = by_value(pack_l1_acc.accumulate)


@by_value
def _l1_datums(read32: int, in_fmt: int, out_fmt: int, unsigned: bool, relu_mode: int, relu_threshold: int,
               keep: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Dst cells -> L1 datums of Out_data_format (golden.pack_formats); a masked datum is a raw zero."""
    return np.where(keep, pf.dst_to_l1(read32, in_fmt, out_fmt, raw, unsigned, relu_mode, relu_threshold), 0)


@by_value
def _bfp_streams(values: np.ndarray, bits: int) -> tuple[bytes, bytes]:
    """BF16 values -> the exponent and data streams' bytes of a block-float output (pf.bf16_to_bfp)."""
    exps, datums = pf.bf16_to_bfp(values, bits)
    return exps.astype("u1").tobytes(), pf.pack_bits(datums, bits)


def _first_row(m, t: int, in_bits: int, offset: int) -> int:
    """The Dst row (Dst32b row when reading 32 bits) the first read interface starts at."""
    ch0 = m.s.adc[t]["pack"][0]
    if ch0.x:
        raise NotModelled(f"PACR with packer Channel 0 X = {ch0.x} (ttsim requires 0)")
    ystride, zstride, wstride, _ = _INPUT_STRIDES(m, t, (in_bits // 8,))
    datum = (ch0.y * ystride + ch0.z * zstride + ch0.w * wstride) // (in_bits // 8)
    if datum % COLS:
        raise NotModelled(f"PACR input start datum {datum} is not on a Dst row boundary (ttsim requires it)")
    return (datum // COLS + offset) % DEST_ROWS


def _edge_masks(m, t: int, select: int, n: int, rows_per_plane: int) -> tuple[np.ndarray, tuple[int, int, int]]:
    """Per-datum keep flags from the edge masks, and the packer's (x, y, z) position after n datums."""
    if select > 1:
        raise NotModelled(f"PACR edge-mask row set {select} (ttsim models sets 0 and 1)")
    masks, mapping = _EDGE_CONFIG(m, t, (select,))
    p = m.s.packer
    start = (p.x, p.y, p.z) if p.continuing else (0, 0, 0)
    keep, position, which = _walk(masks, mapping, start, n, rows_per_plane)
    if which is not None:
        raise NotModelled(f"PACR edge mask PCK_EDGE_OFFSET_SEC{which} (ttsim models SEC0 and SEC1)")
    return keep, position


@lru_cache(maxsize=4096)
def _walk(masks: tuple[int, int], mapping: tuple[int, ...], start: tuple[int, int, int], n: int,
          rows_per_plane: int) -> tuple[np.ndarray, tuple[int, int, int], int | None]:
    """_edge_masks' walk over n datums from packer position ``start`` (keep flags read-only; the last item:
    the first unmodelled mask a row maps to, else None)."""
    x, y, z = start
    keep = np.zeros(n, dtype=bool)
    for i in range(n):
        which = mapping[y & 15]
        if which > 1:
            return keep, (x, y, z), which
        keep[i] = masks[which] >> (i % COLS) & 1
        x += 1
        if x == COLS:
            x, y = 0, y + 1
            if y == rows_per_plane:
                y, z = 0, z + 1
    keep.flags.writeable = False
    return keep, (x, y, z), None


@semantics("PACR")
def pacr(m, t, f) -> None:
    """PACR.md + Packers/*.md (WormholeB0); BH: one packer, ReadIntfSel, Y-stride byte term (delta #8)."""
    read32, in_fmt, out_fmt, l1_acc, rows_per_plane, select, unsigned, offset = _CONFIGURE(m, t, (f,))
    in_bits, out_bits = pf.packer_input_bits(in_fmt), pf.element_bits(out_fmt)
    first = _first_row(m, t, in_bits, offset)
    rows = (STRIDED_OFFSETS if f.dstaccessmode else ROW_OFFSETS)[f.readintfsel]
    ch0, ch1 = m.s.adc[t]["pack"]
    per_row = ch1.x - ch0.x + 1
    if not f.flush and per_row not in ((8, 16) if f.readintfsel == 1 else (16,)):
        raise NotModelled(f"PACR of {per_row} datums per read interface (ttsim: 16, or 8 with ReadIntfSel=1)")
    if first + rows[-1] >= DEST_ROWS:
        raise NotModelled(f"PACR reading Dst rows {first}..{first + rows[-1]} (ttsim does not wrap)")
    n = 0 if f.flush else per_row * len(rows)
    if l1_acc and out_fmt not in pack_l1_acc.FORMATS:
        raise NotModelled(f"PACR L1 accumulation into Out_data_format {out_fmt} (ttsim: FP32, FP16, BF16 only)")
    if out_fmt in pf.BFP_BITS and n % 16:
        raise NotModelled(f"PACR of {n} block-float datums: not whole groups of 16 sharing an exponent (ttsim refuses)")
    keep, position = _edge_masks(m, t, select, n, rows_per_plane)
    p = m.s.packer
    addrs = None if p.continuing else output_address(m, t, f)

    raw = np.zeros(n, dtype=np.uint32)
    if n and not f.zerowrite:
        view = DstView(m, t)
        read = view.read32_or if read32 else view.read16_or
        if rows == ROW_OFFSETS[0][:len(rows)]:
            cells = read(first, len(rows))          # consecutive rows: one block
        else:
            cells = read(first + np.asarray(rows))
        raw = cells.reshape(-1)[:n].astype(np.uint32)      # datum i: row rows[i // 16], column i % 16
    word = config_word(m, t, _RELU[0].index, _RELU_BITS)
    relu = (_RELU[0].get(word), _RELU[1].get(word))
    values = _l1_datums(read32, in_fmt, out_fmt, bool(unsigned), *relu, keep, raw)

    if addrs is not None:
        p.data_addr = addrs.data
        p.exp_addr = addrs.exponent if addrs.exponent is not None else addrs.data
    bfp = out_fmt in pf.BFP_BITS
    data, exp = p.data_addr, p.exp_addr
    if bfp:
        exps, datums = _bfp_streams(values, out_bits)
        m.s.l1.write(exp, exps)
        m.s.l1.write(data, datums)
    else:
        dtype = {32: "<u4", 16: "<u2", 8: "u1"}[out_bits]
        if l1_acc:
            old = np.frombuffer(m.s.l1.read(data, n * out_bits // 8), dtype=dtype)
            values = _ACCUMULATE(out_fmt, old, values)
        m.s.l1.write(data, values.astype(dtype).tobytes())
    data = p.data_addr = data + n * out_bits // 8
    exp = p.exp_addr = exp + n // 16
    p.x, p.y, p.z = position
    if f.last or f.flush:
        m.s.l1.write(data, bytes(-data % 16))
        if bfp:
            m.s.l1.write(exp, bytes(-exp % 16))
    p.continuing = not (f.last or f.flush)
    advance_pack_adcs(m, t, f.addrmode)
