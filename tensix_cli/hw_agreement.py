"""Agreement of golden with the recorded device results, per instruction class.

    python -m tensix_cli.hw_agreement [CASES...] [--recordings DIR] [--json OUT] [--jobs N]

For every case (default: the curated corpus and tests/fuzz_corpus bundles) golden runs and the
replay store answers; each case is matched, diverged (with its triage signature, and whether
configs/known_divergences.yaml lists it), refused (by the simulator, with ttsim's error, or by the
harness), uncompared (golden cannot model it; the device ran it), or missing/stale. A case counts once
under every instruction class (ISA unit) its programs use, MOP and REPLAY expansions included. Nothing here
decides pass or fail.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from golden import isa
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import assess
from tensix_diff.case import load_any
from tensix_diff.effects import expansion_words
from tensix_diff.result import OK, REFUSED
from tensix_diff.store import Store
from tensix_diff.triage import signature

from .progress import Progress, pooled

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = (REPO / "tests" / "corpus", REPO / "tests" / "fuzz_corpus")
OUTCOMES = ("matched", "diverged", "known", "refused-simulator", "refused-harness", "uncompared", "hang-both",
            "missing", "stale", "other")


def classes(case) -> list[str]:
    """The ISA units of the case's words and of the words its MOPs and REPLAYs issue (golden's expansion)."""
    words = {w for ws in case.threads.values() for w in ws} | {w for _, w in expansion_words(case)}
    return sorted({isa.decode(w)[0].unit for w in words}) or ["(no instructions)"]


def refusal_reason(message: str) -> str:
    """ttsim's error without its clock and values: 'UnsupportedFunctionality: tensix_movb2d'."""
    m = re.search(r"ERROR: (\w+): (\w+)", message)
    if m:
        return f"{m.group(1)}: {m.group(2)}"
    return re.sub(r"\d+|0x[0-9a-f]+", "N", message.split(": ", 1)[-1])[:90]


def evaluate(cases, store, jobs: int = 2) -> list[dict]:
    """One row per case (in order), on ``jobs`` forked processes."""
    global _EVAL
    _EVAL = (cases, GoldenBackend(), ReplayBackend(store=store))
    try:
        return pooled(_row, range(len(cases)), jobs, Progress("agreement", len(cases)))
    finally:
        _EVAL = None


_EVAL = None      # (cases, golden backend, replay backend): what evaluate()'s forked workers read


def _row(i: int) -> dict:
    cases, golden, replay = _EVAL
    case = cases[i]
    g, r = golden.run(case), replay.run(case)
    row = {"case": case.name, "classes": classes(case), "golden": g.status, "device": r.status,
           "device_kind": r.provenance.get("device", "")}
    if r.status in ("missing", "stale"):
        row["outcome"] = r.status
    elif r.status == REFUSED:
        by = r.provenance.get("refused_by", "harness")
        row["outcome"] = f"refused-{by}" if by in ("simulator", "harness") else "other"
        row["reason"] = refusal_reason(r.message)
    elif g.status == "hang" and r.status == "hang":
        row["outcome"] = "hang-both"
    else:
        v = assess(case, g, r, ("golden", "device"), "replay")
        if v.outcome in ("matched", "known"):
            row["outcome"] = v.outcome
            if v.known:
                row.update(known=list(v.known), signature="registry: " + ", ".join(v.known))
        elif v.outcome == "diverged":
            row.update(outcome="diverged", signature=str(signature(case, v)), detail=v.message[:300])
        elif v.outcome == "uncompared":
            row["outcome"], row["reason"] = "uncompared", v.why or v.message[:120]
        else:
            row["outcome"] = "other"
            row["reason"] = f"golden {g.status}, device {r.status}"
    return row


def table(rows: list[dict]) -> list[str]:
    per: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for c in row["classes"]:
            per[c][row["outcome"]] += 1
    cols = [o for o in OUTCOMES if any(per[c][o] for c in per)]
    out = ["| class | cases | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for c in sorted(per):
        out.append(f"| {c} | {sum(per[c].values())} | " + " | ".join(str(per[c][o]) for o in cols) + " |")
    total = Counter(row["outcome"] for row in rows)
    out.append(f"| all cases | {len(rows)} | " + " | ".join(str(total[o]) for o in cols) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help="case files, directories, *.cases.jsonl.gz bundles")
    ap.add_argument("--recordings", help="replay store (default: the project's)")
    ap.add_argument("--json", help="write every case's row here")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args(argv)

    cases = load_any(args.cases or [str(p) for p in DEFAULT_PATHS])
    rows = evaluate(cases, Store(args.recordings), args.jobs)
    devices = Counter(r["device_kind"] for r in rows if r["device_kind"])
    print(f"{len(rows)} cases; recordings from: " + ", ".join(f"{d} ({n})" for d, n in devices.most_common()))
    print("A case counts under every instruction class it uses; 'known' = every difference explained by configs/known_divergences.yaml.")
    print("\n".join(table(rows)))
    sigs = Counter((r["outcome"], r["signature"]) for r in rows if r["outcome"] in ("diverged", "known"))
    for (outcome, sig), n in sigs.most_common():
        example = next(r["case"] for r in rows if r.get("signature") == sig)
        print(f"  {outcome:8s} {n:5d} x {sig}   e.g. {example}")
    reasons = Counter((r["outcome"], r.get("reason", "")) for r in rows
                      if r["outcome"].startswith("refused") or r["outcome"] in ("uncompared", "other"))
    for (outcome, reason), n in reasons.most_common(25):
        print(f"  {outcome:17s} {n:5d} x {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
