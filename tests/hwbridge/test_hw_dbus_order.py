"""The hw programs read the debug bus and Dest after their select in the order the documents prescribe (no device).

tt-isa-documentation WormholeB0/TensixTile/DebugDaisychain.md: the store to the select register
(RISCV_DEBUG_REG_DBG_BUS_CNTL_REG) must be emitted before the load of the data register, and the data is read at
least five cycles after the select changed (tt-llk's dbg_get_array_row waits five cycles after DBG_ARRAY_RD_CMD
too). BlackholeA0/TensixTile/BabyRISCV/MemoryOrdering.md: a store and a later load of a different address can be
emitted in either order; a fence emits the store first; one region's requests are processed in the order emitted;
a consumed load has returned before any later instruction starts.

ttsim applies a store the moment it runs, so it cannot tell a wrong order from a right one: these tests decode the
builder's RISC-V words with test_hw_ttsync's decoder. Every data load must follow, after the last select store: a
fence, a load of the debug-register block (the ordering read) consumed by the next instruction and otherwise
unused, then at least five cycles in EX1 (one an instruction, six a divide by 2 or more) before the data load.
"""
from __future__ import annotations

import pytest

from golden.state import THREADS
from hwbridge.hw import l1_map as M
from hwbridge.hw import probe
from hwbridge.hw import program as hw_program
from hwbridge.hw.collect import config_reads
from hwbridge.hw import rv32 as rv
from hwbridge.hw.platform import load
from tensix_diff.case import parse_case
from test_hw_ttsync import EVERY_ACTION, decode

DEBUG_REGION = (0xFFB12000, 0xFFB12FFF)                 # tile control / debug / status (BabyRISCV/README.md)
SELECTS = {0xFFB12054, 0xFFB12060, 0xFFB12064}          # DBG_BUS_CNTL_REG, DBG_ARRAY_RD_EN, DBG_ARRAY_RD_CMD
DATA = {0xFFB1205C, 0xFFB1206C}                         # DBG_RD_DATA, DBG_ARRAY_RD_DATA
SETTLE = 5

TTSIM, SILICON = load("ttsim"), load("blackhole")


def _ex1_cycles(ins) -> int:
    """The cycles an instruction holds EX1 at least (BabyRISCV/README.md): six for a divide by a known divisor other
    than 0, 1 and -1, else one."""
    return 6 if ins.divisor not in (None, 0, 1, 0xFFFFFFFF) else 1


def _consumes(code, i: int) -> bool:
    """Instruction i + 1 is an ALU instruction reading the register load i wrote."""
    return code[i].rd != 0 and i + 1 < len(code) and code[i + 1].kind == "alu" and code[i].rd in code[i + 1].reads


def order_violations(code) -> tuple[list[str], int]:
    """Every debug-bus or Dest data load that does not follow the documented order, and how many data loads
    were checked."""
    bad = []
    selects = [i for i, c in enumerate(code) if c.kind == "store" and c.addr in SELECTS]
    loads = [j for j, c in enumerate(code) if c.kind == "load" and c.addr in DATA]
    for j in loads:
        s = max((i for i in selects if i < j), default=None)
        if s is None:
            bad.append(f"{j}: a data load with no select store before it")
            continue
        fence = next((k for k in range(s + 1, j) if code[k].kind == "fence"), None)
        if fence is None:
            bad.append(f"{j}: no fence between the select store at {s} and the data load")
            continue
        o = next(k for k in range(fence + 1, j + 1) if code[k].kind == "load")      # the ordering read
        if not (DEBUG_REGION[0] <= (code[o].addr or 0) <= DEBUG_REGION[1]):
            bad.append(f"{j}: the first load after the fence at {fence} is not from the debug-register block")
        elif not _consumes(code, o):
            bad.append(f"{j}: the ordering read at {o} is not consumed by the next instruction")
        elif o == j:                       # the ordering read itself: its value must not be used
            rd = code[j].rd
            for k in range(j + 2, len(code)):
                if rd in code[k].reads:
                    bad.append(f"{j}: the ordering read's value is used at {k}")
                if code[k].rd == rd or rd in code[k].reads:
                    break
        elif sum(_ex1_cycles(code[k]) for k in range(o + 1, j)) < SETTLE:
            bad.append(f"{j}: the data load enters EX1 less than {SETTLE} cycles after its ordering read's use")
    return bad, len(loads)


def _programs(case, plat):
    reads, _ = config_reads(case, plat)
    return {t: decode(hw_program.thread_program(case, t, plat, reads).assemble()) for t in range(THREADS)}


@pytest.mark.parametrize("plat", [TTSIM, SILICON], ids=lambda p: p.name)
def test_every_debug_bus_and_dest_read_of_a_case_follows_the_documents(plat):
    programs = _programs(parse_case(EVERY_ACTION), plat)
    for t, code in programs.items():
        bad, _ = order_violations(code)
        assert bad == [], f"thread {t}"
    _, n = order_violations(programs[0])
    # thread 0: the Src reset's two reads, each counter word, eight Dest reads in the loop body; two loads each
    assert n == 2 * (2 + len(plat.dbus_reads()) + 8)


def test_the_selftest_probe_reads_the_debug_bus_in_order():
    job = probe.dbus_job([(6, 9), (3, 2)])
    words = [int.from_bytes(job.writes[1][1][i:i + 4], "little") for i in range(0, len(job.writes[1][1]), 4)]
    bad, n = order_violations(decode(words))
    assert bad == [] and n == 2 * 8


def test_the_checker_catches_each_departure():
    """The checker fails the sequences the documents forbid, among them the harness's old store-then-load."""
    ctrl, data = M.DBG_BUS_CTRL - M.DEBUG_REGS, M.DBG_RD_DATA - M.DEBUG_REGS
    head = list(rv.li_words(rv.S0, M.DEBUG_REGS)) + [rv.sw(rv.T1, rv.S0, ctrl)]
    nop = rv.addi(rv.ZERO, rv.ZERO, 0)
    order = [rv.fence(), rv.lw(rv.T1, rv.S0, data), rv.and_(rv.T1, rv.T1, rv.T1)]

    def check(*words):
        return order_violations(decode(head + list(words)))[0]
    assert check(rv.lw(rv.T1, rv.S0, data))                                          # the old sequence
    assert check(*[nop] * 8, rv.lw(rv.T1, rv.S0, data))                             # a wait, no fence
    assert check(rv.fence(), rv.lw(rv.T1, rv.S0, data), rv.sw(rv.T1, rv.T2, 0))     # no settle, no consume
    assert check(*order, *[nop] * 3, rv.lw(rv.T1, rv.S0, data))                     # settled four, not five
    assert check(rv.fence(), rv.lw(rv.T1, rv.T2, 0), rv.and_(rv.T1, rv.T1, rv.T1), *[nop] * 4,
                 rv.lw(rv.T1, rv.S0, data))                                         # ordering read elsewhere
    assert check(*order, *[nop] * 4, rv.lw(rv.T2, rv.S0, data), rv.sw(rv.T1, rv.T0, 0))   # stale value stored
    assert not check(*order, *[nop] * 4, rv.lw(rv.T1, rv.S0, data), rv.sw(rv.T1, rv.T0, 0))
    wait = [rv.fence(), rv.lw(rv.T1, rv.S0, data), rv.divu(rv.T1, rv.T1, rv.T5), rv.lw(rv.T1, rv.S0, data)]
    for divisor, bad in ((2, False), (1000, False), (1, True), (0, True)):
        assert bool(check(rv.addi(rv.T5, rv.ZERO, divisor), *wait)) is bad, divisor


class _LateSelect:
    """A tile whose DBG_BUS_CTRL write takes effect only after ``lag`` host reads of it (a write overtaken by later
    reads, as the NoC allows across virtual channels); DBG_RD_DATA shows the select in effect."""

    def __init__(self, lag: int):
        self.lag, self.ctrl, self.pending, self.log = lag, 0, None, []

    def noc_write32(self, x, y, addr, value):
        self.log.append(("w", addr, value))
        if addr == M.DBG_BUS_CTRL:
            self.pending = [value, self.lag]

    def noc_read32(self, x, y, addr):
        if addr == M.DBG_BUS_CTRL and self.pending:
            self.pending[1] -= 1
            if self.pending[1] < 0:
                self.ctrl, self.pending = self.pending[0], None
        self.log.append(("r", addr))
        return self.ctrl if addr == M.DBG_BUS_CTRL else self.ctrl ^ 0xFFFFFFFF

    def noc_read(self, x, y, addr, size):
        return bytes(size)


def _snapshot(lag: int, readback: bool) -> tuple[dict, _LateSelect]:
    from hwbridge.hw.device import Device
    dev = Device.__new__(Device)
    dev.raw, dev.xy = _LateSelect(lag), (0, 0)
    reads = [(6, 9, r) for r in range(4)]
    return dev.snapshot({"stall_dbus": reads, "stall_reads": [], "dbus_readback": readback}), dev.raw


def test_the_host_reads_the_data_only_after_its_select_reads_back():
    from hwbridge.hw import dbus
    want = [dbus.select(6, 9, r) ^ 0xFFFFFFFF for r in range(4)]
    snap, tile = _snapshot(3, readback=True)
    assert snap["dbus"] == want and "dbus_error" not in snap
    assert tile.log[-1] == ("w", M.DBG_BUS_CTRL, 0)                     # the bus disabled after
    assert _snapshot(3, readback=False)[0]["dbus"] != want              # what the read-back prevents
    snap, tile = _snapshot(10 ** 6, readback=True)                      # a select that never reads back
    assert snap["dbus"] == [] and "did not read back" in snap["dbus_error"]
    assert ("r", M.DBG_RD_DATA) not in tile.log and tile.log[-1] == ("w", M.DBG_BUS_CTRL, 0)


def test_the_platforms_say_whether_the_host_can_read_the_select_back():
    from hwbridge.hw.recovery import snapshot_payload
    case = parse_case("name: one-nop\nthreads:\n  0:\n    - NOP\n")
    for plat, readable in ((TTSIM, False), (SILICON, True)):
        assert snapshot_payload(hw_program.build(case, plat), plat)["dbus_readback"] is readable


def test_a_hang_whose_select_never_read_back_says_so_in_its_provenance():
    from hwbridge.hw.backend import HwBackend
    from hwbridge.hw.worker import Reply
    from tensix_diff.case import Case
    backend = object.__new__(HwBackend)             # no device: _hang and _result only read the snapshot
    backend.isolation, backend.platform = "replace", SILICON
    snap = {"l1": [bytes(M.FLAG_BYTES)], "dbus": [], "dbus_error": "DBG_BUS_CTRL did not read back 0x20060009"}
    reply = Reply("hang", message="x", snapshot=snap)
    result = backend._result(None, reply, {}, backend._hang(Case("c", "", {}), reply, 0))
    assert result.status == "hang" and result.provenance["hang_dbus"] == snap["dbus_error"]

@pytest.mark.parametrize("no_swizzle", [False, True])
def test_the_dest_window_probe_loads_after_its_config_store_landed(no_swizzle):
    """RISC_DEST_ACCESS_CTRL is stored, loaded back and the value used before the first load of the Dest window
    (another region: MemoryOrdering.md gives no order between them otherwise)."""
    job = probe.window_job(no_swizzle)
    code = decode([int.from_bytes(job.writes[1][1][i:i + 4], "little") for i in range(0, len(job.writes[1][1]), 4)])
    first = next(j for j, c in enumerate(code) if c.kind == "load" and c.addr == probe.DEST_WINDOW)
    cfg = M.CFG_BASE + 4 * probe.RISC_DEST_ACCESS
    store = max(i for i in range(first) if code[i].kind == "store" and code[i].addr == cfg)
    back = next(i for i in range(store + 1, first) if code[i].kind == "load" and code[i].addr == cfg)
    assert _consumes(code, back)
