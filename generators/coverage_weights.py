"""Generation weighted toward what the corpus has not compared yet.

A coverage bin is an (instruction, mode field, value) triple: a value of a field whose name holds "mod"
(instr_mod*, addr_mode, ...), as `tensix-diff coverage` counts them. ``toward_unseen`` derives from a profile
one that (a) multiplies each instruction's weight by 1 + boost x the share of its reachable bins the corpus
has not shown yet, and (b) draws each mode field only from its not-yet-seen values while any remain within
the field's constraint. `benchmarks/coverage_weighting.py` measures bins reached against the plain profile.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from golden import isa
from tensix_diff.case import Case

from .constraints import available, rules
from .profiles import Profile
from .program import field_max

Bin = tuple[str, str, int]


def is_mode_field(name: str) -> bool:
    return "mod" in name


def case_bins(case: Case) -> set[Bin]:
    out: set[Bin] = set()
    for words in case.threads.values():
        for w in words:
            ins, fields = isa.decode(w)
            out.update((ins.name, f, v) for f, v in fields.items() if is_mode_field(f))
    return out


def corpus_bins(cases: Iterable[Case]) -> set[Bin]:
    out: set[Bin] = set()
    for c in cases:
        out |= case_bins(c)
    return out


def reachable(name: str, profile: Profile) -> dict[str, list[int]]:
    """Per mode field of an instruction, the values its constraints let the generator draw (role fields and
    fields drawn from wide ranges excluded: only explicit value lists and ranges of at most 64 values)."""
    ins = isa.lookup(name)
    spec = rules().field_spec(name, profile)
    out = {}
    for f in ins.fields:
        c = spec.get(f.name, {})
        if not is_mode_field(f.name) or "role" in c or "one_hot" in c or "align" in c:
            continue
        fmax = field_max(ins, f)
        if "values" in c:
            vals = [v for v in c["values"] if v <= fmax]
        else:
            lo, hi = c.get("min", 1 if c.get("nonzero") else 0), min(c.get("max", fmax), fmax)
            if hi - lo >= 64:
                continue
            vals = list(range(lo, hi + 1))
        out[f.name] = vals
    return out


def toward_unseen(profile: Profile, seen: set[Bin], boost: float = 3.0) -> Profile:
    """The profile re-weighted toward bins not in ``seen`` (named ``<profile>-unseen``)."""
    weights, overrides = dict(profile.weights), {k: dict(v) for k, v in profile.overrides.items()}
    for name in available(profile):
        fields = reachable(name, profile)
        total = sum(len(v) for v in fields.values())
        unseen = {f: [v for v in vals if (name, f, v) not in seen] for f, vals in fields.items()}
        if total:
            weights[name] *= 1 + boost * sum(len(v) for v in unseen.values()) / total
        for f, vals in unseen.items():
            if vals:
                overrides.setdefault(name, {})[f] = {**overrides.get(name, {}).get(f, {}), "values": vals}
    return dataclasses.replace(profile, name=f"{profile.name}-unseen", weights=weights, overrides=overrides)


def all_reachable_bins() -> set[Bin]:
    """Every (instruction, mode field, value) some profile under configs/profiles can generate (see
    ``reachable``; pipeline profiles draw whole kernels and add none)."""
    from .profiles import load_profile, profile_names
    out: set[Bin] = set()
    for pname in profile_names():
        profile = load_profile(pname)
        if profile.pipeline:
            continue
        for name in available(profile):
            out.update((name, f, v) for f, vals in reachable(name, profile).items() for v in vals)
    return out
