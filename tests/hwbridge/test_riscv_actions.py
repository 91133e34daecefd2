"""RISC-V-side actions in a case (golden.riscv, contract.md): the loader, golden's semantics, the case's
identity, the hw program that performs them, and the minimiser's handling of their positions."""
from __future__ import annotations

import pytest

from golden import isa
from golden.core import Tensix
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.riscv import RiscvAction
from hwbridge.hw import l1_map as M, leftovers
from hwbridge.hw import program as hw_program
from hwbridge.hw import rv32 as rv
from tensix_diff.case import from_canonical
from hwbridge.hw.platform import load
from tensix_diff.case import CaseError, Observe, canonical, case_hash, dump_case, parse_case, without
from tensix_diff.golden_run import run_golden

INC_D = isa.assemble_line("INCRWC rwc_cr=0 rwc_d=1 rwc_b=0 rwc_a=0")
INC_B = isa.assemble_line("INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0")
INC_A2 = isa.assemble_line("INCRWC rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=2")
NOP = isa.assemble_line("NOP")

CASE = f"""
name: riscv-actions
threads:
  1:
    - mop_cfg: [2, 3, {NOP:#x}, {INC_A2:#x}, {NOP:#x}, {INC_D:#x}, {NOP:#x}, {INC_B:#x}, {INC_B:#x}]
    - MOP mop_type=1 loop_count=0 zmask_lo16_or_loop_count=0
    - cfg: {{index: THCON_SEC0_REG0_TileDescriptor, value: 0xabcd}}
    - mailbox_write: {{to: 0, value: 0x77}}
    - sem_post: 1
  0:
    - sem_wait: {{sem: 1, until: "!= 0"}}
    - mailbox_read: {{from: 1, gpr: 9}}
    - sem_get: 1
    - cfg: {{index: 64, value: 0xf0f0, mask: 0xff00}}
    - l1: {{addr: 0x20000, hex: "00112233 44556677"}}
observe:
  l1: [{{addr: 0x20000, size: 16}}]
  config: {{0: [64]}}
"""


def _run(text: str):
    return run_golden(parse_case(text))


def test_golden_applies_actions_in_program_order_across_threads():
    r = _run(CASE)
    assert r.ok, r.message
    s = r.state
    # MOP template 1, two outer turns of (INC_D, INC_D, last INC_B) then end op INC_A2
    assert (s["rwc"]["1"]["dst"], s["rwc"]["1"]["srcb"], s["rwc"]["1"]["srca"]) == (4, 2, 4)
    assert s["gpr"]["0"][9] == 0x77                        # thread 0 waited for thread 1's mailbox value
    assert s["config"]["0"]["64"] == 0xF0CD                # 0xabcd, then bits 15:8 := 0xf0
    assert s["l1"]["0x20000"] == "0011223344556677" + "00" * 8


def test_a_mop_without_its_configuration_is_not_modelled_and_a_read_nobody_answers_hangs():
    r = _run("name: x\nthreads:\n  1:\n    - MOP mop_type=1 loop_count=0 zmask_lo16_or_loop_count=0\n")
    assert r.status == NotModelled.kind and "never wrote" in r.message
    r = _run("name: x\nthreads:\n  0:\n    - mailbox_read: {from: 2, gpr: 1}\n")
    assert r.status == Hang.kind and "mailbox" in r.message


def test_semaphore_misuse_and_a_second_mailbox_value_are_refused():
    r = _run("name: x\nthreads:\n  0:\n    - sem_get: 3\n")
    assert r.status == UndefinedBehaviour.kind and "underflow" in r.message
    two = "name: x\nthreads:\n  0:\n    - mailbox_write: {to: 1, value: 1}\n    - mailbox_write: {to: 1, value: 2}\n"
    assert _run(two).status == NotModelled.kind
    assert _run("name: x\nthreads:\n  2:\n    - feature_disable: 0x800\n").status == NotModelled.kind


@pytest.mark.parametrize("item, why", [
    ("{bogus: 1}", "unknown key 'bogus'"),
    ("{gpr: {index: 1, value: 2}, l1: {addr: 0, hex: '00000000'}}", "one key"),
    ("{mop_cfg: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}", "1..9 words"),
    ("{l1: {addr: 0x20002, hex: '00000000'}}", "aligned"),
    ("{l1: {addr: 0x20000, hex: '001122'}}", "whole 32-bit words"),
    ("{sem_post: 8}", "not in 0..7"),
    ("{mailbox_write: {to: 1, value: 5}}", "another thread"),
    ("{sem_wait: {sem: 1, until: 'soon'}}", "'OP N'"),
    ("{cfg: {index: NOT_A_REGISTER, value: 1}}", "Config field name"),
    ("{cfg: {value: 1}}", "needs 'index'"),
    ("{cfg: {index: 99999, value: 1}}", "not in 0..223"),
])
def test_malformed_actions_are_one_line_with_the_line_number(item, why):
    with pytest.raises(CaseError) as e:
        parse_case(f"name: x\nthreads:\n  1:\n    - NOP\n    - {item}\n", "bad.yaml")
    msg = str(e.value)
    assert msg.startswith("bad.yaml:5:") and why in msg and "\n" not in msg
    assert msg.count("bad.yaml") == 1                   # the location once


def test_identity_round_trips_and_cases_without_actions_keep_their_hash():
    c = parse_case(CASE)
    assert canonical(parse_case(dump_case(c))) == canonical(c)
    assert case_hash(from_canonical(canonical(c))) == case_hash(c)
    plain = parse_case("name: x\nthreads:\n  1:\n    - NOP\n")
    assert "actions" not in canonical(plain)
    moved = parse_case(CASE.replace("    - sem_post: 1\n", "").replace("    - MOP", "    - sem_post: 1\n    - MOP"))
    assert case_hash(moved) != case_hash(c)               # where an action runs is part of the case


def test_without_keeps_actions_between_the_words_that_stay():
    c = parse_case("name: x\nthreads:\n  1:\n    - NOP\n    - gpr: {index: 1, value: 1}\n    - SETC16 setc16_reg=1 "
                   "setc16_value=1\n    - NOP\n    - gpr: {index: 2, value: 2}\n")
    assert [p for p, _ in c.actions[1]] == [1, 3]
    d = without(c, words={(1, 0), (1, 2)})
    assert d.threads[1] == c.threads[1][1:2] and [p for p, _ in d.actions[1]] == [0, 1]
    e = without(c, actions={(1, 0)})
    assert [a.args for _, a in e.actions[1]] == [(2, 2)]


def test_the_hw_program_performs_each_action_between_the_words():
    c = parse_case(CASE)
    job = hw_program.build(c, load("ttsim"))
    assert job.writes
    refused = parse_case("name: x\nthreads:\n  2:\n    - feature_disable: 0x800\n")
    with pytest.raises(hw_program.Refusal, match="DBG_FEATURE_DISABLE"):
        hw_program.build(refused, load("ttsim"))
    hw_program.build(refused, load("blackhole"))          # silicon takes any value
    assert "mailbox" in leftovers.scan(
        parse_case("name: x\nthreads:\n  0:\n    - mailbox_write: {to: 1, value: 1}\n"))
    # a PACR without Last that only a MOP issues (its template holds it) still marks the packer as dirty
    pacr = isa.encode("PACR", {"last": 0})
    via_mop = parse_case(f"name: x\nthreads:\n  2:\n    - mop_cfg: {{index: 5, value: {pacr:#x}}}\n"
                         "    - mop_cfg: {index: 0, value: 16}\n    - MOP mop_type=1\n")
    assert leftovers.scan(via_mop) == {"packer-continuation"}
    clash = parse_case("name: x\nthreads:\n  0:\n    - l1: {addr: 0x170000, hex: '00000000'}\n")
    with pytest.raises(hw_program.Refusal, match="harness area"):
        hw_program.build(clash, load("ttsim"))


def test_an_action_runs_only_after_the_words_before_it():
    """The RISC-V code for an action starts with a drain: Manual TTSync's store, load and use of
    CoprocessorDoneCheck (PC_BUF TENSIX_SYNC)."""
    c = parse_case("name: x\nthreads:\n  1:\n    - NOP\n    - gpr: {index: 1, value: 5}\n")
    plain = parse_case("name: x\nthreads:\n  1:\n    - NOP\n")
    p = hw_program.thread_program(c, 1, load("ttsim"), {}).assemble()
    q = hw_program.thread_program(plain, 1, load("ttsim"), {}).assemble()
    nop = isa.to_stream(NOP)
    at = len(q) - q[::-1].index(nop) - 1               # the case's NOP: the last one pushed
    assert p[:at + 1] == q[:at + 1]
    sync = M.PC_BUF_TENSIX_SYNC - M.PC_BUF_BASE
    assert p[at + 1:at + 5] == [rv.lui(rv.T6, M.PC_BUF_BASE >> 12), rv.sw(rv.ZERO, rv.T6, sync),
                                rv.lw(rv.T6, rv.T6, sync), rv.andi(rv.T6, rv.T6, 0)]     # drain, then the store
    store = list(rv.li_words(rv.T0, M.REGFILE_BASE + 4)) + [rv.addi(rv.T1, rv.ZERO, 5), rv.sw(rv.T1, rv.T0, 0),
                                                            rv.lw(rv.T1, rv.T0, 0), rv.and_(rv.T1, rv.T1, rv.T1)]
    assert p[at + 5:at + 5 + len(store)] == store        # the store, read back and the value consumed
    assert RiscvAction("gpr", (1, 5)).text == "riscv gpr index=1 value=0x5"
    assert Observe() == parse_case(CASE.split("observe:")[0]).observe
    assert Tensix().s.mailboxes == {}
