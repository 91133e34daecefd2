"""Generation weighted toward what the corpus has not compared yet.

A coverage bin is an (instruction, mode field, value) triple: a value of a field whose name holds "mod"
(instr_mod*, addr_mode, ...), as `tensix-diff coverage` counts them. A field-value class is one of zero, one,
max (all ones) and other; ``all_reachable_classes`` lists those the constraints let the generator draw.
``toward_unseen`` derives from a profile one that (a) multiplies each instruction's weight by 1 + boost x the
share of its reachable bins the corpus has not shown yet, and (b) draws each mode field only from its
not-yet-seen values while any remain within the field's constraint. `benchmarks/coverage_weighting.py` measures bins reached against the plain profile.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from golden import isa
from tensix_diff.case import Case

from .constraints import available, rules
from .profiles import Profile, load_profile, profile_names
from .program import field_max

Bin = tuple[str, str, int]


def is_mode_field(name: str) -> bool:
    return "mod" in name


def value_class(value: int, width: int) -> str:
    if value == 0:
        return "zero"
    if value == 1:
        return "one"
    return "max" if value == (1 << width) - 1 else "other"


def possible_classes(f: isa.Field) -> set[str]:
    """A one-bit field has zero and one (its max is one); a wider one all four (2 is "other" at width 2)."""
    return {"zero", "one", "max", "other"} if f.width >= 2 else {"zero", "one"}


def range_classes(lo: int, hi: int, width: int, align: int = 1) -> set[str]:
    """The classes of the multiples of ``align`` in lo..hi, for a field ``width`` bits wide."""
    k0, k1 = -(-lo // align), hi // align
    if k1 < k0:
        return set()
    top = (1 << width) - 1
    out = {value_class(k * align, width) for k in (k0, k1)}
    out |= {value_class(v, width) for v in (0, 1, top) if k0 * align <= v <= k1 * align and v % align == 0}
    if any(v not in (0, 1, top) for v in range(k0 * align, min(k1, k0 + 3) * align + 1, align)):
        out.add("other")
    return out


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


def field_classes(ins: isa.Instruction, f: isa.Field, c: dict, profile: Profile) -> set[str]:
    """Classes a field's constraint lets the generator draw (program.Builder.plain_value / role_value), read
    generously where a role's values depend on the case (GPR spans, AddrMod words): a superset, never less."""
    fmax, w = field_max(ins, f), f.width
    if "values" in c:
        return {value_class(v, w) for v in c["values"] if v <= fmax}
    if "one_hot" in c:
        return {value_class(1 << k, w) for k in range(min(c["one_hot"], fmax.bit_length()))}
    role = c.get("role")
    r = rules()
    if role in ("gpr", "gpr_half"):
        return range_classes(0, min(63 if role == "gpr" else 127, c.get("max", fmax), fmax), w)
    if role == "config":
        return {value_class(v, w) for v in r.sets["config_rw"] if v <= fmax}
    if role == "setc16_reg":
        return {value_class(v, w) for v in r.sets["setc16_addrmod"] if v <= fmax}
    if role == "addr_mode":
        return {value_class(v, w) for v in profile.sections if v <= fmax}
    if role == "adc_mask":
        units = r.observability(profile.observability)["adc_units"]
        masks = {sum(r.adc_mask_bits[u] for u in us) for us in units.values()}
        return {value_class(m, w) for m in range(1, 8) if any(not m & ~a for a in masks)}
    if role == "adc_zw_inc":
        room = (1 << r.observability(profile.observability)["adc_zw_bits"]) - 1 - r.raw["adc_zw_set_max"]
        return range_classes(0, min(fmax, room), w)
    if role is not None:                       # setc16_value: an AddrMod word, any bits
        return possible_classes(f)
    lo = c.get("min", 1 if c.get("nonzero") else 0)
    return range_classes(lo, min(c.get("max", fmax), fmax), w, c.get("align", 1))


def reachable_classes(name: str, profile: Profile) -> dict[str, set[str]]:
    """Per field of an instruction, the classes its constraints (and fixups) let the generator draw."""
    ins = isa.lookup(name)
    spec = rules().field_spec(name, profile)
    out = {f.name: field_classes(ins, f, spec.get(f.name, {}), profile) for f in ins.fields}
    fields = {f.name: f for f in ins.fields}
    for fx in rules().fixups(name):            # a fixup may make any value of what it touches: read generously
        for fname, v in (fx.get("set") or {}).items():
            out[fname].add(value_class(v, fields[fname].width))
        for part in ("or", "and"):
            for fname in (fx.get(part) or {}):
                out[fname] |= possible_classes(fields[fname])
    return out


def all_reachable_classes() -> set[tuple[str, str, str]]:
    """Every (instruction, field, class) some profile under configs/profiles can generate by its constraints,
    with the words constraints.yaml puts before and after an instruction (pipeline profiles draw whole
    kernels and add none; nor do set-up lines, whose values are filled in per case)."""
    out: set[tuple[str, str, str]] = set()
    for profile, name in _generated():
        out.update((name, f, k) for f, ks in reachable_classes(name, profile).items() for k in ks)
        for line in rules().precede(name) + rules().follow_lines(name):
            ins, vals = isa.decode(isa.assemble_line(line))
            out.update((ins.name, f.name, value_class(vals[f.name], f.width)) for f in ins.fields)
    return out


def all_reachable_bins() -> set[Bin]:
    """Every (instruction, mode field, value) some profile under configs/profiles can generate (see
    ``reachable``; pipeline profiles draw whole kernels and add none)."""
    return {(name, f, v) for profile, name in _generated() for f, vals in reachable(name, profile).items() for v in vals}


def _generated():
    """(profile, instruction) for every instruction a profile under configs/profiles draws one at a time
    (pipeline profiles draw whole kernels)."""
    for pname in profile_names():
        profile = load_profile(pname)
        if not profile.pipeline:
            yield from ((profile, name) for name in available(profile))
