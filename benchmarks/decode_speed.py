"""Decode and assemble speed: isa.decode per valid word (target <= 2 us) over random field values of common
instructions; raw `.word 0x...` lines parsed per second (issue 25, target >= 1M lines/s) over 40,000 distinct
words; and a 40,000-instruction counter/GPR case through `tensix-diff run --backend golden --dump` end to end,
written as instruction text, again as raw `.word` lines, and 40,000 distinct raw words (every line parsed
and decoded afresh) (target >= 200k instructions/s; parsing included), beside a 1-instruction case (what
every run pays: interpreter, imports, the dump).
Wall time is best of 3 runs; CPU time (the command's user + system) beside it, with the machine's load.

    python benchmarks/decode_speed.py
"""
from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from golden import isa

from cli_timing import command, load_note, timed, user_env, walls
from tensix_diff import case as case_module
from tensix_diff.case import fast as fast_reader

NAMES = ["SETRWC", "INCRWC", "SETDMAREG", "ADDDMAREG", "SETADCXY", "INCADCXY", "ZEROACC", "SFPLOADI"]
BODY = ["SETRWC bitmask=15 rwc_a={a} rwc_b=1 rwc_d=5", "INCRWC rwc_a=1 rwc_b=2 rwc_d=3",
        "SETDMAREG regindex16b={r} payload_sigsel={a}", "ADDDMAREG resultregindex={g} opbregindex={g} oparegindex={g}",
        "SETADCXY bitmask=15 ch0_x=3 ch0_y=1", "INCADCXY ch0_x=1 ch0_y=1 ch1_x=1 ch1_y=1"]
DISTINCT = ["SETDMAREG regindex16b={r} payload_sigsel={p}",
            "ADDDMAREG resultregindex={g} opbregindex={h} oparegindex={k}"]


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
    distinct = distinct_words(rng, 40000)
    raw_parse_rate(distinct)
    text, raw = ["name: big-counters", "threads:"], ["name: big-counters", "threads:"]
    for t in range(3):
        text.append(f"  {t}:")
        raw.append(f"  {t}:")
        for _ in range(40000 // 3):
            line = rng.choice(BODY).format(a=rng.randrange(16), r=rng.randrange(128), g=rng.randrange(64))
            text.append(f"    - {line}")
            raw.append(f"    - .word {isa.assemble_line(line):#010x}")
    every = ["name: big-distinct", "threads:", "  0:"] + [f"    - .word {w:#010x}" for w in distinct]
    script = command()
    env, note = user_env()
    if note:
        print(note)
    one = ["name: one-word", "threads:", "  0:", f"    - .word {distinct[0]:#010x}"]
    with tempfile.TemporaryDirectory() as d:
        for what, lines in (("one instruction", one), ("instruction text", text), ("raw .word lines", raw),
                            ("raw .word lines, every word distinct", every)):
            n = sum(line.startswith("    - ") for line in lines)
            case = Path(d) / "big.yaml"
            case.write_text("\n".join(lines) + "\n")
            cmd = [script, "run", str(case), "--backend", "golden", "--against", "golden",
                   "--dump", str(Path(d) / "out.json"), "-q"]
            if n == 1:      # what every case pays: interpreter, imports, one golden run and the dump
                walls(cmd, 0, env)                  # the untimed run that writes the bytecode
                cpu = min(timed(cmd, env)[1] for _ in range(3))
                print(f"a 1-instruction case through the CLI (start-up and dump): {cpu:.2f} CPU-s")
                continue
            best = min(walls(cmd, 3, env))
            cpu = min(timed(cmd, env)[1] for _ in range(3))
            print(f"{n}-instruction case as {what} through the CLI: {best:.2f} s wall, {n / best / 1e3:.0f}k "
                  f"instructions/s (target 200k: {'met' if n / best >= 200e3 else 'NOT met'}); {cpu:.2f} CPU-s, "
                  f"{n / cpu / 1e3:.0f}k instructions per CPU-s")
    print(load_note())


def distinct_words(rng: random.Random, n: int) -> list[int]:
    """n distinct words golden runs: SETDMAREG / ADDDMAREG with random register indices and payloads."""
    seen: dict[int, None] = {}
    while len(seen) < n:
        line = rng.choice(DISTINCT).format(r=rng.randrange(128), p=rng.randrange(1 << 14), g=rng.randrange(64),
                                           h=rng.randrange(64), k=rng.randrange(64))
        seen.setdefault(isa.assemble_line(line), None)
    return list(seen)


def raw_parse_rate(words: list[int]) -> None:
    """Raw `.word` lines per second through parse_case: one line per word (all distinct) in dump_case's
    layout, the parser's line caches emptied before each pass (best of 5, CPU time)."""
    body = "\n".join(["name: raw-words", "threads:", "  0:"] + [f"    - .word {w:#010x}" for w in words]) + "\n"
    best = float("inf")
    for _ in range(5):
        fast_reader._LINE_WORDS.clear()
        isa._assemble.cache_clear()
        t0 = time.process_time()
        case = case_module.parse_case(body)
        best = min(best, time.process_time() - t0)
    assert case.threads[0] == words
    rate = len(words) / best
    print(f"raw .word lines parsed: {rate / 1e6:.2f}M lines/s ({len(words)} distinct words, CPU time; "
          f"target 1M: {'met' if rate >= 1e6 else 'NOT met'})")

if __name__ == "__main__":
    main()
