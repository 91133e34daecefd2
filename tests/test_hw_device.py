"""The hw device layer without a device: the route to a remote chip, and the tested tt-exalens/tt-umd."""
from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from hwbridge.hw.device import RemoteChip


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
    extra = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
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
