"""Card isolation's analysis over case corpora: how many cases the opcode scan sends to golden, what golden's end
states say they leave, which a card refuses, and the time the analysis takes (hwbridge/hw/leftovers.py).

    python benchmarks/card_leftovers.py [PATH ...] [--platform ttsim|blackhole]

PATH: case files, directories or bundles (default: tests/corpus and tests/fuzz_corpus). Numbers only.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hwbridge.hw import leftovers as L  # noqa: E402
from hwbridge.hw.platform import load  # noqa: E402
from tensix_diff.case import load_each  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=["tests/corpus", "tests/fuzz_corpus"])
    ap.add_argument("--platform", default="ttsim")
    args = ap.parse_args()
    plat = load(args.platform)
    cases, problems = load_each(args.paths)
    counts, kinds, golden = Counter(), Counter(), Counter()
    refused: list[str] = []
    t0 = time.perf_counter()
    for case in cases:
        p = L.plan(case, plat)
        if p is L.NOTHING:
            continue
        counts["sent to golden"] += 1
        golden[p.golden] += 1
        counts["need a clean-up"] += bool(p.acting)
        kinds.update(f.kind for f in p.acting)
        if p.refuse:
            refused.append(f"{case.name} (golden {p.golden})")
    elapsed = time.perf_counter() - t0
    print(f"{len(cases)} cases ({len(problems)} unreadable) on {plat.name}: {counts['sent to golden']} sent to golden"
          f" ({', '.join(f'{n} {k}' for k, n in sorted(golden.items()))}), {counts['need a clean-up']} need a"
          f" clean-up ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items())) or 'none'}), {len(refused)} refused"
          f" on a card; {elapsed:.1f} s ({1e3 * elapsed / max(len(cases), 1):.2f} ms a case)")
    for name in refused:
        print(f"  refused: {name}")


if __name__ == "__main__":
    main()
