"""The golden machine: state, decoding through the ISA table, and running threads (golden.schedule)."""
from __future__ import annotations

import gc
from collections import namedtuple
from functools import cache
from itertools import repeat
from typing import Callable, Iterator, NamedTuple, Sequence

import numpy as np

from . import isa
from .errors import GoldenError, NotModelled
from .handlers import FRONTEND, PRE_ISSUE, handler_of, stage_engaged
from .registers import RegField, fields, thread_config_field
from .riscv import interleave as with_actions
from .schedule import SEQUENTIAL, Schedule, interleave
from .state import THREADS, TensixState


class Decoded(NamedTuple):
    """One Tensix word decoded through isa.yaml: its instruction, its field values as a record (``f.bitmask``;
    one record type per instruction, fields in the table's order) and its handler (None: not modelled)."""
    word: int
    ins: isa.Instruction
    fields: tuple
    handler: Callable[..., None] | None

    @property
    def text(self) -> str:
        return isa.disassemble(self.word)


class _Kind(NamedTuple):
    ins: isa.Instruction
    stray: int                              # the bits of a word no declared field holds
    record: type                            # the field record (collections.namedtuple)
    spans: tuple[tuple[int, int], ...]      # (lo, width mask) per field
    handler: Callable[..., None] | None


_KINDS: dict[int, _Kind] = {}      # opcode -> _Kind, made when a word of that opcode is first decoded


def _kind(op: int) -> _Kind | None:
    """What decoding a word of opcode ``op`` needs (None: isa.yaml has no such opcode)."""
    k = _KINDS.get(op)
    if k is None and (ins := isa.by_opcode().get(op)) is not None:
        k = _KINDS[op] = _Kind(ins, 0xFFFFFF & ~ins.payload_mask, namedtuple(ins.name, [f.name for f in ins.fields]),
                               tuple((f.lo, (1 << f.width) - 1) for f in ins.fields), handler_of(ins.name, ins.unit))
    return k


@cache
def opcode_checks() -> tuple[np.ndarray, np.ndarray]:
    """Per opcode byte: whether isa.yaml has it, and the bits of a word no declared field of it holds: isa.decode's
    rule as two tables, for checking many words at once."""
    known, stray = np.zeros(256, dtype=bool), np.zeros(256, dtype=np.uint32)
    for op, ins in isa.by_opcode().items():
        known[op], stray[op] = True, 0xFFFFFF & ~ins.payload_mask
    return known, stray


_decode_cache: dict[int, Decoded] = {}
_CACHED = 1 << 16
_BULK = 256          # words from which a program with words not seen before is decoded with numpy


def decode(word: int) -> Decoded:
    d = _decode_cache.get(word)
    if d is None:
        k = _kind(word >> 24) if 0 <= word <= 0xFFFFFFFF else None
        if k is None or word & k.stray:
            isa.decode(word)                # raises IsaError, naming what is wrong
        d = Decoded(word, k.ins, k.record._make([(word >> lo) & mask for lo, mask in k.spans]), k.handler)
        if len(_decode_cache) < _CACHED:
            _decode_cache[word] = d
    return d


def decode_program(words: Sequence[int]) -> list[Decoded]:
    """``[decode(w) for w in words]``; a long program with words not seen before is decoded all at once."""
    if len(words) < _BULK or words[0] in _decode_cache:     # a long program whose first word is new: decoded at once
        try:
            return list(map(_decode_cache.__getitem__, words))
        except KeyError:            # a word not decoded before (no scan of the list for a miss)
            pass
    out = _decode_many(words) if len(words) >= _BULK else None
    if out is None:                 # short, or a word does not decode: word by word, the first bad one named
        return [decode(w) for w in words]
    return out


def _decode_many(words: Sequence[int]) -> list[Decoded] | None:
    """``[decode(w) for w in words]`` made once per distinct word, grouped by opcode (the words sorted), each
    field one numpy shift and mask over its group, and kept in the cache while it has room; None when a word
    is not a Python int that decodes (decode then names the first such word)."""
    if set(map(type, words)) != {int}:
        return None
    try:
        arr = np.array(words, dtype=np.int64)
    except OverflowError:
        return None
    if arr.min() < 0 or arr.max() > 0xFFFFFFFF:
        return None
    distinct, where = np.unique(arr, return_inverse=True)
    ops = distinct >> 24
    known, stray = opcode_checks()
    if not known[ops].all() or (distinct & stray[ops]).any():
        return None
    out: list[Decoded] = []
    keys: list[int] = []
    new = tuple.__new__
    collecting = gc.isenabled()
    gc.disable()            # tuples of ints and shared references: the collector would walk them again and again
    try:
        for group in np.split(distinct, np.flatnonzero(np.diff(ops)) + 1):
            k = _kind(int(group[0]) >> 24)
            ws = group.tolist()
            keys += ws
            if k.spans:
                records = map(new, repeat(k.record), zip(*[((group >> lo) & mask).tolist() for lo, mask in k.spans]))
            else:
                records = repeat(k.record())
            out += map(new, repeat(Decoded), zip(ws, repeat(k.ins), records, repeat(k.handler)))
        room = _CACHED - len(_decode_cache)
        if room > 0:
            _decode_cache.update(zip(keys[:room], out))
        return np.fromiter(out, dtype=object, count=len(out))[where].tolist()
    finally:
        if collecting:
            gc.enable()


_CONFIG_FIELDS = fields("config")                  # name -> RegField, looked up on every m.cfg / m.tcfg
_THREAD_CONFIG_FIELDS = fields("thread_config")
_STATE_ID = thread_config_field("CFG_STATE_ID_StateID")


class Tensix:
    """One Tensix coprocessor. ``m.s`` is its TensixState; handlers read and write it directly."""

    def __init__(self, state: TensixState | None = None):
        self.s = state if state is not None else TensixState()
        self.executed = 0
        # When a list: each matrix-unit instruction appends (name, SrcA format, SrcB format, Dst bits, fidelity
        # phase) as it resolves its operands (coverage of the format matrix); None costs nothing.
        self.matrix_trace: list[tuple] | None = None

    # --- configuration access by name (registers.yaml) ---
    def state_id(self, t: int) -> int:
        return _STATE_ID.get(self.s.thread_config[t][_STATE_ID.index])

    def cfg(self, t: int, name: str) -> int:
        """A Config field as seen by thread t (through its CFG_STATE_ID)."""
        f: RegField = _CONFIG_FIELDS[name]
        words = self.s.config[_STATE_ID.get(self.s.thread_config[t][_STATE_ID.index])]
        return f.get(words[f.index] if words.__class__ is list else words.bits(f.index, f.mask))

    def tcfg(self, t: int, name: str) -> int:
        f: RegField = _THREAD_CONFIG_FIELDS[name]
        return f.get(self.s.thread_config[t][f.index])

    # --- execution ---
    def step(self, t: int, d: Decoded, index: int = 0) -> None:
        if d.ins is None:                  # a RISC-V action (golden.riscv): no Wait Gate, not counted
            try:
                d.handler(self, t, d.fields)
            except GoldenError as e:
                if e.instr is None:
                    e.at(d.text, t, index)
                raise
            return
        if d.handler is None:
            raise NotModelled(f"{d.ins.name} is not modelled by golden yet").at(d.text, t, index)
        try:
            for check in PRE_ISSUE:
                check(self, t, d)
            d.handler(self, t, d.fields)
        except GoldenError as e:
            if e.instr is None:
                e.at(d.text, t, index)
            raise
        self.executed += 1

    def stream(self, t: int, program: Sequence[Decoded], actions: Sequence[tuple[int, object]] = ()
               ) -> Iterator[tuple[int, Decoded]]:
        """Thread t's instructions as the backend sees them: (program index, Decoded) pairs after the
        frontend stages (MOP and replay expanders) have rewritten the program. ``actions``: (index,
        golden.riscv.RiscvAction) pairs, each run before program word ``index`` (after the last if it
        equals the program's length)."""
        items: Iterator[tuple[int, Decoded]] = with_actions(program, actions) if actions else enumerate(program)
        for stage in FRONTEND:
            if stage_engaged(self, t, stage, program, actions):
                items = stage(self, t, items)
        return items

    def run(self, programs: dict[int, Sequence[int]], actions: dict[int, Sequence[tuple[int, object]]] | None = None,
            schedule: Schedule = SEQUENTIAL, step: Callable[[int, Decoded, int], None] | None = None,
            stuck: Callable[[], bool] | None = None) -> None:
        """Run per-thread word lists (with the threads' RISC-V actions interleaved) under ``schedule``
        (golden.schedule.interleave; by default each thread runs until it finishes or blocks, thread 0
        first). ``step``/``stuck``: hooks for a race analysis (default: Tensix.step, none)."""
        actions = actions or {}
        decoded = {t: decode_program(ws) for t, ws in programs.items()}
        for t in actions:
            decoded.setdefault(t, [])
        for t in decoded:
            if t not in range(THREADS):
                raise ValueError(f"thread {t} is not in 0..{THREADS - 1}")
        streams = {t: self.stream(t, prog, actions.get(t, ())) for t, prog in sorted(decoded.items())}
        interleave(streams, schedule, step or self.step, stuck)
