"""Where tt-umd finds a ttsim build: the given libttsim.so plus a Blackhole SoC descriptor beside it.

tt-umd opens ``<dir>/libttsim.so`` and reads ``<dir>/soc_descriptor.yaml``. When the user's .so has no
descriptor next to it, a cache directory outside the repository gets a symlink to the .so and a
descriptor written from the Blackhole NOC0 grid below (facts: 17 x 12 grid, Tensix columns 1-7 and
10-16 on rows 2-11, Ethernet on row 1, DRAM in columns 0 and 9, ARC at 8-0, PCIe at 2-0 and 11-0).
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import yaml

from tensix_diff.revision import cache_root

from .errors import OptionError

TENSIX_COLUMNS = [*range(1, 8), *range(10, 17)]
TENSIX_ROWS = range(2, 12)


def _xy(x: int, y: int) -> str:
    return f"{x}-{y}"


def blackhole_descriptor() -> dict:
    """Blackhole (140 Tensix, no harvesting) in tt-umd's SoC-descriptor schema, NOC0 coordinates."""
    dram_rows = ((0, 1, 11), (2, 10, 3), (9, 4, 8), (5, 7, 6))
    return {
        "grid": {"x_size": 17, "y_size": 12},
        "arc": [_xy(8, 0)],
        "pcie": [_xy(2, 0), _xy(11, 0)],
        "dram": [[_xy(x, y) for y in ys] for x in (0, 9) for ys in dram_rows],
        "eth": [_xy(x, 1) for pair in zip(range(1, 8), range(16, 9, -1)) for x in pair],
        "functional_workers": [_xy(x, y) for y in TENSIX_ROWS for x in TENSIX_COLUMNS],
        "router_only": [_xy(x, 0) for x in (1, 3, 4, 5, 6, 7, 10, 12, 13, 14, 15, 16)]
                       + [_xy(8, y) for y in (1, 10, 8, 6, 4, 11)],
        "security": [_xy(8, 2)],
        "l2cpu": [_xy(8, y) for y in (3, 9, 5, 7)],
        "noc0_x_to_noc1_x": list(range(16, -1, -1)),
        "noc0_y_to_noc1_y": list(range(11, -1, -1)),
        "worker_l1_size": 1536 * 1024,
        "dram_bank_size": 4 << 30,
        "eth_l1_size": 256 * 1024,
        "arch_name": "BLACKHOLE",
        "features": {"unpacker": {"version": 2, "inline_srca_trans_without_srca_trans_instr": True},
                     "math": {"dst_size_alignment": 32768}, "packer": {"version": 2}, "overlay": {"version": 2}},
    }


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_simulator(given: str | os.PathLike) -> Path:
    """The resolved path of ``given`` if it is a ttsim library (an ELF file that exports libttsim_clock), else
    OptionError in one line naming the user's own path."""
    so = Path(given).expanduser().resolve()
    if so.is_dir():
        raise OptionError(f"--simulator={given}: is a directory; give the libttsim.so file inside it")
    if not so.is_file():
        raise OptionError(f"--simulator={given}: no such file; give the path of a libttsim.so")
    data = so.read_bytes()
    if data[:4] != b"\x7fELF":
        raise OptionError(f"--simulator={given}: not a shared library (no ELF header); give the path of a libttsim.so")
    if b"libttsim_clock" not in data:
        raise OptionError(f"--simulator={given}: a shared library without libttsim_clock, so not a ttsim build")
    return so


def simulator_path(so: str | os.PathLike) -> Path:
    """A libttsim.so path tt-umd can open: the given one if a descriptor sits beside it, else a cached twin."""
    so = check_simulator(so)
    if (so.parent / "soc_descriptor.yaml").is_file():
        return so
    d = cache_root() / f"ttsim-{file_sha256(so)[:16]}"
    d.mkdir(parents=True, exist_ok=True)
    link = d / "libttsim.so"
    if not link.exists():
        tmp = d / f".libttsim.{os.getpid()}"
        tmp.symlink_to(so)
        os.replace(tmp, link)
    desc = d / "soc_descriptor.yaml"
    if not desc.exists():
        tmp = d / f".soc.{os.getpid()}"
        tmp.write_text(yaml.safe_dump(blackhole_descriptor(), default_flow_style=None))
        os.replace(tmp, desc)
    return link


def simulator_version(so: str | os.PathLike, given: str | None = None) -> str:
    """ttsim's release: an explicit value, TENSIX_DIFF_SIMULATOR_VERSION, or a version file beside the .so;
    else ``unknown-<sha256 prefix>`` of the library, with a warning (recordings must say what made them)."""
    if given:
        return given
    if os.environ.get("TENSIX_DIFF_SIMULATOR_VERSION"):
        return os.environ["TENSIX_DIFF_SIMULATOR_VERSION"]
    so = Path(so).expanduser().resolve()
    for name in (so.name + ".version", "VERSION"):
        f = so.parent / name
        if f.is_file():
            return f.read_text().strip()
    label = f"unknown-{file_sha256(so)[:12]}"
    print(f"tensix-diff: warning: no ttsim version known for {so}: labelled '{label}' (give --simulator-version,"
          f" $TENSIX_DIFF_SIMULATOR_VERSION or a {so.name}.version file beside it)", file=sys.stderr)
    return label
