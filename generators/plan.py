"""What one thread's program is drawn from, and what its body has drawn so far (generators.program)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from golden.riscv import RiscvAction

from .profiles import Profile

EDGE_P = 0.15          # chance a ranged field takes an edge: its lowest or highest allowed value, or 1 (see ranged)


@dataclass
class ThreadPlan:
    thread: int
    mix: Profile
    candidates: dict[str, float]
    body: list[int] = field(default_factory=list)
    needs: set[str] = field(default_factory=set)
    gprs: set[int] = field(default_factory=set)
    config: set[int] = field(default_factory=set)
    sections: set[int] = field(default_factory=set)
    counts: Counter = field(default_factory=Counter)
    zw_used: int = 0          # ADC Z/W increments so far (an upper bound on what they added to any Z or W)
    actions: list[tuple[int, RiscvAction]] = field(default_factory=list)   # (body index, RISC-V action)
    config_state: int | None = None   # the config state the thread addresses, once its set-up drew one
    role_config: set[int] = field(default_factory=set)   # config words its instructions' fields name (observed)
