"""Which instructions of a case have an effect that reaches the compared state (golden ablation).

Instruction i of thread t has an observed effect when golden's final state, cut down to what was compared,
differs between the full program and the program with that instruction replaced by a NOP (MOP and REPLAY
expand to several instructions; ablation is per case-program word). What was compared is a ``mask``: region
names ("dest", "rwc", ...) or the other side's state dump, whose keys (down to fields and threads) say what it
observed, so golden-only items such as ``rwc.*.bias`` or ``dest_valid`` never count for a device without them.

Golden errors (the rule, from what a device whose instruction i did nothing would show): a run's status is
compared too, so an ablated run that hangs where the full run completed (or the reverse) is an effect; an
ablated run that golden refuses (not-modelled, undefined behaviour) predicts nothing, so it is never counted
as an effect; the same error on both sides is no difference. A Python exception in golden propagates.

Effects that only show together (the same write twice) are attributed by ablating, last first, the
instructions that showed nothing alone until the state changes; so ``any_observed(c)`` is exactly
``observed_effects(c).count > 0``.

Inside MOP and REPLAY expansions (the words a MOP template or the replay buffer issues, which are not program
words at that position) each distinct (thread, word) is ablated on its own: every issue of it from an
expansion becomes a NOP; ``Effects.issued`` lists those words and ``Effects.expanded`` the ones whose
ablation showed, so a PACR that only ever runs from a tt-llk MOP is credited by its own effect.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Protocol

import numpy as np

from golden import isa
from golden.analysis.provenance import Traced
from golden.core import Tensix, decode, decode_program
from golden.errors import Blocked, GoldenError, Hang
from golden.frontend.replay import MOP_OP, REPLAY_OP
from golden.state import ADC_UNITS, THREADS, AdcChannel, Rwc, copy_state

from .case import Case
from .golden_run import apply_init, observe_counters
from .idle_steps import IdleSteps
from .prefix_ablation import SAME, ablated_run, one_stream, walk
from .result import OK, same_value

NOP = isa.encode("NOP", {})
_DEST_KEYS = ("dest", "dest_valid")


@dataclass(frozen=True)
class Effects:
    total: int
    observed: tuple[tuple[int, int], ...]   # (thread, index) of instructions whose effect was observed
    issued: tuple[tuple[int, int], ...] = ()     # (thread, word) issued by MOP/REPLAY expansions
    expanded: tuple[tuple[int, int], ...] = ()   # those whose ablation showed an effect
    unablated: tuple[tuple[int, int], ...] = ()        # (thread, index) a saturating run did not ablate
    unablated_words: tuple[tuple[int, int], ...] = ()  # (thread, word) of ``issued`` it did not ablate

    @property
    def count(self) -> int:
        return len(self.observed)

    @property
    def whole(self) -> bool:
        """Was every instruction ablated (not a saturating run's partial answer)?"""
        return not (self.unablated or self.unablated_words)


class Saturation(Protocol):
    """What a saturating ablation asks before each ablation (tensix_cli.coverage_effects keeps one)."""

    def needed(self, word: int) -> bool:
        """Could an effect of ``word`` add to what the caller has observed so far?"""

    def note(self, word: int) -> None:
        """``word``'s effect was observed (in the case at hand)."""


@dataclass(frozen=True)
class _Outcome:
    """A golden run cut down to the mask: its status and, when ok, the small items and Dest kept apart (Dest
    as a numpy array or as the state dump's lists, compared only when everything else agrees)."""
    status: str
    small: Any = None
    dest: tuple = ()

    def same(self, other: "_Outcome") -> bool:
        if self.status != other.status or self.small != other.small:
            return False
        return all(same_value(a, b) for a, b in zip(self.dest, other.dest))

    def differs(self, ablated: "_Outcome") -> bool:
        """Does ``ablated`` show an effect against this (full) run? See the module's rule for errors."""
        if self.status == OK and ablated.status == OK:
            return not self.same(ablated)
        return self.status != ablated.status and {self.status, ablated.status} <= {OK, Hang.kind}


def _project(value: Any, mask: Any) -> Any:
    """``value`` cut down to the keys ``mask`` holds (a dict mask recurses; anything else keeps all)."""
    if isinstance(mask, dict) and isinstance(value, dict):
        return {k: _project(value[k], mask[k]) for k in sorted(value.keys() & mask.keys(), key=str)}
    return value


def _mask(mask: Iterable[str] | dict | None) -> dict:
    return mask if isinstance(mask, dict) else {r: True for r in (mask or ())}


def _outcome(state: dict, mask: dict) -> _Outcome:
    small = _project({k: v for k, v in state.items() if k not in _DEST_KEYS}, mask)
    return _Outcome(OK, small, tuple(state[k] for k in _DEST_KEYS if k in mask and k in state))


_NOP = decode(NOP)
_EXPANDING = {MOP_OP, REPLAY_OP}    # opcodes whose words the frontend expands


class _Expansions(Tensix):
    """Golden that notes the (thread, word) pairs MOP/REPLAY expansions issue and turns those in ``ablate``
    into NOPs (an issue is expanded when the program word at its position is another word)."""

    def __init__(self, programs: dict[int, list[int]], ablate: frozenset = frozenset()):
        super().__init__()
        self.programs, self.ablate, self.issued = programs, ablate, set()

    def stream(self, t, program, actions=()):
        words = self.programs.get(t, ())
        for index, d in super().stream(t, program, actions):
            if d.ins is not None and not (index < len(words) and words[index] == d.word):
                self.issued.add((t, d.word))
                if (t, d.word) in self.ablate:
                    d = _NOP
            yield index, d


def expands(case: Case) -> bool:
    """Whether ``case``'s program holds a MOP or REPLAY word (the frontend expands it into more words)."""
    return any(w >> 24 in _EXPANDING for ws in case.threads.values() for w in ws)


def expansion_words(case: Case) -> set[tuple[int, int]]:
    """The (thread, word) pairs golden's MOP and REPLAY expansions issue in a run of ``case`` (empty without
    MOP or REPLAY words; a run golden refuses gives what was issued before)."""
    if not expands(case):
        return set()
    m = _Expansions(case.threads)
    apply_init(m.s, case)
    try:
        m.run(case.threads, case.actions)
    except GoldenError:
        pass
    return m.issued


def _run(case: Case, threads: dict[int, list[int]], mask: dict, ablate: frozenset = frozenset()) -> _Outcome:
    """Golden on ``threads`` with the case's init, observed as the mask asks (Dest left as numpy); the
    expansion-issued words in ``ablate`` become NOPs."""
    m = _Expansions(case.threads, ablate) if ablate else Tensix()
    apply_init(m.s, case)
    try:
        m.run(threads, case.actions)
    except GoldenError as e:
        return _Outcome(e.kind)
    return _ended(m, case, mask)


def _ended(m: Tensix, case: Case, mask: dict) -> _Outcome:
    """A machine's state at the end of an ok run, cut down to the mask."""
    return _outcome({"dest": m.s.dest.bits, "dest_valid": m.s.dest.valid, **observe_counters(m.s, case)}, mask)


# Instructions whose replacement by a NOP leaves golden's run step for step the same, so that ablating them
# cannot show, unless the traced full run (_traced_full) saw one of these: any of their issues held (Blocked;
# a NOP is held only by a latched wait with all nine block bits, which holds them too); STALLWAIT: its latch
# held a later step (golden/sync/sync.py; otherwise the latch only differs in the Wait Gate, which no dump
# holds); ATGETM: an ATGETM waited (the mutex is its only state and no dump holds it); SFPPUSHC: a step read
# the SFPU flag stack (golden/sfpu/cc.py: SFPPOPC, SFPCOMPC; the stack is its only state).
_QUIET = frozenset({"SFPNOP", "DMANOP", "GATESRCRST", "STALLWAIT", "ATGETM", "SFPPUSHC"})
_STACK_READERS = frozenset({"SFPPOPC", "SFPCOMPC"})


def _traced_full(case: Case, mask: dict, candidate: Callable[[int], bool] = lambda word: False) -> tuple:
    """The full run cut down to the mask; ``inert(word)``: whether every issue of ``word`` (in any thread,
    from any position or expansion) is one whose replacement by a NOP provably changes no step (see _QUIET), so
    that no ablation of it can show an effect; the (thread, word) pairs expansions issued (expansion_words); and
    the program positions, among those whose word ``candidate`` accepts, that are idle (idle_steps: no ablation
    of them can show either)."""
    m = _Expansions(case.threads) if expands(case) else Tensix()
    apply_init(m.s, case)
    gate, latches, live, read = m.s.wait_gate, {}, set(), set()
    watch = IdleSteps(m, case.threads, candidate)

    def step(t: int, d, index: int) -> None:
        before = gate[t]
        try:
            watch.step(t, d, index, lambda: m.step(t, d, index))
        except Blocked:
            if d.ins is not None:
                live.add(d.word)
                if d.ins.name == "ATGETM":
                    read.add("ATGETM")
            if before is not None and gate[t] is before and id(before) in latches:
                live.add(latches[id(before)][1])     # the latch held this step (or might have)
            raise
        if d.ins is not None:
            if d.ins.name == "STALLWAIT":
                latches[id(gate[t])] = (gate[t], d.word)    # the latch kept alive, so its id stays its own
            elif d.ins.name in _STACK_READERS:
                read.add("SFPPUSHC")
    try:
        m.run(case.threads, case.actions, step=step)
    except GoldenError as e:
        return _Outcome(e.kind), lambda word: False, getattr(m, "issued", set()), set()

    def inert(word: int) -> bool:
        name = isa.decode(word)[0].name
        return name in _QUIET and word not in live and name not in read
    return _ended(m, case, mask), inert, getattr(m, "issued", set()), watch.idle()


def _full(case: Case, mask: dict, full_state: dict | None) -> _Outcome:
    """The full run cut down to the mask (a given state dump's Dest, if lists, made arrays once, not per ablation)."""
    if full_state is None:
        return _run(case, case.threads, mask)
    out = _outcome(full_state, mask)
    return replace(out, dest=tuple(np.asarray(d) for d in out.dest))


def _ablated(case: Case, nops: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    threads = {t: list(ws) for t, ws in case.threads.items()}
    for t, i in nops:
        threads[t][i] = NOP
    return threads


def _positions(case: Case) -> list[tuple[int, int]]:
    return [(t, i) for t, ws in sorted(case.threads.items()) for i in range(len(ws))]


def any_observed(case: Case, mask: Iterable[str] | dict, full_state: dict | None = None) -> bool:
    """Does any instruction's effect reach the compared state? ``full_state``: golden's state dump of the full
    run, if already made. One golden run with every instruction NOP'd when the program's effect shows as a
    whole; otherwise (effects that cancel out, or none) each instruction is ablated in turn, last first."""
    m = _mask(mask)
    full = _full(case, m, full_state)
    live = [p for p in _positions(case) if _word(case, p) != NOP]
    if full.differs(_run(case, _ablated(case, live), m)):
        return True
    # Nothing shows with everything gone: only a single ablation can show an effect now (a set undone later).
    return any(full.differs(_run(case, _ablated(case, [p]), m)) for p in reversed(live))


def observed_effects(case: Case, mask: Iterable[str] | dict, full_state: dict | None = None,
                     expansions: bool = True, saturation: Saturation | None = None) -> Effects:
    """Every instruction whose ablation changes the compared state (one golden run per instruction), plus,
    when the program's effect shows only with several gone, the one that makes it show (see the module);
    with ``expansions``, the words MOP/REPLAY expansions issue too (one more run per distinct word).

    ``saturation``: a position or expansion word whose effect could add nothing to what the caller has
    observed (``saturation.needed`` false) is not ablated but listed in ``unablated`` / ``unablated_words``;
    a word whose every issue the traced full run shows inert (_QUIET: its NOP leaves every step the same) is
    not ablated either, since it cannot show alone; the rest is answered as a whole run would (``observed``
    holds exactly the whole run's observed items among the ablated ones, and the collective rule applies only
    where no single ablation shows, checked over every position)."""
    m = _mask(mask)
    if saturation is None:
        full, inert, issued_words, idle = _full(case, m, full_state), (lambda word: False), None, set()
    else:     # the expansions' words and the idle positions noted in the same run
        full, inert, issued_words, idle = _traced_full(case, m, saturation.needed)
    live = [p for p in _positions(case) if _word(case, p) != NOP]
    seen: list[tuple[int, int]] = []
    skipped: list[tuple[int, int]] = []

    def shows(p, start: tuple | None = None) -> bool:
        if full.differs(_ablated_outcome(case, m, p, start, full)):
            seen.append(p)
            if saturation is not None:
                saturation.note(_word(case, p))
            return True
        return False

    def wanted(p) -> bool:
        if inert(_word(case, p)) or p in idle:
            return False             # provably shows nothing alone: neither ablated nor left over
        if saturation is not None and not saturation.needed(_word(case, p)):
            skipped.append(p)
            return False
        return True
    for p in _from_prefixes(case, live, wanted, shows):
        if wanted(p):
            shows(p)
    while not seen and skipped:      # the collective rule needs "no single ablation shows": over all positions
        shows(skipped.pop())
    if not seen and full.differs(_run(case, _ablated(case, live), m)):
        gone: list[tuple[int, int]] = []
        for p in reversed(live):     # ends at the latest instruction whose removal, with the later ones, shows
            gone.append(p)
            if full.differs(_run(case, _ablated(case, gone), m)):
                seen.append(p)
                if saturation is not None:
                    saturation.note(_word(case, p))
                break
    if not expansions:
        return Effects(case.instruction_count, tuple(sorted(seen)), unablated=tuple(sorted(skipped)))
    issued = sorted(expansion_words(case) if issued_words is None else issued_words)
    expanded, skipped_words = [], []
    for w in issued:
        if inert(w[1]):
            continue
        if saturation is not None and not saturation.needed(w[1]):
            skipped_words.append(w)
        elif full.differs(_run(case, case.threads, m, frozenset({w}))):
            expanded.append(w)
            if saturation is not None:
                saturation.note(w[1])
    return Effects(case.instruction_count, tuple(sorted(seen)), tuple(issued), tuple(expanded),
                   tuple(sorted(skipped)), tuple(skipped_words))


def _from_prefixes(case: Case, live: list[tuple[int, int]], wanted, shows) -> list[tuple[int, int]]:
    """Where the case is one plain stream (prefix_ablation.one_stream): in one full run, ask ``wanted(p)`` of each
    live position p in order before its first issue and, where wanted, ``shows(p, (state before p, state after
    p or None, the decoded program))`` once p has run (before the next position is asked). The positions that run never reached (it
    ended before them), and every one where the case is not one stream, are returned to ask from scratch."""
    if not live or not one_stream(case):
        return live
    t, todo, reached, pending = live[0][0], set(live), set(), []
    program = decode_program(case.threads[t])           # decoded once for every ablation of the case

    def visit(i: int, machine: Tensix) -> None:
        if pending:
            shows(pending[0][0], (pending.pop()[1], machine.s, program))
        if (t, i) in todo:
            reached.add((t, i))
            if wanted((t, i)):
                pending.append(((t, i), copy_state(machine.s)))
    try:
        end = walk(case, visit)
    except GoldenError:
        end = None
    if pending:
        shows(pending[0][0], (pending.pop()[1], end.s if end is not None else None, program))
    return [p for p in live if p not in reached]


def _ablated_outcome(case: Case, mask: dict, p: tuple[int, int], start: tuple | None, full: _Outcome) -> _Outcome:
    """The run with position p made a NOP: from ``start`` (the full run's state before p, taken over, after p or
    None, and p's thread's decoded program; prefix_ablation.ablated_run) when given, else from scratch; ``full`` itself where it rejoined."""
    if start is not None:
        try:
            a = ablated_run(start[0], p[0], start[2], p[1], _NOP, start[1])
        except GoldenError as e:
            return _Outcome(e.kind)
        if a is SAME:
            return full
        if a is not None:
            return _ended(a, case, mask)
    return _run(case, _ablated(case, [p]), mask)


def _word(case: Case, p: tuple[int, int]) -> int:
    return case.threads[p[0]][p[1]]


# --- provenance: one traced golden run instead of one run per instruction ---------------------------------

def provenance_effects(case: Case, mask: Iterable[str] | dict) -> Effects:
    """The instructions whose effect reaches the compared state by data flow, from one traced golden run
    (golden.analysis.provenance): the last writers of the masked cells, and, again and again, the last writers of what
    a counted instruction read. A program position counts when one of its steps does (a MOP or REPLAY word
    through what it issues, a word a REPLAY load captured through the plays of its entry); ``expanded`` holds
    the (thread, word) of counted expansion steps. A run golden refuses or that hangs credits nothing.
    docs/minimise-triage-coverage.md says where this differs from ablation (observed_effects)."""
    m = Traced()
    apply_init(m.s, case)
    m.instrument()
    try:
        m.run(case.threads, case.actions)
        failed = False
    except GoldenError:
        failed = True
    occ = m.occurrences
    issued = sorted({(o.thread, o.decoded.word) for o in occ if o.expanded})
    if failed:
        return Effects(case.instruction_count, (), tuple(issued), ())
    counted = m.slice([*_observed_cells(m, case, _mask(mask)), *m.released])
    counted |= m.waits()
    seen, expanded = set(), set()
    for k in counted:
        o = occ[k]
        if o.index is None:          # a RISC-V action: no program word of its own
            continue
        seen.add((o.thread, o.index))
        if o.loader is not None:
            seen.add((o.thread, o.loader))
        if o.expanded:
            expanded.add((o.thread, o.decoded.word))
    return Effects(case.instruction_count, tuple(sorted(seen)), tuple(issued), tuple(sorted(expanded)))


def _keys_of(mask_part, available) -> list:
    """The keys a mask part selects among ``available`` (all of them unless it is a dict)."""
    return [k for k in available if str(k) in mask_part] if isinstance(mask_part, dict) else list(available)


def _sub(mask_part, key):
    return mask_part.get(str(key)) if isinstance(mask_part, dict) else mask_part


def _observed_cells(m: Traced, case: Case, mask: dict):
    """(last writer, cell) of each cell the mask observes that the run changed."""
    s = m.s
    for key, arr in (("dest", s.dest.bits), ("dest_valid", s.dest.valid)):
        if key in mask:
            yield from m.array_cells(arr)
    if "rwc" in mask:
        for t in _keys_of(mask["rwc"], range(THREADS)):
            for f in _keys_of(_sub(mask["rwc"], t), Rwc.FIELDS):
                yield from m.cell(s.rwc[t], f)
    if "adc" in mask:
        for t in _keys_of(mask["adc"], range(THREADS)):
            for u in _keys_of(_sub(mask["adc"], t), ADC_UNITS):
                for c in _keys_of(_sub(_sub(mask["adc"], t), u), range(2)):
                    part = _sub(_sub(_sub(mask["adc"], t), u), c)
                    for f in _keys_of(part, AdcChannel.FIELDS):
                        yield from m.cell(s.adc[t][u][c], f)
    if "gpr" in mask:
        for t in _keys_of(mask["gpr"], range(THREADS)):
            for i in range(len(s.gpr[t])):
                yield from m.cell(s.gpr[t], i)
    if "l1" in mask:
        for a, n in case.observed_l1():
            if not isinstance(mask["l1"], dict) or f"{a:#x}" in mask["l1"]:
                yield from m.l1_cells(a, n)
    if "config" in mask:
        for st, idx in case.observed_config().items():
            if isinstance(mask["config"], dict) and str(st) not in mask["config"]:
                continue
            for i in _keys_of(_sub(mask["config"], st), idx):
                yield from m.cell(s.config[int(st)], i)
