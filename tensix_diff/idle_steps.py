"""Program words whose one issue in golden's full run changed no state, so that their ablation cannot show.

A word issued as itself (not consumed by the MOP or replay expander, not captured by a replay load on its way),
never held, whose step left golden's whole state as it found it (golden.state.same_state), behaves as a NOP
there: the Wait Gate treats a NOP as it treats any word it does not hold (golden/sync/sync.py: a satisfied
latch is forgotten whoever issues; a NOP is held only where every word is), and a NOP changes nothing else. So
with that word made a NOP every thread's every later step runs as in the full run, and the ablated outcome is
the full one (tensix_diff.effects skips such positions, as it skips quiet words).
"""
from __future__ import annotations

from typing import Callable

from golden.core import Decoded, Tensix
from golden.errors import Blocked
from golden.frontend.replay import MOP_CFG_OP, MOP_OP, REPLAY_OP
from golden.state import Frontend, copy_state, same_state

_CONSUMED = frozenset({MOP_OP, MOP_CFG_OP, REPLAY_OP})     # words the frontend consumes or expands


def _frontend(fe: Frontend) -> tuple:
    return fe.mop_mask_hi, tuple(fe.mop_cfg), tuple(fe.replay), fe.load_left, fe.load_index, fe.load_exec


class IdleSteps:
    """Watches a run of ``m`` (its streams wrapped here; ``step`` wraps each issue) and collects in ``idle()`` the
    (thread, index) program positions shown idle, among the words ``candidate(word)`` accepts (each costs a state
    copy and comparison)."""

    def __init__(self, m: Tensix, programs: dict[int, list[int]], candidate: Callable[[int], bool]):
        self.m, self.programs, self.candidate = m, programs, candidate
        self.pulled: dict[int, tuple] = {}      # thread -> its frontend state before its stream's last item
        self.tried, self.held, self.same = set(), set(), set()
        inner = m.stream

        def stream(t, program, actions=()):
            items, fe = inner(t, program, actions), m.s.frontend[t]
            while True:
                self.pulled[t] = _frontend(fe)
                item = next(items, None)
                if item is None:
                    return
                yield item
        m.stream = stream

    def step(self, t: int, d: Decoded, index: int, issue: Callable[[], None]) -> None:
        """``issue()`` issues ``d`` (thread t, program index ``index``); raises what it raises."""
        p, before = (t, index), None
        words = self.programs.get(t, ())
        if (d.ins is not None and p not in self.tried and index < len(words) and words[index] == d.word
                and d.ins.opcode not in _CONSUMED):
            self.tried.add(p)
            if self.candidate(d.word) and self.pulled.get(t) == _frontend(self.m.s.frontend[t]):
                before = copy_state(self.m.s)
        try:
            issue()
        except Blocked:
            self.held.add(p)
            raise
        if before is not None and same_state(before, self.m.s):
            self.same.add(p)

    def idle(self) -> set[tuple[int, int]]:
        return self.same - self.held
