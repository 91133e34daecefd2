"""The ISA table, the table-driven assembler/disassembler and the instruction-stream form."""
from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import isa

ALL = sorted(isa.table())


def test_table_has_all_137_blackhole_instructions_with_unique_opcodes():
    t = isa.table()
    assert len(t) == 137
    assert len({i.opcode for i in t.values()}) == 137
    for ins in t.values():
        assert 0 <= ins.opcode <= 0xFF
        covered = 0
        for f in ins.fields:
            assert 0 <= f.lo <= f.hi <= 23, (ins.name, f)
            assert covered & f.mask == 0, f"{ins.name}: field {f.name} overlaps another"
            covered |= f.mask


@st.composite
def instruction_and_values(draw):
    ins = isa.table()[draw(st.sampled_from(ALL))]
    values = {f.name: draw(st.integers(0, (1 << f.width) - 1)) for f in ins.fields}
    return ins, values


@settings(max_examples=2000, deadline=None)
@given(instruction_and_values())
def test_asm_disasm_round_trip_over_all_instructions(iv):
    ins, values = iv
    word = isa.encode(ins.name, values)
    assert word >> 24 == ins.opcode
    decoded_ins, decoded = isa.decode(word)
    assert decoded_ins is ins and decoded == values
    text = isa.disassemble(word)
    assert isa.assemble(text) == [word]
    assert isa.from_stream(isa.to_stream(word)) == word


def test_every_instruction_round_trips_with_every_field_at_its_maximum():
    for name in ALL:
        ins = isa.table()[name]
        values = {f.name: (1 << f.width) - 1 for f in ins.fields}
        word = isa.encode(name, values)
        assert isa.assemble(isa.disassemble(word)) == [word]


def test_setrwc_disasm_and_stream_form_from_the_spec():
    assert isa.disassemble(0x3700000F) == "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15"
    # matmul_trisc1.S at 0x64a0 shows the stream word dc00003c (blackhole-deltas #4: rotl, not <<)
    assert isa.to_stream(0x3700000F) == 0xDC00003C
    assert isa.from_stream(0xDC00003C) == 0x3700000F


def test_stream_form_is_a_rotation_not_a_shift_for_high_opcodes():
    word = isa.encode("SFPLOADI", {"lreg_ind": 1, "imm16": 0x3F80})  # opcode 0x71 >= 0x40
    assert isa.to_stream(word) & 0x3 == word >> 30
    assert isa.to_stream(word) != (word << 2) & 0xFFFFFFFF


@pytest.mark.parametrize("text, message", [
    ("SETRWC bitmask=64", r"does not fit in 6 bit\(s\)"),
    ("SETRWC nosuch=1", "has no field 'nosuch'"),
    ("NOSUCH a=1", "unknown mnemonic"),
    ("SETRWC bitmask", "expected field=value"),
    ("SETRWC bitmask=1 bitmask=2", "given twice"),
    ("SETRWC bitmask=zz", "is not an integer"),
    (".word 0xff000000", "unknown opcode"),
    (".word 0x02000001", "outside every declared field"),
])
def test_bad_text_is_one_clear_error(text, message):
    with pytest.raises(isa.IsaError, match=message):
        isa.assemble(text)


def test_field_names_are_case_insensitive_and_omitted_fields_are_zero():
    assert isa.assemble("setrwc BitMask=15") == [0x3700000F]


def test_decode_rejects_stray_bits_for_every_instruction_with_gaps():
    checked = 0
    for ins in isa.table().values():
        gap = 0xFFFFFF & ~ins.payload_mask
        if gap:
            low = gap & -gap
            with pytest.raises(isa.IsaError, match="outside every declared field"):
                isa.decode((ins.opcode << 24) | low)
            checked += 1
    assert checked > 10


def _ttexalens_ops():
    return pytest.importorskip("ttexalens.hardware.blackhole.tensix_ops",
                               reason="tt-exalens not installed (pip install -e '.[hw]')")


def test_every_encoding_matches_ttexalens_tensix_ops():
    """Cross-check all 137 encodings, field by field, against tt-exalens's Blackhole encoders."""
    ops = _ttexalens_ops()
    fields_checked = 0
    for name in ALL:
        ins = isa.table()[name]
        fn = getattr(ops, f"TT_OP_{name}")
        params = list(inspect.signature(fn).parameters)
        assert [p.lower().replace(" ", "_") for p in params] == [f.name for f in ins.fields], name
        assert int.from_bytes(fn(*[0] * len(params)), "little") == isa.encode(name, {})
        for k, f in enumerate(ins.fields):
            for value in (1, (1 << f.width) - 1):
                args = [0] * len(params)
                args[k] = value
                assert int.from_bytes(fn(*args), "little") == isa.encode(name, {f.name: value}), (name, f.name)
            fields_checked += 1
    assert fields_checked > 400
