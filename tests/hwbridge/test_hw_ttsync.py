"""The hw programs wait for Tensix and read PC_BUF and mailboxes the way the documents prescribe (no device).

tt-isa-documentation BlackholeA0/TensixTile/BabyRISCV: ManualTTSync.md (a wait is a store to
CoprocessorDoneCheck, a load from it, and an ALU instruction consuming the load; while such a load is in
flight no other load may start against PC_BUF_BASE..+0xFFFF or TENSIX_MAILBOX0_BASE..+0x3FFF: a hardware
bug returns wrong values or hangs) and MemoryOrdering.md (a store to Tensix GPRs or Config is processed
before a later Tensix push only if a load of that region, ordered after it, is consumed first).

ttsim blocks a TRISC until the queue is empty, so it cannot tell a wrong sequence from a right one: these
tests decode the RISC-V words the builder emits, with a decoder written here independently of rv32.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from golden.state import THREADS
from hwbridge.hw import l1_map as M
from hwbridge.hw import program as hw_program
from hwbridge.hw.collect import config_reads
from hwbridge.hw.platform import load
from tensix_diff.case import load_case, parse_case

PC_BUF = (0xFFE80000, 0xFFE8FFFF)
MAILBOXES = (0xFFEC0000, 0xFFEC3FFF)
DONE_CHECKS = {0xFFE80004, 0xFFE80008}             # CoprocessorDoneCheck, MOPExpanderDoneCheck
TENSIX_STATE = {"GPRs": (0xFFE00000, 0xFFE0FFFF), "Config": (0xFFEF0000, 0xFFEFFFFF)}


@dataclass
class Ins:
    """One decoded word: kind is load, store, alu, branch, jump, fence, push (an inline Tensix word) or other."""
    kind: str
    rd: int = 0
    reads: tuple = ()
    addr: int | None = None          # loads and stores: the address, where the registers it uses are known
    divisor: int | None = None       # div/divu/rem/remu: the divisor, where it is a known constant


def _sx(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def decode(words: list[int]) -> list[Ins]:
    """RV32I words in program order, with load/store addresses from constants built by lui/addi before them
    (every base the harness uses is such a constant)."""
    known: dict[int, int] = {0: 0}
    out = []
    for w in words:
        if w & 3 != 3:
            out.append(Ins("push"))
            continue
        op, rd, f3, rs1, rs2 = w & 0x7F, (w >> 7) & 31, (w >> 12) & 7, (w >> 15) & 31, (w >> 20) & 31
        value = None
        if op == 0x37:
            ins, value = Ins("alu", rd), w & 0xFFFFF000
        elif op == 0x13:
            ins = Ins("alu", rd, (rs1,))
            if f3 == 0 and rs1 in known:
                value = (known[rs1] + _sx(w >> 20, 12)) & 0xFFFFFFFF
        elif op == 0x33:
            ins = Ins("alu", rd, (rs1, rs2), divisor=known.get(rs2) if w >> 25 == 1 and f3 >= 4 else None)
        elif op == 0x03:
            base = known.get(rs1)
            ins = Ins("load", rd, (rs1,), None if base is None else (base + _sx(w >> 20, 12)) & 0xFFFFFFFF)
        elif op == 0x23:
            base = known.get(rs1)
            ins = Ins("store", 0, (rs1, rs2),
                      None if base is None else (base + _sx((w >> 25) << 5 | rd, 12)) & 0xFFFFFFFF)
        elif op == 0x63:
            ins = Ins("branch", 0, (rs1, rs2))
        elif op == 0x6F:
            ins = Ins("jump", rd)
        elif op == 0x0F:
            ins = Ins("fence")
        else:
            raise AssertionError(f"unexpected word {w:#010x}")
        if ins.rd:
            if value is None:
                known.pop(ins.rd, None)
            else:
                known[ins.rd] = value
        out.append(ins)
    return out


def _in(addr: int | None, span: tuple[int, int]) -> bool:
    return addr is not None and span[0] <= addr <= span[1]


def _consumed_next(code: list[Ins], i: int) -> bool:
    """The instruction after load i is an ALU instruction reading the loaded register."""
    nxt = code[i + 1] if i + 1 < len(code) else None
    return code[i].rd != 0 and nxt is not None and nxt.kind == "alu" and code[i].rd in nxt.reads


def violations(code: list[Ins]) -> list[str]:
    """Every place ``code`` departs from ManualTTSync.md / MemoryOrdering.md (empty when it follows them)."""
    bad = []
    for i, ins in enumerate(code):
        if ins.kind == "load" and ins.addr is None:
            bad.append(f"{i}: a load from an address the decoder cannot follow")
        if ins.kind != "load":
            continue
        if ins.addr in DONE_CHECKS:
            prev = code[i - 1] if i else None
            if not (prev and prev.kind == "store" and prev.addr == ins.addr):
                bad.append(f"{i}: a wait for Tensix without the store to {ins.addr:#x} before its load")
        if (_in(ins.addr, PC_BUF) or _in(ins.addr, MAILBOXES)) and not _consumed_next(code, i):
            bad.append(f"{i}: the PC_BUF/mailbox load from {ins.addr:#x} is not consumed by the next instruction")
        if i and code[i - 1].kind == "store" and code[i - 1].addr == ins.addr and not _consumed_next(code, i):
            bad.append(f"{i}: the read-back of the store to {ins.addr:#x} is not consumed by the next instruction")
    # a store to GPRs or Config is ordered before the next push: a consumed load of the same region after it,
    # reading an address stored to since (so the load follows that store) or after a fence
    for name, span in TENSIX_STATE.items():
        for i, ins in enumerate(code):
            if ins.kind != "store" or not _in(ins.addr, span):
                continue
            stored, fenced, ordered = {ins.addr}, False, False
            for j in range(i + 1, len(code)):
                c = code[j]
                if c.kind == "push":
                    break
                fenced |= c.kind == "fence"
                if c.kind == "store" and _in(c.addr, span):
                    stored.add(c.addr)
                if c.kind == "load" and _in(c.addr, span) and (fenced or c.addr in stored) and _consumed_next(code, j):
                    ordered = True
                    break
            else:
                ordered = True                     # no push after it in this program
            if not ordered:
                bad.append(f"{i}: the store to {name} at {ins.addr:#x} can land after the next Tensix push")
    return bad


EVERY_ACTION = """
name: every-action-kind
threads:
  0:
    - NOP
    - cfg: {index: 64, value: 0x1234}
    - cfg: {index: 65, value: 0xf0f0, mask: 0xff00}
    - cfg: {index: 4, value: 7}
    - mop_cfg: {index: 1, value: 3}
    - gpr: {index: 5, value: 0x55}
    - l1: {addr: 0x20000, hex: "00112233 44556677"}
    - sem_wait: {sem: 1, until: "!= 0"}
    - sem_wait: {sem: 1, until: ">= 1"}
    - mailbox_read: {from: 1, gpr: 9}
    - mailbox_read: {from: 2, gpr: 10}
    - sem_get: 1
    - NOP
  1:
    - NOP
    - mailbox_write: {to: 0, value: 0x77}
    - mailbox_write: {to: 2, value: 0x78}
    - sem_post: 1
    - feature_disable: 0
    - NOP
  2:
    - sem_wait: {sem: 2, until: "== 0"}
    - mailbox_read: {from: 1, gpr: 1}
    - mailbox_write: {to: 0, value: 1}
observe:
  l1: [{addr: 0x20000, size: 8}]
"""

TTSIM, SILICON = load("ttsim"), load("blackhole")
KERNELS = sorted((Path(__file__).parents[1] / "corpus" / "kernels").glob("*.yaml"))


def _programs(case, plat):
    reads, _ = config_reads(case, plat)
    return {t: decode(hw_program.thread_program(case, t, plat, reads).assemble()) for t in range(THREADS)}


@pytest.mark.parametrize("plat", [TTSIM, SILICON], ids=lambda p: p.name)
def test_every_wait_and_pc_buf_or_mailbox_load_follows_the_documents(plat):
    case = parse_case(EVERY_ACTION)
    assert {a.kind for acts in case.actions.values() for _, a in acts} >= {
        "cfg", "mop_cfg", "gpr", "l1", "sem_post", "sem_get", "sem_wait", "mailbox_write", "mailbox_read",
        "feature_disable"}
    for t, code in _programs(case, plat).items():
        assert violations(code) == [], f"thread {t}"
        waits = [i for i, c in enumerate(code) if c.kind == "load" and c.addr == M.PC_BUF_TENSIX_SYNC]
        acts = len(case.actions.get(t, []))
        assert len(waits) >= acts + 2         # one per action, the start barrier's, the finish's
        for i in waits:                       # the documented three: store, load, an ALU use of the value
            assert [c.kind for c in code[i - 1:i + 2]] == ["store", "load", "alu"]


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_the_kernels_programs_follow_the_documents(path):
    for t, code in _programs(load_case(path), TTSIM).items():
        assert violations(code) == [], f"thread {t}"


def test_the_checker_catches_each_departure():
    """The checker fails the sequences the documents forbid (the harness's old one-load drain among them)."""
    from hwbridge.hw import rv32 as rv
    sync = M.PC_BUF_TENSIX_SYNC

    def check(*words):
        return violations(decode(list(rv.li_words(rv.T6, sync)) + list(words)))
    assert check(rv.lw(rv.T6, rv.T6, 0))                                        # load only
    assert check(rv.sw(rv.ZERO, rv.T6, 0), rv.lw(rv.T1, rv.T6, 0), rv.addi(rv.T2, rv.ZERO, 1))   # no use
    assert check(rv.lw(rv.T1, rv.T6, 0), rv.andi(rv.T1, rv.T1, 0))                            # no store
    assert not check(rv.sw(rv.ZERO, rv.T6, 0), rv.lw(rv.T1, rv.T6, 0), rv.andi(rv.T1, rv.T1, 0))
    regfile = list(rv.li_words(rv.T0, M.REGFILE_BASE))
    push = 0x02000000 << 2 & 0xFFFFFFFF                                         # a NOP pushed inline
    assert violations(decode(regfile + [rv.sw(rv.T1, rv.T0, 0), push]))
    assert violations(decode(regfile + [rv.sw(rv.T1, rv.T0, 0), rv.lw(rv.T2, rv.T0, 4),
                                        rv.and_(rv.T2, rv.T2, rv.T2), push]))     # another word, no fence
    assert not violations(decode(regfile + [rv.sw(rv.T1, rv.T0, 0), rv.fence(), rv.lw(rv.T2, rv.T0, 4),
                                            rv.and_(rv.T2, rv.T2, rv.T2), push]))
