"""Case files: every malformed input is one CaseError line naming file and line; canonical form and hash."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import isa
from tensix_diff.case import (Case, CaseError, Init, Observe, canonical, case_hash, dump_case, load_case, load_cases,
                              parse_case, validate_shape)
from tensix_diff.case.fast import fast_case
from tensix_diff.case.yaml_walker import walk_case

CONTRACT_EXAMPLE = """\
name: matmul-addrmod-trace        # unique, [a-z0-9-]
description: free text
threads:                          # Tensix thread -> instruction list, run in order
  1:
    - SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15   # "MNEMONIC field=value ..."
    - .word 0x98000000                                                     # or a raw 32-bit Tensix word
init:                             # optional initial state, applied before the program
  gpr: {1: {4: 0x12345678}}       # thread -> {index: value}
  thread_config: {1: {12: 0x0808}}  # thread -> {register index: 16/32-bit value}
  config: {0: {1: 0x0}}           # config state -> {ADDR32 index: value}
  l1: [{addr: 0x20000, hex: "00112233"}]
  dest: [{row: 0, values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}]
"""


def test_contract_example_loads():
    c = parse_case(CONTRACT_EXAMPLE, "ex.yaml")
    assert c.name == "matmul-addrmod-trace"
    assert c.threads == {1: [isa.encode("SETRWC", {"bitmask": 15}), 0x98000000]}
    assert c.init.gpr == {1: {4: 0x12345678}}
    assert c.init.thread_config == {1: {12: 0x808}}
    assert c.init.config == {0: {1: 0}}
    assert c.init.l1 == [(0x20000, bytes.fromhex("00112233"))]
    assert c.init.dest == [(0, list(range(16)))]
    assert c.observed_l1() == [(0x20000, 4)]
    assert c.observed_config() == {0: [1]}


def test_dump_round_trips_and_hash_ignores_formatting():
    c = parse_case(CONTRACT_EXAMPLE, "ex.yaml")
    text = dump_case(c)
    c2 = parse_case(text, "dumped.yaml")
    assert canonical(c2) == canonical(c)
    assert case_hash(c2) == case_hash(c)
    # Reformatted, different comments, description and spelling of numbers: same hash.
    reformatted = CONTRACT_EXAMPLE.replace("0x12345678", "305419896").replace("# unique", "# other") \
        .replace("free text", "something else").replace("bitmask=15", "bitmask=0xf")
    assert case_hash(parse_case(reformatted, "r.yaml")) == case_hash(c)


def test_hash_changes_with_content():
    c = parse_case(CONTRACT_EXAMPLE, "ex.yaml")
    h = case_hash(c)
    for edit in (("bitmask=15", "bitmask=14"), ("0x12345678", "0x12345679"), ("00112233", "00112234"),
                 ("  1:\n", "  2:\n")):
        assert case_hash(parse_case(CONTRACT_EXAMPLE.replace(*edit), "e.yaml")) != h, edit
    # Observing more state changes what is compared, so it changes the hash.
    more = CONTRACT_EXAMPLE + "observe:\n  config: {1: [5]}\n"
    assert case_hash(parse_case(more, "o.yaml")) != h
    # Observing exactly what init already observes does not.
    same = CONTRACT_EXAMPLE + "observe:\n  config: {0: [1]}\n"
    assert case_hash(parse_case(same, "o.yaml")) == h


MALFORMED = [
    ("name: x\nthreads: [\n", 3, "invalid YAML"),
    ("name: x\nthreads:\n  0:\n    - FOO a=1\n", 4, "unknown mnemonic 'FOO'"),
    ("name: x\nthreads:\n  0:\n    - SETRWC zz=1\n", 4, "no field 'zz'"),
    ("name: x\nthreads:\n  0:\n    - SETRWC bitmask=99\n", 4, "does not fit"),
    ("name: x\nthreads:\n  0:\n    - SETRWC bitmask=1 bitmask=2\n", 4, "given twice"),
    ("name: x\nthreads:\n  3:\n    - SETRWC bitmask=1\n", 3, "thread 3 is not in 0..2"),
    ("name: x\nthreads:\n  -1: []\n", 3, "thread -1 is not in 0..2"),
    ("name: x\nthreads: {}\ninit:\n  l1:\n   - {addr: 0x100, hex: '00112233'}\n   - {addr: 0x102, hex: '00'}\n",
     6, "overlaps"),
    ("name: x\nthreads: {}\nobserve:\n  l1:\n   - {addr: 0x100, size: 8}\n   - {addr: 0x104, size: 8}\n",
     6, "overlaps"),
    ("name: x\nname: y\nthreads: {}\n", 2, "given twice"),
    ("name: x\nthreads: {}\nfoo: 1\n", 3, "unknown key 'foo'"),
    ("name: x\nthreads: {}\ninit:\n  gprs: {}\n", 4, "unknown key 'gprs'"),
    ("name: x\nthreads: {}\ninit:\n  gpr: {0: {1: 0x100000000}}\n", 4, "out of range"),
    ("name: x\nthreads: {}\ninit:\n  gpr: {0: {64: 1}}\n", 4, "index 64 is not in 0..63"),
    ("name: x\nthreads: {}\ninit:\n  gpr: {0: {1: 1.5}}\n", 4, "must be an integer"),
    ("name: x\nthreads: {}\ninit:\n  config: {2: {1: 1}}\n", 4, "state 2 is not in 0..1"),
    ("name: x\nthreads: {}\ninit:\n  config: {0: {224: 1}}\n", 4, "index 224 is not in 0..223"),
    ("name: x\nthreads: {}\ninit:\n  thread_config: {0: {999: 1}}\n", 4, "is not in"),
    ("name: x\nthreads: {}\ninit:\n  dest: [{row: 0, values: [1, 2]}]\n", 4, "needs 16 values"),
    ("name: x\nthreads: {}\ninit:\n  dest: [{row: 1024, values: []}]\n", 4, "row 1024"),
    ("name: x\nthreads: {}\ninit:\n  dest:\n    - {row: 0, values: [0x10000,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}\n", 5,
     "out of range"),
    ("name: x\nthreads: {}\ninit:\n  l1: [{addr: 0, hex: 00112233}]\n", 4, "quote it"),
    ("name: x\nthreads: {}\ninit:\n  l1: [{addr: 0, hex: '0g'}]\n", 4, "hex digits"),
    ("name: x\nthreads: {}\ninit:\n  l1: [{addr: 0x17ffff, hex: '0011'}]\n", 4, "past the end of L1"),
    ("name: x\nthreads: {}\ninit:\n  l1: [{hex: '0011'}]\n", 4, "needs 'addr'"),
    ("name: Bad_Name\nthreads: {}\n", 1, "must use only a-z"),
    ("description: no name\nthreads: {}\n", 1, "needs 'name'"),
    ("name: x\n", 1, "needs 'threads'"),
    ("name: x\nthreads: {0: [5]}\n", 2, "must be text"),
    ("name: x\nthreads: {0: ['.word 0xff000000']}\n", 2, "unknown opcode"),
    ("name: x\nthreads: &a {0: *a}\n", 2, "must be a list"),
    ("- 1\n", 1, "must be a mapping"),
    ("name: x\n\tthreads: {}\n", 2, "invalid YAML"),
]


@pytest.mark.parametrize("text,line,what", MALFORMED)
def test_malformed_is_one_clear_line(tmp_path, text, line, what):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(CaseError) as e:
        load_case(f)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{f}:{line}: "), msg
    assert what in msg, msg


def test_unreadable_inputs(tmp_path):
    with pytest.raises(CaseError, match="no such case file"):
        load_case(tmp_path / "missing.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CaseError, match="not UTF-8"):
        load_case(tmp_path / "bin.yaml")
    (tmp_path / "empty.yaml").write_text("# only a comment\n")
    with pytest.raises(CaseError, match="empty case file"):
        load_case(tmp_path / "empty.yaml")


def test_load_cases_walks_directories_and_rejects_duplicate_names(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.yaml").write_text("name: a\nthreads: {}\n")
    (tmp_path / "sub" / "b.yml").write_text("name: b\nthreads: {}\n")
    (tmp_path / "notes.txt").write_text("ignored")
    assert [c.name for c in load_cases([tmp_path])] == ["a", "b"]
    (tmp_path / "sub" / "c.yaml").write_text("name: a\nthreads: {}\n")
    with pytest.raises(CaseError, match="already used by"):
        load_cases([tmp_path])


def test_validate_shape_checks_memory_cases():
    ok = Case("ok", "", {0: [isa.encode("SETRWC", {"bitmask": 1})]}, Init(gpr={0: {1: 2}}))
    validate_shape(ok)
    for bad in (Case("x", "", {3: []}),
                Case("x", "", {0: [0xFF000000]}),
                Case("x", "", {}, Init(l1=[(0, b"ab"), (1, b"c")])),
                Case("x", "", {}, Observe(config={0: [300]}) and Init(dest=[(0, [0] * 15)])),
                Case("UPPER", "", {})):
        with pytest.raises(CaseError):
            validate_shape(bad)


def test_dump_quotes_names_yaml_would_misread():
    for name in ("null", "yes", "123", "0x10"):
        c = Case(name, "multi\nline \"quoted\"", {0: [isa.encode("SETRWC", {"bitmask": 3})]}, tags=["t1"])
        c2 = parse_case(dump_case(c), "d.yaml")
        assert (c2.name, c2.description, c2.tags) == (c.name, c.description, c.tags)
        assert c2.threads == c.threads


def test_hostile_case_files_are_one_line_errors(tmp_path):
    """Deep nesting (which would crash libyaml's composer), a FIFO (which would block a reader) and a huge
    file are refused before they are parsed."""
    import os
    from tensix_diff.case import MAX_CASE_BYTES, CaseError, load_case
    (tmp_path / "deep.yaml").write_text("[" * 30000)
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "big.yaml").write_text("name: big\nthreads:\n  0:\n" + "    - NOP\n" * (MAX_CASE_BYTES // 10 + 1))
    (tmp_path / "indent.yaml").write_text("name: x\n" + " " * 600 + "y: 1\n")
    for name, what in (("deep", "nested 30000 deep"), ("fifo", "not a regular file"), ("big", "at most 8 MiB"),
                       ("indent", "indented 600 columns")):
        with pytest.raises(CaseError, match=what) as e:
            load_case(tmp_path / f"{name}.yaml")
        assert "\n" not in str(e.value)


# --- the fast path for dump_case's layout must read exactly what the YAML walker reads -------------------
CORPUS = Path(__file__).parents[1] / "corpus"
# Every block dump_case writes: tags, two threads, init.gpr/thread_config/config/l1/dest, observe.l1/config.
FULL = dump_case(parse_case(CONTRACT_EXAMPLE.replace("  1:\n", "  0:\n    - NOP\n  1:\n") + """\
observe:
  l1: [{addr: 0x30000, size: 16}]
  config: {1: [4, 5]}
tags: [x, "y z"]
""", "full.yaml"))


def _walked(text: str, source: str = "t.yaml") -> str:
    """What the walker makes of text: the Case (repr shows types and order) or its error line."""
    try:
        return repr(walk_case(text, source))
    except CaseError as e:
        return f"CaseError: {e}"


def _agree(text: str, source: str = "t.yaml") -> Case | None:
    """The fast path's Case for text, checked field by field against the walker's; None when it fell back."""
    fast = fast_case(text, source)
    if fast is not None:
        slow = walk_case(text, source)   # raises if the fast path accepted what the walker refuses
        for f in fields(Case):
            assert repr(getattr(fast, f.name)) == repr(getattr(slow, f.name)), f.name
        assert canonical(fast) == canonical(slow) and case_hash(fast) == case_hash(slow)
    return fast


def test_fast_path_reads_every_block_dump_case_writes():
    assert _agree(FULL) is not None
    for variant in (dump_case(Case("no-threads", "", {})),
                    FULL.replace('"free text"', '''"a: b # c 'd', {e} [f] -g"'''),    # plain inside quotes
                    FULL.replace("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15",
                                 ".word 0x98000000")):
        assert _agree(variant) is not None, variant


def test_fast_path_reads_plain_names_and_mop_configuration_stores():
    """Big hand-written programs: a plain name and no description; MOP blocks: mop_cfg stores between
    instruction lines. Names YAML would read as something else than text go to the walker (which refuses them)."""
    body = ("threads:\n  1:\n    - {mop_cfg: {index: 1, value: 0x0}}\n    - {mop_cfg: {index: 3, value: 0x2000000}}\n"
            "    - MOP_CFG zmask_hi16=0\n    - MOP mop_type=0 loop_count=3 zmask_lo16_or_loop_count=5\n"
            "    - {mop_cfg: {index: 7, value: 0x2000000}}\n  2:\n    - NOP\n")
    case = _agree("name: big-plain\n" + body)
    assert case is not None and case.name == "big-plain" and case.description == ""
    assert [(i, a.args) for i, a in case.actions[1]] == [(0, (1, 0)), (0, (3, 0x2000000)), (2, (7, 0x2000000))]
    for name in ("true", "123", "null", "0x1f", "off"):
        assert fast_case(f"name: {name}\n" + body, "x") is None
    assert fast_case("name: x\n" + body.replace("value: 0x0}", "value: 0x100000000}"), "x") is None


def test_fast_path_agrees_with_walker_on_generated_cases():
    from generators.bulk import generate
    for _, case in generate(12, 200, "default"):
        text = dump_case(case)
        assert _agree(text, f"{case.name}.yaml") is not None, f"{case.name} fell back to the walker"


def _plain(s: str) -> bool:
    return all(" " <= ch <= "~" and ch not in '"\\' for ch in s)


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.yaml")), ids=lambda p: p.stem)
def test_fast_path_agrees_with_walker_on_corpus(path):
    text = path.read_text()
    _agree(text, str(path))                  # hand-written files mostly fall back (comments, flow style)
    case = walk_case(text, str(path))
    fast = _agree(dump_case(case), str(path))
    if not case.actions and _plain(case.description) and all(map(_plain, case.tags)):
        assert fast is not None, "its dump_case form fell back to the walker"


def _edit(old: str, new: str, text: str = FULL) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


SETRWC = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15"
# YAML subtleties the fast path leaves to the walker (which accepts some and refuses others).
TRICKY = {
    "comment": _edit("bitmask=15", "bitmask=15  # note"),
    "upper-case 0X": _edit("0x12345678", "0X12345678"),
    "upper-case hex digits": _edit("0x808", "0x80A"),
    "leading zero is octal": _edit("{12: 0x808}", "{012: 0x808}"),
    "0o": _edit("0x12345678", "0o777"),
    "underscore": _edit("0x12345678", "0x1234_5678"),
    "bare 0x": _edit("{1: 0x0}", "{1: 0x}"),
    "signed": _edit("0x12345678", "+0x12345678"),
    "null value": _edit("0x12345678", "~"),
    "empty block is null": _edit("  config:\n    0: {1: 0x0}\n", "  config:\n"),
    "empty init": _edit(FULL[FULL.index("init:"):FULL.index("observe:")], "init:\n"),
    "quoted instruction": _edit(SETRWC, '"SETRWC bitmask=15"'),
    "tagged instruction": _edit(SETRWC, "!!str SETRWC bitmask=15"),
    "single-quoted text": _edit('"free text"', "'free text'"),
    "escape in text": _edit('"free text"', r'"free\ttext"'),
    "line separator in text": _edit('"free text"', '"free\u2028text"'),
    "flow threads": _edit(FULL[FULL.index("threads:"):FULL.index("init:")], "threads: {1: [NOP]}\n"),
    "block regs": _edit("    1: {4: 0x12345678}\n", "    1:\n      4: 0x12345678\n"),
    "anchor": _edit("0: {1: 0x0}", "0: &a {1: 0x0}"),
    "keys reordered": _edit('tags: ["x", "y z"]\n', "") + 'tags: ["x"]\n',
    "document marker": "---\n" + FULL,
    "byte order mark": "\ufeff" + FULL,
    "CRLF": FULL.replace("\n", "\r\n"),
    "no final newline": FULL[:-1],
    "trailing space": _edit("bitmask=15\n", "bitmask=15 \n"),
    "tab": _edit("    - NOP", "    -\tNOP"),
    # refused by the walker: the error must be its own
    "key twice in a flow map": _edit("{4: 0x12345678}", "{4: 0x12345678, 4: 0x1}"),
    "thread twice": _edit("init:\n", "  1:\n    - NOP\ninit:\n"),
    "section twice": _edit("  l1:\n    - {addr: 0x20000", "  gpr:\n    2: {1: 0x1}\n  l1:\n    - {addr: 0x20000"),
    "observed region twice": _edit("    - {addr: 0x30000, size: 16}\n", "    - {addr: 0x30000, size: 16}\n" * 2),
    "dest value too big": _edit("0xf]", "0x10000]"),
    "dest row twice": _edit("  dest:\n", "  dest:\n    - {row: 0, values: [" + ", ".join(["0x0"] * 16) + "]}\n"),
    "thread out of range": _edit("  1:\n", "  3:\n"),
    "field out of range": _edit("bitmask=15", "bitmask=99"),
    "unknown mnemonic": _edit("- NOP", "- YES"),
    "bad name": _edit('"matmul-addrmod-trace"', '"Matmul"'),
    "odd hex": _edit('"00112233"', '"0011223"'),
    "overlapping l1": _edit('hex: "00112233"}\n', 'hex: "00112233"}\n    - {addr: 0x20002, hex: "00"}\n'),
}


@pytest.mark.parametrize("what", TRICKY)
def test_tricky_inputs_take_the_walker(what):
    text = TRICKY[what]
    assert fast_case(text, "t.yaml") is None
    try:
        got = repr(parse_case(text, "t.yaml"))
    except CaseError as e:
        got = f"CaseError: {e}"
    assert got == _walked(text)


MUTATIONS = ["", " ", "\t", "\n", "\n  ", "\r", "#", "'", '"', "\\", ":", ": ", ",", "-", "- ", "{", "}", "[", "]",
             "&a ", "*a", "!!str ", "~", "null", "yes", "NO", "0", "00", "0x", "0X", "_", "1", "2", "9", "a", "f", "F",
             "."]


@st.composite
def mutated_dump(draw) -> str:
    text = FULL
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + draw(st.sampled_from(MUTATIONS)) + text[pos + draw(st.integers(0, 2)):]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines.insert(j, lines[i] if draw(st.booleans()) else lines.pop(i))
            text = "\n".join(lines)
    return text


@settings(max_examples=500, deadline=None)
@given(mutated_dump())
def test_fast_path_never_disagrees_with_walker_on_mutated_dumps(text):
    _agree(text)
