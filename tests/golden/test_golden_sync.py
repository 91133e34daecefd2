"""Sync unit and Wait Gate: NOP, SEM*, STALLWAIT, ATGETM/ATRELM (WormholeB0 pages, BH conditions C0..C12)."""
import pytest

from golden.core import Tensix
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.state import MATRIX_UNIT, UNPACKERS
from golden.sync.sync import BLOCKED_BY

from machine_util import adc, run

B_MISC, B_SYNC, B_MATH, ALL = 1, 2, 1 << 6, 0x1FF


def sems(m):
    return [(s.value, s.max) for s in m.s.semaphores]


def test_nop_changes_nothing():
    m = run("NOP; NOP")
    assert m.executed == 2 and m.s.rwc[0].dst == 0


def test_seminit_post_get_saturate():
    m = run("SEMINIT max_value=2 init_value=14 sem_sel=5;"       # semaphores 0 and 2
            "SEMPOST sem_sel=1; SEMPOST sem_sel=1; SEMPOST sem_sel=4;"
            "SEMGET sem_sel=2; SEMGET sem_sel=2")
    s = sems(m)
    assert s[0] == (15, 2)          # saturates at 15; Max does not limit SEMPOST
    assert s[2] == (15, 2)
    assert s[1] == (0, 0)           # SEMGET saturates at 0


def test_semaphore_mask_beyond_eight_is_undefined():
    with pytest.raises(UndefinedBehaviour):
        run("SEMPOST sem_sel=256")


def test_semwait_blocks_covered_instructions_until_another_thread_posts():
    m = run({0: "SEMWAIT stall_res=2 sem_sel=1 wait_sem_cond=1; SEMGET sem_sel=1; SETADC cntsetmask=1 value=9",
             1: "SETADC cntsetmask=4 value=3; SEMPOST sem_sel=1"})
    assert m.s.semaphores[0].value == 0
    assert adc(m, "unpack0", 0)[0] == 9 and adc(m, "pack", 0, t=1)[0] == 3


def test_semwait_that_nothing_satisfies_hangs():
    with pytest.raises(Hang, match="semaphore 0 is 0"):
        run("SEMWAIT stall_res=2 sem_sel=1 wait_sem_cond=1; SEMPOST sem_sel=1")


def test_semwait_at_max_condition():
    m = Tensix()
    m.s.semaphores[3].value = m.s.semaphores[3].max = 4
    with pytest.raises(Hang, match="max"):
        run("SEMWAIT stall_res=2 sem_sel=8 wait_sem_cond=2; SEMINIT sem_sel=1", m)
    m = run({0: "SEMINIT max_value=4 init_value=4 sem_sel=8; SEMWAIT stall_res=2 sem_sel=8 wait_sem_cond=2;"
                "SEMINIT max_value=9 init_value=9 sem_sel=1",
             1: "SEMWAIT stall_res=2 sem_sel=8 wait_sem_cond=1; SEMGET sem_sel=8"})
    assert sems(m)[3] == (3, 4) and sems(m)[0] == (9, 9)


def test_latched_wait_does_not_hold_uncovered_units():
    m = run("SEMWAIT stall_res=64 sem_sel=1 wait_sem_cond=1; SETADC cntsetmask=1 value=4; SEMPOST sem_sel=2")
    assert adc(m, "unpack0", 0)[0] == 4 and m.s.semaphores[1].value == 1


def test_zero_block_mask_means_math():
    with pytest.raises(Hang):
        run("SEMWAIT stall_res=0 sem_sel=1 wait_sem_cond=1; INCRWC rwc_a=1")


def test_nop_held_only_by_a_full_block_mask():
    run("SEMWAIT stall_res=0x1FE sem_sel=1 wait_sem_cond=1; NOP")
    with pytest.raises(Hang):
        run("SEMWAIT stall_res=0x1FF sem_sel=1 wait_sem_cond=1; NOP")


def test_stallwait_src_valid_condition_blocks_math_until_bank_owned():
    with pytest.raises(Hang, match="SrcA matrix bank"):
        run("STALLWAIT stall_res=64 wait_res=128; SETRWC rwc_a=1 bitmask=1")
    m = Tensix()
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    run("STALLWAIT stall_res=64 wait_res=128; SETRWC rwc_a=1 bitmask=1", m)
    assert m.s.rwc[0].srca == 1


def test_stallwait_src_cleared_condition():
    m = Tensix()
    m.s.srcb.banks[0].allowed_client = MATRIX_UNIT         # the unpacker's SrcB bank is not free
    with pytest.raises(Hang, match="SrcB unpacker bank"):
        run("STALLWAIT stall_res=1 wait_res=64; SETADC cntsetmask=1 value=1", m)
    m.s.srcb.banks[0].allowed_client = UNPACKERS
    run("STALLWAIT stall_res=1 wait_res=64; SETADC cntsetmask=1 value=1", m)
    assert adc(m, "unpack0", 0)[0] == 1


def test_stallwait_pipeline_conditions_are_met_in_sequential_model():
    m = run("STALLWAIT stall_res=0x1FF wait_res=0x1E1F; SETADC cntsetmask=1 value=5")   # all but C5..C8
    assert adc(m, "unpack0", 0)[0] == 5 and m.s.wait_gate[0] is None


def test_stallwait_waits_behind_a_pending_latch():
    with pytest.raises(Hang):
        run("SEMWAIT stall_res=2 sem_sel=1 wait_sem_cond=1; STALLWAIT stall_res=1 wait_res=1")


def test_stallwait_zero_condition_mask_not_modelled():
    with pytest.raises(NotModelled):
        run("STALLWAIT stall_res=1 wait_res=0")


def test_block_classes_follow_the_stallwait_table():
    assert BLOCKED_BY["SETADC"] == B_MISC and BLOCKED_BY["SEMPOST"] == B_SYNC
    assert BLOCKED_BY["ADDDMAREG"] == B_MISC | 1 << 5 and BLOCKED_BY["PACR"] == B_MISC | 1 << 2
    assert BLOCKED_BY["WRCFG"] == 1 << 7 and BLOCKED_BY["SFPLOAD"] == 1 << 8 and BLOCKED_BY["MVMUL"] == B_MATH
    assert BLOCKED_BY["STALLWAIT"] == ALL and BLOCKED_BY["REPLAY"] is None and BLOCKED_BY["NOP"] == 0


# ---- mutexes ---------------------------------------------------------------------------------------

def test_mutex_handover_between_threads():
    m = run({0: "ATGETM mutex_index=2; ATRELM mutex_index=2", 1: "ATGETM mutex_index=2"})
    assert m.s.mutex == {2: 1}


def test_mutex_held_by_another_thread_hangs():
    with pytest.raises(Hang, match="held by thread 0"):
        run({0: "ATGETM mutex_index=4", 1: "ATGETM mutex_index=4"})


def test_mutex_reacquire_and_foreign_release():
    m = run({0: "ATGETM mutex_index=0; ATGETM mutex_index=0", 1: "ATRELM mutex_index=0"})
    assert m.s.mutex == {0: 0}


def test_invalid_mutex_waits_forever():
    with pytest.raises(Hang, match="does not exist"):
        run("ATGETM mutex_index=1")


def test_mutex_5_to_7_not_modelled_on_blackhole():
    with pytest.raises(NotModelled):
        run("ATRELM mutex_index=6")
