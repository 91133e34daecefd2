"""Case files (../shared/contract.md): per-thread programs plus explicit initial state.

A case is data only; every backend runs the same ``Case`` object.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from golden.state import COLS, DEST_ROWS, GPRS, THREADS


class CaseError(ValueError):
    """A malformed case: one clear line naming file, line and what is wrong."""


@dataclass
class Init:
    gpr: dict[int, dict[int, int]] = field(default_factory=dict)            # thread -> index -> value
    thread_config: dict[int, dict[int, int]] = field(default_factory=dict)  # thread -> index -> value
    config: dict[int, dict[int, int]] = field(default_factory=dict)         # state -> ADDR32 -> value
    l1: list[tuple[int, bytes]] = field(default_factory=list)               # (addr, data)
    dest: list[tuple[int, list[int]]] = field(default_factory=list)         # (row, 16 raw 16-bit values)


@dataclass
class Observe:
    """What the case observes beyond the always-observed Dest, RWCs, ADCs and GPRs."""
    l1: list[tuple[int, int]] = field(default_factory=list)        # (addr, size in bytes)
    config: dict[int, list[int]] = field(default_factory=dict)     # state -> ADDR32 indices


@dataclass
class Case:
    name: str
    description: str
    threads: dict[int, list[int]]      # Tensix thread -> raw 32-bit Tensix words (not stream form)
    init: Init = field(default_factory=Init)
    observe: Observe = field(default_factory=Observe)
    source: str = "<memory>"
    tags: list[str] = field(default_factory=list)

    def observed_l1(self) -> list[tuple[int, int]]:
        """L1 regions compared: the explicit ones, else those the case initialised."""
        regions = list(self.observe.l1) or [(a, len(d)) for a, d in self.init.l1]
        return sorted(set(regions))

    def observed_config(self) -> dict[int, list[int]]:
        out: dict[int, set[int]] = {}
        for s, idx in self.observe.config.items():
            out.setdefault(s, set()).update(idx)
        for s, regs in self.init.config.items():
            out.setdefault(s, set()).update(regs)
        return {s: sorted(v) for s, v in sorted(out.items())}


def validate_shape(case: Case) -> None:
    """Checks a Case built in memory (generators) the same way the loader checks files."""
    for t in case.threads:
        if t not in range(THREADS):
            raise CaseError(f"{case.source}: thread {t} is not in 0..{THREADS - 1}")
    for t, regs in case.init.gpr.items():
        for i, v in regs.items():
            if t not in range(THREADS) or i not in range(GPRS) or not 0 <= v <= 0xFFFFFFFF:
                raise CaseError(f"{case.source}: init.gpr thread {t} index {i} value {v:#x} out of range")
    for row, vals in case.init.dest:
        if row not in range(DEST_ROWS) or len(vals) != COLS or any(not 0 <= v <= 0xFFFF for v in vals):
            raise CaseError(f"{case.source}: init.dest row {row} needs 16 values in 0..0xffff")
