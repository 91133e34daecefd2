"""golden.core's decoding of programs: the bulk path (many fresh words, numpy) gives what isa.decode gives."""
from __future__ import annotations

import pytest

from golden import core, isa
from golden.handlers import load_all

from isa_words import valid_words


def _words(n: int, seed: int) -> list[int]:
    """n random valid words over every instruction of isa.yaml, a quarter of them again."""
    out = valid_words(n, seed)
    return out + out[: n // 4]


def _expected(word: int) -> tuple:
    ins, vals = isa.decode(word)
    return word, ins.name, vals, load_all().get(ins.name)


def test_bulk_decoding_gives_the_table_decoding_of_every_word(monkeypatch):
    monkeypatch.setattr(core, "_decode_cache", {})
    words = _words(4 * core._BULK, 1)
    got = core.decode_program(words)
    assert len(got) == len(words)
    for w, d in zip(words, got):
        assert (d.word, d.ins.name, d.fields._asdict(), d.handler) == _expected(w)
        assert d == core.decode(w)
    assert core.decode_program(words) == got          # again, from the cache


def test_the_decode_cache_fills_to_its_cap_and_no_further(monkeypatch):
    monkeypatch.setattr(core, "_decode_cache", {})
    monkeypatch.setattr(core, "_CACHED", 3 * core._BULK)
    first, second = valid_words(2 * core._BULK, 3), valid_words(2 * core._BULK, 4)
    assert core.decode_program(first) == [core.decode(w) for w in first]       # fits: cached whole
    assert set(core._decode_cache) == set(first)
    assert core.decode_program(second) == [core.decode(w) for w in second]     # only the room left is cached
    assert len(core._decode_cache) == core._CACHED
    assert set(core._decode_cache) >= set(first)


def test_field_records_read_by_name_in_table_order():
    d = core.decode(isa.assemble_line("SETDMAREG regindex16b=5 payload_sigsel=77"))
    assert (d.fields.regindex16b, d.fields.payload_sigsel) == (5, 77)
    assert tuple(d.fields._fields) == tuple(f.name for f in d.ins.fields)


def _bad_words() -> list[int]:
    """An unknown opcode, a stray bit outside every declared field, and two words out of 32 bits."""
    unknown = next(op for op in range(256) if op not in isa.by_opcode())
    ins = next(i for i in isa.table().values() if i.payload_mask != 0xFFFFFF)
    stray = 0xFFFFFF & ~ins.payload_mask
    return [unknown << 24, ins.opcode << 24 | (stray & -stray), 1 << 32, -1]


@pytest.mark.parametrize("bad", _bad_words())
def test_a_word_that_does_not_decode_is_named_as_isa_decode_names_it(monkeypatch, bad):
    with pytest.raises(isa.IsaError) as want:
        isa.decode(bad)
    monkeypatch.setattr(core, "_decode_cache", {})
    words = _words(2 * core._BULK, 2)
    with pytest.raises(isa.IsaError) as got:
        core.decode_program(words[:100] + [bad] + words[100:])
    assert str(got.value) == str(want.value)
