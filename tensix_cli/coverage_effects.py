"""Observed effects for `tensix-diff coverage`: the per-case cache and saturating ablation.

What the coverage summary reports of observed effects is, per instruction, how many matched cases observe
one (compared against thresholds up to ``CAP``), and which mode values and field-value classes (its keys,
``word_keys``) were observed at least once. Ablating one more program position can only add to those keys,
so a saturating run does not ablate a position whose keys are all observed already and whose instruction is
credited in ``CAP`` cases or in the case at hand (``Saturating``): its observed sets equal full ablation's,
and its case counts are exact up to ``CAP`` (``min(count, CAP)``), whatever the order of the cases and
however many workers keep their own state. ``complete`` re-ablates in full any case whose skipped items the
final state does not cover (a partial answer read from the cache of a run over other cases).
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from collections import Counter
from functools import lru_cache

from generators.coverage_weights import is_mode_field, value_class
from golden import isa
from tensix_diff.case import Case, case_hash
from tensix_diff.effects import Effects, expands, observed_effects, provenance_effects
from tensix_diff.result_cache import ResultCache

from .progress import Progress, pooled

SAVE_EVERY_S = 60.0   # how often compute() writes the effects cache while it works
CAP = 100     # the largest count of matched cases the coverage report compares against (supported_line's bar)

EFFECTS_BY = {"ablation": "by ablation, the instruction made a NOP changes the observed outcome (an instruction a MOP"
                          " or REPLAY issues: every issue of that word made a NOP)",
              "saturating": f"by ablation as --exhaustive finds it, skipping positions that could add nothing (their"
                            f" mode values and classes already observed, their instruction in >= {CAP} cases): "
                            f"counts of {CAP} or more print as >={CAP}",
              "provenance": "by data provenance in one traced golden run, an estimate that can credit more than"
                            " ablation"}


@lru_cache(maxsize=1 << 16)
def word_keys(word: int) -> tuple[str, frozenset]:
    """An instruction word's name and the (field, value) mode values and (field, class) field-value classes it
    carries, as the coverage report counts them (tagged "mode" / "class")."""
    ins, vals = isa.decode(word)
    keys = {("class", f.name, value_class(vals[f.name], f.width)) for f in ins.fields}
    keys |= {("mode", f.name, vals[f.name]) for f in ins.fields if is_mode_field(f.name)}
    return ins.name, frozenset(keys)


class Saturating:
    """What a saturating ablation has observed so far: cases per instruction (counted up to CAP), observed keys
    per instruction, and the instructions credited in the case at hand (tensix_diff.effects.Saturation)."""

    def __init__(self, cap: int | None = None):
        self.cap = CAP if cap is None else cap
        self.cases: Counter = Counter()
        self.keys: dict[str, set] = {}
        self.case: set[str] = set()

    def needed(self, word: int) -> bool:
        name, keys = word_keys(word)
        if self.cases[name] < self.cap and name not in self.case:
            return True
        return not keys <= self.keys.get(name, set())

    def note(self, word: int) -> None:
        name, keys = word_keys(word)
        self.case.add(name)
        self.keys.setdefault(name, set()).update(keys)

    def end_case(self) -> None:
        self.cases.update(self.case)
        self.case = set()

    def add(self, case: Case, eff: Effects) -> None:
        """Take in one case's answer (whole or partial: what it observed was observed)."""
        for w in observed_words(case, eff):
            self.note(w)
        self.end_case()

    def covers(self, case: Case, eff: Effects) -> bool:
        """Could no item ``eff`` left unablated add to this (final) state? Its case's own credit counts."""
        self.case = {word_keys(w)[0] for w in observed_words(case, eff)}
        try:
            return not any(self.needed(w) for w in skipped_words(case, eff))
        finally:
            self.case = set()


def observed_words(case: Case, eff: Effects) -> list[int]:
    return [case.threads[t][i] for t, i in eff.observed] + [w for _, w in eff.expanded]


def skipped_words(case: Case, eff: Effects) -> list[int]:
    return [case.threads[t][i] for t, i in eff.unablated] + [w for _, w in eff.unablated_words]


SATURATION: Saturating | None = None    # what a saturating run has gathered: forked workers start from it
_LOCAL: tuple[int, Saturating] | None = None   # (process id, that process's own copy, grown as it works)


def effects(work) -> Effects:
    """One matched case's effects: work is (case, effects mask, method)."""
    global _LOCAL
    case, mask, method = work
    if method == "provenance":
        return provenance_effects(case, mask)
    if method != "saturating" or SATURATION is None:
        return observed_effects(case, mask, None)
    if _LOCAL is None or _LOCAL[0] != os.getpid():      # a fresh worker: start from what the caller gathered
        _LOCAL = (os.getpid(), copy.deepcopy(SATURATION))
    eff = observed_effects(case, mask, None, saturation=_LOCAL[1])
    _LOCAL[1].end_case()
    return eff


def start(saturation: Saturating | None) -> None:
    """Begin (a Saturating) or end (None) a saturating run in this process."""
    global SATURATION, _LOCAL
    SATURATION, _LOCAL = saturation, None


def cost(case: Case) -> int:
    """How dear a case's ablation is, roughly: its program words times its threads (MOPs expand further)."""
    return case.instruction_count * len(case.threads) * (4 if expands(case) else 1)


def compute(out: list, todo: list, cache: EffectsCache, method: str, jobs: int, progress: Progress) -> None:
    """Effects of the cases ``todo`` lists ((index in ``out``, mask)) into ``out``, cached as each comes and
    the cache written every SAVE_EVERY_S seconds: a run stopped part-way (a big corpus) keeps what it did."""
    if not todo:
        return
    saved = [time.monotonic()]

    def keep(k: int, observed) -> None:
        i, mask = todo[k]
        out[i][3] = observed
        if SATURATION is not None:      # what the next batch's workers start from
            SATURATION.add(out[i][0], observed)
        cache.put_key(EffectsCache.key_of(out[i][0], mask, method), observed)
        if time.monotonic() - saved[0] >= SAVE_EVERY_S:
            cache.save()
            saved[0] = time.monotonic()
    pooled(effects, [(out[i][0], mask, method) for i, mask in todo], jobs, progress, each=keep)
    cache.save()


def complete(done: list[tuple[Case, dict, Effects]]) -> list[int]:
    """The indices of ``done`` (case, mask, effects) whose unablated items the whole set's observations do not
    cover; those must be ablated in full for the saturating answer to be exact."""
    final = Saturating()
    for case, _, eff in done:
        final.add(case, eff)
    return [k for k, (case, _, eff) in enumerate(done) if not eff.whole and not final.covers(case, eff)]


class EffectsCache(ResultCache):
    """Observed instructions per case and device mask (the keys of the recorded state), valid for one
    revision of golden and of the accounting. A saturating run's partial answer is stored with what it left
    unablated, and only a saturating run reads it back (``get_key(..., whole=False)``)."""

    def __init__(self):
        super().__init__("effects", ("effects.py", "prefix_ablation.py", "idle_steps.py", "golden_run.py", "case"))

    @staticmethod
    def key_of(case: Case, shape: dict, method: str) -> str:
        method = "ablation" if method == "saturating" else method    # one answer; a whole one serves both
        return case_hash(case) + ":" + hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16] + ":" + method

    FIELDS = ("observed", "issued", "expanded", "unablated", "unablated_words")

    def put_key(self, key: str, eff: Effects) -> None:
        old = self.get_key(key, whole=False)
        if old is not None and old.whole and not eff.whole:
            return                      # never replace a whole answer by a partial one
        value = {k: [list(x) for x in getattr(eff, k)] for k in self.FIELDS if getattr(eff, k)}
        self.put(key, {**value, "total": eff.total})

    def get_key(self, key: str, whole: bool = True) -> Effects | None:
        got = self.get(key)
        if not isinstance(got, dict):
            return None
        eff = Effects(got["total"], *(tuple(tuple(x) for x in got.get(k, ())) for k in self.FIELDS))
        return eff if eff.whole or not whole else None
