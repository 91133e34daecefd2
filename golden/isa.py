"""The Blackhole Tensix instruction table (isa.yaml) and the encoder/decoder it drives.

A Tensix word is ``opcode << 24 | fields``; the TRISC instruction stream carries it as
``rotl(word, 2)`` (blackhole-deltas #4), never ``word << 2``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import NamedTuple

from . import yaml_tables

TABLE_PATH = Path(__file__).with_name("isa.yaml")
GOLDEN_STATES = ("modelled", "effects", "absent")


class IsaError(ValueError):
    """A user's word or text does not fit the ISA table (one clear line)."""


class Field(NamedTuple):
    """One field of an instruction: bits hi..lo of the word (a tuple: hundreds are made at every start)."""
    name: str
    hi: int
    lo: int

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo

    def get(self, word: int) -> int:
        return (word >> self.lo) & ((1 << self.width) - 1)


@dataclass(frozen=True)
class Instruction:
    """One instruction of isa.yaml: mnemonic, opcode, unit, golden's status, fields and ttsim's view of it."""
    name: str
    opcode: int
    unit: str
    golden: str
    fields: tuple[Field, ...]
    ttsim_unsupported: bool
    ttsim_bits: tuple[tuple[str, int, int], ...]
    unobserved: str | None = None    # why its own effect never reaches dumped state (isa.yaml)

    @property
    def payload_mask(self) -> int:
        m = 0
        for f in self.fields:
            m |= f.mask
        return m

    def field(self, name: str) -> Field:
        f = _field_index(self.name).get(name)
        if f is not None:
            return f
        raise IsaError(f"{self.name} has no field '{name}' (fields: {', '.join(x.name for x in self.fields) or 'none'})")


@cache
def table() -> dict[str, Instruction]:
    raw = yaml_tables.load(TABLE_PATH)
    out: dict[str, Instruction] = {}
    for name, e in raw.items():
        fields = tuple(Field(n, hi, lo) for n, (hi, lo) in (e.get("fields") or {}).items())
        golden = e["golden"]
        if golden not in GOLDEN_STATES:
            raise ValueError(f"isa.yaml: {name}: golden must be one of {GOLDEN_STATES}, not {golden!r}")
        out[name] = Instruction(
            name=name,
            opcode=e["opcode"],
            unit=e["unit"],
            golden=golden,
            fields=fields,
            ttsim_unsupported=e.get("ttsim") == "unsupported",
            ttsim_bits=tuple((n, hi, lo) for n, (hi, lo) in (e.get("ttsim_bits") or {}).items()),
            unobserved=e.get("unobserved"),
        )
    return out


@cache
@cache
def _field_index(name: str) -> dict[str, Field]:
    return {f.name: f for f in table()[name].fields}


@cache
def by_opcode() -> dict[int, Instruction]:
    return {i.opcode: i for i in table().values()}


@cache
def _extractors() -> dict[int, tuple[Instruction, int, tuple[tuple[str, int, int], ...]]]:
    """Per opcode, precomputed once: the instruction, its payload mask and (name, lo, width mask) per field."""
    return {op: (ins, ins.payload_mask, tuple((f.name, f.lo, (1 << f.width) - 1) for f in ins.fields))
            for op, ins in by_opcode().items()}


def lookup(mnemonic: str) -> Instruction:
    ins = table().get(mnemonic.upper())
    if ins is None:
        raise IsaError(f"unknown mnemonic '{mnemonic}'")
    return ins


def encode(name: str, values: dict[str, int] | None = None) -> int:
    """Encode an instruction from field values; omitted fields are zero."""
    ins = lookup(name)
    word = ins.opcode << 24
    for key, value in (values or {}).items():
        f = ins.field(key.lower())
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise IsaError(f"{ins.name}: field '{f.name}' needs a non-negative integer, not {value!r}")
        if value >> f.width:
            raise IsaError(
                f"{ins.name}: field '{f.name}' value {value:#x} does not fit in {f.width} bit(s) [{f.hi}:{f.lo}]")
        word |= value << f.lo
    return word


def decode(word: int) -> tuple[Instruction, dict[str, int]]:
    """Split a 32-bit Tensix word into its instruction and field values."""
    if not 0 <= word <= 0xFFFFFFFF:
        raise IsaError(f"word {word:#x} is not a 32-bit value")
    entry = _extractors().get(word >> 24)
    if entry is None:
        raise IsaError(f"word {word:#010x}: unknown opcode {word >> 24:#04x}")
    ins, payload, fields = entry
    stray = word & 0xFFFFFF & ~payload
    if stray:
        raise IsaError(f"word {word:#010x}: {ins.name} has bits {stray:#x} set outside every declared field")
    return ins, {name: (word >> lo) & mask for name, lo, mask in fields}


def disassemble(word: int) -> str:
    """Canonical text: mnemonic, then every field in TT_OP_ argument order, decimal."""
    ins, vals = decode(word)
    return " ".join([ins.name] + [f"{k}={v}" for k, v in vals.items()])


_TOKEN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$")


def parse_int(text: str, what: str) -> int:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        raise IsaError(f"{what}: '{text}' is not an integer (decimal, 0x.., 0b..)") from None


def assemble_line(text: str) -> int:
    """Assemble one line: ``MNEMONIC field=value ...`` or ``.word 0x...``."""
    text = text.split("#", 1)[0].strip()
    if not text:
        raise IsaError("empty instruction")
    return _assemble(text)


@lru_cache(maxsize=1 << 16)
def _assemble(text: str) -> int:
    """assemble_line of a stripped line (kernels and generated cases repeat lines: each is parsed once)."""
    parts = text.split()
    if parts[0] == ".word":
        if len(parts) != 2:
            raise IsaError(f"'.word' takes exactly one value: '{text}'")
        word = parse_int(parts[1], ".word")
        decode(word)  # a raw word must still be a valid instruction
        return word
    ins = lookup(parts[0])
    values: dict[str, int] = {}
    for tok in parts[1:]:
        m = _TOKEN.match(tok)
        if not m:
            raise IsaError(f"{ins.name}: expected field=value, got '{tok}'")
        key = m.group(1).lower()
        ins.field(key)
        if key in values:
            raise IsaError(f"{ins.name}: field '{key}' given twice")
        values[key] = parse_int(m.group(2), f"{ins.name} {key}")
    return encode(ins.name, values)


def assemble(text: str) -> list[int]:
    """Assemble instructions separated by newlines or ';'."""
    lines = [s for s in re.split(r"[;\n]", text) if s.split("#", 1)[0].strip()]
    if not lines:
        raise IsaError("no instruction given")
    return [assemble_line(s) for s in lines]


def to_stream(word: int) -> int:
    """The form a TRISC issues inline: rotl(word, 2)."""
    return ((word << 2) | (word >> 30)) & 0xFFFFFFFF


def from_stream(stream_word: int) -> int:
    return ((stream_word >> 2) | (stream_word << 30)) & 0xFFFFFFFF
