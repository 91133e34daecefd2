"""Test fixtures: a copy of golden with one planted bug, and a "device" that is unmodified golden.

The bug: when AddrMod section ``SECTION`` is applied and its SrcBIncr is non-zero, SrcB advances one row
too far (an off-by-one in one AddrMod field). It is planted at test time by wrapping apply_addr_mod where
golden's unit modules call it; the wrapper acts only on ``PlantedTensix`` machines, so unmodified golden
keeps running alongside. golden's files are never edited.

``FixtureDevice`` runs unmodified golden and labels its results ``test-fixture``: the replay store refuses
golden provenance as evidence about the device, and this label says plainly what the recordings are.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

import golden.addrmod as addrmod
from golden.core import Tensix
from golden.handlers import load_all
from golden.registers import thread_config_field
from golden.state import SRC_MASK
from hwbridge.golden_backend import GoldenBackend

SECTION = 2
_AB = thread_config_field("ADDR_MOD_AB_SEC0_SrcAIncr").index + SECTION
FIXTURE_DEVICE = "test-fixture (unmodified golden, not a device)"


class PlantedTensix(Tensix):
    planted = True


@contextmanager
def planted_addrmod_bug():
    """Install the planted bug for PlantedTensix machines while the block runs."""
    load_all()
    original = addrmod.apply_addr_mod

    def apply_addr_mod(m, t, addr_mode, update_fidelity=True):
        original(m, t, addr_mode, update_fidelity)
        ab = m.s.thread_config[t][_AB]
        if getattr(m, "planted", False) and addr_mode == SECTION and (ab >> 8) & 0x3F and not ab >> 15 & 1:
            rwc = m.s.rwc[t]
            rwc.srcb = (rwc.srcb + 1) & SRC_MASK
            if ab >> 14 & 1:
                rwc.srcb_cr = rwc.srcb

    users = [mod for name, mod in sys.modules.items()
             if name.startswith("golden.") and getattr(mod, "apply_addr_mod", None) is original]
    for mod in users:
        mod.apply_addr_mod = apply_addr_mod
    try:
        yield
    finally:
        for mod in users:
            mod.apply_addr_mod = original


def planted_golden() -> GoldenBackend:
    b = GoldenBackend(machine_factory=PlantedTensix)
    b.name = "golden-planted"
    return b


class FixtureDevice:
    """Unmodified golden (or the given model) standing in for a device; every run is counted and, given a
    store, recorded."""

    name = "test-fixture"

    def __init__(self, store=None, model: GoldenBackend | None = None):
        self.golden = model or GoldenBackend()
        self.store = store
        self.runs = 0

    def run(self, case):
        self.runs += 1
        r = self.golden.run(case)
        r.provenance = {"device": FIXTURE_DEVICE, "platform": "ttsim"}   # holds all that ttsim observes
        if self.store is not None:
            self.store.record(case, r, "all")
        return r


class DistanceTensix(Tensix):
    """A distance-dependent planted bug: a ZEROACC at program index 5 also advances SrcB by one."""

    def step(self, t, d, index=0):
        super().step(t, d, index)
        if d.ins.name == "ZEROACC" and index == 5:
            self.s.rwc[t].srcb = (self.s.rwc[t].srcb + 1) & SRC_MASK
