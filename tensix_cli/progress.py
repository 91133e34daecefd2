"""Progress of long commands (record, fuzz, minimize, coverage, the agreement report): a count with rate and
ETA on stderr, only on a terminal and never under -q."""
from __future__ import annotations

import sys
import time


class Progress:
    """A count with rate and ETA on stderr, only on a terminal (quiet in pipes and logs)."""

    def __init__(self, what: str, total: int, every: float = 0.5, quiet: bool = False):
        self.what, self.total, self.every = what, total, every
        self.done, self.t0, self.last = 0, time.monotonic(), 0.0
        self.on = sys.stderr.isatty() and not quiet
        self.shown = False

    def step(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` more; ``note`` (e.g. "2 diverged") follows the count."""
        self.done += n
        now = time.monotonic()
        if self.on and (now - self.last >= self.every or self.done == self.total):
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate else 0
            end = "\n" if self.done == self.total else ""
            note = f", {note}" if note else ""
            print(f"\r{self.what}: {self.done}/{self.total}{note} ({rate:.1f}/s, ETA {eta:.0f} s)   ", end=end,
                  file=sys.stderr, flush=True)
            self.shown = end == ""

    def clear(self) -> None:
        """Wipe the live count from the line, so a line printed next starts clean (the count comes back)."""
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
            self.shown = False

    def close(self) -> None:
        """End the line if the count stopped short of the total (interrupted, or a budget not all spent)."""
        if self.shown:
            print(file=sys.stderr, flush=True)
            self.shown = False


def pooled(fn, items, jobs: int, progress: Progress, each=None) -> list:
    """[fn(x) for x in items], in order, on ``jobs`` forked processes (which see the parent's module state as
    it was when this was called), stepping ``progress``; ``each(k, result)``, if given, runs in this process as
    each result arrives (in order), so a caller can keep what is done before the whole list is."""
    items = list(items)
    out: list = []

    def take(r) -> None:
        out.append(r)
        progress.step()
        if each is not None:
            each(len(out) - 1, r)
    if jobs <= 1 or len(items) <= 20:
        for x in items:
            take(fn(x))
        return out
    import multiprocessing     # late for start-up cost: only a run on several processes needs it
    import signal              # late for start-up cost, likewise
    # Ctrl-C reaches the whole process group: the workers ignore it and this process ends the pool (exit 130)
    with multiprocessing.get_context("fork").Pool(jobs, signal.signal, (signal.SIGINT, signal.SIG_IGN)) as pool:
        for r in pool.imap(fn, items, chunksize=8):
            take(r)
    return out
