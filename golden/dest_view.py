"""Dst16b / Dst32b: the two views of DstBits[1024][16], with Adj16 / Adj32 row remapping.

Facts: tt-isa-documentation BlackholeA0 Dst.md (Adj16, Adj32 under Config DEST_ACCESS_CFG_remap_addrs /
swizzle_32b; a Dst32b cell is DstBits[Adj32(r)] << 16 | DstBits[Adj32(r) + 8]); blackhole-deltas #9 (the
low half of an FP32 cell holds mantissa bits 15:0). Row validity follows ttsim v1.10.0's Blackhole model:
one valid bit per DstBits row, and a Dst32b cell tests and sets only the valid bit of its high-half row
(the ZEROACC 32-bit 16-row mode clears exactly those rows). ttsim ignores remap_addrs / swizzle_32b
("XXX handle Adj16/Adj32 on BH"); golden applies them as Dst.md says.

Reads of invalid rows are raw except in the ``*_or`` accessors; callers decide what an invalid row means
for them (matrix unit: identity element; packer: zero; SFPU: undefined).
"""
from __future__ import annotations

import numpy as np

from .registers import config_field, thread_config_field
from .state import DST_MASK

LO_OFFSET = 8          # DstBits row of a Dst32b cell's low half, relative to its high half
HALF_ROWS = 512        # DstBits rows per Dst half

_STATE_ID = thread_config_field("CFG_STATE_ID_StateID")
_ACCESS = config_field("DEST_ACCESS_CFG_remap_addrs")
_REMAP = _ACCESS.mask
_SWIZZLE = config_field("DEST_ACCESS_CFG_swizzle_32b").mask
_ZEROACC_ABS = config_field("DEST_ACCESS_CFG_zeroacc_absolute_tile_mode").mask
_ALU_ACC = config_field("ALU_ACC_CTRL_Fp32_enabled")
_FP32_OR_INT8 = _ALU_ACC.mask | config_field("ALU_ACC_CTRL_INT8_math_enabled").mask
assert config_field("ALU_ACC_CTRL_INT8_math_enabled").index == _ALU_ACC.index
for _name in ("DEST_ACCESS_CFG_swizzle_32b", "DEST_ACCESS_CFG_zeroacc_absolute_tile_mode"):
    assert config_field(_name).index == _ACCESS.index


def adj16(r, remap: bool):
    """Adj16 of Dst.md: with remap_addrs, bits 5:3 of the row are permuted within each 64-row block."""
    if remap:
        r = (r & 0x3C7) ^ ((r & 0x030) >> 1) ^ ((r & 0x008) << 2)
    return r


def adj32(r, remap: bool, swizzle: bool):
    """Adj32 of Dst.md: the DstBits row holding the high half of Dst32b row ``r`` (low half is +8)."""
    r = adj16(r, remap)
    if swizzle:
        r = (r & 0x3F3) ^ ((r & 0x018) >> 1) ^ ((r & 0x004) << 1)
    return ((r & 0x1F8) << 1) | (r & 0x207)


_STATE_ID_AT, _STATE_ID_SHIFT, _STATE_ID_MASK = _STATE_ID.index, _STATE_ID.shift, _STATE_ID.low_mask


def config_word(m, t: int, index: int, bits: int = 0xFFFFFFFF) -> int:
    """Config word ``index`` as thread t sees it (through its CFG_STATE_ID; _STATE_ID.get written out: hot), for
    a reader of its bits ``bits`` (a traced state records those alone, golden.analysis.traced_state)."""
    s = m.s
    words = s.config[(s.thread_config[t][_STATE_ID_AT] >> _STATE_ID_SHIFT) & _STATE_ID_MASK]
    return words[index] if words.__class__ is list else words.bits(index, bits)


def config_words(m, t: int):
    """The Config state thread t sees (through its CFG_STATE_ID), its words to read by bits (a traced state's
    ``bits``, golden.analysis.traced_state) or whole (a plain list's)."""
    s = m.s
    return s.config[(s.thread_config[t][_STATE_ID_AT] >> _STATE_ID_SHIFT) & _STATE_ID_MASK]


_ACC_AT, _ACCESS_AT, _VIEW_BITS = _ALU_ACC.index, _ACCESS.index, _REMAP | _SWIZZLE


def uses_dst32b(m, t: int) -> bool:
    """Config ALU_ACC_CTRL_Fp32_enabled or INT8_math_enabled: instructions that follow it use Dst32b
    (config_word written out: hot)."""
    s = m.s
    words = s.config[(s.thread_config[t][_STATE_ID_AT] >> _STATE_ID_SHIFT) & _STATE_ID_MASK]
    return bool((words[_ACC_AT] if words.__class__ is list else words.bits(_ACC_AT, _FP32_OR_INT8)) & _FP32_OR_INT8)


def zeroacc_absolute(m, t: int) -> bool:
    """Config DEST_ACCESS_CFG_zeroacc_absolute_tile_mode (Blackhole, blackhole-deltas #11)."""
    return bool(config_word(m, t, _ACCESS_AT, _ZEROACC_ABS) & _ZEROACC_ABS)


def _shifted(sel, k: int):
    """A DstBits row selection moved down by k rows."""
    return slice(sel.start + k, sel.stop + k) if isinstance(sel, slice) else sel + k


class DstView:
    """Dst as one instruction of thread t addresses it: Adj16 / Adj32 under that thread's configuration.
    Accessors take a view row ``r`` and a count ``n`` of consecutive view rows (aligned blocks in
    practice); n == 1 reads a (16,) row, n > 1 a (n, 16) block."""

    __slots__ = ("bits", "valid", "remap", "swizzle")

    def __init__(self, m, t: int):
        s = m.s       # config_word written out: one view per instruction that reaches Dst
        words = s.config[(s.thread_config[t][_STATE_ID_AT] >> _STATE_ID_SHIFT) & _STATE_ID_MASK]
        word = words[_ACCESS_AT] if words.__class__ is list else words.bits(_ACCESS_AT, _VIEW_BITS)
        dest = s.dest
        self.bits = dest.bits
        self.valid = dest.valid
        self.remap = bool(word & _REMAP)
        self.swizzle = bool(word & _SWIZZLE)

    # --- addressing ---
    def row16(self, r: int) -> int:
        """DstBits row of Dst16b row ``r`` (wrapped to 10 bits)."""
        return adj16(r & DST_MASK, self.remap)

    def row32(self, r: int) -> int:
        """DstBits row of the high half of Dst32b row ``r`` (wrapped to 10 bits)."""
        return adj32(r & DST_MASK, self.remap, self.swizzle)

    def sel16(self, r: int, n: int = 1):
        """DstBits rows of Dst16b rows r..r+n-1: an int, a slice when contiguous, else an index array."""
        r &= DST_MASK
        if n == 1:
            return adj16(r, self.remap)
        if not self.remap and r + n <= 1024:
            return slice(r, r + n)
        return adj16(np.arange(r, r + n) & DST_MASK, self.remap)

    def sel32(self, r: int, n: int = 1):
        """DstBits rows holding the high halves of Dst32b rows r..r+n-1 (see sel16)."""
        r &= DST_MASK
        if n == 1:
            return adj32(r, self.remap, self.swizzle)
        if not (self.remap or self.swizzle) and (r & 7) + n <= 8:
            p = adj32(r, False, False)
            return slice(p, p + n)
        return adj32(np.arange(r, r + n) & DST_MASK, self.remap, self.swizzle)

    # --- Dst16b ---
    def read16(self, r: int, n: int = 1) -> np.ndarray:
        return self.bits[self.sel16(r, n)]

    def write16(self, r: int, values, n: int = 1) -> None:
        """Write whole row(s) and mark them valid."""
        p = self.sel16(r, n)
        self.bits[p] = values
        self.valid[p] = True

    # --- Dst32b ---
    def read32(self, r: int, n: int = 1) -> np.ndarray:
        p = self.sel32(r, n)
        return (self.bits[p].astype(np.uint32) << 16) | self.bits[_shifted(p, LO_OFFSET)]

    def write32(self, r: int, values, n: int = 1) -> None:
        """Write whole row(s) of 32-bit cells and mark them valid (the high-half row's bit)."""
        p = self.sel32(r, n)
        values = np.asarray(values, dtype=np.uint32)
        self.bits[p] = values >> 16
        self.bits[_shifted(p, LO_OFFSET)] = values & 0xFFFF
        self.valid[p] = True

    def write32_halves(self, r: int, hi, lo, n: int = 1) -> None:
        """write32 of cells given as their high and low 16-bit halves."""
        p = self.sel32(r, n)
        self.bits[p] = hi
        self.bits[_shifted(p, LO_OFFSET)] = lo
        self.valid[p] = True

    # --- matrix-unit reads: an invalid row reads as the identity element (ZEROACC.md) ---
    def read16_or(self, r: int, n: int = 1, identity: int = 0) -> np.ndarray:
        p = self.sel16(r, n)
        return _or_identity(self.bits[p], self.valid[p], identity)

    def read32_or(self, r: int, n: int = 1, identity: int = 0) -> np.ndarray:
        p = self.sel32(r, n)
        cells = (self.bits[p].astype(np.uint32) << 16) | self.bits[_shifted(p, LO_OFFSET)]
        return _or_identity(cells, self.valid[p], identity)

    def read32_halves_or(self, r: int, n: int = 1, identity: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """read32_or as the (high, low) 16-bit halves of the cells."""
        p = self.sel32(r, n)
        hi, lo, valid = self.bits[p], self.bits[_shifted(p, LO_OFFSET)], self.valid[p]
        if 0 not in valid.tobytes():
            return hi, lo
        return _or_identity(hi, valid, identity >> 16), _or_identity(lo, valid, identity & 0xFFFF)


def _or_identity(cells: np.ndarray, valid, identity: int) -> np.ndarray:
    """cells, with rows whose valid bit is clear replaced by the identity element (a bool's byte is 0 or 1:
    checking the bytes is numpy's quickest "all valid" for a few rows)."""
    if 0 not in valid.tobytes():
        return cells
    return np.where(valid[..., None], cells, cells.dtype.type(identity))
