"""The frontend: REPLAY load / execute (REPLAY.md) and MOP / MOP_CFG expansion (MOPExpander.md).
Blackhole's "len 0 means 32" is delta #18, tested in test_blackhole_deltas_regfiles."""
from __future__ import annotations

import pytest

from golden.core import Tensix
from golden.errors import NotModelled, UndefinedBehaviour
from golden.frontend.replay import expand_template0, expand_template1
from golden.isa import encode
from golden.state import MATRIX_UNIT, Frontend

from regfile_util import T, machine, set_tcfg


def incrwc(a=0, b=0, d=0):
    return encode("INCRWC", {"rwc_a": a, "rwc_b": b, "rwc_d": d})


def replay(start, length, load=0, execute=0):
    return encode("REPLAY", {"start_idx": start, "len": length, "load_mode": load, "execute_while_loading": execute})


NOP = encode("NOP")


def counters(m, t=T):
    r = m.s.rwc[t]
    return r.srca, r.srcb, r.dst


# --- REPLAY ---
def test_load_without_execute_then_replay():
    m = Tensix()
    m.run({T: [replay(4, 3, load=1), incrwc(a=1), incrwc(b=1), incrwc(d=1), incrwc(d=8)]})
    assert counters(m) == (0, 0, 8)                  # only the instruction after the three loaded ones ran
    assert m.s.frontend[T].replay[4:7] == [incrwc(a=1), incrwc(b=1), incrwc(d=1)]
    m.run({T: [replay(4, 3), replay(5, 2)]})
    assert counters(m) == (1, 2, 10)


def test_load_with_execute_runs_them_once():
    m = Tensix()
    m.run({T: [replay(0, 2, load=1, execute=1), incrwc(a=1), incrwc(d=2), replay(0, 2)]})
    assert counters(m) == (2, 0, 4)


def test_replay_indices_wrap_at_32_and_use_low_five_bits():
    m = Tensix()
    m.run({T: [replay(30, 4, load=1), incrwc(a=1), incrwc(a=2), incrwc(a=4), incrwc(a=8)]})
    fe = m.s.frontend[T]
    assert fe.replay[30:32] + fe.replay[0:2] == [incrwc(a=1), incrwc(a=2), incrwc(a=4), incrwc(a=8)]
    m.run({T: [replay(32 + 31, 33)]})               # start 31, length 1
    assert counters(m) == (2, 0, 0)


def test_replay_buffers_are_per_thread():
    m = Tensix()
    m.run({0: [replay(0, 1, load=1), incrwc(d=1)], 1: [replay(0, 1, load=1), incrwc(d=2)]})
    m.run({0: [replay(0, 1)], 1: [replay(0, 1)]})
    assert counters(m, 0)[2] == 1 and counters(m, 1)[2] == 2


def test_replay_of_never_loaded_entry_is_undefined():
    m = Tensix()
    m.run({T: [replay(0, 1, load=1), incrwc(d=1)]})
    with pytest.raises(UndefinedBehaviour):
        m.run({T: [replay(0, 2)]})


def test_unused_bits_3_2_are_undefined():
    with pytest.raises(UndefinedBehaviour):
        Tensix().run({T: [replay(0, 1, load=1, execute=2)]})


def test_execute_bit_ignored_without_load():
    m = Tensix()
    m.run({T: [replay(0, 1, load=1), incrwc(d=1), replay(0, 1, execute=1)]})
    assert counters(m)[2] == 1


def test_replayed_replay_reaches_the_backend_undefined():
    m = Tensix()
    m.run({T: [replay(0, 1, load=1), replay(5, 1)]})          # a REPLAY captured into the buffer
    with pytest.raises(UndefinedBehaviour, match="reached the backend"):
        m.run({T: [replay(0, 1)]})


def test_blocked_replayed_instruction_resumes_in_order():
    m = machine()
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)       # SETDVALID leaves the implied format unknown
    m.s.srca.banks[0].rows[0] = 0x12345
    mova2d = encode("MOVA2D", {"dest_32b_lo": 0, "src": 0, "addr_mode": 0, "instr_mod": 0, "dst": 0})
    m.run({T: [replay(0, 2, load=1), mova2d, incrwc(d=1)]})
    m.run({T: [replay(0, 2)], 2: [encode("SETDVALID", {"setvalid": 1})]})
    assert m.s.srca.banks[0].allowed_client == MATRIX_UNIT
    assert int(m.s.dest.bits[0][0]) == 0x2445 and counters(m)[2] == 1


# --- MOP ---
A0, A1, A2, A3, B, SA0, SB = (incrwc(a=i) for i in range(1, 8))


def template0_cfg(flags):
    fe = Frontend()
    fe.mop_cfg = [0, flags, B, A0, A1, A2, A3, SA0, SB]
    return fe


@pytest.mark.parametrize("flags,mask,count1,want", [
    (0, 0b0, 0, [A0]),
    (0, 0b10, 2, [A0, SA0, A0]),
    (1, 0b01, 1, [SA0, SB, A0, B]),
    (2, 0b0, 0, [A0, A1, A2, A3]),
    (3, 0b10, 1, [A0, A1, A2, A3, B, SA0, SB]),
])
def test_template0(flags, mask, count1, want):
    assert expand_template0(template0_cfg(flags), T, mask, count1) == want


def test_template0_mask_beyond_32_iterations_is_zero():
    out = expand_template0(template0_cfg(0), T, 0xFFFFFFFF, 33)
    assert out == [SA0] * 32 + [A0, A0]


def template1_cfg(outer, inner, start=NOP, end0=NOP, end1=NOP, loop=A0, loop1=NOP, last0=SA0, last1=SB):
    fe = Frontend()
    fe.mop_cfg = [outer, inner, start, end0, end1, loop, loop1, last0, last1]
    return fe


def test_template1_outer_inner_with_last_overrides():
    out = expand_template1(template1_cfg(2, 3, start=B, end0=A2, end1=A3), T)
    assert out == [B, A0, A0, SB, A2, A3, B, A0, A0, SA0, A2, A3]


def test_template1_alternating_loop_ops():
    out = expand_template1(template1_cfg(1, 2, loop=A0, loop1=A1), T)
    assert out == [A0, A1, A0, SA0]


def test_template1_end1_needs_end0():
    assert expand_template1(template1_cfg(1, 1, end1=A3), T) == [SA0]


def test_template1_hardware_bug_repeats_129_times():
    out = expand_template1(template1_cfg(1, 0, end0=A2), T)
    assert out == [A2] * 129


def test_mop_runs_its_expansion_with_mop_cfg_mask():
    m = Tensix()
    m.s.frontend[T].mop_cfg = [0, 0, NOP, incrwc(d=1), NOP, NOP, NOP, incrwc(d=15), NOP]
    mop = encode("MOP", {"mop_type": 0, "loop_count": 17, "zmask_lo16_or_loop_count": 0x0001})
    m.run({T: [encode("MOP_CFG", {"zmask_hi16": 0x0001}), mop]})
    # 18 iterations; mask bits 0 and 16 select SkipA0 (+15), the other 16 run InsnA0 (+1)
    assert counters(m)[2] == 2 * 15 + 16 * 1


def test_mop_expansion_feeds_the_replay_expander():
    m = Tensix()
    m.s.frontend[T].mop_cfg = [0, 0, NOP, replay(0, 2), NOP, NOP, NOP, NOP, NOP]
    mop = encode("MOP", {"mop_type": 0, "loop_count": 1, "zmask_lo16_or_loop_count": 0})
    m.run({T: [replay(0, 2, load=1), incrwc(a=1), incrwc(b=1), mop]})
    assert counters(m) == (2, 2, 0)


def test_replay_load_captures_mop_expansion():
    m = Tensix()
    m.s.frontend[T].mop_cfg = [0, 0, NOP, incrwc(d=1), NOP, NOP, NOP, NOP, NOP]
    mop = encode("MOP", {"mop_type": 0, "loop_count": 1, "zmask_lo16_or_loop_count": 0})
    m.run({T: [replay(0, 2, load=1), mop, replay(0, 2)]})
    assert counters(m)[2] == 2 and m.s.frontend[T].replay[0:2] == [incrwc(d=1)] * 2


def test_mop_with_unwritten_cfg_not_modelled():
    with pytest.raises(NotModelled):
        Tensix().run({T: [encode("MOP", {"mop_type": 1})]})


def test_mop_cfg_high_bits_undefined():
    with pytest.raises(UndefinedBehaviour):
        Tensix().run({T: [encode("MOP_CFG", {"zmask_hi16": 0x10000})]})


def test_mop_emitting_mop_reaches_the_backend_undefined():
    m = Tensix()
    m.s.frontend[T].mop_cfg = [0, 0, NOP, encode("MOP", {"mop_type": 1}), NOP, NOP, NOP, NOP, NOP]
    with pytest.raises(UndefinedBehaviour, match="reached the backend"):
        m.run({T: [encode("MOP", {"mop_type": 0})]})
