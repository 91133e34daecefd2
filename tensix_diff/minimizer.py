"""The minimiser: shrink a divergent case to the fewest instructions and simplest data that
still show the same divergence (same signature, tensix_diff.triage), on a budget of device runs.

Order of work: delta debugging over the instructions (deleted, or replaced by NOP with ``--nop-pad``
for divergences that depend on distance) with pairs of the same mnemonic removed together (REPLAY
brackets, semaphore handshakes), then the initial-state entries, then instruction fields toward zero,
then initial data toward zero, any two instructions together on short cases, and last single removals until
none works, so the result is 1-minimal: removing any one remaining instruction, RISC-V action or
initial-state entry loses the divergence. The divergence kept is its differing fields (triage.same_divergence);
the unit label is derived from the smaller case afterwards. Every candidate runs first on the cheap side
(``against``, golden by default); only candidates it can run cost a device run.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from golden import isa

from .case import Case, Init, case_hash, without
from .compare import DIVERGED, MATCHED
from .race import is_racy, threads_in_use
from .result import Result
from .triage import Signature, classify, same_divergence

T = TypeVar("T")
NOP = isa.encode("NOP")
HANG = "hang"
PAIR_LIMIT = 24       # instructions up to which pairs of the same mnemonic are tried together
ANY_PAIR_LIMIT = 8    # ... and any two instructions, as a last phase


class BudgetExhausted(Exception):
    """The device-run budget is spent; the minimiser keeps the smallest case found so far."""


def ddmin(items: Sequence[T], test: Callable[[list[T]], bool]) -> list[T]:
    """Delta debugging (complements first): a 1-minimal sublist of ``items`` for which ``test`` holds,
    assuming it holds for ``items``."""
    items, n = list(items), 2
    while items:
        chunk = -(-len(items) // n)
        parts = [items[i:i + chunk] for i in range(0, len(items), chunk)]
        for k in range(len(parts)):
            rest = [x for j, p in enumerate(parts) if j != k for x in p]
            if test(rest):
                items, n = rest, max(n - 1, 2)
                break
        else:
            if chunk == 1:
                return items
            n = min(2 * n, len(items))
    return items


@dataclass
class Outcome:
    status: str                      # compare's outcome (diverged, matched, ...) or the model's failing status
    signature: Signature | None = None
    device: Result | None = None     # the device side's result (the repro recording)
    message: str = ""
    diff: str = ""                   # the comparison report of a divergence (device expected, model actual)


@dataclass
class MinReport:
    status: str                      # minimised | matched | a failing status of the original run
    case: Case
    runs: int
    max_runs: int
    seconds: float
    original_length: int
    minimal_length: int              # instructions other than NOP
    minimal_total: int               # including NOP padding
    original_signature: Signature | None
    minimal_signature: Signature | None
    budget_exhausted: bool = False
    one_minimal: bool = False        # checked: no single instruction, action or init entry can go
    device: Result | None = None
    message: str = ""
    diff: str = ""

    def lines(self) -> list[str]:
        out = [f"minimize: {self.status}; {self.runs}/{self.max_runs} device runs in {self.seconds:.1f} s"
               + (" (budget exhausted: the case is the smallest found)" if self.budget_exhausted else "")]
        if self.message:
            out.append(f"  {self.message}")
        if self.original_signature is not None:
            pad = f" ({self.minimal_total} with NOP padding)" if self.minimal_total != self.minimal_length else ""
            out += [f"  instructions: {self.original_length} -> {self.minimal_length}{pad}"
                    + ("; 1-minimal (no single instruction, action or init entry can go)" if self.one_minimal else ""),
                    f"  signature: {self.original_signature}"
                    + (f" -> {self.minimal_signature}" if self.minimal_signature != self.original_signature else "")]
        out += [f"  {line}" for line in self.diff.splitlines()]
        return out


def non_nop_count(case: Case) -> int:
    return sum(w != NOP for ws in case.threads.values() for w in ws)


def _with_threads(case: Case, threads: dict[int, list[int]]) -> Case:
    return dataclasses.replace(case, threads={t: ws for t, ws in sorted(threads.items()) if ws})


def _with_init(case: Case, **changes) -> Case:
    return dataclasses.replace(case, init=dataclasses.replace(case.init, **changes))


def _bits(value: int) -> list[int]:
    return [1 << b for b in range(value.bit_length()) if value >> b & 1]


class Minimizer:
    """Shrinks one case. ``device`` and ``against`` run a case and return a Result; ``classify`` judges the
    two and names the divergence (triage.classify). Only device runs count against the budget."""

    def __init__(self, device: Callable[[Case], Result], against: Callable[[Case], Result],
                 classify: Callable[[Case, Result, Result], tuple] = classify,
                 max_runs: int = 200, nop_pad: bool = False, strict: bool = False,
                 log: Callable[[str], None] | None = None, on_run: Callable[[], None] | None = None):
        self.device, self.against, self.classify = device, against, classify
        self.max_runs, self.nop_pad, self.strict = max_runs, nop_pad, strict
        self.log = log or (lambda line: None)
        self.on_run = on_run or (lambda: None)     # called before each device run (progress)
        self.runs = 0
        self.cache: dict[str, Outcome] = {}
        self.target: Signature | None = None
        self.best: Case | None = None
        self.phase = ""

    # --- running candidates ---
    def verdict(self, case: Case) -> Outcome:
        key = case_hash(case)
        if key not in self.cache:
            self.cache[key] = self._run(case)
        return self.cache[key]

    def _run(self, case: Case) -> Outcome:
        model = self.against(case)
        if not model.ok and not (model.status == HANG and self._status_target()):
            return Outcome(model.status, message=model.message)   # it cannot show the divergence: spare the device
        if self.runs >= self.max_runs:
            raise BudgetExhausted()
        self.runs += 1
        self.on_run()
        dev = self.device(case)
        verdict, sig = self.classify(case, dev, model)
        return Outcome(verdict.outcome, sig, dev, verdict.message, verdict.report(8) if sig else "")

    def _status_target(self) -> bool:
        """Is the divergence being kept one of statuses (e.g. the model hangs, the device does not)? Before
        the original has run, any outcome may be it."""
        return self.target is None or self.target.fields[0].startswith("status.")

    def test(self, case: Case) -> bool:
        """Does ``case`` show the target divergence? If so, and it is smaller, it becomes the best. A candidate
        whose outcome depends on the thread interleaving never does (the minimised case stays race-free)."""
        if len(threads_in_use(case)) > 1 and is_racy(case):
            return False
        v = self.verdict(case)
        if v.status != DIVERGED or not same_divergence(self.target, v.signature, self.strict):
            return False
        self.best = case
        self.log(f"[{self.runs:4d}/{self.max_runs}] {self.phase}: {non_nop_count(case)} instructions, "
                 f"{_init_size(case.init)} init entries")
        return True

    # --- the phases ---
    def minimize(self, case: Case) -> MinReport:
        start = time.monotonic()
        first = self.verdict(case)
        exhausted = False
        if first.status != DIVERGED:
            return self._report("matched" if first.status == MATCHED else first.status, case, case, first,
                                start, first.message)
        self.target, self.best = first.signature, case
        self.log(f"[{self.runs:4d}/{self.max_runs}] original: {case.instruction_count} instructions, "
                 f"signature {self.target}")
        try:
            for self.phase, step in (("instructions", self.shrink_instructions), ("actions", self.shrink_actions),
                                     ("init", self.shrink_init),
                                     ("operands", self.simplify_operands), ("data", self.simplify_data),
                                     ("pairs", self.shrink_pairs), ("singles", self.shrink_singles)):
                step()
        except BudgetExhausted:
            exhausted = True
        rep = self._report("minimised", case, self.best, self.verdict(self.best), start)
        rep.budget_exhausted = exhausted
        rep.one_minimal = not exhausted
        return rep

    def _report(self, status, original, best, v: Outcome, start, message="") -> MinReport:
        return MinReport(status, best, self.runs, self.max_runs, time.monotonic() - start,
                         original.instruction_count, non_nop_count(best), best.instruction_count,
                         self.target, v.signature, device=v.device, message=message, diff=v.diff)

    def _slots(self, case: Case) -> list[tuple[int, int]]:
        return [(t, i) for t, ws in sorted(case.threads.items()) for i, w in enumerate(ws) if w != NOP]

    def _drop(self, base: Case, removed: set) -> Case:
        """``base`` without the instructions at ``removed`` slots (replaced by NOP when padding)."""
        if self.nop_pad:
            return _with_threads(base, {t: [NOP if (t, i) in removed else w for i, w in enumerate(ws)]
                                        for t, ws in base.threads.items()})
        return self._drop_words(base, removed)

    def _ddmin_instructions(self) -> None:
        base = self.best
        slots = self._slots(base)
        ddmin(slots, lambda kept: self.test(self._drop(base, set(slots) - set(kept))))

    def _drop_a_pair(self, same_mnemonic: bool, limit: int) -> bool:
        """Try removing two instructions at once: what ddmin's contiguous chunks miss, e.g. the two REPLAYs
        that record and replay a block, or a SEMPOST and its SEMWAIT. True if one pair could go."""
        base = self.best
        slots = self._slots(base)
        if len(slots) > limit:
            return False
        name = {s: isa.decode(base.threads[s[0]][s[1]])[0].name for s in slots}
        return any((name[a] == name[b]) == same_mnemonic and self.test(self._drop(base, {a, b}))
                   for a, b in itertools.combinations(slots, 2))

    def shrink_instructions(self) -> None:
        self._ddmin_instructions()
        while self._drop_a_pair(same_mnemonic=True, limit=PAIR_LIMIT):
            self._ddmin_instructions()
        base = self.best
        nops = [(t, i) for t, ws in sorted(base.threads.items()) for i, w in enumerate(ws) if w == NOP]
        if nops:  # padding that the divergence does not need goes
            self.phase = "nop-removal"
            ddmin(nops, lambda kept: self.test(self._drop_words(base, set(nops) - set(kept))))

    def shrink_actions(self) -> None:
        """RISC-V actions the divergence does not need go (MOP configuration, stores, handshakes)."""
        base = self.best
        slots = [(t, k) for t, xs in sorted(base.actions.items()) for k in range(len(xs))]
        if slots:
            ddmin(slots, lambda kept: self.test(without(base, actions=set(slots) - set(kept))))

    @staticmethod
    def _drop_words(base: Case, removed: set) -> Case:
        c = without(base, removed)
        return _with_threads(c, c.threads)

    def shrink_pairs(self) -> None:
        """Last, while budget remains: any two instructions at once, on short cases."""
        while self._drop_a_pair(same_mnemonic=False, limit=ANY_PAIR_LIMIT):
            self._ddmin_instructions()

    def shrink_singles(self) -> None:
        """Until none works: remove any one instruction, RISC-V action or initial-state entry (later phases can
        make an earlier survivor unnecessary); afterwards the case is 1-minimal."""
        progress = True
        while progress:
            base, progress = self.best, False
            candidates = [self._drop_words(base, {s}) for s in self._slots(base)]
            candidates += [without(base, actions={(t, k)}) for t, xs in sorted(base.actions.items())
                           for k in range(len(xs))]
            entries = _init_entries(base.init)
            candidates += [dataclasses.replace(base, init=_init_keeping(base.init, set(entries) - {e}))
                           for e in entries]
            progress = any(self.test(c) for c in candidates)

    def shrink_init(self) -> None:
        base = self.best
        entries = _init_entries(base.init)
        ddmin(entries, lambda kept: self.test(dataclasses.replace(base, init=_init_keeping(base.init, set(kept)))))

    def simplify_operands(self) -> None:
        for t in sorted(self.best.threads):
            for i in range(len(self.best.threads[t])):
                word = self.best.threads[t][i]
                if word == NOP:
                    continue
                ins, values = isa.decode(word)
                for name, value in values.items():
                    if value:
                        self._shrink_value(value, lambda v, t=t, i=i, ins=ins, name=name: self._with_field(
                            t, i, ins, name, v))

    def _with_field(self, t: int, i: int, ins: isa.Instruction, name: str, value: int) -> Case:
        f = ins.field(name)
        word = self.best.threads[t][i] & ~f.mask | value << f.lo
        threads = {k: list(ws) for k, ws in self.best.threads.items()}
        threads[t][i] = word
        return _with_threads(self.best, threads)

    def _shrink_value(self, value: int, make: Callable[[int], Case]) -> None:
        """Toward zero: first zero itself, then the fewest set bits."""
        if self.test(make(0)) or len(_bits(value)) == 1:
            return
        ddmin(_bits(value), lambda kept: self.test(make(sum(kept))))

    def simplify_data(self) -> None:
        for name in ("gpr", "thread_config", "config"):
            for o, regs in list(getattr(self.best.init, name).items()):
                for i, value in list(regs.items()):
                    self._shrink_value(value, lambda v, name=name, o=o, i=i: self._with_reg(name, o, i, v))
        for k, (row, vals) in enumerate(list(self.best.init.dest)):
            nonzero = [c for c, v in enumerate(vals) if v]
            ddmin(nonzero, lambda kept, k=k, row=row, vals=vals: self.test(self._with_dest(
                k, row, [v if c in set(kept) else 0 for c, v in enumerate(vals)])))
        for k, (addr, data) in enumerate(list(self.best.init.l1)):
            nonzero = [b for b, v in enumerate(data) if v]
            ddmin(nonzero, lambda kept, k=k, addr=addr, data=data: self.test(self._with_l1(
                k, addr, bytes(v if b in set(kept) else 0 for b, v in enumerate(data)))))

    def _with_reg(self, name: str, o: int, i: int, value: int) -> Case:
        table = {k: dict(r) for k, r in getattr(self.best.init, name).items()}
        table[o][i] = value
        return _with_init(self.best, **{name: table})

    def _with_dest(self, k: int, row: int, vals: list[int]) -> Case:
        dest = list(self.best.init.dest)
        dest[k] = (row, vals)
        return _with_init(self.best, dest=dest)

    def _with_l1(self, k: int, addr: int, data: bytes) -> Case:
        l1 = list(self.best.init.l1)
        l1[k] = (addr, data)
        return _with_init(self.best, l1=l1)


def _init_entries(init: Init) -> list[tuple]:
    """Each initial-state entry as a key: (table, owner, index) for registers, (l1|dest, position, None)."""
    return ([("gpr", t, i) for t, r in init.gpr.items() for i in r]
            + [("thread_config", t, i) for t, r in init.thread_config.items() for i in r]
            + [("config", s, i) for s, r in init.config.items() for i in r]
            + [("l1", k, None) for k in range(len(init.l1))]
            + [("dest", k, None) for k in range(len(init.dest))])


def _init_keeping(init: Init, keep: set) -> Init:
    """``init`` with only the entries in ``keep`` (keys of _init_entries)."""
    tables = {name: {o: {i: v for i, v in regs.items() if (name, o, i) in keep} for o, regs in getattr(init, name).items()}
              for name in ("gpr", "thread_config", "config")}
    return Init(**{n: {o: r for o, r in tb.items() if r} for n, tb in tables.items()},
                l1=[e for k, e in enumerate(init.l1) if ("l1", k, None) in keep],
                dest=[e for k, e in enumerate(init.dest) if ("dest", k, None) in keep])


def _init_size(init: Init) -> int:
    return (sum(len(r) for tb in (init.gpr, init.thread_config, init.config) for r in tb.values())
            + len(init.l1) + len(init.dest))
