"""Named fields of Config and ThreadConfig registers (registers.yaml, Blackhole cfg_defines facts)."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

from . import yaml_tables


TABLE_PATH = Path(__file__).with_name("registers.yaml")
CONFIG_WORDS = 224        # CFG_STATE_SIZE (56) x 4 ADDR32 words per config state
CONFIG_STATES = 2


class RegField(NamedTuple):
    """One named field of a register word: its ADDR32 index, shift and size (a tuple: made in their hundreds at
    every start, where a frozen dataclass cost twice as much)."""
    name: str
    index: int   # ADDR32 index
    shift: int
    size: int
    low_mask: int    # (1 << size) - 1, kept: get() is hot
    mask: int        # the field's bits in its word, kept too (readers name them, golden.config_words)

    def get(self, word: int) -> int:
        return (word >> self.shift) & self.low_mask

    def put(self, word: int, value: int) -> int:
        return (word & ~self.mask) | ((value << self.shift) & self.mask)


@cache
def _load() -> dict[str, dict[str, RegField]]:
    raw = yaml_tables.load(TABLE_PATH)
    out: dict[str, dict[str, RegField]] = {}
    for space in ("config", "thread_config"):
        out[space] = {
            name: RegField(name, int(idx), shift, size, (1 << size) - 1, ((1 << size) - 1) << shift)
            for idx, fields in raw[space].items()
            for name, (shift, size) in fields.items()
        }
    return out


_CONFIG, _THREAD_CONFIG = _load()["config"], _load()["thread_config"]     # looked up on every named access


def config_field(name: str) -> RegField:
    return _CONFIG[name]


def thread_config_field(name: str) -> RegField:
    return _THREAD_CONFIG[name]


def fields(space: str) -> dict[str, RegField]:
    return _load()[space]


@cache
def thread_config_words() -> int:
    return max(f.index for f in _load()["thread_config"].values()) + 1
