"""The Tensix frontend: MOP expander (MOP, MOP_CFG) then replay expander (REPLAY), per thread.

Facts: tt-isa-documentation WormholeB0 MOPExpander.md, MOP.md, MOP_CFG.md, REPLAY.md (BlackholeA0 pages
defer to them: "similar, but not identical"); Blackhole per ttsim v1.10.0, tt-llk assembly.yaml and
blackhole-deltas #18: a 32-entry replay buffer, REPLAY uses the low five bits of start_idx and len, and
len 0 means 32; execute_while_loading is bit 1 (bits 3:2 unused). The expanders sit before the Wait Gate
and read no backend state, so they run as generators over the thread's stream (golden.handlers.frontend).
Instructions they emit are decoded like program words; MOP, MOP_CFG or REPLAY reaching the backend (a
MOP's expansion holding MOP, a replayed REPLAY) is undefined.
"""
from __future__ import annotations

from itertools import repeat

from ..core import decode, decode_program
from ..errors import GoldenError, NotModelled, UndefinedBehaviour
from ..handlers import engages, frontend, semantics
from ..isa import IsaError, lookup
from ..state import REPLAY_BUFFER, Frontend

MOP_OP, MOP_CFG_OP, REPLAY_OP, NOP_OP = (lookup(n).opcode for n in ("MOP", "MOP_CFG", "REPLAY", "NOP"))
_MOP_OPS, _REPLAY_SOURCES = frozenset({MOP_OP, MOP_CFG_OP}), frozenset({MOP_OP, REPLAY_OP})
_IDX = REPLAY_BUFFER - 1


def _is_nop(word: int) -> bool:
    """IsNop of MOPExpander.md: plain NOP only."""
    return word >> 24 == NOP_OP


def _cfg(fe: Frontend, t: int, i: int) -> int:
    word = fe.mop_cfg[i]
    if word is None:
        raise NotModelled(f"MOP uses MopCfg[{i}] of thread {t}, which RISCV never wrote "
                          "(cases cannot program the MOP expander yet)")
    return word


def expand_template0(fe: Frontend, t: int, mask: int, count1: int) -> list[int]:
    """ExpandTemplate0 of MOPExpander.md: per iteration, A0 [A1 A2 A3] [B], or SkipA0 [SkipB] when the
    mask bit is set."""
    flags = _cfg(fe, t, 1) & 3
    has_b, has_a123 = flags & 1, flags & 2
    out: list[int] = []
    for _ in range(count1 + 1):
        if mask & 1 == 0:
            out.append(_cfg(fe, t, 3))
            if has_a123:
                out += [_cfg(fe, t, 4), _cfg(fe, t, 5), _cfg(fe, t, 6)]
            if has_b:
                out.append(_cfg(fe, t, 2))
        else:
            out.append(_cfg(fe, t, 7))
            if has_b:
                out.append(_cfg(fe, t, 8))
        mask >>= 1
    return out


def expand_template1(fe: Frontend, t: int) -> list[int]:
    """ExpandTemplate1 of MOPExpander.md: outer loop of [start] inner-loop [end0 [end1]], the inner loop
    optionally alternating two instructions and ending with Loop0Last / Loop1Last."""
    outer, inner = _cfg(fe, t, 0) & 127, _cfg(fe, t, 1) & 127
    start, end0, end1, loop_op, loop_op1 = (_cfg(fe, t, i) for i in (2, 3, 4, 5, 6))
    flip = 0
    if not _is_nop(loop_op1):
        flip = loop_op ^ loop_op1
        inner *= 2
    if outer == 1 and _is_nop(start) and inner == 0 and not _is_nop(end0):
        outer += 128  # the hardware bug MOPExpander.md describes
    out: list[int] = []
    for j in range(outer):
        if not _is_nop(start):
            out.append(start)
        for i in range(inner):
            if i != inner - 1:
                out.append(loop_op)
            else:
                out.append(_cfg(fe, t, 8) if j != outer - 1 else _cfg(fe, t, 7))
            loop_op ^= flip
        if not _is_nop(end0):
            out.append(end0)
            if not _is_nop(end1):
                out.append(end1)
    return out


def _decode(word: int, what: str):
    try:
        return decode(word)
    except IsaError as e:
        raise UndefinedBehaviour(f"{what} emitted {word:#010x}, which does not decode: {e}") from None


def _decode_all(words: list[int], what: str) -> list:
    try:
        return decode_program(words)
    except IsaError:
        return [_decode(w, what) for w in words]        # raises, naming the first word that does not decode


@frontend
def mop_expander(m, t, items):
    """MOP expander: consumes MOP_CFG and MOP, passes everything else through. It is the first stage: its
    items (the thread's program and RISC-V actions) are fixed before the run, so the runs between MOPs pass
    through whole; each MOP still expands when it is reached (a RISC-V action before it may set MopCfg)."""
    fe = m.s.frontend[t]
    items = list(items)
    at = 0
    for k in [k for k, (_, d) in enumerate(items) if d.ins is not None and d.ins.opcode in _MOP_OPS]:
        yield from items[at:k]
        at = k + 1
        index, d = items[k]
        try:
            f = d.fields
            if d.ins.opcode == MOP_CFG_OP:
                if f.zmask_hi16 >> 16:
                    raise UndefinedBehaviour(f"MOP_CFG bits 23:16 = {f.zmask_hi16 >> 16:#x} are unused")
                fe.mop_mask_hi = f.zmask_hi16
                continue
            if f.mop_type:
                words = expand_template1(fe, t)
            else:
                words = expand_template0(fe, t, fe.mop_mask_hi << 16 | f.zmask_lo16_or_loop_count, f.loop_count)
            expanded = _decode_all(words, "MOP")
        except GoldenError as e:
            raise e.at(d.text, t, index)
        yield from zip(repeat(index), expanded)
    yield from items[at:]


def replay_start(fe: Frontend, f) -> list[int] | None:
    """REPLAY reaching the replay expander: start a load (returns None) or return the words to replay."""
    if f.execute_while_loading >> 1:
        raise UndefinedBehaviour(f"REPLAY bits 3:2 = {f.execute_while_loading >> 1:#x} are unused "
                                 "(ttsim: non-contractual)")
    start, count = f.start_idx & _IDX, (f.len & _IDX) or REPLAY_BUFFER
    if f.load_mode:
        fe.load_left, fe.load_index, fe.load_exec = count, start, bool(f.execute_while_loading)
        return None
    words = [fe.replay[(start + i) & _IDX] for i in range(count)]
    if None in words:
        raise UndefinedBehaviour(f"REPLAY of entries {start}..{start + count - 1} (mod {REPLAY_BUFFER}), "
                                 "some never loaded")
    return words


@frontend
def replay_expander(m, t, items):
    """Replay expander: while loading, captures each incoming instruction (and passes it on if
    execute_while_loading); otherwise consumes REPLAY and emits buffered instructions."""
    fe = m.s.frontend[t]
    for index, d in items:
        if d.ins is None:          # a RISC-V action is never captured
            yield index, d
        elif fe.load_left:
            fe.replay[fe.load_index] = d.word
            fe.load_index = (fe.load_index + 1) & _IDX
            fe.load_left -= 1
            if fe.load_exec:
                yield index, d
        elif d.ins.opcode == REPLAY_OP:
            try:
                words = replay_start(fe, d.fields)
                expanded = _decode_all(words or [], "REPLAY")
            except GoldenError as e:
                raise e.at(d.text, t, index)
            yield from zip(repeat(index), expanded)
        else:
            yield index, d


def _opcodes(program) -> set[int]:
    return {d.ins.opcode for d in program if d.ins is not None}


@engages(mop_expander)
def mop_engaged(m, t, program, actions) -> bool:
    """The MOP expander changes only a stream holding MOP or MOP_CFG (RISC-V actions pass through it)."""
    return not _MOP_OPS.isdisjoint(_opcodes(program))


@engages(replay_expander)
def replay_engaged(m, t, program, actions) -> bool:
    """The replay expander changes only a stream meeting a REPLAY load of an earlier run still capturing, or
    holding REPLAY, or a MOP whose expansion may hold one: a MopCfg word (as it is, or as the thread's RISC-V
    actions write it) with REPLAY's opcode (an expansion emits MopCfg words only)."""
    fe = m.s.frontend[t]
    ops = _opcodes(program)
    if fe.load_left > 0 or REPLAY_OP in ops:
        return True
    if MOP_OP not in ops:
        return False
    words = [w for w in fe.mop_cfg if w is not None] + [a.fields.value for _, a in actions if a.kind == "mop_cfg"]
    return any(w.__class__ is not int or w >> 24 == REPLAY_OP for w in words)


def _reached_backend(name: str):
    def handler(m, t, f) -> None:
        raise UndefinedBehaviour(f"{name} reached the backend (emitted by an expander that does not "
                                 "expand it: MOPExpander.md, REPLAY.md)")
    handler.__doc__ = f"{name}: frontend-only (MOPExpander.md / REPLAY.md); the backend never executes it."
    return handler


for _name in ("MOP", "MOP_CFG", "REPLAY"):
    semantics(_name)(_reached_backend(_name))
