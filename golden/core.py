"""The golden machine: state, decoding through the ISA table, and running threads (golden.schedule)."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Iterator, Sequence

from . import isa
from .errors import GoldenError, NotModelled
from .handlers import ENGAGED, FRONTEND, PRE_ISSUE, load_all
from .registers import RegField, fields, thread_config_field
from .riscv import interleave as with_actions
from .schedule import SEQUENTIAL, Schedule, interleave
from .state import THREADS, TensixState


@dataclass(frozen=True)
class Decoded:
    word: int
    ins: isa.Instruction
    fields: SimpleNamespace
    handler: Callable[..., None] | None

    @property
    def text(self) -> str:
        return isa.disassemble(self.word)


_decode_cache: dict[int, Decoded] = {}


def decode(word: int) -> Decoded:
    d = _decode_cache.get(word)
    if d is None:
        ins, vals = isa.decode(word)
        d = Decoded(word, ins, SimpleNamespace(**vals), load_all().get(ins.name))
        if len(_decode_cache) < 1 << 16:
            _decode_cache[word] = d
    return d


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
        return f.get(self.s.config[_STATE_ID.get(self.s.thread_config[t][_STATE_ID.index])][f.index])

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
        if not actions and not any(engaged(self, t, program) for engaged in ENGAGED):
            return enumerate(program)
        items: Iterator[tuple[int, Decoded]] = with_actions(program, actions) if actions else enumerate(program)
        for stage in FRONTEND:
            items = stage(self, t, items)
        return items

    def run(self, programs: dict[int, Sequence[int]], actions: dict[int, Sequence[tuple[int, object]]] | None = None,
            schedule: Schedule = SEQUENTIAL, step: Callable[[int, Decoded, int], None] | None = None,
            stuck: Callable[[], bool] | None = None) -> None:
        """Run per-thread word lists (with the threads' RISC-V actions interleaved) under ``schedule``
        (golden.schedule.interleave; by default each thread runs until it finishes or blocks, thread 0
        first). ``step``/``stuck``: hooks for a race analysis (default: Tensix.step, none)."""
        actions = actions or {}
        decoded = {t: [decode(w) for w in ws] for t, ws in programs.items()}
        for t in actions:
            decoded.setdefault(t, [])
        for t in decoded:
            if t not in range(THREADS):
                raise ValueError(f"thread {t} is not in 0..{THREADS - 1}")
        streams = {t: self.stream(t, prog, actions.get(t, ())) for t, prog in sorted(decoded.items())}
        interleave(streams, schedule, step or self.step, stuck)
