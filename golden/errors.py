"""Typed failures of the golden model: never a silently invented value."""
from __future__ import annotations


class Blocked(Exception):
    """Raised by a handler, before any side effect, when its thread must wait; the scheduler retries later."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class GoldenError(Exception):
    """Base of every error golden raises while executing a case."""

    kind = "golden-error"

    def __init__(self, rule: str, instr: str | None = None, thread: int | None = None, index: int | None = None):
        self.rule = rule
        self.instr = instr
        self.thread = thread
        self.index = index
        super().__init__(self.__str__())

    def at(self, instr: str, thread: int, index: int) -> "GoldenError":
        self.instr, self.thread, self.index = instr, thread, index
        self.args = (self.__str__(),)
        return self

    def __str__(self) -> str:
        where = ""
        if self.instr is not None:
            where = f"thread {self.thread} instruction {self.index} ({self.instr}): "
        return f"{self.kind}: {where}{self.rule}"


class UndefinedBehaviour(GoldenError):
    """The architecture leaves the result undefined (e.g. SFPU read of an invalid Dest row)."""

    kind = "undefined-behaviour"


class NotModelled(GoldenError):
    """Defined by the hardware, but golden does not model it yet (distinct from undefined)."""

    kind = "not-modelled"


class Hang(GoldenError):
    """A wait that can never be satisfied in the sequential model."""

    kind = "hang"
