"""Per-platform tables (hwbridge/hw/platforms/*.yaml): what the hw backend can set and see on a device.

One code path serves silicon and ttsim; everything that differs between them (debug-bus bit layouts,
readable/writable registers, who advances the clock) is data loaded here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
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
        return list(self._dbus_reads)

    @cached_property
    def _dbus_reads(self) -> tuple[tuple[int, int, int], ...]:
        groups = [tuple(g) for g in self.raw["rwc_groups"]] + [tuple(self.raw["fidelity_group"])]
        groups += [(self.raw["adc_daisy"], 2 * u + ch) for u in range(3) for ch in range(2)]
        return tuple((d, s, r) for d, s in groups for r in range(4))

    @cached_property
    def _counter_plan(self) -> tuple:
        """decode_counters's layout tables, keys and (lsb, mask) pairs in the order its dicts hold them."""
        def lm(lsb: int, width: int) -> tuple[int, int]:
            return lsb, (1 << width) - 1
        rwc = tuple((str(t), tuple((f, *lm(*self.raw["rwc_layout"][f][t])) for f in RWC_FIELDS),
                     lm(*self.raw["fidelity_layout"][t])) for t in range(THREADS))
        units = self.raw["adc_units"]
        adc = tuple((str(self.raw["adc_thread"][unit]), unit,
                     tuple((str(ch), 4 * (2 * units[unit] + ch)) for ch in range(2))) for unit in ADC_UNITS)
        adc_fields = tuple((f, *lm(*self.raw["adc_layout"][f])) for f in ADC_FIELDS)
        return rwc, adc, adc_fields

    def decode_counters(self, words: list[int]) -> tuple[dict, dict]:
        """The contract's ``rwc`` and ``adc`` dicts from the collector's debug-bus words."""
        rwc_words, fid_words, adc_words = words[:8], words[8:12], words[12:36]
        rwc_all, fid_all = _join(rwc_words), _join(fid_words)     # each group as one integer, joined once
        rwc_plan, adc_plan, adc_fields = self._counter_plan
        rwc: dict = {}
        for t, fields, (lsb, mask) in rwc_plan:
            entry = {f: (rwc_all >> lo) & m for f, lo, m in fields}
            entry["fidelity"] = (fid_all >> lsb) & mask
            rwc[t] = entry
        adc: dict = {}
        for t, unit, channels in adc_plan:
            for ch, at in channels:
                group = _join(adc_words[at: at + 4])
                adc.setdefault(t, {}).setdefault(unit, {})[ch] = {f: (group >> lo) & m for f, lo, m in adc_fields}
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
    regs = yaml_tables.load(Path(__file__).parents[2] / "golden" / "registers.yaml")
    named_cfg, named_tcfg = sorted(regs["config"]), sorted(regs["thread_config"])
    special = frozenset(raw.get("config_special", []))
    return Platform(
        name=raw["name"], device_kind=raw["device_kind"], verified=bool(raw["verified"]), raw=raw,
        config_readable=_index_set(raw["config_readable"], named_cfg),
        config_writable=_index_set(raw["config_writable"], named_cfg) - special,
        config_special=special,
        thread_config_writable=_index_set(raw["thread_config_writable"], named_tcfg),
    )
