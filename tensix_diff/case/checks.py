"""The value checks shared by both case readers (which add file:line) and ``validate_shape`` (cases built in
memory): ranges of docs/case-format.md, decodable Tensix words, L1 regions inside L1 and apart."""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from typing import Any

from golden import isa, riscv
from golden.registers import CONFIG_STATES, CONFIG_WORDS, thread_config_words
from golden.riscv import RiscvAction
from golden.state import COLS, DEST_ROWS, GPRS, L1_SIZE, THREADS

from .model import NAME_RE, Case, CaseError, Init, Observe


class Bad(Exception):
    """A check failed; the loader prefixes the location."""


def one_line(msg: str) -> str:
    return re.sub(r"\s*\n\s*", " ", msg)


def in_range(value: Any, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Bad(f"{what} must be an integer, not {value!r}")
    if not lo <= value <= hi:
        as_hex = any(w in what for w in ("value", "addr", "size", "instruction"))
        raise Bad(f"{what} {value:#x} is out of range {lo:#x}..{hi:#x}" if as_hex
                   else f"{what} {value} is not in {lo}..{hi}")
    return value


def tensix_word(value: Any, what: str) -> int:
    in_range(value, 0, 0xFFFFFFFF, what)
    error = _undecodable(value)
    if error is not None:
        raise Bad(f"{what}: {error}")
    return value


@lru_cache(maxsize=1 << 15)     # most words of a corpus recur across its cases (82% of a tenth of it)
def _undecodable(word: int) -> str | None:
    """Why golden.isa cannot decode ``word``, or None when it can."""
    try:
        isa.decode(word)
    except isa.IsaError as e:
        return str(e)
    return None


def l1_region(addr: Any, size: Any, what: str) -> tuple[int, int]:
    in_range(addr, 0, L1_SIZE - 1, f"{what} addr")
    in_range(size, 1, L1_SIZE, f"{what} size")
    if addr + size > L1_SIZE:
        raise Bad(f"{what} [{addr:#x}, {addr + size:#x}) runs past the end of L1 ({L1_SIZE:#x})")
    return addr, size


def no_overlap(regions: list[tuple[int, int, Any]], what: str) -> None:
    """regions: (addr, size, tag). Raises on the first overlap, naming both tags."""
    regions = sorted(regions, key=lambda r: (r[0], r[1]))
    for (a0, n0, t0), (a1, n1, t1) in zip(regions, regions[1:]):
        if a1 < a0 + n0:
            raise Bad(f"{what} [{a1:#x}, {a1 + n1:#x}){t1} overlaps [{a0:#x}, {a0 + n0:#x}){t0}")


def dest_values(vals: Any, what: str) -> list[int]:
    if not isinstance(vals, list) or len(vals) != COLS:
        raise Bad(f"{what} needs a list of {COLS} values")
    if all(type(v) is int and 0 <= v <= 0xFFFF for v in vals):     # the usual case, without naming each value
        return list(vals)
    return [in_range(v, 0, 0xFFFF, f"{what}[{i}]") for i, v in enumerate(vals)]


def _dest_in_range(dest: list) -> bool:
    """Whether every (row, values) of init.dest passes the checks below, all cells at once (the usual case: a
    bundle's 128 rows); when not, the checks below run row by row and name what is wrong."""
    rows, cells = [r for r, _ in dest], [v for _, v in dest]
    if set(map(type, rows)) != {int} or set(map(type, cells)) != {list} or set(map(len, cells)) != {COLS}:
        return False
    flat = list(chain.from_iterable(cells))
    return (min(rows) >= 0 and max(rows) < DEST_ROWS and set(map(type, flat)) == {int} and min(flat) >= 0
            and max(flat) <= 0xFFFF)


def check_case(case: Case) -> None:
    if not isinstance(case.name, str) or not NAME_RE.match(case.name):
        raise Bad(f"name {case.name!r} must match [a-z0-9-] (lower case, digits, '-')")
    for t, words in case.threads.items():
        in_range(t, 0, THREADS - 1, "thread")
        for i, w in enumerate(words):
            tensix_word(w, f"thread {t} instruction {i}")
    for t, acts in case.actions.items():
        in_range(t, 0, THREADS - 1, "thread")
        last = 0
        for k, (pos, a) in enumerate(acts):
            if not isinstance(a, RiscvAction) or not last <= pos <= len(case.threads.get(t, [])):
                raise Bad(f"thread {t} action {k} is not a RISC-V action in program order")
            last = pos
            try:
                riscv.check(a, t)
            except ValueError as e:
                raise Bad(f"thread {t} action {k}: {e}") from None
    check_state(case.init, case.observe)


def check_state(init: Init, observe: Observe) -> None:
    """The initial state and the observed regions of check_case."""
    for t, regs in init.gpr.items():
        in_range(t, 0, THREADS - 1, "init.gpr thread")
        for i, v in regs.items():
            in_range(i, 0, GPRS - 1, f"init.gpr thread {t} index")
            in_range(v, 0, 0xFFFFFFFF, f"init.gpr thread {t} index {i} value")
    for t, regs in init.thread_config.items():
        in_range(t, 0, THREADS - 1, "init.thread_config thread")
        for i, v in regs.items():
            in_range(i, 0, thread_config_words() - 1, f"init.thread_config thread {t} index")
            in_range(v, 0, 0xFFFFFFFF, f"init.thread_config thread {t} index {i} value")
    for s, regs in init.config.items():
        in_range(s, 0, CONFIG_STATES - 1, "init.config state")
        for i, v in regs.items():
            in_range(i, 0, CONFIG_WORDS - 1, f"init.config state {s} index")
            in_range(v, 0, 0xFFFFFFFF, f"init.config state {s} index {i} value")
    for addr, data in init.l1:
        if not isinstance(data, (bytes, bytearray)):
            raise Bad(f"init.l1 at {addr!r}: data must be bytes")
        l1_region(addr, len(data), "init.l1 region")
    no_overlap([(a, len(d), "") for a, d in init.l1], "init.l1 region")
    rows = [r for r, _ in init.dest]
    for row, vals in () if _dest_in_range(init.dest) else init.dest:
        in_range(row, 0, DEST_ROWS - 1, "init.dest row")
        dest_values(vals, f"init.dest row {row} values")
    if len(set(rows)) != len(rows):
        raise Bad("init.dest sets a row twice")
    for addr, size in observe.l1:
        l1_region(addr, size, "observe.l1 region")
    no_overlap([(a, n, "") for a, n in set(observe.l1)], "observe.l1 region")
    for s, idx in observe.config.items():
        in_range(s, 0, CONFIG_STATES - 1, "observe.config state")
        for i in idx:
            in_range(i, 0, CONFIG_WORDS - 1, f"observe.config state {s} index")


def validate_shape(case: Case) -> None:
    """Checks a Case built in memory (generators) the same way the loader checks files."""
    try:
        check_case(case)
    except Bad as e:
        raise CaseError(one_line(f"{case.source}: {e}")) from None
