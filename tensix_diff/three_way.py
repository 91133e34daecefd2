"""The three-way oracle: golden, ttsim and silicon on one case, and who is to blame when they disagree.

For each case: golden's result, and from the replay store the newest recording of each device kind
(``simulator``: ttsim; ``silicon``: a card). Each pair is compared bit for bit over what both observe
(compare.judge; no registry: the point is to see every difference). Blame, when all three answered:
  golden alone differs   -> ``model bug``      (golden is wrong; ttsim and silicon agree)
  ttsim alone differs    -> ``simulator``      (a ttsim bug, or silicon behaviour ttsim lacks)
  silicon alone differs  -> ``erratum/harness`` (silicon behaves unlike both models, or the harness erred)
  all three differ       -> ``unresolved``
  all agree              -> ``agree``
With only two answers the verdict names the pair (``golden=ttsim``, ``golden!=silicon``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .result import Result

from .case import Case, case_hash
from .compare import MATCHED, NothingCompared, judge
from .store import Store, choose_device

KINDS = ("golden", "simulator", "silicon")
SHORT = {"golden": "golden", "simulator": "ttsim", "silicon": "silicon"}
BLAME = {"golden": "model bug", "simulator": "simulator", "silicon": "erratum/harness"}


def device_kind(result: Result) -> str:
    kind = result.provenance.get("device_kind")
    if kind in ("simulator", "silicon"):
        return kind
    return "simulator" if str(result.provenance.get("device", "")).startswith("ttsim") else "silicon"


def agree(a: Result, b: Result) -> bool | None:
    """True/False: the two agree bit for bit over what both observe; None: nothing to compare."""
    try:
        v = judge(a, b)
    except NothingCompared:
        return None
    if v.outcome == MATCHED:
        return True
    return False if v.outcome == "diverged" else None


@dataclass
class ThreeWay:
    case: str
    results: dict[str, Result]                     # kind -> result (kinds that answered)
    devices: dict[str, str] = field(default_factory=dict)
    pairs: dict[tuple[str, str], bool | None] = field(default_factory=dict)

    @property
    def blame(self) -> str:
        kinds = [k for k in KINDS if k in self.results]
        if len(kinds) < 2:
            return "nothing to compare" if not kinds else f"only {SHORT[kinds[0]]}"
        if len(kinds) == 2:
            a, b = kinds
            same = self.pairs[(a, b)]
            return f"{SHORT[a]}{'=' if same else '!=' if same is False else '?'}{SHORT[b]}"
        if None in self.pairs.values():
            return "unresolved (a pair could not be compared)"
        if all(self.pairs.values()):
            return "agree"
        for odd in KINDS:
            rest = [k for k in KINDS if k != odd]
            if self.pairs[tuple(rest)] and not any(self.pairs[p] for p in self.pairs if odd in p):
                return BLAME[odd]
        return "unresolved"

    def line(self) -> str:
        cells = [f"{SHORT[k]}: {self.results[k].status}" + (f" ({self.devices[k]})" if k in self.devices else "")
                 if k in self.results else f"{SHORT[k]}: -" for k in KINDS]
        return f"{self.case}: {'; '.join(cells)} -> {self.blame}"


def three_way(case: Case, golden: Result, store: Store) -> ThreeWay:
    """Golden's result and the store's newest recording of each device kind for ``case``."""
    results: dict[str, Result] = {"golden": golden}
    devices: dict[str, str] = {}
    by_kind: dict[str, list[tuple[str, Result]]] = {}
    for device in store.devices(case_hash(case)):
        look = store.lookup(case, device)
        if look.recording is None:
            continue
        r = look.recording.result(look.where)
        by_kind.setdefault(device_kind(r), []).append((device, r))
    for kind, found in by_kind.items():
        best = choose_device([d for d, _ in found])
        devices[kind], results[kind] = best, dict(found)[best]
    tw = ThreeWay(case.name, results, devices)
    kinds = [k for k in KINDS if k in results]
    for i, a in enumerate(kinds):
        for b in kinds[i + 1:]:
            tw.pairs[(a, b)] = agree(results[a], results[b])
    return tw



def html(rows: list[ThreeWay]) -> str:
    """The three-way section of a report page: one row per case, blame counts first."""
    from collections import Counter

    from .report_html import page, pre, table
    counts = Counter(r.blame for r in rows)
    body = pre([f"{n} {blame}" for blame, n in counts.most_common()])
    body += table(("case", "golden", "ttsim", "silicon", "blame"),
                  [(r.case, *[r.results[k].status if k in r.results else "-" for k in KINDS], r.blame) for r in rows],
                  ["" if r.blame in ("agree",) else "never" for r in rows])
    return page("tensix-diff three-way oracle", [("Golden / ttsim / silicon", body)])
