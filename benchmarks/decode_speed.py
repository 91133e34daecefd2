"""Decode and assemble speed: isa.decode per valid word (target <= 2 us) over random field values of common
instructions; raw `.word 0x...` lines parsed per second (issue 25, target >= 1M lines/s) over 40,000 distinct
words; and a 40,000-instruction counter/GPR case through `tensix-diff run --backend golden --dump` end to end,
written as instruction text, again as raw `.word` lines, and 40,000 distinct raw words (every line parsed
and decoded afresh) (issue 25, target >= 200k instructions/s; parsing included), beside a 1-instruction case
(what every run pays: interpreter, imports, the dump), a bare interpreter and `import numpy`.
The command timed is the installed console script (cli_timing.command), this tree's packages first on its path.
Wall time is best of 3 runs; CPU time (the whole process's user + system) least of 5, with the machine's load.
With --valgrind, each command is also run once under valgrind's cachegrind, which counts the instructions the
whole process executes: a figure the machine's load does not move, for comparing two trees.

    python benchmarks/decode_speed.py [--valgrind]
"""
from __future__ import annotations

import gc
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from golden import core, isa

from cli_timing import command, command_note, load_note, timed, user_env, walls
from tensix_cli import cli
from tensix_cli.run import write_dump
from tensix_diff import case as case_module
from tensix_diff.case import fast as fast_reader
from tensix_diff.golden_run import observe

ROOT = Path(__file__).resolve().parents[1]
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
    in_process("\n".join(every) + "\n")
    cli_rates([("one instruction", one_word(distinct[0])), ("instruction text", text), ("raw .word lines", raw),
               ("raw .word lines, every word distinct", every)], valgrind="--valgrind" in sys.argv[1:])
    print(load_note())


def one_word(word: int) -> list[str]:
    return ["name: one-word", "threads:", "  0:", f"    - .word {word:#010x}"]


def in_process(body: str, runs: int = 5) -> None:
    """The CPU seconds (least of ``runs``, every cache emptied) of each step the command takes for the case
    ``body``, in this process with the collector set as the command sets it: parse, decode, execute (decoded
    words cached), observe and write the dump."""
    gc.freeze()
    young = gc.get_threshold()
    gc.set_threshold(cli.YOUNG_OBJECTS)
    best = dict.fromkeys(("parse", "decode", "execute", "observe and dump"), float("inf"))
    with tempfile.TemporaryDirectory() as d:
        for _ in range(runs):
            fast_reader._LINE_WORDS.clear()
            isa._assemble.cache_clear()
            core._decode_cache.clear()
            t = [time.process_time()]
            case = case_module.parse_case(body)
            t.append(time.process_time())
            core.decode_program(case.threads[0])
            t.append(time.process_time())
            m = core.Tensix()
            m.run(case.threads, case.actions)
            t.append(time.process_time())
            write_dump(str(Path(d) / "out.json"), observe(m.s, case))
            t.append(time.process_time())
            for k, a, b in zip(best, t, t[1:]):
                best[k] = min(best[k], b - a)
    gc.set_threshold(*young)
    print("the distinct-word case's steps in this process, CPU (least of 5): "
          + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in best.items()))


def cli_rates(cases: list[tuple[str, list[str]]], runs: int = 5, valgrind: bool = False) -> None:
    """Each case through the installed console script, as a user runs it, with this tree's packages first on
    PYTHONPATH: wall time best of 3, CPU time (the whole process: interpreter start, imports, parsing, the run,
    the dump, exit) least of ``runs``; a bare interpreter and ``import numpy`` beside them (what any run pays)."""
    script = command()
    env, note = user_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    print(command_note(script) + f"; packages from {ROOT}")
    if note:
        print(note)
    for what, cmd in (("interpreter start (python -c pass)", [sys.executable, "-c", "pass"]),
                      ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"])):
        cpu = min(timed(cmd, {**env, "OPENBLAS_NUM_THREADS": "1"})[1] for _ in range(runs))
        print(f"{what}: {cpu:.3f} CPU-s (OPENBLAS_NUM_THREADS=1, as the command sets it)")
        if valgrind:
            print(f"{what} under valgrind: {instructions(cmd, {**env, 'OPENBLAS_NUM_THREADS': '1'}) / 1e6:.0f}M "
                  "instructions")
    with tempfile.TemporaryDirectory() as d:
        for what, lines in cases:
            n = sum(line.startswith("    - ") for line in lines)
            case = Path(d) / "big.yaml"
            case.write_text("\n".join(lines) + "\n")
            cmd = [script, "run", str(case), "--backend", "golden", "--against", "golden",
                   "--dump", str(Path(d) / "out.json"), "-q"]
            best = min(walls(cmd, 3, env))     # after an untimed run that writes the bytecode
            cpu = min(timed(cmd, env)[1] for _ in range(runs))
            if valgrind:
                print(f"{what} through the CLI under valgrind: {instructions(cmd, env) / 1e6:.0f}M instructions")
            if n == 1:      # what every case pays: interpreter, imports, one golden run and the dump
                print(f"a 1-instruction case through the CLI (start-up and dump): {cpu:.3f} CPU-s, {best:.3f} s wall")
                continue
            met = ", ".join(f"{k} {'met' if n / v >= 200e3 else 'NOT met'}" for k, v in (("CPU", cpu), ("wall", best)))
            print(f"{n}-instruction case as {what} through the CLI: {cpu:.3f} CPU-s, {n / cpu / 1e3:.0f}k "
                  f"instructions per CPU-s; {best:.3f} s wall, {n / best / 1e3:.0f}k instructions/s "
                  f"(target 200k: {met})")


def instructions(cmd: list[str], env: dict[str, str]) -> int:
    """The instructions the whole process of ``cmd`` executes (valgrind's cachegrind, its I refs); a script is run
    by the interpreter its #! line names."""
    if shutil.which("valgrind") is None:
        sys.exit("--valgrind: valgrind is not installed")
    with open(cmd[0], "rb") as f:
        first = f.readline()
    run = [first[2:].decode().strip()] + cmd if first.startswith(b"#!") else cmd
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"] + run,
                         env=env, capture_output=True, text=True).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out)[1].replace(",", ""))


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
