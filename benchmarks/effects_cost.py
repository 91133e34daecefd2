"""Observed-effect accounting cost per generated case (about 64 instructions), against one plain golden run:
``any_observed`` (what every matched verdict pays: one golden run with everything NOP'd, one per instruction
only when that shows nothing), ``observed_effects`` (what `run --effects` pays: one golden run per
instruction) and ``provenance_effects`` (what coverage pays: one traced run and re-runs of single steps). The mask is what ttsim's read-back observes for the case, as in the verdict pipeline.

    python benchmarks/effects_cost.py [--cases N] [--profile NAME] [--seed S]
"""
from __future__ import annotations

import argparse
import statistics
import time

from generators.bulk import generate
from generators.profiles import load_profile
from hwbridge.golden_backend import GoldenBackend
from hwbridge.hw.platform import load as load_platform
from hwbridge.hw.observation import required
from tensix_diff.effects import any_observed, observed_effects, provenance_effects


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
    golden, plat = GoldenBackend(), load_platform("ttsim")
    cases = [c for _, c in generate(args.seed, args.cases, load_profile(args.profile))]
    cases = [c for c in cases if golden.run(c).ok]           # verdicts ask only about cases golden ran
    states = {c.name: golden.run(c).state for c in cases}
    masks = {c.name: required(c, plat) for c in cases}
    n = statistics.mean(c.instruction_count for c in cases)
    base = _time(golden.run, cases)
    anyo = _time(lambda c: any_observed(c, masks[c.name], states[c.name]), cases)
    some = cases[: max(1, len(cases) // 4)]
    full = _time(lambda c: observed_effects(c, masks[c.name], states[c.name]), some)
    prov = _time(lambda c: provenance_effects(c, masks[c.name]), some)
    ms = lambda xs: statistics.median(xs) * 1e3   # noqa: E731
    mean = lambda xs: statistics.mean(xs) * 1e3   # noqa: E731
    per64 = 64 / n
    print(f"{len(cases)} '{args.profile}' cases golden runs, {n:.0f} instructions on average (seed {args.seed});"
          f" ttsim's read-back as the mask")
    print(f"golden run:        {ms(base):8.2f} ms per case (median), {mean(base):8.2f} mean")
    print(f"any_observed:      {ms(anyo):8.2f} ms per case (median), {mean(anyo):8.2f} mean"
          f" ({mean(anyo) / mean(base):.1f}x a golden run)")
    print(f"observed_effects:  {ms(full):8.2f} ms per case (median), {mean(full):8.2f} mean over {len(some)} cases"
          f" ({mean(full) / mean(base):.1f}x a golden run; {mean(full) * per64:.1f} ms per 64 instructions)")

    print(f"provenance:        {ms(prov):8.2f} ms per case (median), {mean(prov):8.2f} mean over {len(some)} cases"
          f" ({mean(prov) / mean(base):.1f}x a golden run; {mean(prov) * per64:.1f} ms per 64 instructions)")


if __name__ == "__main__":
    main()
