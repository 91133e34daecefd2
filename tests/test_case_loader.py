"""Case files: every malformed input is one CaseError line naming file and line; canonical form and hash."""
from __future__ import annotations

import pytest

from golden import isa
from tensix_diff.case import (Case, CaseError, Init, Observe, canonical, case_hash, dump_case, load_case,
                              load_cases, parse_case, validate_shape)

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
