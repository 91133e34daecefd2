"""Seeded bulk generation for campaigns: the same builder and distribution as the Hypothesis strategies.

Case ``i`` of campaign seed ``S`` is built from its own per-case seed (``case_seed(S, i)``), so any one
case can be regenerated alone, and is named ``fuzz-<profile>-s<S>-<i:05d>``.
"""
from __future__ import annotations

import hashlib
from typing import Iterator

from tensix_diff.case import Case
from tensix_diff.race import is_racy

from tensix_diff.assess import PINNED

from .draw import RandomDraw
from .pipeline import WIDE, build_pipeline_case
from .profiles import Profile, load_profile
from .program import build_case


def case_seed(seed: int, index: int) -> int:
    """The 64-bit seed of case ``index`` in campaign ``seed`` (stable across platforms and versions)."""
    return int.from_bytes(hashlib.sha256(f"tensix-diff:{seed}:{index}".encode()).digest()[:8], "big")


def case_name(profile: Profile, seed: int, index: int) -> str:
    return f"fuzz-{profile.name}-s{seed}-{index:05d}"


RACE_REDRAWS = 16


def _build(draw: RandomDraw, p: Profile, name: str) -> Case:
    if p.pipeline:
        return build_pipeline_case(draw, p.pipeline, name, p.pipeline_draw or WIDE)
    return build_case(draw, p, name=name)


def generate_one(seed: int, index: int, profile: Profile | str = "default") -> Case:
    """Case ``index`` of campaign ``seed``, exactly as ``generate`` yields it."""
    p = load_profile(profile) if isinstance(profile, str) else profile
    case = _build(RandomDraw(case_seed(seed, index)), p, case_name(p, seed, index))
    for k in range(1, RACE_REDRAWS + 1):     # never a case whose outcome depends on the thread interleaving,
        if PINNED in case.tags or not is_racy(case):    # unless it pins the sequential schedule and says why
            break
        case = _build(RandomDraw(case_seed(seed, index) ^ k << 40), p, case_name(p, seed, index))
        case.tags.append(f"race-redrawn:{k}")
    case.tags.append(f"seed:{seed}:{index}")
    return case


def generate(seed: int, count: int, profile: Profile | str = "default", start: int = 0) -> Iterator[tuple[int, Case]]:
    """Yield ``(case_seed, Case)`` for cases ``start .. start+count-1`` of campaign ``seed``."""
    p = load_profile(profile) if isinstance(profile, str) else profile
    for i in range(start, start + count):
        yield case_seed(seed, i), generate_one(seed, i, p)
