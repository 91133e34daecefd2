"""Golden emulator speed on one core: instructions/s for a counter+GPR mix and a register-file mix, and
cases/s for 64-instruction cases through hwbridge.golden_backend.GoldenBackend.

    python benchmarks/golden_speed.py [--seconds S] [--profile]

Targets (issue 12): >= 200,000 instr/s (counter+GPR), >= 100,000 instr/s (register files), >= 20,000 instr/s
(matrix-unit arithmetic). Prints, never asserts.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import time

from golden.core import Tensix
from golden.isa import encode
from golden.registers import config_field
from golden.state import MATRIX_UNIT
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import Case, Init

T = 1
PROGRAM = 64


def counter_gpr_mix(rng: random.Random) -> list[int]:
    """SETRWC / INCRWC / SETADC* / INCADC* / SETDMAREG / ADDDMAREG with valid random fields."""
    makers = [
        lambda: encode("SETRWC", {"rwc_cr": rng.randrange(8), "rwc_d": rng.randrange(16), "rwc_b": rng.randrange(16),
                                  "rwc_a": rng.randrange(16), "bitmask": rng.randrange(16)}),
        lambda: encode("INCRWC", {"rwc_d": rng.randrange(16), "rwc_b": rng.randrange(16), "rwc_a": rng.randrange(16)}),
        lambda: encode("SETADC", {"cntsetmask": rng.randrange(1, 8), "channelindex": rng.randrange(2),
                                  "dimensionindex": rng.randrange(4), "value": rng.randrange(1 << 16)}),
        lambda: encode("SETADCXY", {"cntsetmask": rng.randrange(1, 8), "ch1_y": rng.randrange(8),
                                    "ch1_x": rng.randrange(8), "ch0_y": rng.randrange(8), "ch0_x": rng.randrange(8),
                                    "bitmask": rng.randrange(1, 16)}),
        lambda: encode("SETADCZW", {"cntsetmask": rng.randrange(1, 8), "bitmask": rng.randrange(1, 16)}),
        lambda: encode("INCADCXY", {"cntsetmask": rng.randrange(1, 8), "ch0_x": rng.randrange(8)}),
        lambda: encode("SETDMAREG", {"payload_sigsel": rng.randrange(1 << 14), "regindex16b": rng.randrange(128)}),
        lambda: encode("ADDDMAREG", {"resultregindex": rng.randrange(64), "opbregindex": rng.randrange(64),
                                     "oparegindex": rng.randrange(64)}),
    ]
    return [rng.choice(makers)() for _ in range(PROGRAM)]


def regfile_mix(rng: random.Random) -> list[int]:
    """MOVD2A / MOVD2B / MOVA2D / MOVB2D / MOVB2A / ZEROACC / SFPSTORE with valid random fields."""
    makers = [
        lambda: encode("MOVD2A", {"src": rng.randrange(0, 64, 4), "instr_mod": 2, "dst": rng.randrange(0, 1024, 4)}),
        lambda: encode("MOVD2B", {"src": rng.randrange(0, 64, 4), "instr_mod": 2, "dst": rng.randrange(0, 1024, 4)}),
        lambda: encode("MOVA2D", {"src": rng.randrange(0, 64, 8), "instr_mod": 2, "dst": rng.randrange(0, 1024, 8)}),
        lambda: encode("MOVB2D", {"src": rng.randrange(0, 64, 4), "movb2d_instr_mod": rng.randrange(6),
                                  "dst": rng.randrange(0, 1024, 8)}),
        lambda: encode("MOVB2A", {"srca": rng.randrange(0, 64, 4), "instr_mod": 2, "srcb": rng.randrange(0, 64, 4)}),
        lambda: encode("ZEROACC", {"clear_mode": rng.choice([0, 1]), "where": rng.randrange(64)}),
        lambda: encode("SFPSTORE", {"lreg_ind": rng.randrange(8), "instr_mod0": 3,
                                    "dest_reg_addr": rng.randrange(0, 1024, 4)}),
    ]
    return [rng.choice(makers)() for _ in range(PROGRAM)]


def regfile_machine() -> Tensix:
    """Both Src banks owned by the matrix unit with BF16 implied formats, so every move can run."""
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        for bank in src.banks:
            bank.allowed_client = MATRIX_UNIT
            bank.implied_format = 5
    return m


def _rate(work, seconds: float) -> tuple[float, float]:
    """Repeat work() (which returns how many units it did) for about ``seconds`` of CPU time; returns
    (units per CPU second, units per wall second). CPU time is this process's: the one-core figure even
    when other processes share the machine."""
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.process_time() - cpu < seconds:
        n += work()
    return n / (time.process_time() - cpu), n / (time.perf_counter() - wall)


def instr_rate(programs: list[list[int]], machine, seconds: float) -> tuple[float, float]:
    m = machine()

    def work() -> int:
        for prog in programs:
            m.run({T: prog})
        return sum(len(p) for p in programs)
    return _rate(work, seconds)


def case_rate(cases: list[Case], seconds: float) -> tuple[float, float]:
    backend = GoldenBackend()

    def work() -> int:
        for case in cases:
            result = backend.run(case)
            assert result.status == "ok", result.message
        return len(cases)
    return _rate(work, seconds)


def counter_cases(programs: list[list[int]]) -> list[Case]:
    return [Case(name=f"bench-{i}", description="", threads={T: p}) for i, p in enumerate(programs)]


def regfile_cases(programs: list[list[int]]) -> list[Case]:
    """Thread 0 gives both Src banks to the matrix unit (BF16 implied formats), then 62 moves run."""
    give = [encode("UNPACR_NOP", {"unpacker_select": u, "set_dvalid": 1, "unpack_pop": 1}) for u in (0, 1)]
    out_format = {config_field(f"THCON_SEC{u}_REG2_Out_data_format").index: 5 for u in (0, 1)}
    assert all(config_field(f"THCON_SEC{u}_REG2_Out_data_format").shift == 0 for u in (0, 1))
    return [Case(name=f"bench-rf-{i}", description="", threads={0: give, T: p[:PROGRAM - 2]},
                 init=Init(config={0: out_format})) for i, p in enumerate(programs)]


def _show(label: str, rates: tuple[float, float], unit: str, target: str = "") -> None:
    cpu, wall = rates
    print(f"{label:<34} {cpu:>10,.0f} {unit} per CPU second ({wall:,.0f} per wall second){target}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--profile", action="store_true", help="print the top of a cProfile of the register-file mix")
    args = ap.parse_args()
    rng = random.Random(1)
    counters = [counter_gpr_mix(rng) for _ in range(50)]
    regfiles = [regfile_mix(rng) for _ in range(50)]
    # check every program runs before timing it
    for prog in counters:
        Tensix().run({T: prog})
    for prog in regfiles:
        regfile_machine().run({T: prog})
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    _show("counter+GPR mix:", instr_rate(counters, Tensix, args.seconds), "instr/s", "  target 200,000")
    _show("register-file mix:", instr_rate(regfiles, regfile_machine, args.seconds), "instr/s", "  target 100,000")
    _show("64-instruction cases (counter+GPR):", case_rate(counter_cases(counters), args.seconds), "cases/s")
    _show("64-instruction cases (reg. files):", case_rate(regfile_cases(regfiles), args.seconds), "cases/s")
    _show("arithmetic mix (matrix unit):", arithmetic_mix_rate(args.seconds), "instr/s", "  target 20,000")
    if args.profile:
        for name, progs, machine in (("counter+GPR", counters, Tensix), ("register-file", regfiles, regfile_machine)):
            prof = cProfile.Profile()
            prof.runcall(instr_rate, progs, machine, args.seconds)
            print(f"--- profile: {name} mix ---")
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def arithmetic_mix_rate(seconds: float) -> tuple[float, float]:
    """Matrix-unit arithmetic (H5): MVMUL / ELWADD / ELWSUB / ELWMUL / GMPOOL / GAPOOL on random BF16
    operands (SrcB row 0 is 1.0 for GMPOOL) into an FP32 Dst."""
    from golden.fpu_formats import src_from_fp32
    rng = random.Random(2)
    names = ["MVMUL", "MVMUL", "ELWADD", "ELWSUB", "ELWMUL", "GMPOOL", "GAPOOL"]
    progs = [[encode(n, {"instr_mod19": 1} if n.endswith("POOL") else {}) for n in rng.choices(names, k=PROGRAM)]
             for _ in range(10)]

    def machine() -> Tensix:
        m = regfile_machine()
        f = config_field("ALU_ACC_CTRL_Fp32_enabled")
        m.s.config[0][f.index] = f.put(m.s.config[0][f.index], 1)
        for src in (m.s.srca, m.s.srcb):
            src.banks[0].rows[:] = [[src_from_fp32(rng.randrange(0x3E000000, 0x41000000)) for _ in range(16)]
                                    for _ in range(64)]
        m.s.srcb.banks[0].rows[0] = src_from_fp32(0x3F800000)
        return m
    return instr_rate(progs, machine, seconds)


if __name__ == "__main__":
    main()
