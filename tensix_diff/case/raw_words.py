"""Raw-word instruction lines of dump_case's layout (``    - .word 0x`` and 8 lower-case hex digits) read a run
at a time: each gives the word golden.isa.assemble_line gives, checked by isa.decode's rule (a known opcode,
no bit set outside the instruction's declared fields, golden/isa.yaml) over the whole run at once."""
from __future__ import annotations

import re
from itertools import islice, takewhile
from operator import methodcaller

import numpy as np

from golden.core import opcode_checks

PREFIX = "    - .word 0x"
_LINE = len(PREFIX) + 8
_HEX = re.compile(r"[0-9a-f]*")
_RAW = methodcaller("startswith", PREFIX)


def take(lines: list[str], i: int) -> tuple[list[int], int]:
    """The words of the raw-word lines from ``lines[i]`` on and the index of the line after them. The run ends
    at the first line of another form or whose word isa.decode refuses (the text path reads that line)."""
    run = list(takewhile(_RAW, islice(lines, i, None)))
    if set(map(len, run)) - {_LINE}:
        run = run[:next(k for k, line in enumerate(run) if len(line) != _LINE)]
    joined = "".join(run)
    if joined.isascii():        # a character a byte: the digits are columns 14..21 of a line-per-row array
        digits = np.frombuffer(joined.encode(), dtype=np.uint8).reshape(len(run), _LINE)[:, len(PREFIX):].tobytes()
        digits = digits.decode()
    else:
        digits = "".join([line[len(PREFIX):] for line in run])
    good = _HEX.match(digits).end() // 8 * 8
    words = np.frombuffer(bytes.fromhex(digits[:good]), dtype=">u4").astype(np.uint32)
    known, stray = opcode_checks()
    op = words >> 24
    bad = ~known[op] | ((words & stray[op]) != 0)
    if bad.any():
        words = words[:int(bad.argmax())]
    return words.tolist(), i + len(words)
