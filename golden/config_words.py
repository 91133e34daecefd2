"""Config words as instructions and RISC-V stores see them: which bits of a word hold state, the section
bases, and the read/write rule every writer shares (the CFG unit, THCON's REG2FLOP, RISC-V cfg stores).

Sources: tt-isa-documentation WormholeB0 BackendConfiguration.md, ConfigurationUnit.md; Blackhole section
bases from cfg_defines.h (GLOBAL words from 180, THCON words from 64).

A Config word keeps only the bits of its named fields (registers.yaml), as ttsim's register masks do;
words with no named field are refused. Words at or above the GLOBAL base exist once, so a write reaches
both config states. Writing STATE_RESET_EN (other than by RMWCIB) zeroes the state's words below the
GLOBAL base (BackendConfiguration.md).
"""
from __future__ import annotations

from functools import cache

from .errors import NotModelled, UndefinedBehaviour
from .registers import CONFIG_STATES, CONFIG_WORDS, config_field, fields

GLOBAL_BASE = config_field("DEST_TARGET_REG_CFG_PACK_SEC0_Offset").index   # first word of the GLOBAL section
THCON_BASE = config_field("THCON_SEC0_REG0_TileDescriptor").index           # first word of the THCON section
STATE_RESET = config_field("STATE_RESET_EN").index
# The 128-bit tile descriptors: registers.yaml names only their first word, the other three exist too.
FULL = 0xFFFFFFFF                                   # every bit of a word
_TILE_DESCRIPTORS = [config_field(f"THCON_SEC{i}_REG0_TileDescriptor").index for i in (0, 1)]


@cache
def word_mask(index: int) -> int:
    """Bits of Config word ``index`` that hold state (0 when no named field covers the word)."""
    if any(base <= index < base + 4 for base in _TILE_DESCRIPTORS):
        return 0xFFFFFFFF
    mask = 0
    for f in fields("config").values():
        if f.index == index:
            mask |= f.mask
    return mask


def _check_index(name: str, index: int) -> None:
    if index >= CONFIG_WORDS:
        raise UndefinedBehaviour(f"{name} Config index {index} is beyond the {CONFIG_WORDS} words of a config state")
    if not word_mask(index):
        raise NotModelled(f"{name} Config word {index} has no named field: its contents are unknown")


def read_config(m, t: int, index: int, name: str = "config read", bits: int = FULL) -> int:
    """Config word ``index`` as thread t sees it, for a reader of its bits ``bits`` (a traced state records
    those bits alone, golden.analysis.traced_state)."""
    _check_index(name, index)
    words = m.s.config[m.state_id(t)]
    return words[index] if words.__class__ is list else words.bits(index, bits)


def write_config(m, t: int, index: int, value: int, name: str = "config write", reset: bool = True,
                 bits: int = FULL) -> None:
    """Write Config word ``index`` as thread t sees it (masked; GLOBAL words in both states); ``bits``: the bits
    the write may change (the rest of ``value`` is the word's own, as read just before)."""
    _check_index(name, index)
    value &= word_mask(index)
    states = range(CONFIG_STATES) if index >= GLOBAL_BASE else (m.state_id(t),)
    for s in states:
        words = m.s.config[s]
        if words.__class__ is list:
            words[index] = value
        else:
            words.set_bits(index, bits, value)
        if reset and index == STATE_RESET:
            m.s.config[s][:GLOBAL_BASE] = [0] * GLOBAL_BASE
