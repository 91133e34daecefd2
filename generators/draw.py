"""The one randomness interface the program builder uses, with a Hypothesis and a seeded implementation.

Everything the builder draws goes through ``Draw.integer(lo, hi)``; choices, weights and booleans are
derived from it here, so Hypothesis (which shrinks integers toward ``lo``) and the seeded bulk generator
(``random.Random``) walk the same decisions with the same weights.
"""
from __future__ import annotations

import bisect
import random
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


class Draw:
    """Base: subclasses provide ``integer``; the rest is shared so both draw the same distribution."""

    def integer(self, lo: int, hi: int) -> int:  # inclusive bounds
        raise NotImplementedError

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("choice from an empty sequence")
        return items[self.integer(0, len(items) - 1)]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """One item, with probability proportional to its weight (weights are scaled to integers)."""
        if not items or len(items) != len(weights):
            raise ValueError("weighted choice needs one positive weight per item")
        scaled = [max(0, round(w * 1000)) for w in weights]
        cumulative, total = [], 0
        for w in scaled:
            total += w
            cumulative.append(total)
        if total <= 0:
            raise ValueError("weighted choice needs at least one positive weight")
        return items[bisect.bisect_right(cumulative, self.integer(0, total - 1))]

    def boolean(self, p_true: float = 0.5) -> bool:
        """True with probability p_true (0 and 1 are exact); shrinks toward False."""
        if p_true <= 0:
            return False
        if p_true >= 1:
            return True
        return self.integer(0, 9999) >= round((1 - p_true) * 10000)

    def repeat(self, lo: int, hi: int):
        """Yield 0, 1, ... for a length uniform in lo..hi, decided one 'more?' at a time: the same
        distribution as one length draw, but Hypothesis can shorten a sequence or drop an item from it."""
        n = 0
        while n < hi:
            if n >= lo and not self.boolean(1 - 1 / (hi - n + 1)):
                return
            yield n
            n += 1

    def bits(self, width: int) -> int:
        return self.integer(0, (1 << width) - 1) if width > 0 else 0


class RandomDraw(Draw):
    """Seeded draws for bulk campaigns: ``RandomDraw(seed)`` is reproducible on every platform."""

    def __init__(self, seed: int | str):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        if hi < lo:
            raise ValueError(f"empty range {lo}..{hi}")
        return self.rng.randint(lo, hi)


class HypothesisDraw(Draw):
    """Draws through a Hypothesis ``data.draw`` callable (from ``st.data()`` or ``st.composite``)."""

    def __init__(self, draw_fn: Callable):
        from hypothesis import strategies as st     # late for start-up cost: Hypothesis (a dev extra), only here
        self._draw = draw_fn
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        if hi < lo:
            raise ValueError(f"empty range {lo}..{hi}")
        if lo == hi:
            return lo
        return self._draw(self._st.integers(lo, hi))
