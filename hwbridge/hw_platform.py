"""Per-platform tables (hwbridge/platforms/*.yaml): what the hw backend can set and see on a device.

One code path serves silicon and ttsim; everything that differs between them (debug-bus bit layouts,
readable/writable registers, who advances the clock) is data loaded here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path


from golden import yaml_tables

from golden.state import ADC_UNITS, THREADS

PLATFORM_DIR = Path(__file__).with_name("platforms")
RWC_FIELDS = ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr")
ADC_FIELDS = ("x", "x_cr", "y", "y_cr", "z", "z_cr", "w", "w_cr")


def _join(words: list[int]) -> int:
    """The little-endian concatenation of 32-bit words as one integer."""
    value = 0
    for i, w in enumerate(words):
        value |= (w & 0xFFFFFFFF) << (32 * i)
    return value


def _field(value: int, lsb: int, width: int) -> int:
    return (value >> lsb) & ((1 << width) - 1)


@dataclass(frozen=True)
class Platform:
    name: str
    device_kind: str
    verified: bool
    raw: dict
    config_readable: frozenset
    config_writable: frozenset
    config_special: frozenset
    thread_config_writable: frozenset

    # --- debug bus ---
    def dbus_reads(self) -> list[tuple[int, int, int]]:
        """(daisy_sel, signal_sel, read32_sel) in the order the collector stores the words."""
        groups = [tuple(g) for g in self.raw["rwc_groups"]] + [tuple(self.raw["fidelity_group"])]
        groups += [(self.raw["adc_daisy"], 2 * u + ch) for u in range(3) for ch in range(2)]
        return [(d, s, r) for d, s in groups for r in range(4)]

    def decode_counters(self, words: list[int]) -> tuple[dict, dict]:
        """The contract's ``rwc`` and ``adc`` dicts from the collector's debug-bus words."""
        rwc_words, fid_words, adc_words = words[:8], words[8:12], words[12:36]
        rwc_all, fid_all = _join(rwc_words), _join(fid_words)     # each group as one integer, joined once
        rwc: dict = {}
        for t in range(THREADS):
            entry = {f: _field(rwc_all, *self.raw["rwc_layout"][f][t]) for f in RWC_FIELDS}
            entry["fidelity"] = _field(fid_all, *self.raw["fidelity_layout"][t])
            rwc[str(t)] = entry
        adc: dict = {}
        units = self.raw["adc_units"]
        for unit in ADC_UNITS:
            t = str(self.raw["adc_thread"][unit])
            for ch in range(2):
                g = 2 * units[unit] + ch
                group = _join(adc_words[4 * g: 4 * g + 4])
                adc.setdefault(t, {}).setdefault(unit, {})[str(ch)] = {
                    f: _field(group, *self.raw["adc_layout"][f]) for f in ADC_FIELDS}
        return rwc, adc

    def counter_masks(self) -> dict[str, int]:
        """Bit masks of the ADC fields as the chain shows them (narrower than golden's counters)."""
        return {f: (1 << w) - 1 for f, (_, w) in self.raw["adc_layout"].items()}

    def unobservable(self) -> list[str]:
        out = list(self.raw["not_observable"])
        shown = {(str(t), u) for u, t in self.raw["adc_thread"].items()}
        out += [f"adc.{t}.{u}" for t in map(str, range(THREADS)) for u in ADC_UNITS if (t, u) not in shown]
        out += [f"adc.*.*.*.{f} above bit {w - 1}" for f, (_, w) in self.raw["adc_layout"].items() if w < 18]
        return out

    @property
    def clocked_by_host(self) -> bool:
        return bool(self.raw["clocked_by_host"])

    @property
    def refuse_isa_unsupported(self) -> bool:
        return bool(self.raw["refuse_isa_unsupported"])


def _index_set(value, named: list[int]) -> frozenset:
    return frozenset(named if value == "named" else value)


@cache
def load(name: str) -> Platform:
    path = PLATFORM_DIR / f"{name}.yaml"
    if not path.exists():
        raise ValueError(f"unknown hw platform {name!r} (no {path.name} in {PLATFORM_DIR})")
    raw = yaml_tables.load(path)
    regs = yaml_tables.load(Path(__file__).parents[1] / "golden" / "registers.yaml")
    named_cfg, named_tcfg = sorted(regs["config"]), sorted(regs["thread_config"])
    special = frozenset(raw.get("config_special", []))
    return Platform(
        name=raw["name"], device_kind=raw["device_kind"], verified=bool(raw["verified"]), raw=raw,
        config_readable=_index_set(raw["config_readable"], named_cfg),
        config_writable=_index_set(raw["config_writable"], named_cfg) - special,
        config_special=special,
        thread_config_writable=_index_set(raw["thread_config_writable"], named_tcfg),
    )
