"""The matrix unit's format matrix: which (SrcA format, SrcB format, Dst width, fidelity phase) cells a case
exercises, as golden resolves each MVMUL / ELWADD / ELWSUB / ELWMUL / GMPOOL / GAPOOL operand setup, and the
verdicts per cell over a set of assessed cases."""
from __future__ import annotations

from collections import Counter, defaultdict

from golden.core import Tensix
from golden.errors import GoldenError

from .case import Case
from .golden_run import apply_init

FORMAT_NAMES = {0: "FP32", 1: "FP16", 2: "BFP8a", 3: "BFP4a", 4: "TF32", 5: "BF16", 6: "BFP8", 7: "BFP4", 8: "INT32",
                9: "INT16", 10: "FP8", 11: "BFP2a", 14: "INT8", 15: "BFP2"}


def cells(case: Case) -> set[tuple[str, str, int, int]]:
    """(SrcA format, SrcB format, Dst bits, phase) of every matrix-unit instruction the case ran on golden."""
    m = Tensix()
    m.matrix_trace = []
    apply_init(m.s, case)
    try:
        m.run(case.threads, case.actions)
    except GoldenError:
        pass
    return {(FORMAT_NAMES.get(a, str(a)), FORMAT_NAMES.get(b, str(b)), bits, phase)
            for _, a, b, bits, phase in m.matrix_trace}


def table(assessed) -> list[tuple[tuple, Counter]]:
    """Verdict counts per cell over (case, outcome) pairs (outcome None: not compared), cells sorted."""
    out: dict[tuple, Counter] = defaultdict(Counter)
    for case, outcome in assessed:
        for cell in cells(case):
            out[cell][outcome or "not compared"] += 1
    return sorted(out.items())


def lines(rows: list[tuple[tuple, Counter]], minimum: int = 200) -> list[str]:
    head = f"{'SrcA':<6}{'SrcB':<6}{'Dst':>4}{'phase':>6}{'cases':>8}{'matched':>9}{'diverged':>9}{'known':>6}{'other':>7}"
    out = [head]
    short = 0
    for (a, b, bits, phase), n in rows:
        total = sum(n.values())
        other = total - n["matched"] - n["diverged"] - n["known"]
        short += n["matched"] + n["known"] < minimum
        out.append(f"{a:<6}{b:<6}{bits:>4}{phase:>6}{total:>8}{n['matched']:>9}{n['diverged']:>9}{n['known']:>6}"
                   f"{other:>7}")
    out.append(f"{len(rows)} cells; {len(rows) - short} with at least {minimum} compared cases (matched or known), "
               f"{short} with fewer")
    return out
