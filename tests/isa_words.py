"""Random valid Tensix words for tests: each instruction of golden/isa.yaml, random bits in its declared fields."""
from __future__ import annotations

import random

from golden import isa


def valid_words(n: int, seed: int) -> list[int]:
    """n random words every instruction of isa.yaml can hold: its opcode, random bits in its declared fields."""
    rng = random.Random(seed)
    table = list(isa.table().values())
    out = []
    for _ in range(n):
        ins = rng.choice(table)
        out.append(ins.opcode << 24 | (rng.getrandbits(24) & ins.payload_mask))
    return out
