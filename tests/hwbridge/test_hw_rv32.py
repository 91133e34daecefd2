"""The RV32I encoder the hw backend writes TRISC programs with (no device needed).

Known encodings come from the RISC-V unprivileged spec's formats; behaviour is checked by running the
assembled words on a tiny reference interpreter written here independently of the encoder.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden.isa import assemble_line, to_stream
from hwbridge.hw import rv32 as rv


@pytest.mark.parametrize("word, expected", [
    (rv.addi(1, 0, 1), 0x00100093),          # addi ra, zero, 1
    (rv.lui(10, 0x12345), 0x12345537),       # lui a0, 0x12345
    (rv.sw(11, 10, 0), 0x00B52023),          # sw a1, 0(a0)
    (rv.lw(10, 10, 0), 0x00052503),          # lw a0, 0(a0)
    (rv.jal(0, 0), 0x0000006F),              # j .
    (rv.bne(10, 0, -4), 0xFE051EE3),         # bnez a0, -4
    (rv.beq(0, 0, 0), 0x00000063),
    (rv.addi(2, 2, -16), 0xFF010113),        # addi sp, sp, -16
    (rv.sw(1, 2, 12), 0x00112623),           # sw ra, 12(sp)
    (rv.add(10, 10, 11), 0x00B50533),        # add a0, a0, a1
    (rv.sub(10, 10, 11), 0x40B50533),        # sub a0, a0, a1
    (rv.srli(10, 10, 3), 0x00355513),        # srli a0, a0, 3
    (rv.andi(10, 10, 1), 0x00157513),        # andi a0, a0, 1
    (rv.or_(7, 5, 6), 0x0062E3B3),           # or t2, t0, t1
])
def test_known_encodings(word, expected):
    assert word == expected


def test_immediates_out_of_range_are_refused():
    with pytest.raises(rv.AsmError):
        rv.addi(1, 0, 2048)
    with pytest.raises(rv.AsmError):
        rv.beq(0, 0, 3)
    with pytest.raises(rv.AsmError):
        rv.lui(1, 1 << 20)
    with pytest.raises(rv.AsmError):
        rv.addi(32, 0, 0)


def _run(words: list[int], base: int, mem: dict[int, int] | None = None, steps: int = 10_000) -> tuple[list, dict]:
    """A minimal RV32I reference interpreter (only the instructions the harness emits); stops at `j .`."""
    x, pc, mem = [0] * 32, base, dict(mem or {})

    def sx(v, bits):
        return v - (1 << bits) if v & (1 << (bits - 1)) else v

    for _ in range(steps):
        w = words[(pc - base) // 4]
        op, rd, f3, rs1, rs2 = w & 0x7F, (w >> 7) & 31, (w >> 12) & 7, (w >> 15) & 31, (w >> 20) & 31
        nxt = pc + 4
        if op == 0x6F:
            off = sx(((w >> 31) & 1) << 20 | ((w >> 12) & 0xFF) << 12 | ((w >> 20) & 1) << 11 | ((w >> 21) & 0x3FF) << 1, 21)
            if off == 0:
                return x, mem
            x[rd], nxt = pc + 4, pc + off
        elif op == 0x37:
            x[rd] = w & 0xFFFFF000
        elif op == 0x13:
            imm = sx(w >> 20, 12)
            x[rd] = {0: x[rs1] + imm, 7: x[rs1] & imm, 6: x[rs1] | imm, 1: x[rs1] << rs2,
                     5: (x[rs1] & 0xFFFFFFFF) >> rs2}[f3]
        elif op == 0x33:
            x[rd] = {(0, 0): x[rs1] + x[rs2], (0, 0x20): x[rs1] - x[rs2], (6, 0): x[rs1] | x[rs2]}[(f3, w >> 25)]
        elif op == 0x03:
            x[rd] = mem.get((x[rs1] + sx(w >> 20, 12)) & 0xFFFFFFFF, 0)
        elif op == 0x23:
            mem[(x[rs1] + sx((w >> 25) << 5 | rd, 12)) & 0xFFFFFFFF] = x[rs2] & 0xFFFFFFFF
        elif op == 0x63:
            off = sx(((w >> 31) & 1) << 12 | ((w >> 7) & 1) << 11 | ((w >> 25) & 0x3F) << 5 | ((w >> 8) & 0xF) << 1, 13)
            a, b = x[rs1] & 0xFFFFFFFF, x[rs2] & 0xFFFFFFFF
            taken = {0: a == b, 1: a != b, 4: sx(a, 32) < sx(b, 32), 6: a < b}[f3]
            nxt = pc + off if taken else pc + 4
        else:
            raise AssertionError(f"unexpected word {w:#010x}")
        x = [v & 0xFFFFFFFF for v in x]
        x[0] = 0
        pc = nxt
    raise AssertionError("program did not reach its final `j .`")


@given(st.integers(0, 0xFFFFFFFF))
def test_li_loads_every_32_bit_constant(value):
    p = rv.Program(0x1000).li(rv.T1, value)
    p.emit(rv.lui(rv.T0, 0x20)).emit(rv.sw(rv.T1, rv.T0, 0)).label("end").jump("end")
    _, mem = _run(p.assemble(), 0x1000)
    assert mem[0x20000] == value
    assert len(p.words) <= 5


def test_labels_branches_and_a_counted_loop():
    p = rv.Program(0x160000).li(rv.A0, 0).li(rv.A1, 37)
    p.label("loop").emit(rv.addi(rv.A0, rv.A0, 3), rv.addi(rv.A1, rv.A1, -1)).branch("bne", rv.A1, rv.ZERO, "loop")
    p.jump("skip").emit(rv.addi(rv.A0, rv.A0, 1000)).label("skip")
    p.li(rv.T0, 0x20000).emit(rv.sw(rv.A0, rv.T0, 4)).label("end").jump("end")
    _, mem = _run(p.assemble(), 0x160000)
    assert mem[0x20004] == 111


def test_undefined_or_duplicate_labels_are_errors():
    with pytest.raises(rv.AsmError):
        rv.Program(0).jump("nowhere").assemble()
    with pytest.raises(rv.AsmError):
        rv.Program(0).label("a").label("a")


def test_tensix_words_are_issued_rotated_left_by_two():
    word = assemble_line("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15")
    p = rv.Program(0).tensix(word)
    assert p.assemble() == [to_stream(word)] == [0xDC00003C]
    assert p.to_bytes() == (0xDC00003C).to_bytes(4, "little")


def test_a_tensix_word_that_would_decode_as_risc_v_is_refused():
    with pytest.raises(rv.AsmError):
        rv.Program(0).tensix(0xC0000000)       # rotl gives low bits 11: a RISC-V instruction
