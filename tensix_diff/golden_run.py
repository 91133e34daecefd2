"""Running a case on golden and observing what the contract's state dump holds (the core layer: effects,
triage and the golden backend share it)."""
from __future__ import annotations

import struct
from itertools import chain

import numpy as np

from golden.config_words import GLOBAL_BASE, word_mask
from golden.core import Tensix
from golden.errors import GoldenError
from golden.registers import CONFIG_STATES
from golden.state import ADC_UNITS, COLS, DEST_ROWS, THREADS, TensixState

from .case import Case
from .result import OK, Result


def apply_init(s: TensixState, case: Case) -> None:
    init = case.init
    for t, regs in init.gpr.items():
        for i, v in regs.items():
            s.gpr[t][i] = v
    for t, regs in init.thread_config.items():
        for i, v in regs.items():
            s.thread_config[t][i] = v
    for st, regs in init.config.items():
        for i, v in regs.items():
            # Config keeps only named-field bits; words of the GLOBAL section exist once, in both states.
            v &= word_mask(i) or 0xFFFFFFFF
            for target in range(CONFIG_STATES) if i >= GLOBAL_BASE else (st,):
                s.config[target][i] = v
    for addr, data in init.l1:
        s.l1.write(addr, data)
    rows = [row for row, _ in init.dest]
    if len(set(rows)) == len(rows) and (cells := _dest_cells(init.dest)) is not None:
        at = _as_slice(rows)
        s.dest.bits[at] = cells              # all at once; a row given twice: one at a time, in order
        s.dest.valid[at] = True
    else:
        for row, vals in init.dest:
            s.dest.bits[row] = np.asarray(vals, dtype=np.uint16)
            s.dest.valid[row] = True


def _as_slice(rows: list[int]) -> slice | list[int]:
    """rows as a slice when they are consecutive rows of Dst (numpy writes a slice faster than a row list)."""
    if rows and 0 <= rows[0] and rows[-1] < DEST_ROWS and rows == list(range(rows[0], rows[-1] + 1)):
        return slice(rows[0], rows[-1] + 1)
    return rows


def _dest_cells(dest: list[tuple[int, list[int]]]) -> np.ndarray | None:
    """init.dest's values as a (rows, 16) uint16 array (packed by struct: faster than numpy from lists);
    None when a row is not 16 values of 16 bits (numpy, row by row, then says what is wrong)."""
    rows = [vals for _, vals in dest]
    if set(map(len, rows)) != {COLS}:
        return None
    try:
        packed = struct.pack(f"={COLS * len(rows)}H", *chain.from_iterable(rows))
    except struct.error:
        return None
    return np.frombuffer(packed, dtype=np.uint16).reshape(len(rows), COLS)


def observe(s: TensixState, case: Case) -> dict:
    """The contract's state dump of everything the case observes (Dest and its valid bits as copied arrays:
    result.dump_form lists them)."""
    return {"dest": s.dest.bits.copy(), "dest_valid": s.dest.valid.copy(), **observe_counters(s, case)}


def observe_counters(s: TensixState, case: Case) -> dict:
    """Everything observe() holds but Dest: counters, GPRs, the case's L1 regions and Config words. A counter's
    instance dict is its FIELDS, in order (dataclass __init__ sets them; handlers set only those): copied whole."""
    return {
        "rwc": {str(t): vars(s.rwc[t]).copy() for t in range(THREADS)},
        "adc": {str(t): {u: {"0": vars(s.adc[t][u][0]).copy(), "1": vars(s.adc[t][u][1]).copy()} for u in ADC_UNITS}
                for t in range(THREADS)},
        "gpr": {str(t): list(s.gpr[t]) for t in range(THREADS)},
        "l1": {f"{a:#x}": s.l1.read(a, n).hex() for a, n in case.observed_l1()},
        "config": {str(st): {str(i): s.config[st][i] for i in idx} for st, idx in case.observed_config().items()},
    }


# The last case run_golden ran on golden's own machine, and how it ended: (case, (status, the machine or golden's
# message)). The race check runs the same schedule (sequential) among the ones it tries, so a verdict's check right
# after golden's run of the same case (the same object) takes it from here instead of running it again.
_last: tuple = (None, None)


def last_sequential(case: Case) -> tuple | None:
    """(status, machine or message) of run_golden's run of this very case on golden's own Tensix, if it was the
    last one run_golden made; else None."""
    c, outcome = _last
    return outcome if c is case else None


def run_golden(case: Case, machine_factory=Tensix) -> Result:
    """Golden's Result for a case: ok with the observed state, or golden's typed error."""
    global _last
    m = machine_factory()
    apply_init(m.s, case)
    own = type(m) is Tensix            # a machine of another class (a planted bug, a tracer) is never reused
    try:
        m.run(case.threads, case.actions)
    except GoldenError as e:
        _last = (case, (e.kind, str(e))) if own else (None, None)
        return Result(status=e.kind, message=str(e), provenance={"device": "golden"})
    _last = (case, ("ok", m)) if own else (None, None)
    return Result(status=OK, state=observe(m.s, case), provenance={"device": "golden"})
