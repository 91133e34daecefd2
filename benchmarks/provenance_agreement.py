"""Provenance against ablation on a seeded sample of committed, recorded cases: the program positions each
credits (both, provenance only, ablation only, by instruction) and the CPU time each takes, with the
recording's state dump as the mask, as `tensix-diff coverage` uses them (tests/tensix_diff/test_provenance.py asserts
bounds on the same sample).

    python benchmarks/provenance_agreement.py [--per-bundle 4] [--seed 0] [BUNDLE_NAME ...]
"""
from __future__ import annotations

import argparse
import collections
import random
import time
from pathlib import Path

from golden.isa import decode
from hwbridge.replay import ReplayBackend
from tensix_diff.case import load_bundle
from tensix_diff.effects import observed_effects, provenance_effects

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fuzz_corpus"
SAMPLE = ["ttsim-default-s2026-part01", "ttsim-sfpu-cc-s3004-part01", "ttsim-formats-s3001-part01",
          "ttsim-counters-s2026-part01", "ttsim-pipeline-int8-s4401-part01"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="*", default=SAMPLE)
    ap.add_argument("--per-bundle", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    replay, cpu = ReplayBackend(), {"ablation": 0.0, "provenance": 0.0}
    both = n = 0
    only: dict[str, collections.Counter] = {"provenance": collections.Counter(), "ablation": collections.Counter()}
    for name in args.bundles:
        cases = load_bundle(CORPUS / f"{name}.cases.jsonl.gz")
        random.Random(args.seed).shuffle(cases)
        taken = 0
        for c in cases:
            rec = replay.run(c)
            if not rec.ok or taken == args.per_bundle:
                continue
            taken += 1
            got = {}
            for how, fn in (("ablation", observed_effects), ("provenance", provenance_effects)):
                t0 = time.process_time()
                got[how] = set(fn(c, rec.state).observed)
                cpu[how] += time.process_time() - t0
            both += len(got["ablation"] & got["provenance"])
            for how, other in (("provenance", "ablation"), ("ablation", "provenance")):
                only[how].update(decode(c.threads[t][i])[0].name for t, i in got[how] - got[other])
        n += taken
    either = both + sum(sum(c.values()) for c in only.values())
    print(f"{n} recorded cases ({args.per_bundle} per bundle, seed {args.seed}) from {', '.join(args.bundles)}")
    print(f"positions credited: {either} by either, {both} by both ({100 * both / max(either, 1):.1f}%), "
          f"{sum(only['provenance'].values())} by provenance only, {sum(only['ablation'].values())} by ablation only")
    for how in only:
        print(f"  {how} only: " + (", ".join(f"{k} {v}" for k, v in only[how].most_common()) or "none"))
    print(f"CPU: ablation {cpu['ablation']:.1f} s, provenance {cpu['provenance']:.1f} s "
          f"({cpu['ablation'] / max(cpu['provenance'], 1e-9):.1f}x less)")


if __name__ == "__main__":
    main()
