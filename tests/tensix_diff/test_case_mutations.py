"""1,000 mutated case files through the loader: each loads as a valid Case or gives one CaseError line."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tensix_diff.case import CaseError, canonical, case_hash, dump_case, parse_case, validate_shape

SEEDS = [
    """\
name: seed-one   # comment
description: "two threads"
threads:
  0:
    - SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15
    - INCRWC rwc_cr=0 rwc_d=1 rwc_b=2 rwc_a=3
  2: [".word 0x98000000", "SETRWC bitmask=1"]
init:
  gpr: {1: {4: 0x12345678, 63: 7}}
  thread_config: {1: {12: 0x0808}}
  config: {0: {1: 0x0}, 1: {223: 0xffffffff}}
  l1: [{addr: 0x20000, hex: "00112233"}, {addr: 0x20010, hex: "ff ee"}]
  dest:
    - {row: 0, values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}
    - {row: 1023, values: [0xffff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}
observe:
  l1: [{addr: 0x30000, size: 16}]
  config: {1: [4, 5]}
tags: [seed, mutation]
""",
    "name: seed-two\nthreads: {1: ['SETRWC bitmask=3']}\n",
]

# Tokens a mutation may splice in: YAML syntax, numbers at and past limits, names, ISA words.
TOKENS = ["", " ", "\t", "\n", ":", "-", "- ", "[", "]", "{", "}", ",", "#", "'", '"', "&a ", "*a", "!!int ",
          "!!python/object ", "null", "~", "yes", "1.5", "-1", "0", "3", "63", "64", "223", "224", "1023", "1024",
          "0x", "0xffffffff", "0x100000000", "0x180000", "0x17ffff", "name", "threads", "init", "observe", "gpr",
          "dest", "values", "row", "addr", "hex", "size", "config", "thread_config", "l1", "SETRWC", "NOP",
          "FOO", "bitmask=", "zz=1", ".word", "0xff000000", "\x00", "\u00e9", "---", "...", "%YAML 1.1"]


@st.composite
def mutated_case_text(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        lines = text.split("\n")
        op = draw(st.sampled_from(["splice", "delete_line", "dup_line", "swap_lines", "delete_span", "indent"]))
        i = draw(st.integers(0, len(lines) - 1))
        if op == "splice":
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + draw(st.sampled_from(TOKENS) | st.text(max_size=3)) + text[pos:]
            continue
        if op == "delete_line":
            del lines[i]
        elif op == "dup_line":
            lines.insert(i, lines[i])
        elif op == "swap_lines":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["", " ", "  ", "    "])) + lines[i].lstrip()
        else:
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + text[pos + draw(st.integers(1, 12)):]
            continue
        text = "\n".join(lines)
    return text


@settings(max_examples=1000)
@given(mutated_case_text())
def test_mutated_case_files_never_traceback(text):
    try:
        case = parse_case(text, "m.yaml")
    except CaseError as e:
        msg = str(e)
        assert msg.startswith("m.yaml") and "\n" not in msg, msg
        return
    # Whatever loads is a valid case that survives its own writer.
    validate_shape(case)
    again = parse_case(dump_case(case), "again.yaml")
    assert canonical(again) == canonical(case)
    assert case_hash(again) == case_hash(case)
