"""`tensix-diff coverage`: what the corpus and its recordings have tested, against the ISA table.

For every instruction of golden/isa.yaml, and within it every mode value (addr_mode and the other
*mod* fields) and every field-value class (zero, one, max, other), the strongest evidence the corpus
gives: ``observed`` (in a case whose device recording matched golden, this instruction's own effect reached
the compared state: by ablation, tensix_diff.effects.observed_effects, saturating unless ``--exhaustive``
(coverage_effects: the same report, counts exact up to 100), or with ``--provenance`` by data provenance,
provenance_effects), ``compared`` (it ran in a compared case, its effect unseen),
``recorded`` (the device ran it but golden could not, so nothing was compared), ``golden`` (ran on golden
only, no recording) or ``never``. A harness must say plainly what it has not tested: the report lists
the untested. Effects are cached per case and golden revision under ~/.cache/tensix-diff/effects.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from generators import coverage_weights
from generators.coverage_weights import is_mode_field, possible_classes, value_class
from golden import isa
from hwbridge.registry import run_case
from tensix_diff import matrix_cells, report_html as H
from tensix_diff.assess import assess, unobservable
from tensix_diff.case import Case, load_any
from tensix_diff.compare import DIVERGED, MATCHED
from tensix_diff.effects import Effects
from tensix_diff.result import Result

from . import coverage_effects as CE
from .backends import open_backend
from .coverage_effects import EFFECTS_BY, EffectsCache, word_keys
from .progress import Progress, pooled

LEVELS = ("observed", "compared", "recorded", "golden", "never")   # strongest first
RAN = LEVELS[:4]
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "corpus"
DEFAULT_PATHS = [DEFAULT_CORPUS, ROOT / "tests" / "fuzz_corpus"]


def is_addrmod_field(name: str) -> bool:
    return "addr" in name and "mod" in name


def possible_modes(ins: isa.Instruction) -> int:
    return sum(1 << f.width for f in ins.fields if is_mode_field(f.name))


@dataclass
class InsCoverage:
    ins: isa.Instruction
    cases: dict[str, int] = field(default_factory=lambda: {lv: 0 for lv in RAN})
    modes: dict[str, set] = field(default_factory=lambda: {lv: set() for lv in RAN})     # (field, value)
    classes: dict[str, set] = field(default_factory=lambda: {lv: set() for lv in RAN})   # (field, class)

    @property
    def level(self) -> str:
        return next((lv for lv in RAN if self.cases[lv]), "never")

    def seen(self, kind: str, level: str) -> set:
        """Items seen at ``level`` or stronger."""
        out: set = set()
        for lv in LEVELS[:LEVELS.index(level) + 1]:
            out |= getattr(self, kind)[lv]
        return out

    def addr_modes(self, level: str) -> list[int]:
        return sorted(v for f, v in self.seen("modes", level) if is_addrmod_field(f))

    @property
    def class_total(self) -> int:
        return sum(len(possible_classes(f)) for f in self.ins.fields)


@dataclass
class Coverage:
    instructions: dict[str, InsCoverage]
    cases: int = 0
    case_levels: dict[str, int] = field(default_factory=lambda: {lv: 0 for lv in LEVELS})
    divergences: list[tuple[Case, dict, dict, str]] = field(default_factory=list)  # case, device, golden, summary
    method: str = "ablation"     # how an observed effect was found (EFFECTS_BY)

    @property
    def cap(self) -> int | None:
        """Counts of observed cases are exact up to this (a saturating run), or wholly (None)."""
        return CE.CAP if self.method == "saturating" else None

    def observed_cases(self, c: InsCoverage) -> int | str:
        """The number of matched cases observing ``c``, ">=CAP" where a saturating run counted CAP or more."""
        n = c.cases["observed"]
        return f">={self.cap}" if self.cap is not None and n >= self.cap else n

    def count(self, level: str) -> int:
        return sum(1 for c in self.instructions.values() if c.level == level)

    def summary_lines(self) -> list[str]:
        n = len(self.instructions)
        lines = [f"corpus: {self.cases} cases: " + ", ".join(f"{self.case_levels[lv]} {lv}" for lv in LEVELS[1:]),
                 f"instructions: {n} in the ISA table: {self.count('observed')} with an observed effect in a matched"
                 f" case, {self.count('compared')} more ran in compared cases (effect never seen), "
                 f"{self.count('recorded')} recorded on a device but not compared, "
                 f"{self.count('golden')} ran on golden only, {self.count('never')} never ran"]
        lines.append(f"(observed: {EFFECTS_BY[self.method]}; docs/minimise-triage-coverage.md)")
        for lv, label in (("observed", "effect observed in a matched case"), ("compared", "ran in a compared case"),
                          ("golden", "run at all")):
            modes = sum(len(c.seen("modes", lv)) for c in self.instructions.values())
            classes = sum(len(c.seen("classes", lv)) for c in self.instructions.values())
            lines.append(f"{label}: {modes} of "
                         f"{sum(possible_modes(c.ins) for c in self.instructions.values())} mode values, "
                         f"{classes} of {sum(c.class_total for c in self.instructions.values())} field-value classes")
        lines.append(self.reachable_line())
        lines.append(self.supported_line())
        lines.append(self.accepted_classes_line())
        if self.divergences:
            lines.append(f"divergences between golden and the recordings: {len(self.divergences)}")
        return lines

    def reachable_line(self) -> str:
        """Mode values the generators can emit (configs/constraints.yaml: inside what ttsim accepts and golden
        models), and how many of them were observed / compared."""
        bins = coverage_weights.all_accepted_bins()
        got = {lv: sum((f, v) in self.instructions[n].seen("modes", lv) for n, f, v in bins if n in self.instructions)
               for lv in ("observed", "compared")}
        unseen = sorted(f"{n}.{f}={v}" for n, f, v in bins
                        if n not in self.instructions or (f, v) not in self.instructions[n].seen("modes", "observed"))
        return (f"mode values the generators can emit or ttsim accepts (value lists and `ttsim:` lists in "
                f"configs/constraints.yaml, over configs/profiles; AddrMod section fields apart): {len(bins)}; "
                f"{got['observed']} with an observed effect in a matched case, {got['compared']} in compared cases"
                + (f"; not observed: {', '.join(unseen)}" if unseen else ""))

    def supported(self) -> list[InsCoverage]:
        """The instructions golden models and ttsim runs."""
        return [c for c in self.instructions.values() if c.ins.golden == "modelled" and not c.ins.ttsim_unsupported]

    def accepted_class_set(self) -> set[tuple[str, str, str]]:
        """(instruction, field, class) of the supported instructions that ttsim accepts as far as the project
        knows: what configs/constraints.yaml lets some profile draw or lists as ttsim-accepted (`ttsim:`), plus
        any a ttsim recording ran."""
        sup = self.supported()
        names = {c.ins.name for c in sup}
        accepted = {b for b in coverage_weights.all_accepted_classes() if b[0] in names}
        return accepted | {(c.ins.name, f, k) for c in sup for f, k in c.seen("classes", "recorded")}

    def accepted_classes(self) -> tuple[int, int, int, int]:
        """How many field-value classes ttsim accepts (accepted_class_set), of all the supported instructions'
        classes, and how many of them were observed and compared."""
        sup = self.supported()
        accepted = self.accepted_class_set()
        observed = sum(len(c.seen("classes", "observed")) for c in sup)
        compared = sum(len(c.seen("classes", "compared")) for c in sup)
        return len(accepted), sum(c.class_total for c in sup), observed, compared

    def accepted_classes_line(self) -> str:
        accepted, total, observed, compared = self.accepted_classes()
        return (f"field-value classes of those instructions that ttsim accepts as far as the project knows (what "
                f"configs/constraints.yaml lets a profile draw, plus any a ttsim recording ran): {accepted} of "
                f"{total}; {observed} observed ({100 * observed / max(accepted, 1):.0f}%), {compared} compared")

    def supported_line(self, bar: int | None = None) -> str:
        """The instructions golden models and ttsim runs: how many meet the bar (an observed effect in ``bar`` or
        more matched cases; for an instruction isa.yaml marks ``unobserved``, whose own effect no dump shows,
        ``bar`` or more matched cases that ran it), those below with their counts, and their mode values and
        field-value classes observed."""
        sup = self.supported()
        bar = CE.CAP if bar is None else bar
        assert self.cap is None or bar <= self.cap, "a saturating run counts cases exactly only up to its cap"

        def count(c) -> int:
            return c.cases["observed"] + (c.cases["compared"] if c.ins.unobserved else 0)
        below = sorted((c for c in sup if count(c) < bar), key=lambda c: (count(c), c.ins.name))
        by_rule = [c for c in sup if c.ins.unobserved and count(c) >= bar]
        modes = sum(len(c.seen("modes", "observed")) for c in sup), sum(possible_modes(c.ins) for c in sup)
        classes = sum(len(c.seen("classes", "observed")) for c in sup), sum(c.class_total for c in sup)
        return (f"modelled by golden and run by ttsim: {len(sup)} instructions, {len(sup) - len(below)} at the bar"
                f" ({len(sup) - len(below) - len(by_rule)} with an observed effect in >= {bar} matched cases,"
                f" {len(by_rule)} that isa.yaml marks unobserved in >= {bar} matched cases); below: "
                + (", ".join(f"{c.ins.name} {count(c)}{' (unobserved: compared)' if c.ins.unobserved else ''}"
                             for c in below) or "none")
                + f"; observed of theirs: {modes[0]} of {modes[1]} mode values, {classes[0]} of {classes[1]} "
                f"field-value classes")

    def rows(self) -> list[tuple]:
        out = []
        for name in sorted(self.instructions, key=lambda n: (self.instructions[n].ins.unit, n)):
            c = self.instructions[name]
            out.append((name, c.ins.unit, c.ins.golden, c.level, self.observed_cases(c),
                        c.cases["observed"] + c.cases["compared"], c.cases["golden"],
                        ",".join(map(str, c.addr_modes("observed"))) or "-",
                        f"{len(c.seen('modes', 'observed'))}/{len(c.seen('modes', 'compared'))}/"
                        f"{len(c.seen('modes', 'golden'))}/{possible_modes(c.ins)}",
                        f"{len(c.seen('classes', 'observed'))}/{len(c.seen('classes', 'compared'))}/"
                        f"{len(c.seen('classes', 'golden'))}/{c.class_total}",
                        "refuses" if c.ins.ttsim_unsupported else ""))
        return out

    def mode_rows(self) -> list[tuple]:
        """Per instruction that ran and mode field: the values at each evidence level, and how many untested."""
        out = []
        for name in sorted(self.instructions):
            c = self.instructions[name]
            for f in (f for f in c.ins.fields if is_mode_field(f.name)):
                by_level, shown = [], set()
                for lv in RAN:
                    vals = sorted(v for n, v in c.modes[lv] if n == f.name and v not in shown)
                    shown.update(vals)
                    by_level.append(",".join(map(str, vals)) or "-")
                if shown:
                    out.append((name, f.name, *by_level, (1 << f.width) - len(shown)))
        return out

    HEADERS = ("instruction", "unit", "golden", "evidence", "cases obs", "cases cmp", "cases gold", "addr_mode obs",
               "modes obs/cmp/run/all", "classes obs/cmp/run/all", "ttsim")

    def to_json(self) -> dict:
        return {"cases": self.cases, "case_levels": self.case_levels,
                "levels": {lv: self.count(lv) for lv in LEVELS}, "summary": self.summary_lines(),
                "accepted_classes": dict(zip(("accepted", "total", "observed", "compared"), self.accepted_classes())),
                "instructions": {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()},
                "divergences": [{"case": c.name, "summary": s} for c, _, _, s in self.divergences]}


def case_level(golden: Result | None, device: Result | None) -> str:
    dev_ok = device is not None and device.ok
    gold_ok = golden is not None and golden.ok
    return "compared" if dev_ok and gold_ok else "recorded" if dev_ok else "golden" if gold_ok else "never"


Run = tuple  # (case, golden Result, device Result or None, Effects (or observed (thread, index) pairs) or None)


def measure(runs: list[Run], method: str = "ablation") -> Coverage:
    """``runs``: per case, golden's Result, the device recording's Result (None: no recording) and, for a
    case that matched, the instructions whose effect was observed."""
    cov = Coverage({name: InsCoverage(ins) for name, ins in isa.table().items()}, method=method)
    for case, golden, device, observed, *rest in runs:
        cov.cases += 1
        level = case_level(golden, device)
        cov.case_levels[level] += 1
        if rest and rest[0] == DIVERGED:
            cov.divergences.append((case, device.state, golden.state, rest[1]))
        if level == "never":
            continue
        eff = observed if isinstance(observed, Effects) else Effects(0, tuple(map(tuple, observed or ())))
        if level != "compared":
            eff = Effects(0, ())
        _mark(cov, case, level, set(eff.observed), eff.issued, set(eff.expanded))
    return cov


def _mark(cov: Coverage, case: Case, level: str, observed: set, issued=(), expanded: set = frozenset()) -> None:
    """Mark every instruction of the case at ``level`` (the ``observed`` ones at "observed"), and the words
    MOP/REPLAY expansions ``issued`` (the ``expanded`` ones at "observed"); each instruction counts the case
    once, at its strongest level in it."""
    names: dict[str, str] = {}
    words = [(w, "observed" if (t, i) in observed else level) for t, ws in case.threads.items()
             for i, w in enumerate(ws)]
    words += [(w, "observed" if (t, w) in expanded else level) for t, w in issued]
    for w, lv in words:
        name, keys = word_keys(w)
        c = cov.instructions[name]
        for kind, f, v in keys:
            (c.modes if kind == "mode" else c.classes)[lv].add((f, v))
        if names.get(name) != "observed":
            names[name] = lv
    for name, lv in names.items():
        cov.instructions[name].cases[lv] += 1


# --- rendering -----------------------------------------------------------------------------------------

def terminal_table(cov: Coverage, only: str | None = None) -> str:
    rows = [r for r in cov.rows() if only is None or r[3] == only]
    widths = [max(len(str(x)) for x in col) for col in zip(cov.HEADERS, *rows)]
    fmt = "  ".join(f"{{:{'>' if 4 <= i <= 5 else '<'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*map(str, r)).rstrip() for r in [cov.HEADERS, *rows])


def html_report(cov: Coverage) -> str:
    legend = ("<p>Evidence: <b>observed</b> = the instruction's effect reached compared state in a case that "
              "matched the device; <b>compared</b> = it ran in a compared case, its effect unseen; <b>recorded</b> = "
              "the device ran it, golden could not; <b>golden</b> = golden only; <b>never</b> = untested. "
              "'obs/cmp/run/all': items observed / in compared cases / run anywhere / possible.</p>")
    cls = {"observed": "device", "compared": "device", "recorded": "device", "golden": "golden", "never": "never"}
    lead = H.cards([("cases", cov.cases, ""), *((lv, cov.count(lv), "ok" if lv == "observed" else "bad" if lv == "never"
                                                  else "") for lv in ("observed", "compared", "recorded", "golden", "never")),
                    ("divergences", len(cov.divergences), "bad" if cov.divergences else "ok")])
    figs = [H.heatmap_figure(f"{c.name}: {s}", d["dest"], g["dest"]) for c, d, g, s in cov.divergences
            if "dest" in d and "dest" in g]
    sections = []
    if cov.divergences:
        sections.append(("Divergences (Dest difference, device vs golden)",
                         H.pre(f"{c.name}: {s}" for c, _, _, s in cov.divergences) + "".join(figs)))
    sections += [("Summary", H.pre(cov.summary_lines()) + legend),
                 ("Instructions", H.folded(f"{len(cov.rows())} instructions by evidence",
                                           H.table(cov.HEADERS, cov.rows(), [cls[r[3]] for r in cov.rows()]), True)),
                 ("Mode values of the instructions that ran",
                  H.folded("mode values per instruction field",
                           H.table(("instruction", "field", *RAN, "untested values"), cov.mode_rows())))]
    return H.page("tensix-diff coverage", sections, lead=lead)


# --- the command ---------------------------------------------------------------------------------------

def collect(paths: list, recordings: str | None = None, jobs: int = 2, effects: bool = True,
            method: str = "saturating") -> list[Run]:
    """Run every case on golden, look up its recording, assess the pair, and for each match the
    instructions whose effect was observed (cached; both steps on ``jobs`` processes; ``method``: saturating,
    ablation or provenance, coverage_effects). Progress on stderr."""
    global _ASSESS
    cases = load_any(paths)   # case files, directories and recorded fuzz bundles
    # By ablation, a match's observed effects answer the verdict's own question (any_observed(c) is exactly
    # observed_effects(c).count > 0, saturating or not): the assessment leaves it to the effects below.
    ablating = effects and method != "provenance"
    _ASSESS = (cases, open_backend("golden"), open_backend("replay", recordings=recordings), effects, ablating)
    out, todo, masks = [], [], {}
    rows = pooled(_assess_one, range(len(cases)), jobs, Progress("coverage: assessed", len(cases)))
    cache = EffectsCache()     # read after the assessment, which takes minutes: what others cached meanwhile counts
    unseen = {}         # index in out -> (outcome, message) should the match observe nothing
    for case, (model, rec, outcome, message, mask, nothing) in zip(cases, rows):
        observed = None
        if nothing is not None:
            unseen[len(out)] = nothing
        if mask is not None:
            masks[len(out)] = mask
            observed = cache.get_key(EffectsCache.key_of(case, mask, method), whole=method != "saturating")
            if observed is None:
                todo.append((len(out), mask))
        out.append([case, model, rec, observed, outcome, message])
    _ASSESS = None
    todo.sort(key=lambda t: CE.cost(out[t[0]][0]))   # cheap cases first: what they observe, dearer ones need not
    if method == "saturating":   # the workers start from what the cache answered, then from each batch before
        CE.start(CE.Saturating())
        for r in out:
            if r[3] is not None:
                CE.SATURATION.add(r[0], r[3])
    progress, size = Progress("coverage: effects", len(todo)), BATCH if method == "saturating" else len(todo) or 1
    for k in range(0, len(todo), size):
        CE.compute(out, todo[k:k + size], cache, method, jobs, progress)
    progress.close()
    if method == "saturating":
        done = sorted(masks.items())
        redo = CE.complete([(out[i][0], mask, out[i][3]) for i, mask in done])
        CE.compute(out, [done[k] for k in redo], cache, "ablation", jobs, Progress("coverage: in full", len(redo)))
    CE.start(None)
    for i, (outcome, message) in unseen.items():
        if out[i][3] is not None and not out[i][3].count:
            out[i][3:6] = [None, outcome, message]
    return [tuple(r) for r in out]


_ASSESS = None     # (cases, golden backend, replay backend, effects wanted, by ablation): what forked workers of collect() read
BATCH = 2000          # cases a saturating run's workers take before they start again from all that was gathered


def _assess_one(i: int) -> tuple:
    """Case i of _ASSESS: (golden result, recording, verdict outcome, message, effects mask or None, and where the
    effects decide it, the (outcome, message) should the match observe nothing); states
    are kept only where a report draws them (divergences), so what travels back stays small."""
    cases, golden, replay, effects, ablating = _ASSESS
    case = cases[i]
    rec = run_case(replay, case)
    rec = rec if rec.status not in ("missing", "stale") else None
    try:
        model = golden.run(case)
    except Exception as e:  # a golden bug: counted as not run, and said, never a traceback
        print(f"coverage: golden raised on {case.name}: {type(e).__name__}: {e}", file=sys.stderr)
        model = Result("golden-crash", message=f"{type(e).__name__}: {e}")
    outcome, message, mask, nothing = None, "", None, None
    if rec is not None and rec.ok and model.ok:
        v = assess(case, model, rec, ("golden", "device"), "replay", effects=not ablating)
        outcome, message = v.outcome, v.message
        if ablating and outcome == MATCHED and v.comparison is not None:
            u = unobservable(case, v)
            nothing = (u.outcome, u.message)
    if outcome == MATCHED and effects:   # a known divergence's explained fields were not compared: nothing credited
        mask = _keys(rec.state)          # what the device observed; only its shape is the effects mask
    if outcome != DIVERGED:
        model = _stateless(model)
        rec = _stateless(rec) if rec is not None else None
    return model, rec, outcome, message, mask, nothing


def _stateless(r: Result) -> Result:
    return dataclasses.replace(r, state=None) if r.state is not None else r


def _keys(state):
    """The shape of a state dump: its dict keys, all the way down (what the effect mask depends on)."""
    return {k: _keys(v) for k, v in sorted(state.items())} if isinstance(state, dict) else None


def add_parser(sub) -> None:
    p = sub.add_parser("coverage", help="instruction/mode coverage of the corpus and its recordings")
    p.add_argument("paths", nargs="*", help="case files, directories or *.cases.jsonl.gz bundles"
                   " (default: tests/corpus and tests/fuzz_corpus)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="processes for the effect accounting (default 2)")
    p.add_argument("--recordings", metavar="DIR", help="replay store directory (default: the project's)")
    p.add_argument("--html", metavar="OUT.html", help="also write a self-contained HTML report")
    p.add_argument("--json", metavar="OUT.json", help="also write the figures as JSON")
    p.add_argument("--only", choices=LEVELS, help="list only instructions with this evidence")
    p.add_argument("--summary", action="store_true", help="print the summary lines only")
    how = p.add_mutually_exclusive_group()      # one way to find observed effects: usage error (exit 2) for both
    how.add_argument("--exhaustive", action="store_true", help="ablate every instruction of every matched case (hours"
                   " over the whole corpus) for exact case counts above 100; the default skips what could add nothing")
    how.add_argument("--provenance", action="store_true", help="observed effects by data provenance (one traced golden"
                   " run a case, several times faster) instead of ablation; an estimate that can credit more")
    p.add_argument("--matrix", action="store_true", help="also the matrix unit's agreement per SrcA/SrcB format, "
                   "Dst width and fidelity phase (cells with fewer than 200 compared cases are counted)")
    p.add_argument("--matrix-only", action="store_true", help="only that table (no per-instruction effect accounting)")
    p.set_defaults(func=run)


def _method(args) -> str:
    return "provenance" if args.provenance else "ablation" if args.exhaustive else "saturating"


def run(args) -> int:
    paths = args.paths or [str(p) for p in DEFAULT_PATHS if p.is_dir()]
    runs = collect(paths, args.recordings, args.jobs, effects=not args.matrix_only,
                   method=_method(args))
    if args.matrix_only:
        args.matrix = True
    else:
        cov = measure(runs, _method(args))
        if not args.summary:
            print(terminal_table(cov, args.only))
        print("\n".join(cov.summary_lines()))
    if args.matrix:
        math = [(r[0], r[4]) for r in runs if any(isa.decode(w)[0].unit == "MATH" for ws in r[0].threads.values()
                                                  for w in ws)]
        print("\n".join(matrix_cells.lines(matrix_cells.table(math))))
    if args.matrix_only:
        return 0
    if args.html:
        Path(args.html).write_text(html_report(cov))
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(cov.to_json(), indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
