"""Which instructions of a case have an effect that reaches the compared state (golden ablation).

Instruction i of thread t has an observed effect when golden's observed final state, restricted to what
was compared, differs between the full program and the program with that instruction replaced by a NOP.
What was compared is given as a ``mask``: region names, or the other side's state dump, whose keys (down to
fields and threads) say what it observed: golden's ``rwc.*.bias`` or ``dest_valid`` do not count when the
device cannot see them. A run that ends in a golden error (hang, not-modelled, undefined) is an observation
of that status: ablating an instruction that turns an error into ``ok``, or the reverse, is an effect.
MOP and REPLAY expand to several instructions; ablation is per case-program instruction.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable

from golden import isa

from .case import Case
from .golden_run import run_golden

NOP = isa.encode("NOP", {})


@dataclass(frozen=True)
class Effects:
    total: int
    observed: tuple[tuple[int, int], ...]   # (thread, index) of instructions whose effect was observed

    @property
    def count(self) -> int:
        return len(self.observed)


def _project(value: Any, mask: Any) -> Any:
    """``value`` cut down to the keys ``mask`` holds (a dict mask recurses; anything else keeps all)."""
    if isinstance(mask, dict) and isinstance(value, dict):
        return {k: _project(value[k], mask[k]) for k in sorted(value.keys() & mask.keys(), key=str)}
    return value


def _mask(mask: Iterable[str] | dict) -> dict:
    return mask if isinstance(mask, dict) else {r: True for r in mask}


def _observe(case: Case, mask: dict, state: dict | None = None, status: str = "ok"):
    if state is None:
        r = run_golden(case)
        state, status = r.state, r.status
    return ("status", status) if status != "ok" else _project(state, mask)


def _with(case: Case, threads: dict[int, list[int]]) -> Case:
    return replace(case, threads=threads)


def any_observed(case: Case, mask: Iterable[str] | dict, full_state: dict | None = None) -> bool:
    """Does the case's effect reach the compared state? First one golden run with every instruction NOP'd
    (differs: the program as a whole did something visible); when that is equal, effects may still cancel
    (a counter set and cleared again), so each instruction is ablated in turn, last first, until one shows."""
    m = _mask(mask)
    full = _observe(case, m, full_state)
    nops = {t: [NOP] * len(ws) for t, ws in case.threads.items()}
    if _observe(_with(case, nops), m) != full:
        return True
    for t, ws in sorted(case.threads.items()):
        for i in reversed(range(len(ws))):
            ablated = {u: list(v) for u, v in case.threads.items()}
            ablated[t][i] = NOP
            if _observe(_with(case, ablated), m) != full:
                return True
    return False


def observed_effects(case: Case, mask: Iterable[str] | dict, full_state: dict | None = None) -> Effects:
    """Every instruction whose ablation changes the compared state (one golden run per instruction)."""
    m = _mask(mask)
    full = _observe(case, m, full_state)
    seen = []
    for t, ws in sorted(case.threads.items()):
        for i in range(len(ws)):
            ablated = {u: list(v) for u, v in case.threads.items()}
            ablated[t][i] = NOP
            if _observe(_with(case, ablated), m) != full:
                seen.append((t, i))
    return Effects(case.instruction_count, tuple(seen))
