"""SrcA/SrcB bank ownership and whole-bank operations: ZEROSRC, SETDVALID, CLEARDVALID, UNPACR_NOP
(clear-Src and set-dvalid form), TRNSPSRCB. Expectations from the WormholeB0 pages; the Blackhole-only
facts (implied formats, ZEROSRC modes) are in test_blackhole_deltas_regfiles."""
from __future__ import annotations

import numpy as np
import pytest

from golden.core import Tensix
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.isa import encode
from golden.state import MATRIX_UNIT, UNPACKERS

from regfile_util import T, machine, run1, set_cfg, set_tcfg


def fill(m, value):
    for src in (m.s.srca, m.s.srcb):
        for bank in src.banks:
            bank.rows[:] = value


def owners(src):
    return [b.allowed_client for b in src.banks]


# --- ZEROSRC ---
@pytest.mark.parametrize("write_mode,bank_mask,cleared", [(0, 0, [1]), (1, 0, [0]), (0, 1, [0, 1]), (1, 1, [0, 1])])
def test_zerosrc_bank_selection(write_mode, bank_mask, cleared):
    m = machine()
    fill(m, 5)
    m.s.srca.unpacker_bank = 1            # unpacker writes bank 1, matrix unit reads bank 0
    run1(m, "ZEROSRC", zero_val=0, write_mode=write_mode, bank_mask=bank_mask, src_mask=1)
    for b in range(2):
        assert (m.s.srca.banks[b].rows == (0 if b in cleared else 5)).all()
        assert (m.s.srcb.banks[b].rows == 5).all()


def test_zerosrc_both_sources():
    m = machine()
    fill(m, 7)
    run1(m, "ZEROSRC", zero_val=0, write_mode=1, bank_mask=0, src_mask=3)
    assert (m.s.srca.banks[0].rows == 0).all() and (m.s.srcb.banks[0].rows == 0).all()
    assert (m.s.srca.banks[1].rows == 7).all() and (m.s.srcb.banks[1].rows == 7).all()


def test_zerosrc_needs_no_bank_ownership():
    m = machine()          # every bank belongs to the unpackers
    fill(m, 1)
    run1(m, "ZEROSRC", zero_val=0, write_mode=1, bank_mask=0, src_mask=2)
    assert (m.s.srcb.banks[0].rows == 0).all()


# --- SETDVALID ---
def test_setdvalid_gives_the_unpacker_bank_and_resets_row_cursor():
    m = machine(implied=5)
    set_tcfg(m, 0, "SRCA_SET_Base", 2)
    m.s.srca.unpacker_row[0] = 9
    run1(m, "SETDVALID", t=0, setvalid=1)
    assert owners(m.s.srca) == [MATRIX_UNIT, UNPACKERS]
    assert m.s.srca.unpacker_bank == 1 and m.s.srca.unpacker_row[0] == 32
    assert owners(m.s.srcb) == [UNPACKERS, UNPACKERS]
    run1(m, "SETDVALID", t=0, setvalid=3)
    assert owners(m.s.srca) == [MATRIX_UNIT, MATRIX_UNIT] and m.s.srca.unpacker_bank == 0
    assert owners(m.s.srcb) == [MATRIX_UNIT, UNPACKERS] and m.s.srcb.unpacker_bank == 1


def test_setdvalid_on_a_bank_the_matrix_unit_owns_is_undefined():
    m = machine(give=True)
    with pytest.raises(UndefinedBehaviour):
        run1(m, "SETDVALID", t=0, setvalid=2)


# --- CLEARDVALID ---
def test_cleardvalid_returns_bank_and_flips_matrix_unit():
    m = machine(give=True)
    run1(m, "CLEARDVALID", cleardvalid=1, reset=0)
    assert owners(m.s.srca) == [UNPACKERS, UNPACKERS] and m.s.srca.matrix_bank == 1
    assert owners(m.s.srcb)[0] == MATRIX_UNIT and m.s.srcb.matrix_bank == 0


def test_cleardvalid_keep_reading_same_src():
    m = machine(give=True)
    run1(m, "CLEARDVALID", cleardvalid=3, reset=2)
    assert owners(m.s.srca)[0] == UNPACKERS and owners(m.s.srcb)[0] == UNPACKERS
    assert m.s.srca.matrix_bank == 0 and m.s.srcb.matrix_bank == 0


def test_cleardvalid_of_a_bank_not_owned_is_undefined_and_changes_nothing():
    m = machine()
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    with pytest.raises(UndefinedBehaviour):
        run1(m, "CLEARDVALID", cleardvalid=3, reset=0)       # SrcB bank 0 is the unpackers'
    assert owners(m.s.srca)[0] == MATRIX_UNIT and m.s.srca.matrix_bank == 0


# --- UNPACR_NOP clear-Src / set-dvalid ---
def unpacr_nop(which=0, **fields):
    """UNPACR_NOP in its Blackhole set-dvalid form (Unpack_Pop=1 clear-Src, Set_Dvalid=1) unless overridden."""
    return encode("UNPACR_NOP", {"unpacker_select": which, "set_dvalid": 1, "unpack_pop": 1, **fields})


@pytest.mark.parametrize("which", [0, 1])
def test_unpacr_nop_clears_then_gives_the_bank(which):
    m = machine()
    fill(m, 9)
    src = (m.s.srca, m.s.srcb)[which]
    set_cfg(m, ("THCON_SEC0_REG2_Out_data_format", "THCON_SEC1_REG2_Out_data_format")[which], 5)
    m.run({0: [unpacr_nop(which)]})
    assert (src.banks[0].rows == 0).all() and (src.banks[1].rows == 9).all()
    assert owners(src) == [MATRIX_UNIT, UNPACKERS] and src.unpacker_bank == 1
    assert src.banks[0].implied_format == 5


def test_unpacr_nop_without_set_dvalid_only_clears():
    m = machine()
    fill(m, 9)
    m.run({0: [unpacr_nop(0, set_dvalid=0, src_clrval_ctrl=1)]})
    assert (m.s.srca.banks[0].rows == 0x7FFFF).all()
    assert owners(m.s.srca) == [UNPACKERS, UNPACKERS] and m.s.srca.unpacker_bank == 0


def test_unpacr_nop_waits_for_the_matrix_units_bank_before_any_effect():
    m = machine()
    fill(m, 9)
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT     # matrix unit still reads bank 0
    m.s.srca.unpacker_bank = 1
    with pytest.raises(Hang):
        m.run({0: [unpacr_nop(0)]})
    assert (m.s.srca.banks[1].rows == 9).all() and m.s.srca.unpacker_bank == 1


def test_unpacr_nop_stall_clr_cntrl_waits_for_the_unpackers_bank_only():
    m = machine()
    fill(m, 9)
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    m.s.srca.unpacker_bank = 1
    m.run({0: [unpacr_nop(0, stall_clr_cntrl=1)]})
    assert (m.s.srca.banks[1].rows == 0).all() and owners(m.s.srca) == [MATRIX_UNIT, MATRIX_UNIT]


def test_unpacr_nop_proceeds_once_another_thread_releases_the_bank():
    m = machine()
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    m.s.srca.unpacker_bank = 1
    m.run({0: [unpacr_nop(0)], 1: [encode("CLEARDVALID", {"cleardvalid": 1})]})
    assert owners(m.s.srca) == [UNPACKERS, MATRIX_UNIT] and m.s.srca.matrix_bank == 1


@pytest.mark.parametrize("fields", [dict(unpack_pop=0), dict(unpack_pop=2), dict(unpack_pop=3),
                                    dict(clr_to1_fmt_ctrl=3), dict(bank_clr_ctrl=1), dict(src_clrval_ctrl=2)])
def test_unpacr_nop_other_forms_not_modelled(fields):
    with pytest.raises(NotModelled):
        machine().run({0: [unpacr_nop(0, **fields)]})


# --- TRNSPSRCB ---
def test_trnspsrcb_transposes_rows_16_to_31_of_the_matrix_bank():
    m = machine()
    m.s.srcb.matrix_bank = 1
    m.s.srcb.banks[1].allowed_client = MATRIX_UNIT
    cells = np.arange(64 * 16, dtype=np.uint32).reshape(64, 16) | 0x40000
    m.s.srcb.banks[1].rows[:] = cells
    m.s.srcb.banks[0].rows[:] = cells
    run1(m, "TRNSPSRCB")
    rows = m.s.srcb.banks[1].rows
    for i in range(16):
        for j in range(16):
            assert rows[16 + i][j] == cells[16 + j][i]
    assert (rows[:16] == cells[:16]).all() and (rows[32:] == cells[32:]).all()
    assert (m.s.srcb.banks[0].rows == cells).all()


def test_trnspsrcb_waits_for_srcb():
    m = Tensix()
    m.s.srcb.banks[0].rows[16, 1] = 3
    with pytest.raises(Hang):
        run1(m, "TRNSPSRCB")
    assert m.s.srcb.banks[0].rows[16, 1] == 3
