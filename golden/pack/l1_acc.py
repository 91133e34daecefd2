"""The packer's L1 accumulation (THCON_SEC0_REG1_Pack_L1_Acc): each output datum is added to the datum
already at its L1 address and the sum is written instead.

Facts: ttsim v1.10.0 src/tensix.cpp (pack_l1_acc_fp32 / _bf16 / _fp16; Out_data_format FP32, FP16 or BF16
only, else unsupported); tt-llk cpack_common.h reconfigure_packer_l1_acc sets it together with
Disable_pack_zero_flags. The three formats add differently:
- FP32: denormal inputs read as signed zero, an IEEE single add (round to nearest even), any NaN becomes
  0x7FC00000, a denormal sum becomes signed zero;
- BF16: +inf + -inf is 0x7FC0; denormal inputs read as signed zero; a NaN reads as a huge normal (the old
  datum as the largest double, the new one with exponent 255 read as a normal); the two are added as doubles,
  then rounded to nearest even into BF16; an exponent below 1 gives signed zero, above 254 infinity;
- FP16: no infinities or NaNs (any nonzero exponent is a normal, a zero exponent is zero); a single add;
  exact cancellation gives zero, or 0x7FFF where the old datum's exponent is 30 or 31; a sum below the FP16
  exponent range gives 0x7FFF with its sign (an exponent field of exactly zero gives signed zero); rounding
  to nearest even; overflow saturates to 0x7FFF.
Values are numpy arrays of raw patterns (uint32 for FP32, uint16-valued for the 16-bit formats).
"""
from __future__ import annotations

import numpy as np

from .. import fpu_formats as ff

FORMATS = (ff.FP32, ff.FP16, ff.BF16)


def _daz32(u: np.ndarray) -> np.ndarray:
    return np.where((u & 0x7FFFFFFF) < 0x800000, u & 0x80000000, u)


def _fp32(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    a, b = _daz32(old.astype(np.uint32)), _daz32(new.astype(np.uint32))
    with np.errstate(all="ignore"):
        s = (a.view(np.float32) + b.view(np.float32)).view(np.uint32)
    return _daz32(np.where((s & 0x7FFFFFFF) > 0x7F800000, np.uint32(0x7FC00000), s))


def _bf16_as_double(v: np.ndarray, nan_bits: np.ndarray) -> np.ndarray:
    v = np.where((v & 0x7FFF) < 0x80, v & 0x8000, v)
    with np.errstate(all="ignore"):
        plain = (v << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where((v & 0x7FFF) > 0x7F80, nan_bits.view(np.float64), plain)


def _bf16(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    d, s = old.astype(np.uint64), new.astype(np.uint64)
    infs = ((d == 0x7F80) & (s == 0xFF80)) | ((d == 0xFF80) & (s == 0x7F80))
    fd = _bf16_as_double(d, (d & 0x8000) << 48 | np.uint64((0x7FF << 52) - 1))
    fs = _bf16_as_double(s, (s & 0x8000) << 48 | np.uint64((255 - 127 + 1023) << 52) | (s & 0x7F) << 45)
    with np.errstate(all="ignore"):
        r = (fd + fs).view(np.uint64)
    sign = (r >> 63).astype(np.int64) << 15
    e = ((r >> 52) & 0x7FF).astype(np.int64) - 1023 + 127
    m = r & np.uint64((1 << 52) - 1)
    rounded = ((m + np.uint64((1 << 44) - 1) + ((m >> 45) & 1)) >> 45).astype(np.int64)
    out = np.where(e <= 0, sign, np.where(e >= 255, sign | 0x7F80, sign | ((e << 7) + rounded)))
    return np.where(infs, 0x7FC0, out).astype(np.uint32)


def _fp16_as_fp32(v: np.ndarray) -> np.ndarray:
    bits = (v & 0x8000) << 16
    return np.where((v & 0x7FFF) >= 0x400, bits | (((v & 0x7FFF) << 13) + (112 << 23)), bits).astype(np.uint32)


def _fp16(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    d, s = old.astype(np.int64), new.astype(np.int64)
    with np.errstate(all="ignore"):
        r = (_fp16_as_fp32(d).view(np.float32) + _fp16_as_fp32(s).view(np.float32)).view(np.uint32).astype(np.int64)
    sign = (r >> 16) & 0x8000
    e = ((r >> 23) & 0xFF) - 112
    m = r & 0x7FFFFF
    packed = (e << 10) + ((m + (1 << 12) - 1 + ((m >> 13) & 1)) >> 13)
    out = np.where(e <= 0, sign | np.where(e < 0, 0x7FFF, 0), sign | np.minimum(packed, 0x7FFF))
    cancelled = sign | np.where(((d >> 10) & 31) >= 30, 0x7FFF, 0)
    return np.where((r & 0x7FFFFFFF) == 0, cancelled, out).astype(np.uint32)


def accumulate(out_fmt: int, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The datums written with L1 accumulation: ``old`` (already in L1) plus ``new`` (from Dst)."""
    return {ff.FP32: _fp32, ff.BF16: _bf16, ff.FP16: _fp16}[out_fmt](old, new)
