"""The three-way oracle: golden, ttsim and silicon on one case, and who is to blame when they disagree.

For each case: golden's result and, from the replay store, every device's recording: one column per device
(each ttsim release, each card: ``blackhole silicon <board id>``). Blame is decided between three kinds:
golden, ``simulator`` (the newest ttsim recorded) and ``silicon`` (the cards, which must first agree with
each other: ``cards differ`` otherwise). Each pair is compared bit for bit over what both observe
(compare.judge; no registry: the point is to see every difference). Blame, when all three answered:
  golden alone differs   -> ``model bug``      (golden is wrong; ttsim and silicon agree)
  ttsim alone differs    -> ``simulator``      (a ttsim bug, or silicon behaviour ttsim lacks)
  silicon alone differs  -> ``erratum/harness`` (silicon behaves unlike both models, or the harness erred)
  all three differ       -> ``unresolved``
  all agree              -> ``agree``
With only two answers the verdict names the pair (``golden=ttsim``, ``golden!=silicon``, ...); a case no card
recorded says ``no silicon recording``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .case import Case, case_hash
from .compare import MATCHED, NothingCompared, judge
from .report_html import cards, folded, page, table
from .result import Result
from .store import Store, choose_device

KINDS = ("golden", "simulator", "silicon")
SHORT = {"golden": "golden", "simulator": "ttsim", "silicon": "silicon"}
BLAME = {"golden": "model bug", "simulator": "simulator", "silicon": "erratum/harness"}
NO_SILICON = "no silicon recording"


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
    results: dict[str, Result]                     # kind -> result (kinds that answered; silicon: the first card)
    devices: dict[str, str] = field(default_factory=dict)           # kind -> the device that answered for it
    pairs: dict[tuple[str, str], bool | None] = field(default_factory=dict)
    columns: dict[str, Result] = field(default_factory=dict)        # every recorded device -> its recording
    cards_differ: list[str] = field(default_factory=list)           # cards that disagree with the first card

    @property
    def blame(self) -> str:
        if self.cards_differ:
            return f"cards differ ({self.devices['silicon']} != {', '.join(self.cards_differ)})"
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
        cells = [f"golden: {self.results['golden'].status}"] + \
            [f"{device}: {r.status}" for device, r in self.columns.items()]
        if "silicon" not in self.results:
            cells.append(NO_SILICON)
        return f"{self.case}: {'; '.join(cells)} -> {self.blame}"


def three_way(case: Case, golden: Result, store: Store) -> ThreeWay:
    """Golden's result and every device's recording of ``case``; the kinds' representatives compared pairwise."""
    columns: dict[str, Result] = {}
    for device in sorted(store.devices(case_hash(case)), key=lambda d: (d.startswith("ttsim") is False, d)):
        look = store.lookup(case, device)
        if look.recording is not None:
            columns[device] = look.recording.result(look.where)
    results: dict[str, Result] = {"golden": golden}
    devices: dict[str, str] = {}
    sims = [d for d, r in columns.items() if device_kind(r) == "simulator"]
    cards = [d for d, r in columns.items() if device_kind(r) == "silicon"]
    if sims:
        devices["simulator"] = choose_device(sims)
        results["simulator"] = columns[devices["simulator"]]
    if cards:
        devices["silicon"], results["silicon"] = cards[0], columns[cards[0]]
    differ = [d for d in cards[1:] if agree(columns[cards[0]], columns[d]) is False]
    tw = ThreeWay(case.name, results, devices, columns=columns, cards_differ=differ)
    kinds = [k for k in KINDS if k in results]
    for i, a in enumerate(kinds):
        for b in kinds[i + 1:]:
            tw.pairs[(a, b)] = agree(results[a], results[b])
    return tw


def html(rows: list[ThreeWay]) -> str:
    """The three-way section of a report page: one row per case, one column per recorded device, blame counts
    first."""

    counts = Counter(r.blame for r in rows)
    devices = sorted({d for r in rows for d in r.columns}, key=lambda d: (d.startswith("ttsim") is False, d))
    lead = cards([("cases", len(rows), "")] + [(blame, n, "ok" if blame == "agree" else "bad")
                                              for blame, n in counts.most_common()])
    heads = ("case", "golden", *devices, "silicon", "blame")

    def cells(rs):
        return [(r.case, r.results["golden"].status, *[r.columns[d].status if d in r.columns else "-" for d in devices],
                 "" if "silicon" in r.results else NO_SILICON, r.blame) for r in rs]
    differ = [r for r in rows if r.blame != "agree"]
    agree = [r for r in rows if r.blame == "agree"]
    sections = [("Cases where the sides differ", table(heads, cells(differ), ["never"] * len(differ)) if differ
                 else "<p>none: golden and every recorded device agree on every case</p>")]
    if agree:
        sections.append(("Cases where all agree", folded(f"{len(agree)} cases", table(heads, cells(agree)))))
    return page("tensix-diff three-way oracle", sections, lead=lead)
