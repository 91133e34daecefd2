"""Which instructions of a case have an effect that reaches the compared state (golden ablation).

Instruction i has an observed effect when golden's observed final state, restricted to the compared
regions, differs between the full program and the program with i replaced by a NOP. (Placeholder
implementation; see tests/test_effects.py.)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from golden import isa
from golden.errors import GoldenError
from hwbridge.golden_backend import GoldenBackend

from .case import Case

NOP = isa.encode("NOP", {})


@dataclass(frozen=True)
class Effects:
    total: int
    observed: tuple[tuple[int, int], ...]   # (thread, index) of instructions whose effect was observed

    @property
    def count(self) -> int:
        return len(self.observed)


def _final(case: Case, regions: frozenset[str]):
    r = GoldenBackend().run(case)
    if not r.ok:
        return ("status", r.status)
    return tuple((k, repr(r.state[k])) for k in sorted(regions) if k in r.state)


def _with(case: Case, threads: dict[int, list[int]]) -> Case:
    return replace(case, threads=threads)


def any_observed(case: Case, regions: Iterable[str]) -> bool:
    regions = frozenset(regions)
    nops = {t: [NOP] * len(ws) for t, ws in case.threads.items()}
    return _final(case, regions) != _final(_with(case, nops), regions)


def observed_effects(case: Case, regions: Iterable[str]) -> Effects:
    regions = frozenset(regions)
    full = _final(case, regions)
    seen = []
    for t, ws in case.threads.items():
        for i in range(len(ws)):
            ablated = {u: list(v) for u, v in case.threads.items()}
            ablated[t][i] = NOP
            if _final(_with(case, ablated), regions) != full:
                seen.append((t, i))
    return Effects(case.instruction_count, tuple(seen))
