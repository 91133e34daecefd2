"""Number formats seen by the matrix unit: the 19-bit Src cell, the Dst16b and Dst32b encodings.

Sources: tt-isa-documentation WormholeB0 SrcASrcB.md, Dst.md, ELWMUL.md (ReadSrcInt8: the cell layout);
blackhole-deltas #9 (Dst FP32 low half holds mantissa bits 15:0) and #17 (implied Src formats);
ttsim v1.10.0 for which formats the matrix unit accepts.

Golden's Src cell layout (the documented one; every module that writes SrcA/SrcB must use it):
    bit 18 sign | bits 17:8 ten mantissa (or integer magnitude) bits | bits 7:0 exponent.
BF16 leaves the low three mantissa bits zero; FP16 and integer "8" use only the low five exponent bits.
"""
from __future__ import annotations

import sys
from functools import cache
from typing import NamedTuple

import numpy as np

# Data format codes (ALU_FORMAT_SPEC_*, THCON *_data_format, implied Src formats).
FP32, FP16, BFP8A, BFP4A, TF32, BF16, BFP8, BFP4, INT32, INT16, FP8, BFP2A, INT8, BFP2 = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15)

# Operand "styles": how the matrix unit reads a Src cell.
STYLE_BF16, STYLE_FP16, STYLE_TF32, STYLE_INT8 = "bf16", "fp16", "tf32", "int8"

SRC_SIGN = 1 << 18


class SrcDatum(NamedTuple):
    sign: int  # 0 or 1
    exp: int   # 8-bit exponent field (FP16 / INT8: 5 significant bits)
    man: int   # 10 mantissa bits, no hidden bit (INT8: magnitude)


def src_split(cell: int) -> SrcDatum:
    return SrcDatum((cell >> 18) & 1, cell & 0xFF, (cell >> 8) & 0x3FF)


def src_join(sign: int, exp: int, man: int) -> int:
    return (sign & 1) << 18 | (man & 0x3FF) << 8 | (exp & 0xFF)


def src_from_fp32(bits: int) -> int:
    """The Src cell holding the top 19 bits of an IEEE FP32 pattern (TF32; BF16 when the low 16 are zero)."""
    return src_join(bits >> 31, (bits >> 23) & 0xFF, (bits >> 13) & 0x3FF)


def src_to_fp32(cell: int) -> int:
    d = src_split(cell)
    return d.sign << 31 | d.exp << 23 | d.man << 13


def src_from_fp16(bits: int) -> int:
    """The Src cell of an IEEE FP16 pattern (exponent kept in the low five exponent bits)."""
    return src_join(bits >> 15, (bits >> 10) & 0x1F, bits & 0x3FF)


def src_from_int8(value: int) -> int:
    """The Src cell of integer "8" (sign-magnitude, |value| <= 1023; exponent 16 unless zero)."""
    mag = abs(value)
    if mag > 0x3FF:
        raise ValueError(f"integer 8 magnitude {mag} exceeds 10 bits")
    return src_join(value < 0, 16 if mag else 0, mag)


# --- which style a format code selects (MatrixUnit formats; ttsim's accepted sets) ---
FP16_FAMILY = frozenset({FP16, FP8})
BF16_FAMILY = frozenset({FP32, TF32, BF16, BFP8, BFP4})  # 8-bit exponents, accepted for both operands


def reduce_to_format(d: SrcDatum, fmt: int) -> SrcDatum:
    """What the multiplier sees of a cell read as ``fmt``: FP16-family keeps 5 exponent bits, TF32 all,
    everything else drops the low three mantissa bits (BF16)."""
    if fmt in FP16_FAMILY:
        return SrcDatum(d.sign, d.exp & 0x1F, d.man)
    if fmt == TF32:
        return d
    return SrcDatum(d.sign, d.exp, d.man & 0x3F8)


@cache
def read_masks(fmt: int) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a cell that reduce_to_format keeps for ``fmt``."""
    d = reduce_to_format(SrcDatum(1, 0xFF, 0x3FF), fmt)
    return d.exp, d.man


# --- Dst encodings ---
# Dst16b BF16 is stored as sign | mantissa(7) | exponent(8); FP16 as sign | mantissa(10) | exponent(5).
# Dst32b FP32 is the BF16 storage of the top half in the high 16 bits, mantissa bits 15:0 in the low 16.

def dst16_bf16_to_bits(raw: int) -> int:
    return (raw & 0x8000) | (raw & 0xFF) << 7 | (raw >> 8) & 0x7F


def bits_to_dst16_bf16(bits: int) -> int:
    return (bits & 0x8000) | (bits & 0x7F) << 8 | (bits >> 7) & 0xFF


def dst16_fp16_to_bits(raw: int) -> int:
    return (raw & 0x8000) | (raw & 0x1F) << 10 | (raw >> 5) & 0x3FF


def bits_to_dst16_fp16(bits: int) -> int:
    return (bits & 0x8000) | (bits & 0x3FF) << 5 | (bits >> 10) & 0x1F


@cache
def bf16_storage_table() -> np.ndarray:
    """bits_to_dst16_bf16 of every 16-bit pattern (uint16): the Dst16b / Dst32b high-half storage."""
    return bits_to_dst16_bf16(np.arange(1 << 16, dtype=np.int64)).astype(np.uint16)


@cache
def bf16_bits_table() -> np.ndarray:
    """dst16_bf16_to_bits of every 16-bit storage pattern (uint32)."""
    return dst16_bf16_to_bits(np.arange(1 << 16, dtype=np.int64)).astype(np.uint32)


def halves(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (high, low) 16-bit halves of C-contiguous uint32 ``cells`` (views on a little-endian machine)."""
    if sys.byteorder == "little":
        h = cells.view(np.uint16)
        return h[..., 1::2], h[..., 0::2]
    return (cells >> 16).astype(np.uint16), (cells & 0xFFFF).astype(np.uint16)


def dst32_to_fp32(raw: int) -> int:
    """Dst32b storage (hi16 << 16 | lo16) to an FP32 (or sign-magnitude INT32) bit pattern."""
    return dst16_bf16_to_bits(raw >> 16) << 16 | (raw & 0xFFFF)


def fp32_to_dst32(bits: int) -> int:
    return bits_to_dst16_bf16(bits >> 16) << 16 | (bits & 0xFFFF)


def dst32_to_int(raw):
    """Sign-magnitude INT32 in Dst32b storage to a signed value (numpy arrays or ints)."""
    bits = dst32_to_fp32(np.asarray(raw, dtype=np.int64))
    mag = bits & 0x7FFFFFFF
    return np.where(bits >> 31 == 1, -mag, mag)


def int_to_dst32(value):
    value = np.asarray(value, dtype=np.int64)
    return fp32_to_dst32(np.where(value < 0, 0x80000000 | -value, value))
