"""The hw device layer without a device: the read-back before the release, the route to a remote chip, and
the tested tt-exalens/tt-umd.

A fake tt-umd device stands in for the card; it can lose a write, which is what the read-back exists for
(a card's NOC write can be lost or land after the release write).
"""
from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from hwbridge.hw import l1_map as M
from hwbridge.hw.device import Device, RemoteChip


class FakeTTDevice:
    """tt_umd.TTDevice's noc calls over a dict of bytes; ``lose`` names addresses whose writes vanish."""

    def __init__(self, lose=()):
        self.mem: dict[int, int] = {}
        self.lose, self.log = set(lose), []

    def noc_write(self, x, y, addr, data):
        self.log.append((addr, bytes(data)))
        for i, b in enumerate(data):
            if addr + i not in self.lose:
                self.mem[addr + i] = b

    def noc_read(self, x, y, addr, size):
        return bytes(self.mem.get(addr + i, 0) for i in range(size))

    def noc_read32(self, x, y, addr):
        return int.from_bytes(self.noc_read(x, y, addr, 4), "little")

    def noc_write32(self, x, y, addr, value):
        self.noc_write(x, y, addr, value.to_bytes(4, "little"))


def _device(raw, cores=((1, 2),)) -> Device:
    dev = object.__new__(Device)          # no tt-exalens: the accessors only need raw and the cores
    dev.raw, dev.clock = raw, None
    dev.noc0s = dev.translateds = dev.xys = list(cores)
    dev.select(0)
    return dev


class FinishingTTDevice(FakeTTDevice):
    """A core that finishes its job as soon as it is released (a test about what comes before)."""

    def noc_write(self, x, y, addr, data):
        super().noc_write(x, y, addr, data)
        if addr == M.SOFT_RESET_0 and int.from_bytes(data, "little") == JOB["release"]:
            super().noc_write(x, y, M.ALL_DONE, M.DONE_TOKEN.to_bytes(4, "little"))


JOB = {"writes": [(M.FLAGS, bytes(M.FLAG_BYTES)), (M.TRISC_RESET_PC[1], bytes(range(64)))],
       "regs": [(M.TRISC_RESET_PC_REG[1], M.TRISC_RESET_PC[1])], "release": 0x1234, "reads": [],
       "done_addr": M.ALL_DONE, "done_value": M.DONE_TOKEN, "max_cycles": 1}


def test_a_job_whose_writes_all_landed_is_released():
    raw = FinishingTTDevice()
    dev = _device(raw)
    assert dev.run(JOB, 1.0) == ("ok", [], 0)
    resets = [int.from_bytes(d, "little") for a, d in raw.log if a == M.SOFT_RESET_0]
    assert resets == [M.RESET_ALL, 0x1234, M.RESET_ALL]          # held, released after the read-back, held
    assert dev.load(JOB) is None                                 # loaded again (held): every word reads back


def test_a_lost_program_word_is_a_device_error_and_the_cores_stay_held():
    lost = M.TRISC_RESET_PC[1] + 8
    raw = FakeTTDevice(lose={lost + 1})
    dev = _device(raw)
    status, message = dev.run(JOB, 1.0)
    assert status == "error"
    assert message == (f"read-back before release: L1 [{M.TRISC_RESET_PC[1]:#x}, {M.TRISC_RESET_PC[1] + 64:#x}): "
                       f"1 of 16 words differ, first at {lost:#x}: wrote 08090a0b, read 08000a0b")
    resets = [int.from_bytes(d, "little") for a, d in raw.log if a == M.SOFT_RESET_0]
    assert resets == [M.RESET_ALL]                                 # held, never released


def test_a_lost_register_write_is_named():
    raw = FakeTTDevice(lose={M.TRISC_RESET_PC_REG[1] + 1})
    assert _device(raw).run(JOB, 1.0) == ("error", f"read-back before release: register "
                                          f"{M.TRISC_RESET_PC_REG[1]:#x} holds {M.TRISC_RESET_PC[1] & 0xFF00FF:#010x}, "
                                          f"wrote {M.TRISC_RESET_PC[1]:#010x}")


class TwoCores(FinishingTTDevice):
    """Two cores' L1 and registers apart (keyed by core); writes to ``lose`` vanish on core (2, 2) only."""

    def __init__(self, lose=()):
        super().__init__()
        self.cores: dict = {}
        self.lost = set(lose)

    def noc_write(self, x, y, addr, data):
        self.mem, self.lose = self.cores.setdefault((x, y), {}), self.lost if (x, y) == (2, 2) else set()
        super().noc_write(x, y, addr, data)

    def noc_read(self, x, y, addr, size):
        self.mem = self.cores.setdefault((x, y), {})
        return super().noc_read(x, y, addr, size)


def test_a_write_lost_on_one_core_fails_that_core_alone():
    raw = TwoCores(lose={M.TRISC_RESET_PC[1] + 9})
    dev = _device(raw, cores=((1, 2), (2, 2)))
    replies: dict = {}
    dev.run_many([JOB, JOB], 1.0, replies.__setitem__)
    assert replies[0] == ("ok", [], 0) and replies[1][0] == "error" and "1 of 16 words differ" in replies[1][1]
    released = [(x, y) for (x, y), mem in raw.cores.items() if mem.get(M.ALL_DONE)]
    assert released == [(1, 2)]                              # the core whose write was lost was never released


class FakeUmdDevice:
    """tt-exalens UmdDevice's public noc_read_bytes/noc_write (NOC0 coordinates)."""

    def __init__(self):
        self.calls, self.mem = [], {}

    def noc_write(self, noc_id, x, y, addr, data, dma_threshold):
        self.calls.append(("write", noc_id, x, y, addr, bytes(data), dma_threshold))
        self.mem[addr] = bytes(data)

    def noc_read_bytes(self, noc_id, x, y, addr, size, dma_threshold):
        self.calls.append(("read", noc_id, x, y, addr, size, dma_threshold))
        return self.mem.get(addr, bytes(size))[:size]


def test_a_remote_chip_goes_through_tt_exalens_public_accessors_in_noc0():
    tt_umd = pytest.importorskip("tt_umd")
    ctx = type("Ctx", (), {"dma_read_threshold": 24, "dma_write_threshold": 56})()
    umd = FakeUmdDevice()
    chip = RemoteChip(umd, ctx)
    chip.noc_write32(3, 4, 0x100, 0xDEADBEEF)
    assert chip.noc_read32(3, 4, 0x100) == 0xDEADBEEF
    assert umd.calls == [("write", tt_umd.NocId.NOC0, 3, 4, 0x100, (0xDEADBEEF).to_bytes(4, "little"), 56),
                         ("read", tt_umd.NocId.NOC0, 3, 4, 0x100, 4, 24)]


def test_the_hw_extra_admits_the_tested_versions_and_stops_below_the_next_minor():
    """pyproject's ``hw`` ranges hold the installed (tested) tt-exalens and tt-umd, and not their next minor."""
    from packaging.requirements import Requirement
    extra = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    reqs = {r.name: r for r in map(Requirement, extra["optional-dependencies"]["hw"])}
    assert set(reqs) == {"tt-exalens", "tt-umd"}
    for name, req in reqs.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed")
        major, minor = map(int, installed.split(".")[:2])
        assert req.specifier.contains(installed), f"{name} {installed} is outside {req.specifier}"
        assert not req.specifier.contains(f"{major}.{minor + 1}.0")
