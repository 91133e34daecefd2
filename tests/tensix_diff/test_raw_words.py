"""Raw `.word` lines read a run at a time (tensix_diff.case.raw_words) give exactly what the assembler's text path
gives: the same words, and for a word the ISA refuses the same one-line error naming file and line."""
from __future__ import annotations

import pytest

from golden import isa
from tensix_diff.case import raw_words
from tensix_diff.case import CaseError, parse_case
from tensix_diff.case.fast import fast_case as _fast_case
from tensix_diff.case.yaml_walker import walk_case as _walk_case

from isa_words import valid_words


def _text(lines: list[str]) -> str:
    return "name: raw\nthreads:\n  0:\n" + "".join(f"    - {x}\n" for x in lines) + "  2:\n    - NOP\n"


def _outcome(text: str, parse) -> str:
    try:
        return repr(parse(text, "raw.yaml"))
    except CaseError as e:
        return f"CaseError: {e}"


def test_the_words_of_these_tests_have_hex_letters():
    assert all(any(c in "abcdef" for c in f"{w:08x}") for w in [valid_words(60, 3)[i] for i in (0, 1, 57)])


def test_valid_words_read_as_the_assembler_reads_them():
    words = valid_words(3000, 1)
    text = _text([f".word {w:#010x}" for w in words])
    lines = text.split("\n")
    got, end = raw_words.take(lines, 3)
    assert got == [isa.assemble_line(f".word {w:#010x}") for w in words] == words
    assert lines[end] == "  2:"
    fast = _fast_case(text, "raw.yaml")
    assert fast is not None and fast.threads == {0: words, 2: [isa.assemble_line("NOP")]}
    assert repr(fast) == repr(_walk_case(text, "raw.yaml"))


BAD = {
    "unknown opcode": ".word 0xff000000",
    "bit outside every field": ".word 0x02000001",
    "opcode 0": ".word 0x00000000",
    "seven digits": ".word 0x0200000",
    "nine digits": ".word 0x020000000",
    "not hex": ".word 0x0200000g",
    "upper-case digits": ".word 0x{w:08X}",
    "comment": ".word 0x{w:08x}  # a note",
    "trailing space": ".word 0x{w:08x} ",
    "a non-ASCII digit": ".word 0x0200000\u00e9",
    "a space between digits": ".word 0x020000 0",
    "short, then an empty line": ".word 0x0200000\n",
}
WALKER_READS = {"upper-case digits", "comment", "trailing space"}     # valid words in a form the run leaves


@pytest.mark.parametrize("what", BAD)
@pytest.mark.parametrize("at", [0, 1, 57, 255, 256, 900])
def test_a_run_ends_before_a_line_it_cannot_read_and_the_text_path_reads_that_line(what, at):
    words = valid_words(1000, 3)
    lines = [f".word {w:#010x}" for w in words]
    lines[at] = BAD[what].format(w=words[at])
    text = _text(lines)
    got, end = raw_words.take(text.split("\n"), 3)
    assert (got, end) == (words[:at], 3 + at)
    outcome = _outcome(text, parse_case)
    assert outcome == _outcome(text, _walk_case)        # the walker's Case, or its error line
    if what in WALKER_READS:
        assert parse_case(text, "raw.yaml").threads[0] == words
    else:
        assert outcome.startswith(f"CaseError: raw.yaml:{4 + at}: thread 0: ") and "\n" not in outcome


def test_a_run_stops_at_the_first_other_line():
    text = _text([".word 0x02000000", "NOP", ".word 0x02000000"])
    lines = text.split("\n")
    assert raw_words.take(lines, 3) == ([0x02000000], 4)
    assert raw_words.take(lines, 4) == ([], 4)
    assert parse_case(text, "raw.yaml").threads[0] == [0x02000000] * 3
