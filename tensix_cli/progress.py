"""Progress of long commands: a count with rate and ETA on stderr, only on a terminal."""
from __future__ import annotations

import sys
import time


class Progress:
    """A count with rate and ETA on stderr, only on a terminal (quiet in pipes and logs)."""

    def __init__(self, what: str, total: int, every: float = 0.5):
        self.what, self.total, self.every = what, total, every
        self.done, self.t0, self.last = 0, time.monotonic(), 0.0
        self.on = sys.stderr.isatty()

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.on and (now - self.last >= self.every or self.done == self.total):
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate else 0
            end = "\n" if self.done == self.total else ""
            print(f"\r{self.what}: {self.done}/{self.total} ({rate:.0f}/s, ETA {eta:.0f} s)   ", end=end,
                  file=sys.stderr, flush=True)
