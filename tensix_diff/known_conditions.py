"""When a known-divergence entry applies: conditions golden checks on its own run of the case.

An entry's ``condition`` (configs/known_divergences.yaml) is a mapping of checks, all of which must hold:
  ``remap_addrs_during: [INSTR, ...]``  one of these instructions ran while Config DEST_ACCESS_CFG_remap_addrs
                                        was set as its thread sees it (Dst.md Adj16 applied to its Dest access)
  ``wait_latched_at_thread_end: [SEMWAIT | STALLWAIT, ...]``  a thread's last instruction is one of these and
                                        the wait it latched (STALLWAIT.md / SEMWAIT.md Wait Gate) is still unmet
                                        when the run ends, so golden completes only because the wait latches
The checks read golden's run trace and end state; golden's code is not changed. A case golden does not
complete (an error or a hang) meets no condition. ``GoldenFacts.unremapped_pack`` is a second golden run in
which PACR reads Dst without Adj16 / Adj32 (remap_addrs and swizzle_32b as if clear), as ttsim 1.10.0 does,
for the predicate that explains exactly that reading (tensix_diff.known).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from golden import isa
from golden.core import Tensix
from golden.dest_view import DstView
from golden.errors import GoldenError
from golden.isa import IsaError
from golden.pack import pacr
from golden.sync.sync import unmet

from .case import Case
from .golden_run import apply_init

ACTION = "action"               # a RISC-V-side action in a thread's trace (golden.riscv)
WAIT_LATCHES = ("SEMWAIT", "STALLWAIT")
_ZERO_ROW = [0] * 16


class ConditionError(ValueError):
    """A malformed condition: one line."""


class _Watched(Tensix):
    """Golden, noting what the conditions ask: instructions that ran under remap_addrs, each thread's last step."""

    def __init__(self):
        super().__init__()
        self.remapped: set[str] = set()
        self.last: dict[int, str] = {}

    def step(self, t: int, d, index: int = 0) -> None:
        remap = d.ins is not None and DstView(self, t).remap
        super().step(t, d, index)          # a blocked instruction raises and is noted when it runs
        name = d.ins.name if d.ins is not None else ACTION
        self.last[t] = name
        if remap:
            self.remapped.add(name)


class _UnremappedView(DstView):
    """Dst as a device that applies neither Adj16 nor Adj32 addresses it (ttsim 1.10.0, src/tensix.cpp)."""

    def __init__(self, m, t: int):
        super().__init__(m, t)
        self.remap = self.swizzle = False


def _run(case: Case) -> _Watched | None:
    m = _Watched()
    apply_init(m.s, case)
    try:
        m.run(case.threads, case.actions)
    except GoldenError:
        return None
    return m


class GoldenFacts:
    """Golden's run of one case (default machine, sequential schedule), made on the first question."""

    def __init__(self, case: Case):
        self.case = case
        self._machine: _Watched | None = None
        self._ran = False
        self._unremapped: list[_Watched | None] = []
        self._initial: dict[int, list[int]] | None = None

    @property
    def machine(self) -> _Watched | None:
        """The machine after the run; None when golden does not complete the case."""
        if not self._ran:
            self._ran = True
            self._machine = _run(self.case)
        return self._machine

    @property
    def unremapped_pack(self) -> _Watched | None:
        """The machine after a second run in which PACR reads Dst without Adj16 / Adj32; None when golden
        does not complete it."""
        if not self._unremapped:
            pacr.DstView = _UnremappedView       # PACR's view of Dst, for this run only
            try:
                self._unremapped.append(_run(self.case))
            finally:
                pacr.DstView = DstView
        return self._unremapped[0]

    def initial_dest(self, row: int) -> list[int]:
        """The case's initial DstBits row (zeros where the case sets none)."""
        if self._initial is None:
            self._initial = {r: list(vals) for r, vals in self.case.init.dest}
        return self._initial.get(row, _ZERO_ROW)


def _instructions(arg: Any, check: str, allowed: tuple[str, ...] | None = None) -> frozenset[str]:
    if not isinstance(arg, list) or not arg or not all(isinstance(n, str) for n in arg):
        raise ConditionError(f"{check} needs a list of instruction names, not {arg!r}")
    try:
        names = frozenset(isa.lookup(n).name for n in arg)
    except IsaError as e:
        raise ConditionError(f"{check}: {e}") from None
    if allowed is not None and not names <= set(allowed):
        raise ConditionError(f"{check} takes {', '.join(allowed)} only, not {', '.join(sorted(names - set(allowed)))}")
    return names


def _remap_addrs_during(arg: Any) -> Callable[[_Watched], bool]:
    names = _instructions(arg, "remap_addrs_during")
    return lambda m: bool(m.remapped & names)


def _wait_latched_at_thread_end(arg: Any) -> Callable[[_Watched], bool]:
    names = _instructions(arg, "wait_latched_at_thread_end", WAIT_LATCHES)

    def holds(m: _Watched) -> bool:
        return any(name in names and m.s.wait_gate[t] is not None and unmet(m, m.s.wait_gate[t])
                   for t, name in m.last.items())
    return holds


CHECKS = {"remap_addrs_during": _remap_addrs_during, "wait_latched_at_thread_end": _wait_latched_at_thread_end}


@dataclass(frozen=True)
class Condition:
    text: str
    checks: tuple[Callable[[_Watched], bool], ...]

    def holds(self, facts: GoldenFacts | None) -> bool:
        m = facts.machine if facts is not None else None
        return m is not None and all(check(m) for check in self.checks)


def parse_condition(raw: Any) -> Condition:
    """A ``condition`` mapping as written in the registry."""
    if not isinstance(raw, dict) or not raw or not set(raw) <= set(CHECKS):
        raise ConditionError(f"'condition' maps checks ({', '.join(sorted(CHECKS))}) to their arguments, not {raw!r}")
    text = "; ".join(f"{k} {', '.join(v) if isinstance(v, list) else v}" for k, v in raw.items())
    return Condition(text, tuple(CHECKS[k](v) for k, v in raw.items()))
