"""Decode and assemble speed: isa.decode per valid word (target <= 2 us) over random field values of common
instructions, and a 40,000-instruction counter/GPR case through `tensix-diff run --backend golden --dump`
end to end (target >= 200k instructions/s; YAML parsing included).

    python benchmarks/decode_speed.py
"""
from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from golden import isa

from cli_timing import command, user_env, walls

NAMES = ["SETRWC", "INCRWC", "SETDMAREG", "ADDDMAREG", "SETADCXY", "INCADCXY", "ZEROACC", "SFPLOADI"]
BODY = ["SETRWC bitmask=15 rwc_a={a} rwc_b=1 rwc_d=5", "INCRWC rwc_a=1 rwc_b=2 rwc_d=3",
        "SETDMAREG regindex16b={r} payload_sigsel={a}", "ADDDMAREG resultregindex={g} opbregindex={g} oparegindex={g}",
        "SETADCXY bitmask=15 ch0_x=3 ch0_y=1", "INCADCXY ch0_x=1 ch0_y=1 ch1_x=1 ch1_y=1"]


def main() -> None:
    rng = random.Random(1)
    words = []
    for n in NAMES:
        ins = isa.lookup(n)
        words += [ins.opcode << 24 | (rng.getrandbits(24) & ins.payload_mask) for _ in range(5000)]
    isa.decode(words[0])
    t0 = time.perf_counter()
    for w in words:
        isa.decode(w)
    per = (time.perf_counter() - t0) / len(words)
    print(f"isa.decode: {per * 1e6:.2f} us per word (target 2 us: {'met' if per <= 2e-6 else 'NOT met'})")
    lines = ["name: big-counters", "threads:"]
    for t in range(3):
        lines.append(f"  {t}:")
        lines += ["    - " + rng.choice(BODY).format(a=rng.randrange(16), r=rng.randrange(128), g=rng.randrange(64))
                  for _ in range(40000 // 3)]
    script = command()
    env, note = user_env()
    if note:
        print(note)
    with tempfile.TemporaryDirectory() as d:
        case = Path(d) / "big.yaml"
        case.write_text("\n".join(lines) + "\n")
        n = 3 * (40000 // 3)
        best = min(walls([script, "run", str(case), "--backend", "golden", "--against", "golden",
                          "--dump", str(Path(d) / "out.json"), "-q"], 3, env))
    rate = n / best
    print(f"{n}-instruction case through the CLI: {best:.2f} s, {rate / 1e3:.0f}k instructions/s"
          f" (target 200k: {'met' if rate >= 200e3 else 'NOT met'})")


if __name__ == "__main__":
    main()
