"""Observed-effect accounting cost: time per generated case (about 64 instructions) for
``any_observed`` (what every matched verdict pays: one extra golden run) and ``observed_effects``
(what `run` and coverage pay: one golden run per instruction), against one plain golden run.

    python benchmarks/effects_cost.py [--cases N] [--profile NAME] [--seed S]
"""
from __future__ import annotations

import argparse
import statistics
import time

from generators.bulk import generate
from generators.profiles import load_profile
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.effects import any_observed, observed_effects


def _time(fn, cases) -> list[float]:
    out = []
    for c in cases:
        t0 = time.perf_counter()
        fn(c)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    cases = [c for _, c in generate(args.seed, args.cases, load_profile(args.profile))]
    golden = GoldenBackend()
    states = {c.name: golden.run(c).state for c in cases}
    mask = ("dest", "rwc", "adc", "gpr", "l1", "config")
    n = statistics.mean(c.instruction_count for c in cases)
    base = _time(golden.run, cases)
    anyo = _time(lambda c: any_observed(c, mask, states[c.name]), cases)
    full = _time(lambda c: observed_effects(c, mask, states[c.name]), cases[: max(1, args.cases // 4)])
    ms = lambda xs: statistics.median(xs) * 1e3   # noqa: E731
    print(f"{len(cases)} '{args.profile}' cases, {n:.0f} instructions on average (seed {args.seed})")
    print(f"golden run:        {ms(base):8.2f} ms per case (median)")
    print(f"any_observed:      {ms(anyo):8.2f} ms per case ({ms(anyo) / ms(base):.1f}x a golden run)")
    print(f"observed_effects:  {ms(full):8.2f} ms per case ({ms(full) / ms(base):.1f}x a golden run)")


if __name__ == "__main__":
    main()
