"""Datum conversions of the unpackers (L1 -> Src / Dst) and the packer (Dst -> L1), uncompressed
formats only (the 8-bit-exponent BFP8/BFP4/BFP2 unpacked into Src and packed from BF16 or FP32 Dst), bit-exact
with Blackhole as ttsim v1.10.0 models them.

Facts: tt-isa-documentation WormholeB0 UNPACR_Regular.md (FormatConversion, WriteDst*/WriteSrc*) and
Packers/FormatConversion.md; Blackhole behaviour (which pairs exist, flushing, rounding, saturation)
from ttsim v1.10.0's UNPACR / PACR. All functions take and return numpy uint32 arrays (one element per
datum); Src results are golden's 19-bit cells (golden.fpu_formats), Dst results raw DstBits patterns
(a 32-bit Dst32b value, or a 16-bit Dst16b value).

Unpacker facts: FP32 -> TF32 drops the low 13 mantissa bits, FP32 -> BF16 flushes denormals (keeping
the sign) and drops 16 bits, FP32 -> FP16 rebiases the exponent by 112 with truncation, flushing to a
signed zero below and saturating to the largest pattern (0x7FFF) above (inf and NaN included); FP16,
BF16 and UINT16 are moved without any flushing; INT8 is sign-magnitude (or unsigned under
ALU_FORMAT_SPEC_REG0_Src{A,B}Unsigned) and becomes "integer 8" (exponent 16 unless the magnitude is 0).

Packer facts: reading Dst16b flushes a zero exponent to +0 (the sign is lost) and turns BF16 NaNs into
infinities of the same sign; Dst32b -> BF16 and Dst32b -> FP16 round half up on the magnitude (to 16
and to 19 bits), after turning NaNs into infinities, and flush a zero exponent to +0; FP32 -> FP16
without Round_10b_mant truncates; FP16 -> FP32 rebiases (an FP16 inf/NaN becomes a large finite FP32);
FP16 -> BF16 truncates; INT32 -> INT8 saturates the sign-magnitude value to 127 (or to 0..255 unsigned).
ReLU (STACC_RELU) acts on the value between the Dst read and the conversion to Out_data_format.

Block-float packer inputs (In_data_format = Dstacc = Bfp8_b or Bfp8a; ttsim v1.10.0 PACR accepts Bfp8_b to
FP32, BF16, Bfp8_b, Bfp4_b from either Dst width and Bfp8a to Bfp8_b from Dst16b): the Dst value is read as for
BF16 (Bfp8a: as for FP16), then its mantissa is cut to the six bits a block float keeps, rounding half up on
the last bit (Dst16b BF16: +1 then clear bit 0; Dst32b: the top 16 bits, +1, clear bit 0, then a zero exponent
flushed; Bfp8a: NaN/inf clamped to 0x7FF0, +8 then clear the low four bits, a zero exponent flushed); Bfp8_b
goes on as BF16 bits (FP32 out: << 16), Bfp8a is widened to BF16 like FP16 -> BF16 before the block packing.
"""
from __future__ import annotations

import numpy as np

from . import fpu_formats as ff
from .errors import NotModelled, UndefinedBehaviour

UINT16 = 9
FP8 = ff.FP8
BFP_FORMATS = frozenset({ff.BFP8A, ff.BFP4A, ff.BFP8, ff.BFP4, ff.BFP2A, ff.BFP2})

_U32 = np.uint32


BFP_BITS = {ff.BFP8: 8, ff.BFP4: 4, ff.BFP2: 2}   # the 8-bit-exponent block formats: datum bits in L1


def element_bits(fmt: int) -> int:
    """Bits of one datum of format code ``fmt`` in L1 (ttsim: chosen by the code's low two bits; BFP4 and
    BFP2 are 4 and 2 bits, their exponents live in a separate section)."""
    if fmt in BFP_BITS:
        return BFP_BITS[fmt]
    if fmt in BFP_FORMATS:
        raise NotModelled(f"data format {fmt} is a 5-bit-exponent block format (BFP8a/BFP4a/BFP2a: ttsim does "
                          "not implement it)")
    return (32, 16, 8)[fmt & 3]


def bfp_to_bf16(datum: np.ndarray, exp: np.ndarray, bits: int) -> np.ndarray:
    """UNPACR_Regular.md BFP8ToBF16 (BFP4/BFP2 datums shifted up to 8 bits first): sign and a 7-bit magnitude
    normalised against the shared exponent (which wraps below zero); a zero magnitude is +0, or -inf with
    the sign set; the result keeps six mantissa bits."""
    x = (_u32(datum) << (8 - bits)) & 0xFF
    sign, mag = x >> 7, (x << 1) & 0xFF
    lz = np.zeros_like(mag)
    for k in range(7, 0, -1):                       # leading zeros of the 8-bit magnitude (1..7 when nonzero)
        lz = np.where(mag < (1 << k), 8 - k, lz)
    norm = (mag << lz) & 0xFF
    e = (_u32(exp) - lz) & 0xFF
    out = (sign << 15) | (e << 7) | (norm & 0x7E)
    return np.where(mag == 0, np.where(sign != 0, 0xFF80, 0), out).astype(_U32)


def bfp_to_src(datum: np.ndarray, exp: np.ndarray, bits: int) -> np.ndarray:
    """BFP datums with their shared exponents -> 19-bit Src cells (through BF16)."""
    return ff.src_from_fp32(bfp_to_bf16(datum, exp, bits) << 16)


def _u32(x) -> np.ndarray:
    return np.asarray(x, dtype=_U32)


def flush_denormal32(v: np.ndarray) -> np.ndarray:
    """An FP32 pattern with a zero exponent becomes a zero of the same sign."""
    return np.where(v & 0x7F800000, v, v & 0x80000000).astype(_U32)


def fp32_to_fp16_trunc(v: np.ndarray) -> np.ndarray:
    """FP32 pattern -> FP16 pattern: exponent rebiased by 112, mantissa truncated; below range a signed
    zero, above range (inf/NaN included) the sign with 0x7FFF."""
    sign = (v >> 16) & 0x8000
    e = ((v >> 23) & 0xFF).astype(np.int64) - 112
    fits = sign | (np.clip(e, 0, 31).astype(_U32) << 10) | ((v >> 13) & 0x3FF)
    return np.where(e < 0, sign, np.where(e > 31, sign | 0x7FFF, fits)).astype(_U32)


def _int8_as_fp16(raw: np.ndarray, unsigned: bool) -> np.ndarray:
    """INT8 (sign-magnitude, or unsigned) -> the FP16 pattern overlaying integer "8"."""
    sign = np.zeros_like(raw) if unsigned else raw & 0x80
    mag = raw - sign
    return (np.where(mag != 0, mag | (16 << 10), 0) | (sign << 8)).astype(_U32)


# --- unpacker: L1 -> Src ---------------------------------------------------------------------------
def unpack_pair_check(in_fmt: int, out_fmt: int) -> None:
    """UndefinedBehaviour for format pairs the unpacker cannot convert (FP32 converts to FP32, FP16,
    TF32 or BF16; every other input format must equal the output format)."""
    if in_fmt == ff.FP32:
        if out_fmt not in (ff.FP32, ff.FP16, ff.TF32, ff.BF16):
            raise UndefinedBehaviour(f"UNPACR from FP32 to data format {out_fmt}")
    elif in_fmt != out_fmt:
        raise UndefinedBehaviour(f"UNPACR in_data_format {in_fmt} differs from out_data_format {out_fmt}")


def l1_to_src(in_fmt: int, out_fmt: int, raw: np.ndarray, unsigned: bool) -> np.ndarray:
    """L1 datums -> 19-bit Src cells."""
    raw = _u32(raw)
    if in_fmt == ff.FP32:
        if out_fmt == ff.TF32:
            return ff.src_from_fp32(raw)
        if out_fmt == ff.BF16:
            return ff.src_from_fp32(flush_denormal32(raw) & 0xFFFF0000)
        if out_fmt == ff.FP16:
            return ff.src_from_fp16(fp32_to_fp16_trunc(raw))
        raise UndefinedBehaviour("UNPACR FP32 -> FP32 into a Src register (only Dst holds FP32)")
    if in_fmt == ff.FP16:
        return ff.src_from_fp16(raw)
    if in_fmt == ff.BF16:
        return ff.src_from_fp32(raw << 16)
    if in_fmt == UINT16:
        return ((raw & 0xFF00) << 3) | (raw & 0xFF)
    if in_fmt == ff.INT8:
        return ff.src_from_fp16(_int8_as_fp16(raw, unsigned))
    if in_fmt in (ff.INT32, ff.TF32):
        raise UndefinedBehaviour(f"UNPACR of data format {in_fmt} into a Src register (Dst only)")
    raise NotModelled(f"UNPACR of data format {in_fmt} into a Src register")


# --- unpacker: L1 -> Dst ---------------------------------------------------------------------------
def unpack_to_dst_is32(out_fmt: int) -> bool:
    return out_fmt in (ff.FP32, ff.TF32, ff.INT32)


def l1_to_dst(in_fmt: int, out_fmt: int, raw: np.ndarray, unsigned: bool) -> np.ndarray:
    """L1 datums -> raw Dst values: Dst32b for FP32 / TF32 / INT32 outputs, else Dst16b."""
    raw = _u32(raw)
    if in_fmt == ff.FP32 and out_fmt in (ff.FP32, ff.TF32) or in_fmt in (ff.TF32, ff.INT32):
        return ff.fp32_to_dst32(raw)      # all 32 bits kept (TF32 into Dst means FP32)
    if in_fmt == ff.FP32:
        raw = (flush_denormal32(raw) >> 16) if out_fmt == ff.BF16 else fp32_to_fp16_trunc(raw)
        in_fmt = out_fmt
    if in_fmt == ff.BF16:
        return ff.bits_to_dst16_bf16(raw)
    if in_fmt == ff.FP16:
        return ff.bits_to_dst16_fp16(raw)
    if in_fmt == ff.INT8:
        return ff.bits_to_dst16_fp16(_int8_as_fp16(raw, unsigned))
    if in_fmt == UINT16:
        return raw
    raise NotModelled(f"UNPACR of data format {in_fmt} into Dst")


# --- packer: Dst -> L1 -----------------------------------------------------------------------------
# (Read_32b_data, In_data_format, Out_data_format) the packer converts, uncompressed only.
PACK_MODES = frozenset({
    (0, ff.FP16, ff.FP32), (0, ff.FP16, ff.FP16), (0, ff.FP16, ff.BF16),
    (0, ff.BF16, ff.FP32), (0, ff.BF16, ff.BF16), (0, UINT16, UINT16),
    (1, ff.FP32, ff.FP32), (1, ff.FP32, ff.FP16), (1, ff.FP16, ff.FP16), (1, ff.BF16, ff.BF16),
    (1, ff.INT32, ff.INT32), (1, UINT16, UINT16), (1, ff.INT8, ff.INT8)}
    | {(0, ff.BF16, b) for b in (ff.BFP8, ff.BFP4, ff.BFP2)} | {(1, ff.FP32, b) for b in (ff.BFP8, ff.BFP4, ff.BFP2)}
    | {(0, ff.BFP8, b) for b in (ff.FP32, ff.BF16, ff.BFP8, ff.BFP4)} | {(1, ff.BFP8, b) for b in (ff.BFP8, ff.BFP4)}
    | {(0, ff.BFP8A, ff.BFP8)})
ROUND_10B_MODES = frozenset({(1, ff.FP16, ff.FP16)})   # these need Round_10b_mant, the others forbid it


def packer_input_bits(fmt: int) -> int:
    """Bits of one packer input datum (its strides' alignment): Bfp8a counts as 8 bits, like Bfp8_b."""
    return 8 if fmt == ff.BFP8A else element_bits(fmt)


def _nan_to_inf32(v: np.ndarray) -> np.ndarray:
    return np.where((v & 0x7FFFFFFF) > 0x7F800000, (v & 0x80000000) | 0x7F800000, v).astype(_U32)


def _read16(in_fmt: int, raw: np.ndarray) -> np.ndarray:
    """Dst16b cells -> the packer's 16-bit value of In_data_format."""
    if in_fmt == ff.FP16:
        v = ff.dst16_fp16_to_bits(raw)
        return np.where((v & 0x7FFF) < 0x400, 0, v).astype(_U32)
    if in_fmt in (ff.BF16, ff.BFP8):
        v = ff.dst16_bf16_to_bits(raw)
        v = np.where((v & 0x7FFF) > 0x7F80, (v & 0x8000) | 0x7F80, v)
        v = np.where((v & 0x7FFF) < 0x80, 0, v)
        return ((v + 1) & 0xFFFFFFFE if in_fmt == ff.BFP8 else v).astype(_U32)   # Bfp8_b: six mantissa bits, half up
    if in_fmt == ff.BFP8A:                             # FP16 bits to E5M6, half up, NaN/inf clamped first
        v = ff.dst16_fp16_to_bits(raw)
        v = (np.where((v & 0x7FFF) > 0x7FF7, (v & 0x8000) | 0x7FF0, v) + 8) & 0xFFFFFFF0
        return np.where((v & 0x7FFF) < 0x400, 0, v).astype(_U32)
    return raw                                         # UINT16: opaque


def _read32(in_fmt: int, raw: np.ndarray, unsigned: bool) -> np.ndarray:
    """Dst32b cells -> the packer's value of In_data_format (FP32/INT32 32-bit, FP16 19-bit, BF16 16-bit)."""
    if in_fmt == UINT16:
        return raw >> 16                               # the high DstBits row, not decoded
    v = ff.dst32_to_fp32(raw)
    if in_fmt == ff.BF16:
        v = (_nan_to_inf32(v) + 0x8000) >> 16
        return np.where((v & 0x7FFF) < 0x80, 0, v).astype(_U32)
    if in_fmt == ff.BFP8:                              # the top 16 bits, then six mantissa bits half up
        v = ((_nan_to_inf32(v) >> 16) + 1) & 0xFFFFFFFE
        return np.where((v & 0x7FFF) < 0x80, 0, v).astype(_U32)
    if in_fmt == ff.FP16:
        v = (_nan_to_inf32(v) + 0x1000) >> 13
        return np.where((v & 0x3FFFF) < 0x400, 0, v).astype(_U32)
    if in_fmt == ff.INT8:
        mag = v & 0x7FFFFFFF
        neg = (v >> 31) != 0
        if unsigned:
            return np.where(neg, 0, np.minimum(v, 255)).astype(_U32)
        return (np.where(neg, 0x80, 0) | np.minimum(mag, 127)).astype(_U32)
    return v.astype(_U32)                              # FP32, INT32


def _late(read32: int, in_fmt: int, out_fmt: int, v: np.ndarray) -> np.ndarray:
    """The conversion from In_data_format to Out_data_format after the Dst read."""
    if read32 and in_fmt == ff.FP16:                    # 19-bit (sign, exp8, man10) -> FP16
        sign = (v >> 18) << 15
        e = ((v >> 10) & 0xFF).astype(np.int64) - 112
        fits = sign | (np.clip(e, 0, 31).astype(_U32) << 10) | (v & 0x3FF)
        return np.where(e < 0, sign, np.where(e > 31, sign | 0x7FFF, fits)).astype(_U32)
    if (in_fmt, out_fmt) == (ff.FP16, ff.FP32):
        sign = (v & 0x8000) << 16
        e = (v >> 10) & 0x1F
        return np.where(e != 0, sign | (((v & 0x7FFF) + (112 << 10)) << 13), sign | ((v & 0x3FF) << 13)).astype(_U32)
    if (in_fmt, out_fmt) in ((ff.FP16, ff.BF16), (ff.BFP8A, ff.BFP8)):
        e = (v >> 10) & 0x1F
        return np.where(e == 0, 0, (v & 0x8000) | ((e + 112) << 7) | ((v & 0x3FF) >> 3)).astype(_U32)
    if (in_fmt, out_fmt) == (ff.FP32, ff.FP16):
        return fp32_to_fp16_trunc(v)
    if in_fmt in (ff.BF16, ff.BFP8) and out_fmt == ff.FP32:
        return (v << 16).astype(_U32)
    if in_fmt == ff.FP32 and out_fmt in BFP_BITS:      # truncated to BF16, a zero exponent flushed to +0
        v = v >> 16
        return np.where((v & 0x7FFF) < 0x80, 0, v).astype(_U32)
    return v


def bf16_to_bfp(v: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Packers/FormatConversion.md: BF16 values, in groups of 16, -> (shared exponents, datums). The shared
    exponent is the group's largest exponent field (255 counts as an ordinary exponent); each magnitude
    (hidden bit included when the exponent is nonzero) is shifted to it and rounded to 7 bits, ties away from
    zero (saturating at 127), then truncated to ``bits`` - 1 magnitude bits; the sign is kept only on a
    nonzero magnitude (a negative zero means -inf)."""
    v = _u32(v).reshape(-1, 16)
    e = (v >> 7) & 0xFF
    shared = e.max(axis=1)
    man = (v & 0x7F) | np.where(e != 0, 0x80, 0)
    shift = (shared[:, None] - e).astype(np.int64)
    s = np.minimum(shift, 7)
    mag = np.where(shift >= 8, 0, (man + (1 << s)) >> (s + 1))
    mag = np.minimum(mag, 127) >> (8 - bits)
    datum = np.where(mag != 0, mag | ((v >> 15) << (bits - 1)), 0)
    return shared.astype(_U32), datum.reshape(-1).astype(_U32)


def pack_bits(datums: np.ndarray, bits: int) -> bytes:
    """Datums of 8, 4 or 2 bits as L1 bytes, sub-byte datums low bits first."""
    d = _u32(datums).reshape(-1, 8 // bits)
    return (d << (bits * np.arange(8 // bits, dtype=_U32))).sum(axis=1).astype(np.uint8).tobytes()


RELU_OFF, RELU_ZERO_NEGATIVE, RELU_THRESHOLD_MIN, RELU_THRESHOLD_MAX = 0, 1, 2, 3


def relu(read32: int, in_fmt: int, v: np.ndarray, mode: int, threshold: int) -> np.ndarray:
    """STACC_RELU on the packer's value of In_data_format: negative values (sign set, -0 and NaNs included)
    become +0; mode 2 also zeroes values whose bits are at most the threshold, mode 3 clamps values above
    it to the threshold. The threshold is a BF16/FP16-style 16-bit pattern, aligned to the value's width
    (<< 16 for FP32, << 3 for the 19-bit Dst32b FP16 value); FP32 compares bits 31:13 only."""
    if mode == RELU_OFF:
        return v
    if mode > RELU_THRESHOLD_MAX:
        raise NotModelled(f"STACC_RELU_ApplyRelu={mode} (modes 0..3 are defined)")
    if threshold & 0x8000:
        raise UndefinedBehaviour(f"negative STACC_RELU_ReluThreshold {threshold:#x} (ttsim: undefined)")
    if in_fmt == ff.INT32:
        if mode != RELU_ZERO_NEGATIVE:
            raise NotModelled(f"INT32 ReLU mode {mode} (ttsim models mode 1 only)")
        return np.where(v >> 31 != 0, 0, v).astype(_U32)
    if in_fmt not in (ff.FP32, ff.FP16, ff.BF16, ff.BFP8, ff.BFP8A):
        raise NotModelled(f"ReLU with In_data_format {in_fmt}")
    if in_fmt == ff.FP32:
        sign_bit, thr, key = 31, threshold << 16, 13
    elif read32 and in_fmt == ff.FP16:
        sign_bit, thr, key = 18, threshold << 3, 0
    else:
        sign_bit, thr, key = 15, threshold, 0
    v = np.where(v >> sign_bit != 0, 0, v).astype(_U32)
    if mode == RELU_THRESHOLD_MIN:
        return np.where(v <= thr, 0, v).astype(_U32)
    if mode == RELU_THRESHOLD_MAX:
        return np.where(v >> key > thr >> key, thr, v).astype(_U32)
    return v


def dst_to_l1(read32: int, in_fmt: int, out_fmt: int, raw: np.ndarray, unsigned: bool = False,
              relu_mode: int = RELU_OFF, relu_threshold: int = 0) -> np.ndarray:
    """Raw Dst cells (Dst32b values when read32, else Dst16b) -> L1 datums of Out_data_format."""
    raw = _u32(raw)
    v = _read32(in_fmt, raw, unsigned) if read32 else _read16(in_fmt, raw)
    return _late(read32, in_fmt, out_fmt, relu(read32, in_fmt, v, relu_mode, relu_threshold))
