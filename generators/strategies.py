"""Hypothesis strategies over whole-program cases (the same builder as the bulk generator)."""
from __future__ import annotations

from hypothesis import strategies as st

from tensix_diff.case import Case
from tensix_diff.race import is_racy

from .constraints import available
from .draw import HypothesisDraw
from .profiles import Profile, load_profile
from .program import build_case


def cases(profile: Profile | str = "default") -> st.SearchStrategy[Case]:
    """Cases drawn by the profile's distribution; shrinking shortens programs and zeroes fields. A case whose
    outcome depends on the thread interleaving (tensix_diff.race) is never drawn."""
    p = load_profile(profile) if isinstance(profile, str) else profile

    @st.composite
    def _cases(draw) -> Case:
        return build_case(HypothesisDraw(draw), p)

    return _cases().filter(lambda c: not is_racy(c))


def can_generate(profile: Profile | str = "default") -> bool:
    """Whether the profile has any instruction golden models now (else ``cases`` cannot draw)."""
    p = load_profile(profile) if isinstance(profile, str) else profile
    return bool(available(p))
