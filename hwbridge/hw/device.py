"""Tensix cores of one device opened through tt-exalens (a card, or ttsim): load jobs, run them, read them back.

Runs inside the worker process only. tt-exalens opens the device (the same call for silicon and a
simulator); bulk reads and writes then go through the tt-umd device it wraps, which tt-exalens hands out
publicly for a PCIe-attached chip (``UmdDevice.get_local_tt_device``; about four times cheaper than its own
accessors), on NOC0 in translated coordinates. A chip reached over Ethernet goes through tt-exalens's public
``UmdDevice.noc_read``/``noc_write`` (NOC0 coordinates). Each core has its own L1, so each holds its own
harness area (l1_map) and runs its own job. Under ttsim the host also advances the clock (libttsim_clock from
the already-loaded library, every core at once); silicon runs on its own.

Before the cores are released, every word the job wrote (programs, flags, the case's L1, the reset-PC
registers) is read back and compared: a card's NOC write can be lost, or land after the release.
"""
from __future__ import annotations

import ctypes
import os
import time
from importlib import metadata

from . import cores, dbus, identity, l1_map as M

READBACK_TRIES = 100           # host reads of a debug-bus select before giving up on it
CLOCK_FIRST, CLOCK_STEP, CLOCK_BIG, BIG_AFTER = 36_000, 2_000, 200_000, 200_000   # a case takes ~62K cycles


def installed_version(dist: str) -> str:
    """The installed version of distribution ``dist``, or "absent"."""
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
        import tt_umd     # late for start-up cost: tt-umd (the hw extra) loads only with a device
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
    """One device and the Tensix cores this worker drives (``slot`` 0.. in the order chosen); the raw accessors
    act on the selected core (``select``)."""

    def __init__(self, simulator: str | None = None, core=None, device_id: int | None = None,
                 jobs: int | None = None, share: tuple[int, int] | None = None):
        import tt_umd     # late for start-up cost: tt-umd (the hw extra) loads only with a device
        from ttexalens.tt_exalens_init import init_ttexalens     # late for start-up cost, as tt_umd

        self.simulator = simulator
        self.ctx = init_ttexalens(simulation_directory=simulator) if simulator else init_ttexalens()
        tt_umd.set_thread_noc_id(tt_umd.NocId.NOC0)

        def tensix_of(dev_id: int) -> list[tuple[int, int]]:
            soc = self.ctx.umd_api.get_device(dev_id).soc_descriptor
            return [(c.x, c.y) for c in soc.get_cores(tt_umd.CoreType.TENSIX, tt_umd.CoordSystem.NOC0)]

        device_id, chosen = cores.place(sorted(set(self.ctx.device_ids)), tensix_of, device_id, core, jobs, share)
        umd_dev = self.ctx.umd_api.get_device(device_id)   # skip tt-exalens's register tables
        if not simulator and umd_dev.is_simulation:
            # with no card, tt-exalens attaches to any running simulation server: never label that silicon
            raise RuntimeError("no card found (tt-exalens offered a running simulation instead; pass --simulator)")
        self.arch = str(umd_dev.arch)
        soc = umd_dev.soc_descriptor
        self.noc0s = [tuple(c) for c in chosen]
        self.translateds = []
        for x, y in self.noc0s:
            tr = soc.translate_chip_coord_to_translated(tt_umd.CoreCoord(x, y, tt_umd.CoreType.TENSIX,
                                                                         tt_umd.CoordSystem.NOC0))
            self.translateds.append((tr.x, tr.y))
        local = umd_dev.get_local_tt_device() if umd_dev.is_mmio_capable else None
        if local is not None:
            self.raw, self.xys = local, self.translateds
        else:
            self.raw, self.xys = RemoteChip(umd_dev, self.ctx), self.noc0s
        harvested = [(c.x, c.y) for c in soc.get_harvested_cores(tt_umd.CoreType.TENSIX, tt_umd.CoordSystem.NOC0)]
        self.identity = identity.read(self.ctx, device_id, umd_dev, local, len(tensix_of(device_id)), harvested)
        self.clock = None
        if simulator:
            lib = ctypes.CDLL(simulator, mode=os.RTLD_NOLOAD)   # the copy tt-umd already loaded
            lib.libttsim_clock.argtypes = [ctypes.c_uint32]
            self.clock = lib.libttsim_clock
        for slot in reversed(range(len(self.xys))):
            self.select(slot)
            self.hold()

    def select(self, slot: int) -> None:
        """Make core ``slot`` the one the raw accessors reach."""
        self.slot, self.noc0, self.translated, self.xy = slot, self.noc0s[slot], self.translateds[slot], self.xys[slot]

    def info(self) -> dict:
        return {"tt_exalens": installed_version("tt-exalens"), "tt_umd": installed_version("tt-umd"),
                "core_noc0": list(self.noc0s[0]), "core_translated": list(self.translateds[0]),
                "cores_noc0": [list(c) for c in self.noc0s], "arch": self.arch, "identity": self.identity}

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

    # --- jobs ---
    def load(self, job: dict) -> str | None:
        """The selected core held in reset, its L1 outside the harness area zeroed, the job's code and data
        written and read back (``verify``), its reset PCs set: None, or what did not arrive."""
        self.hold()
        for addr, size in job.get("zero", ()):
            self.write(addr, self._zeros(size))
        for addr, data in job["writes"]:
            self.write(addr, data)
        for addr, value in job.get("regs", ()):
            self.write32(addr, value)
        return self.verify(job)

    def run(self, job: dict, timeout: float, slot: int = 0) -> tuple:
        """One job on core ``slot``: ("ok", [blobs], cycles); ("hang", message, snapshot) when the core did not
        finish within the job's budget (simulated cycles where the host clocks the device, else wall clock), with
        its RISC-V cores then held in reset; ("timeout", message) when a simulator did not reach its cycle budget
        in wall-clock time; ("error", message) when a write did not read back (the core is never released)."""
        replies: dict = {}
        self.run_many([job], timeout, replies.__setitem__, [slot])
        return replies[0]

    def run_many(self, jobs: list[dict], timeout: float, emit, slots: list[int] | None = None) -> None:
        """Job i on core ``slots[i]`` (default: core i): all loaded and read back, then released together and
        clocked together (ttsim: one libttsim_clock advances every core); ``emit(i, reply)`` (Device.run's
        replies) as each finishes, its results read and its core held, or fails. The clock runs in the same
        steps as for one job, so each core sees the cycle count it would see alone."""
        slots = list(range(len(jobs))) if slots is None else slots
        started: dict[int, dict] = {}
        for i, job in enumerate(jobs):
            self.select(slots[i])
            differs = self.load(job)
            if differs is None:
                started[i] = job
            else:
                emit(i, ("error", differs))
        for i, job in started.items():
            self.select(slots[i])
            self.write32(M.SOFT_RESET_0, job["release"])
        self._wait(started, slots, timeout, emit)

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

    def _wait(self, pending: dict[int, dict], slots: list[int], timeout: float, emit) -> None:
        """Clock (a simulator) and poll until each pending job's done flag is up, or it hung: its cycle budget
        spent (a simulator) or the wall-clock timeout (a card: no other measure of it); a simulator that did not
        reach the budget in wall-clock time is a timeout (the host was slow, not the case)."""
        deadline = time.monotonic() + timeout
        self.cycles = 0
        while pending:
            if self.clock is not None:
                chunk = CLOCK_FIRST if not self.cycles else CLOCK_STEP if self.cycles < BIG_AFTER else CLOCK_BIG
                self.clock(chunk)
                self.cycles += chunk
            for i, job in list(pending.items()):
                self.select(slots[i])
                if self.read32(job["done_addr"]) == job["done_value"]:
                    del pending[i]
                    blobs = [self.read(a, n) for a, n in job["reads"]]
                    self.hold()
                    emit(i, ("ok", blobs, self.cycles))
                elif self.clock is not None and self.cycles >= job["max_cycles"]:
                    del pending[i]
                    emit(i, self._hung(job, f"timeout: the case did not finish within {self.cycles} simulated cycles"))
            if pending and time.monotonic() > deadline:
                for i, job in list(pending.items()):
                    del pending[i]
                    self.select(slots[i])
                    emit(i, self._hung(job, f"timeout: the case did not finish within {timeout:g} s")
                         if self.clock is None else
                         ("timeout", f"timeout: the simulator ran {self.cycles} of {job['max_cycles']} cycles"
                                     f" in {timeout:g} s"))

    def _hung(self, job: dict, message: str) -> tuple:
        snapshot = self.snapshot(job)     # read while the core is as the hang left it
        self.hold()
        return ("hang", message, snapshot)

    # --- after a hang (hwbridge.hw.recovery) ---
    def snapshot(self, job: dict) -> dict:
        """What the core shows of a hang: the L1 ranges ``job["stall_reads"]`` names and the debug-bus words
        ``job["stall_dbus"]`` lists ((daisy_sel, signal_sel, read32_sel) triples, read from the host).

        A host write and a later read of another register of the tile are ordered only when both travel on one
        NoC virtual channel (tt-isa-documentation NoC/Ordering.md), which the host does not choose; tt-exalens's
        own reader (debug_bus_signal_store) reads straight after its write. With ``job["dbus_readback"]`` each
        select is read back until it holds the value written, so the data read leaves the host after the select
        took effect (and far more than DebugDaisychain.md's five cycles later); without it (ttsim, whose host
        writes take effect at once and which refuses a load of DBG_BUS_CTRL) the data is read straight away. A
        select that never reads back ends the debug-bus reads, with ``dbus_error`` saying so."""
        words, out = [], {}
        for daisy, sig, rd in job.get("stall_dbus", ()):
            value = dbus.select(daisy, sig, rd)
            self.write32(M.DBG_BUS_CTRL, value)
            if job.get("dbus_readback") and not self._holds(M.DBG_BUS_CTRL, value):
                out["dbus_error"] = f"DBG_BUS_CTRL did not read back {value:#010x} in {READBACK_TRIES} reads"
                words = []
                break
            words.append(self.read32(M.DBG_RD_DATA))
        if job.get("stall_dbus"):
            self.write32(M.DBG_BUS_CTRL, 0)
        return {"l1": [self.read(a, n) for a, n in job.get("stall_reads", ())], "dbus": words, **out}

    def _holds(self, addr: int, value: int) -> bool:
        """Whether the register reads back ``value`` within READBACK_TRIES reads."""
        return any(self.read32(addr) == value for _ in range(READBACK_TRIES))

    def reset_units(self, bits: int) -> None:
        """Pulse Tensix unit soft-reset bits of the selected core's SOFT_RESET_0 (SoftReset.md) with every RISC-V
        core held."""
        self.write32(M.SOFT_RESET_0, M.RESET_ALL | bits)
        self.write32(M.SOFT_RESET_0, M.RESET_ALL)

    def warm_reset(self) -> str:
        """The whole chip through tt-umd's public WarmReset (a PCIe card only); '' when done, else why not."""
        import tt_umd     # late for start-up cost: tt-umd (the hw extra) loads only with a device
        if self.simulator:
            return "no warm reset under ttsim: tt-umd's WarmReset resets PCIe devices and a simulator has none"
        if self.raw.get_communication_device_type() != tt_umd.IODeviceType.PCIe:
            return "no warm reset: the device is not reached over PCIe"
        n = self.raw.get_communication_device_id()
        return "" if tt_umd.WarmReset.warm_reset([n]) else f"tt-umd WarmReset of /dev/tenstorrent/{n} failed"
