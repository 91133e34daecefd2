"""Value classes for Dest data: raw 16-bit cells that hit the arithmetic edges.

Dst16b stores BF16 as Sign, Man(7), Exp(8) and FP16 as Sign, Man(10), Exp(5)
(tt-isa-documentation Dst.md; ../shared/spec/dest-srca-srcb-registers.txt §1.3).
"""
from __future__ import annotations

import random


def bf16_cell(sign: int, exp: int, man: int) -> int:
    """A BF16 value in Dst16b bit order."""
    return (sign << 15) | ((man & 0x7F) << 8) | (exp & 0xFF)


def fp16_cell(sign: int, exp: int, man: int) -> int:
    """An FP16 value in Dst16b bit order."""
    return (sign << 15) | ((man & 0x3FF) << 5) | (exp & 0x1F)


# (class name, maker(rng, sign) -> raw cell); one list per Dest reading of the same bits.
EDGE_CLASSES = (
    ("zero", lambda r, s: bf16_cell(s, 0, 0)),
    ("denormal", lambda r, s: bf16_cell(s, 0, r.randint(1, 0x7F))),
    ("smallest-normal", lambda r, s: bf16_cell(s, 1, 0)),
    ("largest-normal", lambda r, s: bf16_cell(s, 0xFE, 0x7F)),
    ("infinity", lambda r, s: bf16_cell(s, 0xFF, 0)),
    ("nan", lambda r, s: bf16_cell(s, 0xFF, r.randint(1, 0x7F))),
    ("one", lambda r, s: bf16_cell(s, 127, 0)),
    ("tie", lambda r, s: bf16_cell(s, r.randint(120, 134), 0x40 | r.choice((0x01, 0x3F)))),
    ("fp16-zero", lambda r, s: fp16_cell(s, 0, 0)),
    ("fp16-denormal", lambda r, s: fp16_cell(s, 0, r.randint(1, 0x3FF))),
    ("fp16-largest", lambda r, s: fp16_cell(s, 0x1E, 0x3FF)),
    ("fp16-infinity", lambda r, s: fp16_cell(s, 0x1F, 0)),
)


def dest_cell(rng: random.Random, edges: float) -> int:
    """A random raw cell; with probability ``edges`` one of EDGE_CLASSES with a random sign."""
    if edges and rng.random() < edges:
        _, make = EDGE_CLASSES[rng.randrange(len(EDGE_CLASSES))]
        return make(rng, rng.getrandbits(1))
    return rng.getrandbits(16)
