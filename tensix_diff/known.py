"""The known-divergence registry (configs/known_divergences.yaml): each entry explains one exact difference.

An entry never matches a case as a whole. It names the fields it covers (fnmatch patterns over field paths,
see ``diff_path``) and a predicate over the two values of each such field; a differing field is explained
only when some entry covers it *and* its predicate holds. A case is "known" only when every difference it
shows is explained; anything else still fails, so a different bug in the same fields is never hidden.

Entry keys: ``id``, ``reason``, and either ``explains`` (a list of ``{fields: [PATTERN...], when: PREDICATE}``)
or ``statuses`` (``{golden: STATUS, device: STATUS}``, for a case one side completes and the other does not:
needs ``cases`` or ``condition``). Optional: ``cases`` (only these case names), ``tags`` (only cases carrying
all these tags), ``condition`` (only cases where golden's run meets it: tensix_diff.known_conditions, so a
fresh instance of a registered deviation is known without being named), ``case`` (a case that shows it,
checked for still reproducing), ``backend`` (hw | replay), ``device``/``device_kind``/``evidence``
(documentation). Scopes combine: an entry applies only where all it names hold.

Predicates (the first two symmetric in the two values, so the comparison's direction does not matter):
  ``{low_bits_agree: N}``   the low N bits agree (only bits above N-1 differ)
  ``{pairs: [[X, Y], ...]}`` the two values are exactly one of these unordered pairs
  ``{rows_remapped: adj16}`` a Dest cell (row R, column C) where golden holds at row Adj16(R) (Dst.md, with
                            remap_addrs) what the device holds at row R: golden applies the remapping and the
                            device does not; or, given the case, where the device keeps the case's initial
                            value and golden holds what the device holds at row Adj16^-1(R): the other end of
                            a write golden remapped (needs ``cases``, ``tags`` or ``condition``, and golden as
                            one side)
  ``{pack_unremapped: l1}`` an L1 byte where one side holds golden's value and the other the value golden
                            writes when PACR reads Dst without Adj16 / Adj32 (remap_addrs and swizzle_32b as if
                            clear): a second golden run (GoldenFacts.unremapped_pack; needs a scope as above)
  ``any``                   any difference (allowed only with ``cases``: a named case, never a whole field)
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from golden import yaml_tables
from golden.dest_view import adj16

from .compare import Diff
from .known_conditions import Condition, ConditionError, GoldenFacts, parse_condition

KNOWN_PATH = Path(__file__).resolve().parent.parent / "configs" / "known_divergences.yaml"
KNOWN_ENV = "TENSIX_DIFF_KNOWN"   # another known-divergences file (lab set-ups, tests)


class KnownError(ValueError):
    """A malformed registry: one line naming the file and entry."""


def known_file() -> Path:
    return Path(os.environ.get(KNOWN_ENV) or KNOWN_PATH)


def diff_path(d: Diff) -> str:
    """A dotted path naming one compared item: ``dest.ROW.COL``, ``dest_valid.ROW``, ``rwc.T.FIELD``,
    ``adc.T.UNIT.CH.FIELD``, ``gpr.T.INDEX``, ``config.STATE.INDEX``, ``l1.0xADDR`` (one byte);
    ``REGION.shape`` for a shape difference (never explainable)."""
    if d.key[-1:] == ("shape",):
        return f"{d.region}.shape"
    if d.region == "dest":
        _, r, _, c = d.location.split()
        return f"dest.{r}.{c}"
    if d.region == "dest_valid":
        return f"dest_valid.{d.location.split()[1]}"
    if d.region == "l1":
        return f"l1.{d.location}"
    return ".".join(map(str, d.key))


# --- predicates -----------------------------------------------------------------------------------

Predicate = Callable[[Diff, Any, "GoldenFacts | None"], bool]   # (item, (golden Dest, device Dest), facts)


def _low_bits(n: Any) -> Callable[[Any, Any], bool]:
    if not isinstance(n, int) or isinstance(n, bool) or not 0 < n < 64:
        raise KnownError(f"low_bits_agree needs a bit count 1..63, not {n!r}")
    mask = (1 << n) - 1
    return lambda e, a: isinstance(e, int) and isinstance(a, int) and (e ^ a) & mask == 0


def _pairs(pairs: Any) -> Callable[[Any, Any], bool]:
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise KnownError(f"pairs needs a list of [X, Y] pairs, not {pairs!r}")
    allowed = {frozenset(map(_value, p)) for p in pairs}
    return lambda e, a: frozenset((e, a)) in allowed


def _value(v: Any) -> Any:
    return v if not isinstance(v, str) else int(v, 0)


def _rows_remapped(arg: Any) -> Predicate:
    if arg != "adj16":
        raise KnownError(f"rows_remapped names the remapping: adj16, not {arg!r}")
    unmap = [0] * 1024
    for r in range(1024):
        unmap[adj16(r, True)] = r

    def holds(d: Diff, dests, facts: GoldenFacts | None) -> bool:
        if dests is None or d.region != "dest":
            return False
        _, r, _, c = d.location.split()
        r, c = int(r), int(c)
        golden, device = dests
        if golden[adj16(r, True)][c] == device[r][c]:
            return True        # the device holds at R what golden holds at Adj16(R)
        return (facts is not None and device[r][c] == facts.initial_dest(r)[c]
                and golden[r][c] == device[unmap[r]][c])
    return holds


def _pack_unremapped(arg: Any) -> Predicate:
    if arg != "l1":
        raise KnownError(f"pack_unremapped names the region PACR writes: l1, not {arg!r}")

    def holds(d: Diff, dests, facts: GoldenFacts | None) -> bool:
        if facts is None or d.region != "l1" or facts.machine is None or facts.unremapped_pack is None:
            return False
        addr = int(d.location, 16)
        golden, unremapped = (m.s.l1.read(addr, 1)[0] for m in (facts.machine, facts.unremapped_pack))
        return golden != unremapped and {d.expected, d.actual} == {golden, unremapped}
    return holds


def _cellwise(make: Callable[[Any], Callable[[Any, Any], bool]]) -> Callable[[Any], Predicate]:
    """A predicate over the two values of one item, as a predicate over the item, both Dests and the case."""
    def build(arg: Any) -> Predicate:
        holds = make(arg)
        return lambda d, dests, facts: holds(d.expected, d.actual)
    return build


PREDICATES = {"low_bits_agree": _cellwise(_low_bits), "pairs": _cellwise(_pairs), "rows_remapped": _rows_remapped,
              "pack_unremapped": _pack_unremapped}
NEEDS_SCOPE = ("rows_remapped", "pack_unremapped")   # predicates allowed only in an entry limited by 'cases', 'tags' or 'condition'


def _predicate(when: Any, named: bool, scoped: bool) -> tuple[str, Predicate]:
    if when == "any":
        if not named:
            raise KnownError("predicate 'any' explains every difference: allowed only with 'cases'")
        return "any", lambda d, dests, facts: True
    if not isinstance(when, dict) or len(when) != 1 or next(iter(when)) not in PREDICATES:
        raise KnownError(f"'when' must be one of {sorted(PREDICATES)} or 'any', not {when!r}")
    (name, arg), = when.items()
    if name in NEEDS_SCOPE and not scoped:
        raise KnownError(f"predicate '{name}' needs an entry limited by 'cases', 'tags' or 'condition'")
    return f"{name} {arg}", PREDICATES[name](arg)


@dataclass(frozen=True)
class Rule:
    fields: tuple[str, ...]
    text: str
    holds: Predicate = field(compare=False, repr=False)

    def explains(self, d: Diff, dests=None, facts: GoldenFacts | None = None) -> bool:
        path = diff_path(d)
        return (not path.endswith(".shape") and any(fnmatch.fnmatchcase(path, f) for f in self.fields)
                and self.holds(d, dests, facts))


@dataclass(frozen=True)
class KnownEntry:
    id: str
    reason: str
    rules: tuple[Rule, ...] = ()
    statuses: tuple[str, str] | None = None      # (golden, device)
    cases: tuple[str, ...] | None = None
    case: str | None = None
    backend: str | None = None
    tags: tuple[str, ...] = ()
    condition: Condition | None = None

    def named(self, case_name: str, backend: str | None, tags=()) -> bool:
        """The backend, case names and tags allow this case (the condition aside)."""
        return (self.backend in (None, backend) and (self.cases is None or case_name in self.cases)
                and set(self.tags) <= set(tags))

    def applies(self, case_name: str, backend: str | None, tags=(), facts: GoldenFacts | None = None) -> bool:
        """Names, tags and backend first; the condition (a golden run, made once per case) last."""
        return self.named(case_name, backend, tags) and (self.condition is None or self.condition.holds(facts))

    def explains(self, d: Diff, dests=None, facts: GoldenFacts | None = None) -> bool:
        return any(r.explains(d, dests, facts) for r in self.rules)


def _entry(e: Any, i: int) -> KnownEntry:
    if not isinstance(e, dict) or "id" not in e or "reason" not in e:
        raise KnownError(f"entry {i} needs 'id' and 'reason'")
    if ("explains" in e) == ("statuses" in e):
        raise KnownError(f"entry {i} ({e['id']}) needs exactly one of 'explains' or 'statuses'")
    cases, tags = e.get("cases"), e.get("tags", [])
    if cases is not None and (not isinstance(cases, list) or not all(isinstance(c, str) for c in cases)):
        raise KnownError(f"entry {i} ({e['id']}): 'cases' is a list of case names")
    if not isinstance(tags, list) or not all(isinstance(c, str) for c in tags):
        raise KnownError(f"entry {i} ({e['id']}): 'tags' is a list of case tags")
    condition = None
    if "condition" in e:
        try:
            condition = parse_condition(e["condition"])
        except ConditionError as err:
            raise KnownError(f"entry {i} ({e['id']}): {err}") from None
    scoped = cases is not None or bool(tags) or condition is not None
    rules, statuses = [], None
    if "explains" in e:
        if not isinstance(e["explains"], list) or not e["explains"]:
            raise KnownError(f"entry {i} ({e['id']}): 'explains' is a list of {{fields, when}}")
        for r in e["explains"]:
            if not isinstance(r, dict) or set(r) != {"fields", "when"} or not isinstance(r["fields"], list):
                raise KnownError(f"entry {i} ({e['id']}): each 'explains' item is {{fields: [..], when: ..}}")
            text, holds = _predicate(r["when"], cases is not None, scoped)
            rules.append(Rule(tuple(map(str, r["fields"])), text, holds))
    else:
        s = e["statuses"]
        if not isinstance(s, dict) or set(s) != {"golden", "device"} or (cases is None and condition is None):
            raise KnownError(f"entry {i} ({e['id']}): 'statuses' is {{golden: S, device: S}} and needs 'cases' or"
                             " 'condition'")
        statuses = (str(s["golden"]), str(s["device"]))
    return KnownEntry(str(e["id"]), str(e["reason"]), tuple(rules), statuses,
                      tuple(cases) if cases is not None else None, e.get("case"), e.get("backend"), tuple(tags),
                      condition)


def load_known(path: str | Path | None = None) -> list[KnownEntry]:
    """The registry (``known:`` list); [] when the file does not exist; KnownError when it is malformed."""
    p = Path(path) if path is not None else known_file()
    if not p.exists():
        return []
    try:
        raw = yaml_tables.parse(p.read_text()) or []
    except yaml.YAMLError as e:
        raise KnownError(f"{p}: not YAML: {str(e).splitlines()[0]}") from None
    if isinstance(raw, dict):
        raw = raw.get("known") or []
    if not isinstance(raw, list):
        raise KnownError(f"{p}: expected a list of entries under 'known:'")
    try:
        entries = [_entry(e, i) for i, e in enumerate(raw)]
    except KnownError as e:
        raise KnownError(f"{p}: {e}") from None
    ids = [e.id for e in entries]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        raise KnownError(f"{p}: duplicate entry ids {', '.join(dup)}")
    return entries


# --- explaining a divergence ------------------------------------------------------------------------

@dataclass
class Explanation:
    """How much of one divergence the registry explains: ``entries`` used, ``unexplained`` diffs left."""
    entries: list[KnownEntry]
    explained: int
    unexplained: list[Diff]

    @property
    def complete(self) -> bool:
        return bool(self.entries) and not self.unexplained

    def text(self) -> str:
        return "; ".join(f"known divergence {e.id}: {e.reason}" for e in self.entries)


def explain_diffs(diffs: Iterable[Diff], case_name: str, backend: str | None,
                  known: Iterable[KnownEntry], tags=(), dests=None, facts: GoldenFacts | None = None) -> Explanation:
    """Each diff is explained by the first applicable entry that covers it with a holding predicate;
    ``dests`` (golden's and the device's Dest rows, in that order; None when neither side is golden) for
    state-wide predicates; ``facts`` (golden's run of the case) for conditions and the case's initial state:
    without it no entry with a condition applies. A condition is checked only once an entry's rule covers a
    diff, so a divergence no conditioned entry covers costs no golden run."""
    usable = [k for k in known if k.rules and k.named(case_name, backend, tags)]
    met: dict[str, bool] = {}

    def meets(k: KnownEntry) -> bool:
        if k.condition is None:
            return True
        if k.id not in met:
            met[k.id] = k.condition.holds(facts)
        return met[k.id]
    used: dict[str, KnownEntry] = {}
    left, n = [], 0
    for d in diffs:
        k = next((k for k in usable if k.explains(d, dests, facts) and meets(k)), None)
        if k is None:
            left.append(d)
        else:
            used.setdefault(k.id, k)
            n += 1
    return Explanation(list(used.values()), n, left)


def explain_statuses(golden: str, device: str, case_name: str, backend: str | None,
                     known: Iterable[KnownEntry], tags=(), facts: GoldenFacts | None = None) -> KnownEntry | None:
    return next((k for k in known if k.statuses == (golden, device) and k.applies(case_name, backend, tags, facts)),
                None)
