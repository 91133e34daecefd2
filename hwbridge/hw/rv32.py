"""A tiny RV32I assembler for the TRISC programs the hw backend writes into L1.

Only what the harness needs: integer ALU with immediates, loads/stores, branches, jumps, LUI, DIVU (RV32M),
and the Tensix-instruction word a TRISC issues inline (``rotl(W, 2)``, blackhole-deltas #4). Encodings
follow the RISC-V unprivileged ISA (RV32I base formats R/I/S/B/U/J).
"""
from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field
from functools import lru_cache


assert sys.byteorder == "little" and array("I").itemsize == 4

ZERO, RA, SP, GP, TP = 0, 1, 2, 3, 4
T0, T1, T2, S0, S1, A0, A1, A2, A3, A4, A5, A6, A7 = 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
S2, S3, S4, S5, S6, S7, S8, S9, S10, S11, T3, T4, T5, T6 = range(18, 32)


class AsmError(ValueError):
    """An operand does not fit its encoding."""


def _reg(r: int) -> int:
    if not 0 <= r < 32:
        raise AsmError(f"register x{r} out of range")
    return r


def _simm(v: int, bits: int, what: str) -> int:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= v <= hi:
        raise AsmError(f"{what} immediate {v} does not fit in {bits} signed bits")
    return v & ((1 << bits) - 1)


@lru_cache(maxsize=None)
def r_type(f7: int, rs2: int, rs1: int, f3: int, rd: int, op: int) -> int:
    return f7 << 25 | _reg(rs2) << 20 | _reg(rs1) << 15 | f3 << 12 | _reg(rd) << 7 | op


@lru_cache(maxsize=None)
def i_type(imm: int, rs1: int, f3: int, rd: int, op: int) -> int:
    return _simm(imm, 12, "I") << 20 | _reg(rs1) << 15 | f3 << 12 | _reg(rd) << 7 | op


@lru_cache(maxsize=None)
def s_type(imm: int, rs2: int, rs1: int, f3: int, op: int) -> int:
    u = _simm(imm, 12, "S")
    return (u >> 5) << 25 | _reg(rs2) << 20 | _reg(rs1) << 15 | f3 << 12 | (u & 0x1F) << 7 | op


@lru_cache(maxsize=None)
def b_type(off: int, rs2: int, rs1: int, f3: int) -> int:
    if off & 1:
        raise AsmError(f"branch offset {off} is odd")
    u = _simm(off, 13, "branch")
    return ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3F) << 25 | _reg(rs2) << 20 | _reg(rs1) << 15 | f3 << 12 \
        | ((u >> 1) & 0xF) << 8 | ((u >> 11) & 1) << 7 | 0x63


@lru_cache(maxsize=None)
def j_type(off: int, rd: int) -> int:
    if off & 1:
        raise AsmError(f"jump offset {off} is odd")
    u = _simm(off, 21, "jal")
    return ((u >> 20) & 1) << 31 | ((u >> 1) & 0x3FF) << 21 | ((u >> 11) & 1) << 20 | ((u >> 12) & 0xFF) << 12 \
        | _reg(rd) << 7 | 0x6F


@lru_cache(maxsize=None)
def u_type(imm20: int, rd: int, op: int) -> int:
    if not 0 <= imm20 < 1 << 20:
        raise AsmError(f"U immediate {imm20:#x} does not fit in 20 bits")
    return imm20 << 12 | _reg(rd) << 7 | op


# --- single instructions -------------------------------------------------------------------------
def addi(rd: int, rs1: int, imm: int) -> int: return i_type(imm, rs1, 0, rd, 0x13)
def andi(rd: int, rs1: int, imm: int) -> int: return i_type(imm, rs1, 7, rd, 0x13)
def ori(rd: int, rs1: int, imm: int) -> int: return i_type(imm, rs1, 6, rd, 0x13)
def slli(rd: int, rs1: int, sh: int) -> int: return r_type(0, sh & 31, rs1, 1, rd, 0x13)
def srli(rd: int, rs1: int, sh: int) -> int: return r_type(0, sh & 31, rs1, 5, rd, 0x13)
def add(rd: int, rs1: int, rs2: int) -> int: return r_type(0, rs2, rs1, 0, rd, 0x33)
def sub(rd: int, rs1: int, rs2: int) -> int: return r_type(0x20, rs2, rs1, 0, rd, 0x33)
def or_(rd: int, rs1: int, rs2: int) -> int: return r_type(0, rs2, rs1, 6, rd, 0x33)
def and_(rd: int, rs1: int, rs2: int) -> int: return r_type(0, rs2, rs1, 7, rd, 0x33)
def divu(rd: int, rs1: int, rs2: int) -> int: return r_type(1, rs2, rs1, 5, rd, 0x33)
def lui(rd: int, imm20: int) -> int: return u_type(imm20, rd, 0x37)
def lw(rd: int, rs1: int, off: int) -> int: return i_type(off, rs1, 2, rd, 0x03)
def sw(rs2: int, rs1: int, off: int) -> int: return s_type(off, rs2, rs1, 2, 0x23)
def jal(rd: int, off: int) -> int: return j_type(off, rd)
def beq(rs1: int, rs2: int, off: int) -> int: return b_type(off, rs2, rs1, 0)
def bne(rs1: int, rs2: int, off: int) -> int: return b_type(off, rs2, rs1, 1)
def blt(rs1: int, rs2: int, off: int) -> int: return b_type(off, rs2, rs1, 4)
def bltu(rs1: int, rs2: int, off: int) -> int: return b_type(off, rs2, rs1, 6)
def fence() -> int: return 0x0FF0000F


def hi_lo(value: int) -> tuple[int, int]:
    """Split a 32-bit constant for ``lui`` + ``addi`` (addi's immediate is sign-extended)."""
    value &= 0xFFFFFFFF
    lo = value & 0xFFF
    if lo >= 0x800:
        lo -= 0x1000
    return ((value - lo) >> 12) & 0xFFFFF, lo


def li_words(rd: int, value: int) -> tuple[int, ...]:
    """The one or two instructions that load a 32-bit constant into rd (``addi``, or ``lui`` then ``addi`` when
    the low part is not zero)."""
    value &= 0xFFFFFFFF
    signed = value - (1 << 32) if value & 0x80000000 else value
    if -2048 <= signed < 2048:
        return (addi(rd, ZERO, signed),)
    # lui and addi encoded here rather than through the cached encoders: a case's values would fill their caches
    hi, lo = hi_lo(value)
    upper = hi << 12 | _reg(rd) << 7 | 0x37
    return (upper, (lo & 0xFFF) << 20 | rd << 15 | rd << 7 | 0x13) if lo else (upper,)


@dataclass
class Program:
    """Straight-line code with forward/backward labels, assembled at a fixed base address."""
    base: int
    words: list = field(default_factory=list)     # int, (kind, args, label) fixups, or bytes (a blob)
    labels: dict = field(default_factory=dict)
    fixups: list = field(default_factory=list)    # indices in words of the branch/jump fixups
    blobs: list = field(default_factory=list)     # indices in words of the blobs
    blob_words: int = 0                           # words the blobs hold beyond their one entry each

    @property
    def pc(self) -> int:
        return self.base + 4 * (len(self.words) + self.blob_words)

    def emit(self, *words: int) -> "Program":
        self.words.extend(words)
        return self

    def blob(self, data: bytes) -> "Program":
        """Words already assembled (little-endian bytes), placed as they are: any branch or jump in them must be
        pc-relative and stay inside them."""
        if len(data) % 4:
            raise AsmError(f"a blob of {len(data)} bytes is not whole words")
        if data:
            self.blobs.append(len(self.words))
            self.words.append(bytes(data))
            self.blob_words += len(data) // 4 - 1
        return self

    def label(self, name: str) -> "Program":
        if name in self.labels:
            raise AsmError(f"label {name!r} defined twice")
        self.labels[name] = self.pc
        return self

    def branch(self, kind: str, rs1: int, rs2: int, target: str) -> "Program":
        self.fixups.append(len(self.words))
        self.words.append(("b", kind, rs1, rs2, target, self.pc))
        return self

    def jump(self, target: str, rd: int = ZERO) -> "Program":
        self.fixups.append(len(self.words))
        self.words.append(("j", rd, target, self.pc))
        return self

    def li(self, rd: int, value: int) -> "Program":
        """Load a 32-bit constant in one or two instructions."""
        self.words.extend(li_words(rd, value))
        return self

    def tensix(self, word: int) -> "Program":
        """A Tensix instruction issued inline by the TRISC: the word rotated left by two."""
        stream = ((word << 2) | (word >> 30)) & 0xFFFFFFFF      # golden.isa.to_stream
        if stream & 3 == 3:
            raise AsmError(f"Tensix word {word:#010x} would decode as a RISC-V instruction")
        self.words.append(stream)
        return self

    def tensix_words(self, words) -> "Program":
        """``tensix`` for each of ``words``, in order."""
        streams = [((w << 2) | (w >> 30)) & 0xFFFFFFFF for w in words]
        if any(stream & 3 == 3 for stream in streams):
            for w, stream in zip(words, streams):
                if stream & 3 == 3:
                    raise AsmError(f"Tensix word {w:#010x} would decode as a RISC-V instruction")
        self.words.extend(streams)
        return self

    def _patched(self) -> list:
        """words with every fixup replaced by its instruction (blobs still whole)."""
        out = list(self.words)
        for i in self.fixups:
            w = out[i]
            if w[0] == "b":
                _, kind, rs1, rs2, target, pc = w
                out[i] = {"beq": beq, "bne": bne, "blt": blt, "bltu": bltu}[kind](rs1, rs2, self._at(target) - pc)
            else:
                _, rd, target, pc = w
                out[i] = jal(rd, self._at(target) - pc)
        return out

    def assemble(self) -> list[int]:
        out = self._patched()
        for i in reversed(self.blobs):
            out[i:i + 1] = array("I", out[i]).tolist()
        return out

    def _at(self, name: str) -> int:
        if name not in self.labels:
            raise AsmError(f"undefined label {name!r}")
        return self.labels[name]

    def to_bytes(self) -> bytes:
        out = self._patched()          # little-endian hosts only (x86-64, aarch64)
        parts, start = [], 0
        for i in self.blobs:
            parts += [array("I", out[start:i]).tobytes(), out[i]]
            start = i + 1
        parts.append(array("I", out[start:]).tobytes())
        return b"".join(parts)
