"""Divergence signatures, grouping of a campaign's divergences, and known-divergence matching.

A signature names *what* differs (state region and field, thread and row numbers dropped) and *which
instruction class* wrote it: the ISA unit of the last instruction that changed the first differing
field when golden runs the case ("?" when no instruction did). Two cases with one signature are taken
to show one bug; the minimiser keeps a case's signature while it shrinks it so it cannot drift.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from golden.core import Tensix
from golden.errors import GoldenError
from golden.state import TensixState
from tensix_diff.result import Result
from tensix_diff.golden_run import apply_init
from tensix_diff.case import Case
from tensix_diff.assess import registry
from tensix_diff.compare import DIVERGED, KNOWN, MATCHED, Comparison, Verdict, judge
from tensix_diff.known import KnownEntry, load_known

COMPARED = (MATCHED, DIVERGED, KNOWN)

# Regions in the order a fault usually propagates: counters first, then the data they address.
REGION_ORDER = ("rwc", "adc", "gpr", "config", "dest_valid", "dest", "l1")

Key = tuple[str, "int | None", str]   # (region, thread or None, field)


def _key_name(key: Key) -> str:
    region, _, fld = key
    return f"{region}.{fld}" if fld else region


def _order(name: str) -> tuple[int, str]:
    region = name.split(".", 1)[0]
    return (REGION_ORDER.index(region) if region in REGION_ORDER else len(REGION_ORDER), name)


# --- what differs: compare's diff keys, with thread, channel, row and register numbers dropped --------

def field_key(diff_key: tuple) -> Key:
    """compare.Diff.key -> (region, thread or None, field); the thread is kept only to trace writers."""
    region, rest = diff_key[0], diff_key[1:]
    if rest[-1:] == ("shape",):
        return (region, None, "shape")
    if region == "rwc":
        return ("rwc", int(rest[0]), rest[1])
    if region == "adc":
        return ("adc", int(rest[0]), f"{rest[1]}.{rest[3]}")
    if region == "gpr":
        return ("gpr", int(rest[0]), "")
    if region == "config":
        return ("config", None, str(rest[1]))
    return (region, None, "bits" if region == "dest" else "")


def diff_keys(comparison: Comparison) -> list[Key]:
    keys = {field_key(d.key) for d in comparison.diffs}
    return sorted(keys, key=lambda k: (_order(_key_name(k)), -1 if k[1] is None else k[1]))


# --- which instruction last wrote a field in golden ---------------------------------------------------

def _value(s: TensixState, case: Case, key: Key):
    region, t, fld = key
    if region == "rwc":
        return getattr(s.rwc[t], fld)
    if region == "adc":
        unit, coord = fld.split(".")
        return tuple(getattr(ch, coord) for ch in s.adc[t][unit])
    if region == "gpr":
        return tuple(s.gpr[t])
    if region == "config":
        return tuple(st[int(fld)] for st in s.config)
    if region == "dest":
        return s.dest.bits.tobytes()
    if region == "dest_valid":
        return s.dest.valid.tobytes()
    return b"".join(s.l1.read(a, n) for a, n in case.observed_l1())


def last_writer_units(case: Case, keys: list[Key], machine: Callable[[], Tensix] = Tensix) -> dict[Key, str]:
    """For each key, the ISA unit of the last instruction that changed it when golden runs the case.
    Golden stopping early (not modelled, undefined, hang) keeps what it saw up to there."""
    units: dict[Key, str] = {}
    m = machine()
    apply_init(m.s, case)
    base_step = m.step

    def step(t, d, index=0):
        before = [_value(m.s, case, k) for k in keys]
        base_step(t, d, index)
        for k, old in zip(keys, before):
            if _value(m.s, case, k) != old:
                units[k] = d.ins.unit if d.ins is not None else "riscv"
    m.step = step
    try:
        m.run(case.threads, case.actions)
    except GoldenError:
        pass
    return units


# --- signatures ---------------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class Signature:
    fields: tuple[str, ...]   # "region.field", in propagation order; fields[0] is the primary one
    unit: str                 # instruction class: ISA unit of the primary field's last golden writer

    def __str__(self) -> str:
        return f"{'+'.join(self.fields)} @{self.unit}"

    @classmethod
    def parse(cls, text: str) -> "Signature":
        fields, _, unit = text.strip().rpartition(" @")
        if not fields or not unit:
            raise ValueError(f"signature {text!r} is not 'region.field+... @UNIT'")
        return cls(tuple(fields.split("+")), unit)


def signature(case: Case, verdict: Verdict, machine: Callable[[], Tensix] = Tensix) -> Signature | None:
    """The signature of a judged divergence (compare.judge) of ``case``; None unless it diverged.
    A divergence of statuses (one side hangs) is named ``status.EXPECTED-ACTUAL``."""
    if verdict.outcome != DIVERGED:
        return None
    if verdict.comparison is None:
        return Signature((f"status.{verdict.statuses[0]}-{verdict.statuses[1]}",), "?")
    keys = diff_keys(verdict.comparison)
    names = sorted({_key_name(k) for k in keys}, key=_order)
    primary = [k for k in keys if _key_name(k) == names[0] and k[2] != "shape"]
    units = last_writer_units(case, primary, machine) if primary else {}
    unit = next((units[k] for k in primary if k in units), "?")
    return Signature(tuple(names), unit)


def classify(case: Case, device: Result, model: Result) -> tuple[Verdict, Signature | None]:
    """Judge a device's result against a model's and name the divergence. As everywhere (run, fuzz, pytest),
    the reference is "expected" and the backend under test "actual": the model is the reference here."""
    verdict = judge(model, device, ("model", "device"))
    return verdict, signature(case, verdict)


def same_divergence(target: Signature, sig: Signature | None, strict: bool = False) -> bool:
    """The minimiser's predicate, on the differing fields alone (the unit label is derived from the case, so a
    smaller case may name another writer). Strict: the very same fields. Otherwise the same primary field,
    with no field the target does not show (downstream symptoms may disappear)."""
    if sig is None:
        return False
    if strict:
        return sig.fields == target.fields
    return sig.fields[0] == target.fields[0] and set(sig.fields) <= set(target.fields)


# --- grouping ------------------------------------------------------------------------------------------

@dataclass
class Divergence:
    case: Case
    signature: Signature
    detail: str = ""


@dataclass
class Group:
    signature: Signature
    count: int
    smallest: Divergence
    names: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.count:5d} x {self.signature}  smallest: {self.smallest.case.name} "
                f"({self.smallest.case.instruction_count} instructions)")


def group(divergences: Iterable[Divergence]) -> list[Group]:
    """One group per distinct signature, most frequent first, each with its smallest example. Only
    divergences the registry did not explain come here (tensix_diff.assess decides that per difference)."""
    groups: dict[Signature, Group] = {}
    for d in divergences:
        g = groups.get(d.signature)
        if g is None:
            groups[d.signature] = Group(d.signature, 1, d, [d.case.name])
            continue
        g.count += 1
        g.names.append(d.case.name)
        if d.case.instruction_count < g.smallest.case.instruction_count:
            g.smallest = d
    return sorted(groups.values(), key=lambda g: (-g.count, str(g.signature)))


def no_longer_reproducing(known: Iterable[KnownEntry], seen: dict[str, Verdict],
                          backend: str | None = None) -> list[KnownEntry]:
    """Known entries naming a case (``case:``) that was compared in this run (``seen``: case name -> its
    assessed verdict) without that entry explaining a difference. A case that was not compared (missing
    recording, refused) says nothing either way."""
    out = []
    for k in known:
        v = seen.get(k.case) if k.case else None
        if v is not None and k.backend in (None, backend) and v.outcome in COMPARED and k.id not in v.known:
            out.append(k)
    return out


def unused_entries(known: Iterable[KnownEntry], used: set[str]) -> list[KnownEntry]:
    """Registry entries that explained nothing in a run (reported, so dead entries do not pile up)."""
    return [k for k in known if k.id not in used]


def stale_line(k: KnownEntry) -> str:
    return f"known divergence no longer reproduces: {k.id} (case {k.case}): {k.reason}"


def summary_lines(groups: list[Group], stale: list[KnownEntry] = (), known_count: int = 0) -> list[str]:
    """The triage block of a campaign or corpus run: one line per signature, then stale known entries."""
    lines = [f"divergences: {sum(g.count for g in groups)} in {len(groups)} signature(s) not explained by the"
             f" registry; {known_count} case(s) fully explained (known)"]
    lines += [g.line() for g in groups]
    lines += [stale_line(k) for k in stale]
    return lines


def triage_report(divergences: Iterable[Divergence], seen: dict[str, Verdict] | None = None,
                  backend: str | None = None, known_path: str | Path | None = None, known_count: int = 0) -> dict:
    """The one call a campaign makes: groups, stale known entries and printable lines, as plain data."""
    known = load_known(known_path)
    groups = group(divergences)
    stale = no_longer_reproducing(known, seen or {}, backend)
    return {
        "groups": [{"signature": str(g.signature), "count": g.count, "smallest": g.smallest.case.name,
                    "smallest_instructions": g.smallest.case.instruction_count, "cases": g.names}
                   for g in groups],
        "stale_known": [{"id": k.id, "case": k.case, "reason": k.reason} for k in stale],
        "new": sum(g.count for g in groups),
        "known": known_count,
        "lines": summary_lines(groups, stale, known_count),
    }


# --- the calls a campaign or a test run makes -----------------------------------------------------------

class CampaignTriage:
    """Collects a campaign's verdicts as they happen: ``add(case, verdict)`` for each assessed verdict;
    divergences are grouped by signature, known ones counted. The first ``keep`` (case, verdict) pairs
    of divergences are kept for pictures (``examples``); the rest only as signatures. ``smallest`` keeps, per
    signature, the divergent (case, verdict) with the fewest instructions (what a report shows first)."""

    def __init__(self, backend: str | None = None, keep: int = 50, known_path: str | Path | None = None):
        self.backend, self.keep, self.known_path = backend, keep, known_path
        self.divergences: list[Divergence] = []
        self.examples: list[tuple[Case, Verdict]] = []
        self.smallest: dict[str, tuple[Case, Verdict]] = {}
        self.known = 0
        self.seen: dict[str, Verdict] = {}

    def add(self, case: Case, verdict: Verdict) -> Signature | None:
        self.seen[case.name] = verdict
        self.known += verdict.outcome == KNOWN
        sig = signature(case, verdict)
        if sig is not None:
            self.divergences.append(Divergence(case, sig, verdict.message))
            if len(self.examples) < self.keep:
                self.examples.append((case, verdict))
            best = self.smallest.get(str(sig))
            if best is None or case.instruction_count < best[0].instruction_count:
                self.smallest[str(sig)] = (case, verdict)
        return sig

    def report(self) -> dict:
        return triage_report(self.divergences, self.seen, self.backend, self.known_path, self.known)


def stale_known(case: Case, verdict: Verdict, backend: str | None = None,
                known_path: str | Path | None = None) -> list[str]:
    """Known entries naming this case whose divergence it no longer shows, as report lines (only when the
    case was compared)."""
    entries = [k for k in registry(known_path) if k.case == case.name]   # per case judged: read when changed
    return [stale_line(k) for k in no_longer_reproducing(entries, {case.name: verdict}, backend)]
