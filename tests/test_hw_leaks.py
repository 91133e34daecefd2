"""No state leaks from one case into the next on the hw backend: B run right after A on the same worker
gives exactly what B gives alone, bit for bit, for at least 1,000 (A, B) pairs.

A (dirty) cases: generated cases of the profiles in PROFILES (tt-llk pipelines and MOP blocks with their RISC-V
actions among them), plus one directed case per stateful unit (packer
mid-tile, the SFPU flag stack at every depth, lane flags pushed, a loaded replay buffer, a held mutex, a
latched wait, MOP mask, a replay load left unfinished, posted semaphores, LRegs, Src banks left valid, unpacker state). B (probe) cases:
the five pairs a review found leaking on ttsim 1.10.0, a MOP-mask probe, and generated cases of PROFILES.
Needs a Blackhole libttsim.so (``pytest --backend=hw --simulator=PATH``); skipped otherwise.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from golden import isa
from generators.profiles import profile_names
from golden.riscv import RiscvAction
from tensix_diff.case import Case, load_case

ROOT = Path(__file__).resolve().parents[1]
PROFILES = tuple(profile_names())   # every profile (14): counters and default carry MOP blocks (mop_cfg RISC-V
# actions), sfpu* the flag stack and LRegs, pipeline*: whole tt-llk kernels with every action kind
SFPSTORE0 = "SFPSTORE lreg_ind=1 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=0"


def _w(text: str) -> list[int]:
    return isa.assemble(text)


def _simulator(config) -> str | None:
    return config.getoption("simulator", None) or os.environ.get("TENSIX_DIFF_SIMULATOR")


@pytest.fixture(scope="module")
def hw(request):
    sim = _simulator(request.config)
    if not sim:
        pytest.skip("needs a Blackhole libttsim.so: pytest --backend=hw --simulator=PATH")
    from hwbridge.hw.backend import HwBackend
    with HwBackend(simulator=sim, isolation=request.config.getoption("isolation", None)) as backend:
        yield backend


def _delta08(last: int) -> Case:
    case = load_case(ROOT / "tests" / "corpus" / "deltas" / "delta-08-packer-ystride.yaml")
    pacr = isa.lookup("PACR").opcode
    words = {t: [w & ~1 | last if w >> 24 == pacr else w for w in ws] for t, ws in case.threads.items()}
    return replace(case, name=f"leak-delta08-last{last}", threads=words)


def directed_dirty() -> list[Case]:
    out = [_delta08(0),
           Case("leak-lane-flags-pushed", "", {1: _w("SFPENCC imm12_math=1 instr_mod1=10; SFPPUSHC;"
                                                     " SFPENCC imm12_math=3 instr_mod1=10")}),
           Case("leak-mutex-held", "", {0: _w("ATGETM mutex_index=0")}),
           Case("leak-replay-loaded", "", {1: _w("REPLAY start_idx=0 len=1 execute_while_loading=0 load_mode=1;"
                                                 " SETDMAREG payload_sigsel=5 regindex16b=2")}),
           Case("leak-replay-load-pending", "", {1: _w("REPLAY start_idx=0 len=31 execute_while_loading=1"
                                                       " load_mode=1; SETDMAREG payload_sigsel=5 regindex16b=2")}),
           Case("leak-mop-mask", "", {1: _w("MOP_CFG zmask_hi16=0xffff")}),
           Case("leak-semaphores-posted", "", {2: _w("SEMINIT max_value=3 init_value=1 sem_sel=15;"
                                                     " SEMPOST sem_sel=15; SEMPOST sem_sel=3")}),
           Case("leak-lregs", "", {1: _w("; ".join(f"SFPLOADI lreg_ind={r} instr_mod0=2 imm16={0x1111 * (r + 1)}"
                                                   for r in range(8)))}),
           Case("leak-src-valid", "", {1: _w("UNPACR_NOP unpacker_select=0 set_dvalid=1 unpack_pop=1;"
                                             " UNPACR_NOP unpacker_select=1 set_dvalid=1 unpack_pop=1")}),
           Case("leak-stallwait-latched", "", {1: _w("STALLWAIT stall_res=1 wait_res=0")})]
    out += [Case(f"leak-flag-stack-depth{d}", "", {1: _w("; ".join(["SFPPUSHC"] * d))}) for d in range(1, 9)]
    return out


def probes() -> list[Case]:
    return [_delta08(1),
            Case("probe-push-pop", "", {1: _w("; ".join(["SFPPUSHC"] * 8 + ["SFPPOPC"] * 8)
                                              + "; SFPLOADI lreg_ind=1 instr_mod0=2 imm16=0x3f80; " + SFPSTORE0)}),
            Case("probe-conditional-store", "", {1: _w("SFPLOADI lreg_ind=1 instr_mod0=2 imm16=0x4000;"
                                                       " SFPENCC imm12_math=3 instr_mod1=10; SFPPOPC; " + SFPSTORE0)}),
            Case("probe-mutex", "", {0: _w("ATGETM mutex_index=0; SETDMAREG payload_sigsel=7 regindex16b=4;"
                                           " ATRELM mutex_index=0")}),
            Case("probe-replay-play", "", {1: _w("REPLAY start_idx=0 len=1 execute_while_loading=0 load_mode=0")}),
            _mop_probe()]


def _mop_probe() -> Case:
    """32 MOP iterations of INCRWC (Dst += 1) under a zero low mask: a leftover top half skips 16 of them."""
    cfg = {1: 0, 3: isa.assemble("INCRWC rwc_cr=0 rwc_d=1 rwc_b=0 rwc_a=0")[0]}
    cfg.update({i: isa.encode("NOP", {}) for i in (2, 4, 5, 6, 7, 8)})
    acts = [(0, RiscvAction("mop_cfg", (i, v))) for i, v in sorted(cfg.items())]
    return Case("probe-mop-mask", "", {1: _w("MOP mop_type=0 loop_count=31 zmask_lo16_or_loop_count=0")},
                actions={1: acts})


def _generated(seed: int, per: int) -> list[Case]:
    from generators.bulk import generate_one
    return [generate_one(seed, i, p) for p in PROFILES for i in range(per)]


def _same(a, b) -> bool:
    return a.status == b.status and a.state == b.state


def test_b_after_a_equals_b_alone_for_1000_pairs(hw, capsys):
    dirty = directed_dirty() + _generated(301, 3)            # 18 directed + 3 per profile
    clean = probes() + _generated(302, 3)                     # 6 probes + 3 per profile
    alone = {}
    for b in clean:
        hw.worker.stop()                                      # B alone: on a fresh simulator
        alone[b.name] = hw.run(b)
    leaks, pairs, dirty_ok = [], 0, 0
    for a in dirty:
        for b in clean:
            hw.worker.stop()
            first = hw.run(a)
            dirty_ok += first.status == "ok"
            after = hw.run(b)
            pairs += 1
            if not _same(after, alone[b.name]):
                leaks.append(f"{b.name} after {a.name} ({first.status}): {after.status} vs alone"
                             f" {alone[b.name].status}")
    with capsys.disabled():
        print(f"\nleak suite: {pairs} dirty->clean pairs ({len(dirty)} dirty cases, {len(clean)} probes,"
              f" {dirty_ok} dirty runs ok), {len(leaks)} leaks")
    assert pairs >= 1000
    assert not leaks, "\n".join(leaks[:20])
