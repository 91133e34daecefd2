"""Ablating a one-thread program from a copy of golden's state just before the ablated word, not from scratch.

Golden runs one thread deterministically, word after word (golden/schedule.py, the sequential schedule), so the
run of the program with word p made a NOP is, up to word p's first issue, the full run itself. ``walk`` runs the
full program once and offers, before each word's first issue, the machine as it stands; ``ablated_run`` copies its
state (golden.state.copy_state) and runs the NOP and the words after it; where the state after the NOP equals
the full run's after word p (golden.state.same_state), every later step is the full run's, and the ablation
cannot show (this holds for one thread only: another's steps are not replayed). Where that NOP's first issue is held,
the full run's scheduler could retry it within the same turn, which a fresh one cannot: ``ablated_run`` then says
so (None) and the caller runs the ablated program from scratch (tensix_diff.effects).
"""
from __future__ import annotations

from typing import Callable

from golden.core import Decoded, Tensix, decode_program
from golden.errors import Blocked
from golden.handlers import FRONTEND, stage_engaged
from golden.schedule import SEQUENTIAL, interleave
from golden.state import TensixState, same_state

from .case import Case
from .golden_run import apply_init


def one_stream(case: Case) -> bool:
    """Whether ``case`` runs as one plain stream of its words: one thread, no RISC-V actions, no frontend stage
    (MOP or replay expander) that could rewrite it."""
    if len(case.threads) != 1 or any(case.actions.values()):
        return False
    (t, words), = case.threads.items()
    m = Tensix()
    program = decode_program(words)
    return not any(stage_engaged(m, t, stage, program, ()) for stage in FRONTEND)


def walk(case: Case, visit: Callable[[int, Tensix], None]) -> Tensix:
    """Golden's full run of a ``one_stream`` case, calling ``visit(p, machine)`` before word p's first issue
    (the machine must be left as it is); the machine at the end. Raises what the run raises (a GoldenError)."""
    m = Tensix()
    apply_init(m.s, case)
    last = [-1]

    def step(th: int, d: Decoded, index: int) -> None:
        if index != last[0]:
            last[0] = index
            visit(index, m)
        m.step(th, d, index)
    m.run(case.threads, step=step)
    return m


def ablated_run(before: TensixState, t: int, program: list[Decoded], p: int, nop: Decoded,
                after: TensixState | None = None) -> Tensix | None | bool:
    """The run of thread t's decoded ``program`` with word p made ``nop``, continued from ``before`` (the full run's
    state just before word p's first issue; the run takes it over). None when that NOP's first issue is held (run
    it from scratch instead); SAME when ``after`` (the full run's state just after word p) is given and the NOP
    leaves ``before`` equal to it, so that every later step is the full run's own. Raises what the run raises."""
    a = Tensix(before)
    first = [True]

    def step(th: int, d: Decoded, index: int) -> None:
        if first[0]:
            first[0] = False
            try:
                a.step(th, d, index)
            except Blocked:
                raise _Held from None
            if after is not None and same_state(a.s, after):
                raise _Same
            return
        a.step(th, d, index)
    items = iter([(p, nop), *((i, program[i]) for i in range(p + 1, len(program)))])
    try:
        interleave({t: items}, SEQUENTIAL, step)
    except _Held:
        return None
    except _Same:
        return SAME
    return a


SAME = True     # ablated_run's answer when the ablated run rejoined the full run


class _Held(Exception):
    """The ablated word's NOP was held at its first issue."""


class _Same(Exception):
    """The state after the ablated word's NOP is the full run's after that word."""
