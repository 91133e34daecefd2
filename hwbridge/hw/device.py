"""One Tensix core opened through tt-exalens (a card, or ttsim): load a job, run it, read it back.

Runs inside the worker process only. tt-exalens opens the device (the same call for silicon and a
simulator); bulk reads and writes then go through the tt-umd device it wraps, which tt-exalens hands out
publicly for a PCIe-attached chip (``UmdDevice.get_local_tt_device``; about four times cheaper than its own
accessors), on NOC0 in translated coordinates. A chip reached over Ethernet goes through tt-exalens's public
``UmdDevice.noc_read``/``noc_write`` (NOC0 coordinates). Under ttsim the host also advances the clock
(libttsim_clock from the already-loaded library); silicon runs on its own.

Before the cores are released, every word the job wrote (programs, flags, the case's L1, the reset-PC
registers) is read back and compared: a card's NOC write can be lost, or land after the release.
"""
from __future__ import annotations

import ctypes
import os
import time
from importlib import metadata

from . import l1_map as M

CLOCK_FIRST, CLOCK_STEP, CLOCK_BIG, BIG_AFTER = 36_000, 2_000, 200_000, 200_000   # a case takes ~38-45K cycles


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def _differs(addr: int, wrote: bytes, got: bytes) -> str:
    """One line naming the words of an L1 block that read back different from what was written."""
    words = [i for i in range(0, len(wrote), 4) if wrote[i:i + 4] != got[i:i + 4]]
    first = words[0]
    return (f"L1 [{addr:#x}, {addr + len(wrote):#x}): {len(words)} of {(len(wrote) + 3) // 4} words differ, first at "
            f"{addr + first:#x}: wrote {wrote[first:first + 4].hex()}, read {got[first:first + 4].hex()}")


class RemoteChip:
    """A chip reached over Ethernet through tt-exalens's public accessors, in NOC0 coordinates (the calls
    Device makes of a tt_umd.TTDevice)."""

    def __init__(self, umd_dev, ctx):
        import tt_umd
        self.dev, self.noc, self.ctx = umd_dev, tt_umd.NocId.NOC0, ctx

    def noc_write(self, x: int, y: int, addr: int, data: bytes) -> None:
        self.dev.noc_write(self.noc, x, y, addr, data, self.ctx.dma_write_threshold)

    def noc_read(self, x: int, y: int, addr: int, size: int) -> bytes:
        return self.dev.noc_read_bytes(self.noc, x, y, addr, size, self.ctx.dma_read_threshold)

    def noc_read32(self, x: int, y: int, addr: int) -> int:
        return int.from_bytes(self.noc_read(x, y, addr, 4), "little")

    def noc_write32(self, x: int, y: int, addr: int, value: int) -> None:
        self.noc_write(x, y, addr, value.to_bytes(4, "little"))


class Device:
    def __init__(self, simulator: str | None = None, core: tuple[int, int] | None = None, device_id: int | None = None):
        import tt_umd
        from ttexalens.tt_exalens_init import init_ttexalens

        self.simulator = simulator
        self.ctx = init_ttexalens(simulation_directory=simulator) if simulator else init_ttexalens()
        if device_id is not None and device_id not in self.ctx.device_ids:
            raise ValueError(f"no device {device_id} (tt-exalens found {sorted(self.ctx.device_ids)})")
        device_id = min(self.ctx.device_ids) if device_id is None else device_id
        umd_dev = self.ctx.umd_api.get_device(device_id)   # skip tt-exalens's register tables
        if not simulator and umd_dev.is_simulation:
            # with no card, tt-exalens attaches to any running simulation server: never label that silicon
            raise RuntimeError("no card found (tt-exalens offered a running simulation instead; pass --simulator)")
        tt_umd.set_thread_noc_id(tt_umd.NocId.NOC0)
        self.arch = str(umd_dev.arch)
        soc = umd_dev.soc_descriptor
        workers = soc.get_cores(tt_umd.CoreType.TENSIX, tt_umd.CoordSystem.NOC0)
        noc0 = core or (workers[0].x, workers[0].y)
        if all((c.x, c.y) != tuple(noc0) for c in workers):
            raise ValueError(f"core {noc0} is not a Tensix core on this device")
        coord = tt_umd.CoreCoord(noc0[0], noc0[1], tt_umd.CoreType.TENSIX, tt_umd.CoordSystem.NOC0)
        tr = soc.translate_chip_coord_to_translated(coord)
        self.noc0, self.translated = tuple(noc0), (tr.x, tr.y)
        if umd_dev.is_mmio_capable:
            self.raw, self.xy = umd_dev.get_local_tt_device(), self.translated
        else:
            self.raw, self.xy = RemoteChip(umd_dev, self.ctx), self.noc0
        self.clock = None
        if simulator:
            lib = ctypes.CDLL(simulator, mode=os.RTLD_NOLOAD)   # the copy tt-umd already loaded
            lib.libttsim_clock.argtypes = [ctypes.c_uint32]
            self.clock = lib.libttsim_clock
        self.hold()

    def info(self) -> dict:
        return {"tt_exalens": _version("tt-exalens"), "tt_umd": _version("tt-umd"),
                "core_noc0": list(self.noc0), "core_translated": list(self.translated),
                "arch": self.arch}

    # --- raw access ---
    def write(self, addr: int, data: bytes) -> None:
        self.raw.noc_write(self.xy[0], self.xy[1], addr, data)

    def read(self, addr: int, size: int) -> bytes:
        return bytes(self.raw.noc_read(self.xy[0], self.xy[1], addr, size))

    def read32(self, addr: int) -> int:
        return self.raw.noc_read32(self.xy[0], self.xy[1], addr)

    def write32(self, addr: int, value: int) -> None:
        self.raw.noc_write32(self.xy[0], self.xy[1], addr, value)

    def _zeros(self, size: int) -> bytes:
        if len(getattr(self, "_zero_buf", b"")) < size:
            self._zero_buf = bytes(size)
        return self._zero_buf[:size] if size != len(self._zero_buf) else self._zero_buf

    def hold(self) -> None:
        """Every RISC of the core in reset."""
        self.write32(M.SOFT_RESET_0, M.RESET_ALL)

    # --- one job ---
    def run(self, job: dict, timeout: float) -> tuple:
        """("ok", [blobs], cycles); ("hang", message, snapshot) when the core did not finish within the job's
        budget (simulated cycles where the host clocks the device, else wall clock), with the RISC-V cores then
        held in reset; ("timeout", message) when a simulator did not reach its cycle budget in wall-clock time."""
        self.hold()
        for addr, size in job.get("zero", ()):
            self.write(addr, self._zeros(size))
        for addr, data in job["writes"]:
            self.write(addr, data)
        for addr, value in job.get("regs", ()):
            self.write32(addr, value)
        differs = self.verify(job)
        if differs is not None:
            return ("error", differs)
        self.write32(M.SOFT_RESET_0, job["release"])
        late = self._wait(job, timeout)
        if late is not None:
            if late[0] != "hang":
                return late
            snapshot = self.snapshot(job)     # read while the core is as the hang left it
            self.hold()
            return (*late, snapshot)
        blobs = [self.read(a, n) for a, n in job["reads"]]
        self.hold()
        return ("ok", blobs, self.cycles)

    def verify(self, job: dict) -> str | None:
        """What differs between the job's writes (L1 blocks, then MMIO words) and what the device reads back,
        or None when every word arrived."""
        for addr, data in job["writes"]:
            got = self.read(addr, len(data))
            if got != data:
                return f"read-back before release: {_differs(addr, data, got)}"
        for addr, value in job.get("regs", ()):
            got = self.read32(addr)
            if got != value:
                return f"read-back before release: register {addr:#x} holds {got:#010x}, wrote {value:#010x}"
        return None

    def _wait(self, job: dict, timeout: float) -> tuple[str, str] | None:
        """None once the job's done flag is up, else (status, message): a hang is the cycle budget spent (a
        simulator) or the wall-clock timeout (a card: no other measure of it); a simulator that did not
        reach its cycle budget in wall-clock time is a timeout (the host was slow, not the case)."""
        addr, value = job["done_addr"], job["done_value"]
        deadline = time.monotonic() + timeout
        self.cycles = 0
        while True:
            if self.clock is not None:
                chunk = CLOCK_FIRST if not self.cycles else CLOCK_STEP if self.cycles < BIG_AFTER else CLOCK_BIG
                self.clock(chunk)
                self.cycles += chunk
            if self.read32(addr) == value:
                return None
            if self.clock is not None and self.cycles >= job["max_cycles"]:
                return "hang", f"timeout: the case did not finish within {self.cycles} simulated cycles"
            if time.monotonic() > deadline:
                if self.clock is None:
                    return "hang", f"timeout: the case did not finish within {timeout:g} s"
                return "timeout", (f"timeout: the simulator ran {self.cycles} of {job['max_cycles']} cycles"
                                   f" in {timeout:g} s")

    # --- after a hang (hwbridge.hw.recovery) ---
    def snapshot(self, job: dict) -> dict:
        """What the core shows of a hang: the L1 ranges ``job["stall_reads"]`` names and the debug-bus words
        ``job["stall_dbus"]`` lists ((daisy_sel, signal_sel, read32_sel) triples, read from the host)."""
        words = []
        for daisy, sig, rd in job.get("stall_dbus", ()):
            self.write32(M.DBG_BUS_CTRL, M.DBG_BUS_ENABLE | rd << 25 | daisy << 16 | sig)
            words.append(self.read32(M.DBG_RD_DATA))
        if words:
            self.write32(M.DBG_BUS_CTRL, 0)
        return {"l1": [self.read(a, n) for a, n in job.get("stall_reads", ())], "dbus": words}

    def reset_units(self, bits: int) -> None:
        """Pulse Tensix unit soft-reset bits of SOFT_RESET_0 (SoftReset.md) with every RISC-V core held."""
        self.write32(M.SOFT_RESET_0, M.RESET_ALL | bits)
        self.write32(M.SOFT_RESET_0, M.RESET_ALL)

    def warm_reset(self) -> str:
        """The whole chip through tt-umd's public WarmReset (a PCIe card only); '' when done, else why not."""
        import tt_umd
        if self.simulator:
            return "no warm reset under ttsim: tt-umd's WarmReset resets PCIe devices and a simulator has none"
        if self.raw.get_communication_device_type() != tt_umd.IODeviceType.PCIe:
            return "no warm reset: the device is not reached over PCIe"
        n = self.raw.get_communication_device_id()
        return "" if tt_umd.WarmReset.warm_reset([n]) else f"tt-umd WarmReset of /dev/tenstorrent/{n} failed"
