"""`tensix-diff coverage`: what the corpus and its recordings have tested, against the ISA table.

For every instruction of golden/isa.yaml, and within it every mode value (addr_mode and the other
*mod* fields) and every field-value class (zero, one, max, other), the strongest evidence the corpus
gives: ``compared`` (a device recording and golden's run were compared), ``recorded`` (the device ran
it but golden could not, so nothing was compared), ``golden`` (ran on golden only, no recording) or
``never``. A harness must say plainly what it has not tested: the report lists the untested.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from golden import isa
from hwbridge.base import Result
from tensix_diff.case import Case
from tensix_diff.compare import DIVERGED, judge
from tensix_diff import report_html as H

LEVELS = ("compared", "recorded", "golden", "never")   # strongest first
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def is_mode_field(name: str) -> bool:
    return "mod" in name


def is_addrmod_field(name: str) -> bool:
    return "addr" in name and "mod" in name


def value_class(value: int, width: int) -> str:
    if value == 0:
        return "zero"
    if value == 1:
        return "one"
    return "max" if value == (1 << width) - 1 else "other"


def possible_classes(f: isa.Field) -> set[str]:
    return {"zero", "one", "max", "other"} if f.width > 2 else {"zero", "one", "max"} if f.width == 2 else {
        "zero", "one"}


def possible_modes(ins: isa.Instruction) -> int:
    return sum(1 << f.width for f in ins.fields if is_mode_field(f.name))


@dataclass
class InsCoverage:
    ins: isa.Instruction
    cases: dict[str, int] = field(default_factory=lambda: {lv: 0 for lv in LEVELS[:3]})
    modes: dict[str, set] = field(default_factory=lambda: {lv: set() for lv in LEVELS[:3]})     # (field, value)
    classes: dict[str, set] = field(default_factory=lambda: {lv: set() for lv in LEVELS[:3]})   # (field, class)

    @property
    def level(self) -> str:
        return next((lv for lv in LEVELS[:3] if self.cases[lv]), "never")

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

    def count(self, level: str) -> int:
        return sum(1 for c in self.instructions.values() if c.level == level)

    def summary_lines(self) -> list[str]:
        n = len(self.instructions)
        lines = [f"corpus: {self.cases} cases: " + ", ".join(f"{self.case_levels[lv]} {lv}" for lv in LEVELS),
                 f"instructions: {n} in the ISA table: {self.count('compared')} compared against a device, "
                 f"{self.count('recorded')} recorded on a device but not compared, "
                 f"{self.count('golden')} ran on golden only, {self.count('never')} never ran"]
        for lv in ("compared", "golden"):
            modes = sum(len(c.seen("modes", lv)) for c in self.instructions.values())
            classes = sum(len(c.seen("classes", lv)) for c in self.instructions.values())
            lines.append(f"{'device-compared' if lv == 'compared' else 'run at all'}: {modes} of "
                         f"{sum(possible_modes(c.ins) for c in self.instructions.values())} mode values, "
                         f"{classes} of {sum(c.class_total for c in self.instructions.values())} field-value classes")
        if self.divergences:
            lines.append(f"divergences between golden and the recordings: {len(self.divergences)}")
        return lines

    def rows(self) -> list[tuple]:
        out = []
        for name in sorted(self.instructions, key=lambda n: (self.instructions[n].ins.unit, n)):
            c = self.instructions[name]
            out.append((name, c.ins.unit, c.ins.golden, c.level, c.cases["compared"], c.cases["golden"],
                        ",".join(map(str, c.addr_modes("compared"))) or "-",
                        f"{len(c.seen('modes', 'compared'))}/{len(c.seen('modes', 'golden'))}/{possible_modes(c.ins)}",
                        f"{len(c.seen('classes', 'compared'))}/{len(c.seen('classes', 'golden'))}/{c.class_total}",
                        "refuses" if c.ins.ttsim_unsupported else ""))
        return out

    def mode_rows(self) -> list[tuple]:
        """Per instruction that ran and mode field: the values at each evidence level, and how many untested."""
        out = []
        for name in sorted(self.instructions):
            c = self.instructions[name]
            for f in (f for f in c.ins.fields if is_mode_field(f.name)):
                by_level, shown = [], set()
                for lv in LEVELS[:3]:
                    vals = sorted(v for n, v in c.modes[lv] if n == f.name and v not in shown)
                    shown.update(vals)
                    by_level.append(",".join(map(str, vals)) or "-")
                if shown:
                    out.append((name, f.name, *by_level, (1 << f.width) - len(shown)))
        return out

    HEADERS = ("instruction", "unit", "golden", "evidence", "cases cmp", "cases gold", "addr_mode cmp",
               "modes cmp/run/all", "classes cmp/run/all", "ttsim")

    def to_json(self) -> dict:
        return {"cases": self.cases, "case_levels": self.case_levels,
                "levels": {lv: self.count(lv) for lv in LEVELS},
                "instructions": {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()},
                "divergences": [{"case": c.name, "summary": s} for c, _, _, s in self.divergences]}


def case_level(golden: Result | None, device: Result | None) -> str:
    dev_ok = device is not None and device.ok
    gold_ok = golden is not None and golden.ok
    return "compared" if dev_ok and gold_ok else "recorded" if dev_ok else "golden" if gold_ok else "never"


def measure(runs: list[tuple[Case, Result | None, Result | None]]) -> Coverage:
    """``runs``: per case, golden's Result and the device recording's Result (None: no recording)."""
    cov = Coverage({name: InsCoverage(ins) for name, ins in isa.table().items()})
    for case, golden, device in runs:
        cov.cases += 1
        level = case_level(golden, device)
        cov.case_levels[level] += 1
        if level == "compared":
            v = judge(device, golden, ("device", "golden"))
            if v.outcome == DIVERGED:
                cov.divergences.append((case, device.state, golden.state, v.message))
        if level == "never":
            continue
        for name in _mark(cov, case, level):
            cov.instructions[name].cases[level] += 1
    return cov


def _mark(cov: Coverage, case: Case, level: str) -> set[str]:
    names = set()
    for words in case.threads.values():
        for w in words:
            ins, vals = isa.decode(w)
            names.add(ins.name)
            c = cov.instructions[ins.name]
            for f in ins.fields:
                v = vals[f.name]
                c.classes[level].add((f.name, value_class(v, f.width)))
                if is_mode_field(f.name):
                    c.modes[level].add((f.name, v))
    return names


# --- rendering -----------------------------------------------------------------------------------------

def terminal_table(cov: Coverage, only: str | None = None) -> str:
    rows = [r for r in cov.rows() if only is None or r[3] == only]
    widths = [max(len(str(x)) for x in col) for col in zip(cov.HEADERS, *rows)]
    fmt = "  ".join(f"{{:{'>' if 4 <= i <= 5 else '<'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*map(str, r)).rstrip() for r in [cov.HEADERS, *rows])


def html_report(cov: Coverage) -> str:
    legend = ("<p>Evidence: <b>compared</b> = a device recording was compared with golden; <b>recorded</b> = "
              "the device ran it, golden could not; <b>golden</b> = golden only; <b>never</b> = untested. "
              "'cmp/run/all': items compared against a device / run anywhere / possible.</p>")
    cls = {"compared": "device", "recorded": "device", "golden": "golden", "never": "never"}
    sections = [("Summary", H.pre(cov.summary_lines()) + legend),
                ("Instructions", H.table(cov.HEADERS, cov.rows(), [cls[r[3]] for r in cov.rows()])),
                ("Mode values of the instructions that ran",
                 H.table(("instruction", "field", *LEVELS[:3], "untested values"), cov.mode_rows()))]
    figs = [H.heatmap_figure(f"{c.name}: {s}", d["dest"], g["dest"]) for c, d, g, s in cov.divergences
            if "dest" in d and "dest" in g]
    if cov.divergences:
        sections.append(("Divergences (Dest difference, device vs golden)",
                         H.pre(f"{c.name}: {s}" for c, _, _, s in cov.divergences) + "".join(figs)))
    return H.page("tensix-diff coverage", sections)


# --- the command ---------------------------------------------------------------------------------------

def collect(paths: list[str], recordings: str | None = None) -> list[tuple[Case, Result | None, Result | None]]:
    """Run every case on golden and look up its recording in the replay store."""
    from hwbridge.hw_corpus import load_any
    from tensix_diff.backends import open_backend, run_case
    golden, replay = open_backend("golden"), open_backend("replay", recordings=recordings)
    out = []
    for case in load_any(paths):   # case files, directories and recorded fuzz bundles
        rec = run_case(replay, case)
        try:
            model = golden.run(case)
        except Exception as e:  # a golden bug: counted as not run, and said, never a traceback
            print(f"coverage: golden raised on {case.name}: {type(e).__name__}: {e}", file=sys.stderr)
            model = Result("golden-crash", message=f"{type(e).__name__}: {e}")
        out.append((case, model, rec if rec.status not in ("missing", "stale") else None))
    return out


def add_parser(sub) -> None:
    p = sub.add_parser("coverage", help="instruction/mode coverage of the corpus and its recordings")
    p.add_argument("paths", nargs="*", help=f"case files, directories or *.cases.jsonl.gz bundles (default: {DEFAULT_CORPUS.name}/)")
    p.add_argument("--recordings", metavar="DIR", help="replay store directory (default: the project's)")
    p.add_argument("--html", metavar="OUT.html", help="also write a self-contained HTML report")
    p.add_argument("--json", metavar="OUT.json", help="also write the figures as JSON")
    p.add_argument("--only", choices=LEVELS, help="list only instructions with this evidence")
    p.add_argument("--summary", action="store_true", help="print the summary lines only")
    p.set_defaults(func=run)


def run(args) -> int:
    paths = args.paths or ([str(DEFAULT_CORPUS)] if DEFAULT_CORPUS.is_dir() else [])
    cov = measure(collect(paths, args.recordings))
    if not args.summary:
        print(terminal_table(cov, args.only))
    print("\n".join(cov.summary_lines()))
    if args.html:
        Path(args.html).write_text(html_report(cov))
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(cov.to_json(), indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
