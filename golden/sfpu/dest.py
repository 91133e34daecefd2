"""Dest as the SFPU sees it: one Dst16b / Dst32b cell at a time, through golden.dest_view (Adj16 / Adj32,
validity kept on the high-half row of a Dst32b cell), where reading a row that is not valid is undefined
(ZEROACC.md: the Vector Unit gets no identity element).
"""
from __future__ import annotations

import numpy as np

from ..dest_view import LO_OFFSET, DstView
from ..errors import UndefinedBehaviour


class SfpuDest:
    """Cell accessors for one SFPU instruction of thread t."""

    __slots__ = ("view",)

    def __init__(self, m, t: int):
        self.view = DstView(m, t)

    def _valid(self, p: int, what: str) -> None:
        if not self.view.valid[p]:
            raise UndefinedBehaviour(f"SFPU read of {what} (DstBits row {p}), which is not valid (ZEROACC'd)")

    def read16(self, row: int, col: int) -> int:
        p = self.view.row16(row)
        self._valid(p, f"Dst16b row {row}")
        return int(self.view.bits[p, col])

    def write16(self, row: int, col: int, value: int) -> None:
        p = self.view.row16(row)
        self.view.bits[p, col] = value & 0xFFFF
        self.view.valid[p] = True

    def read32(self, row: int, col: int) -> int:
        p = self.view.row32(row)
        self._valid(p, f"Dst32b row {row}")
        bits = self.view.bits
        return (int(bits[p, col]) << 16) | int(bits[p + LO_OFFSET, col])

    def write32(self, row: int, col: int, value: int) -> None:
        p = self.view.row32(row)
        bits = self.view.bits
        bits[p, col] = (value >> 16) & 0xFFFF
        bits[p + LO_OFFSET, col] = value & 0xFFFF
        self.view.valid[p] = True

    def cells(self, rows, cols, wide: bool) -> np.ndarray | None:
        """Many cells at once (row and column arrays) as read32 / read16 read them, as an array; None when a
        row is not valid (reading them one by one raises for the first such)."""
        v = self.view
        p = v.row32(rows) if wide else v.row16(rows)
        if not v.valid[p].all():
            return None
        if wide:
            return (v.bits[p, cols].astype(np.uint32) << 16) | v.bits[p + LO_OFFSET, cols]
        return v.bits[p, cols]

    def write_cells(self, rows, cols, values, wide: bool) -> None:
        """Write many distinct cells at once: Dst32b cells when ``wide``, else Dst16b (low 16 bits)."""
        v = self.view
        rows = np.asarray(rows)
        values = np.asarray(values, dtype=np.uint32)
        if wide:
            p = v.row32(rows)
            v.bits[p, cols] = values >> 16
            v.bits[p + LO_OFFSET, cols] = values & 0xFFFF
        else:
            p = v.row16(rows)
            v.bits[p, cols] = values & 0xFFFF
        v.valid[p] = True
