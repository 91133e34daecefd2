"""Named fields of Config and ThreadConfig registers (registers.yaml, Blackhole cfg_defines facts)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from . import yaml_tables


TABLE_PATH = Path(__file__).with_name("registers.yaml")
CONFIG_WORDS = 224        # CFG_STATE_SIZE (56) x 4 ADDR32 words per config state
CONFIG_STATES = 2


@dataclass(frozen=True)
class RegField:
    name: str
    index: int   # ADDR32 index
    shift: int
    size: int
    low_mask: int = field(init=False, repr=False, compare=False)   # (1 << size) - 1, kept: get() is hot
    mask: int = field(init=False, repr=False, compare=False)       # the field's bits in its word, kept too

    def __post_init__(self) -> None:
        object.__setattr__(self, "low_mask", (1 << self.size) - 1)
        object.__setattr__(self, "mask", self.low_mask << self.shift)

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
            name: RegField(name, int(idx), shift, size)
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
