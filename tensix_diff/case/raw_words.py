"""Raw-word instruction lines of dump_case's layout (``    - .word 0x`` and 8 lower-case hex digits) read a run
at a time: each gives the word golden.isa.assemble_line gives, checked by isa.decode's rule (a known opcode,
no bit set outside the instruction's declared fields, golden/isa.yaml) over the whole run at once."""
from __future__ import annotations

import numpy as np

from golden.core import opcode_checks

PREFIX = "    - .word 0x"
_DIGITS = b"0123456789abcdef"
# A line and its newline as one record of bytes: the lines of a run, joined, are an array of these.
_ROW = np.dtype([("prefix", f"S{len(PREFIX)}"), ("digits", "S8"), ("newline", "S1")])
_FIRST = 256                           # lines looked at first; each further look takes twice as many


def _readable(lines: list[str]) -> bytes:
    """The digits of the raw-word lines with 8 lower-case hex digits at the start of ``lines``: the lines, each
    with its newline, as records of one byte array (a line of another length or with a non-ASCII character
    misaligns the records from its own on, and that record is the first one refused)."""
    data = "\n".join(lines + [""]).encode("utf-8", "surrogatepass")
    rows = np.frombuffer(data, dtype=_ROW, count=len(data) // _ROW.itemsize)
    ok = (rows["prefix"] == PREFIX.encode()) & (rows["newline"] == b"\n")
    digits = rows["digits"][:len(ok) if ok.all() else int(ok.argmin())].tobytes()
    if digits.translate(None, _DIGITS):         # a character that is not a lower-case hex digit: its line ends
        hex_row = np.isin(np.frombuffer(digits, dtype=np.uint8), np.frombuffer(_DIGITS, dtype=np.uint8))
        digits = digits[:int(hex_row.reshape(-1, 8).all(1).argmin()) * 8]
    return digits


def take(lines: list[str], i: int) -> tuple[list[int], int]:
    """The words of the raw-word lines from ``lines[i]`` on and the index of the line after them. The run ends
    at the first line of another form or whose word isa.decode refuses (the text path reads that line)."""
    parts, end, size = [], i, _FIRST
    while end < len(lines):
        parts.append(_readable(lines[end:end + size]))
        end += len(parts[-1]) // 8
        if len(parts[-1]) < size * 8:
            break
        size *= 2
    words = np.frombuffer(bytes.fromhex(b"".join(parts).decode()), dtype=">u4").astype(np.uint32)
    known, stray = opcode_checks()
    op = words >> 24
    bad = ~known[op] | ((words & stray[op]) != 0)
    if bad.any():
        words = words[:int(bad.argmax())]
    return words.tolist(), i + len(words)
