"""Configuration unit: SETC16, WRCFG, RDCFG, RMWCIB against SETC16.md, WRCFG.md, RMWCIB.md."""
import pytest

from golden.config_words import GLOBAL_BASE, STATE_RESET, word_mask
from golden.core import Tensix
from golden.errors import NotModelled, UndefinedBehaviour
from golden.registers import config_field, thread_config_field

from machine_util import run, set_tcfg

M32 = 0xFFFFFFFF
L1_DEST = config_field("THCON_SEC0_REG1_L1_Dest_addr").index         # a full 32-bit word
DEST_BASE = config_field("DEST_REGW_BASE_Base").index                 # 16 bits used
PACK_OFFSET = config_field("DEST_TARGET_REG_CFG_PACK_SEC0_Offset").index   # a GLOBAL word


def machine(t=0, **gprs) -> Tensix:
    m = Tensix()
    for k, v in gprs.items():
        m.s.gpr[t][int(k[1:])] = v
    return m


def test_setc16_writes_issuing_threads_threadconfig():
    ab = thread_config_field("ADDR_MOD_AB_SEC3_SrcAIncr").index
    m = run(f"SETC16 setc16_reg={ab} setc16_value=0xBEEF", thread=1)
    assert m.s.thread_config[1][ab] == 0xBEEF
    assert m.s.thread_config[0][ab] == 0 and m.s.thread_config[2][ab] == 0


def test_setc16_beyond_threadconfig_is_undefined():
    with pytest.raises(UndefinedBehaviour):
        run("SETC16 setc16_reg=68")


def test_wrcfg_32_bit_goes_to_the_threads_config_state():
    m = machine(t=2, r3=0xCAFEF00D)
    set_tcfg(m, 2, "CFG_STATE_ID_StateID", 1)
    run(f"WRCFG gpraddress=3 cfgreg={L1_DEST}", m, thread=2)
    assert m.s.config[1][L1_DEST] == 0xCAFEF00D and m.s.config[0][L1_DEST] == 0


def test_wrcfg_keeps_only_named_field_bits():
    m = machine(r0=M32)
    run(f"WRCFG gpraddress=0 cfgreg={DEST_BASE}", m)
    assert m.s.config[0][DEST_BASE] == word_mask(DEST_BASE) == 0xFFFF


def test_wrcfg_128_bit_aligns_both_indices_down():
    m = machine(r8=1, r9=2, r10=3, r11=4)
    run(f"WRCFG gpraddress=10 wr128b=1 cfgreg={L1_DEST + 2}", m)     # L1_DEST = 69 -> words 68..71
    assert m.s.config[0][L1_DEST - 1:L1_DEST + 3] == [1, 2, 3, 4]


def test_wrcfg_global_word_reaches_both_states():
    m = machine(r1=0x12345)
    run(f"WRCFG gpraddress=1 cfgreg={PACK_OFFSET}", m)
    assert m.s.config[0][PACK_OFFSET] == m.s.config[1][PACK_OFFSET] == 0x12345


def test_wrcfg_state_reset_zeroes_the_banked_words():
    m = machine(r1=0xAB)
    m.s.config[0][L1_DEST] = m.s.config[1][L1_DEST] = 7
    m.s.config[0][PACK_OFFSET] = 9
    run(f"WRCFG gpraddress=1 cfgreg={STATE_RESET}", m)
    assert m.s.config[0][L1_DEST] == 0 and m.s.config[0][STATE_RESET] == 0
    assert m.s.config[1][L1_DEST] == 7 and m.s.config[0][PACK_OFFSET] == 9
    assert PACK_OFFSET == GLOBAL_BASE


@pytest.mark.parametrize("text,err", [("WRCFG gpraddress=64", UndefinedBehaviour),
                                      ("WRCFG cfgreg=224", UndefinedBehaviour),
                                      ("WRCFG cfgreg=9", NotModelled),            # no named field
                                      ("RDCFG gpraddress=1 cfgreg=300", UndefinedBehaviour),
                                      ("RMWCIB2 cfgregaddr=224", UndefinedBehaviour)])
def test_config_out_of_range(text, err):
    with pytest.raises(err):
        run(text)


def test_wrcfg_128_bit_refuses_before_writing_anything():
    m = machine(r0=1, r1=2, r2=3, r3=4)
    with pytest.raises(NotModelled):
        run("WRCFG gpraddress=0 wr128b=1 cfgreg=8", m)       # words 8..11: 9..11 have no named field
    assert m.s.config[0][8] == 0


def test_rdcfg_reads_the_threads_state():
    m = Tensix()
    m.s.config[1][L1_DEST] = 0x5555AAAA
    set_tcfg(m, 1, "CFG_STATE_ID_StateID", 1)
    run(f"RDCFG gpraddress=17 cfgreg={L1_DEST}", m, thread=1)
    assert m.s.gpr[1][17] == 0x5555AAAA


@pytest.mark.parametrize("byte", range(4))
def test_rmwcib_modifies_one_byte_under_mask(byte):
    m = Tensix()
    m.s.config[0][L1_DEST] = 0x12345678
    run(f"RMWCIB{byte} mask=0x0F data=0xAB cfgregaddr={L1_DEST}", m)
    old = (0x12345678 >> 8 * byte) & 0xFF
    want = (0x12345678 & ~(0xFF << 8 * byte)) | (((old & 0xF0) | 0xB) << 8 * byte)
    assert m.s.config[0][L1_DEST] == want


def test_rmwcib_on_state_reset_does_not_reset():
    m = Tensix()
    m.s.config[0][L1_DEST] = 7
    run(f"RMWCIB0 mask=1 data=1 cfgregaddr={STATE_RESET}", m)
    assert m.s.config[0][STATE_RESET] == 1 and m.s.config[0][L1_DEST] == 7


SCRATCH = [config_field(f"SCRATCH_SEC{i}_val").index for i in range(3)]


@pytest.mark.parametrize("mode, mask_mode, width, rot, expected", [
    # Config word 0x12345678, SCRATCH 0x0000F00F; values worked by hand from CFGSHIFTMASK.md's model
    (0, 1, 31, 0, 0x1234F67F),     # or
    (1, 1, 31, 0, 0x00005008),     # and
    (2, 1, 31, 0, 0x1234A677),     # xor
    (3, 1, 31, 0, 0x12354687),     # add
    (4, 1, 31, 0, 0xFFFF5FF8),     # or ~scratch
    (5, 1, 31, 0, 0x12340670),     # and ~scratch
    (6, 1, 31, 0, 0xEDCB5988),     # xor ~scratch
    (7, 1, 31, 0, 0x12336669),     # subtract
    (0, 1, 7, 4, 0xF2345678),      # low 8 bits (0x0F) rotated right by 4 -> 0xF0000000, or'd in
    (0, 0, 7, 4, 0xF2345670),      # MaskMode 0: the rotated mask's bits (0xF000000F) cleared in the old value first
])
def test_cfgshiftmask_alu_modes_mask_and_rotation(mode, mask_mode, width, rot, expected):
    m = Tensix()
    m.s.config[0][L1_DEST] = 0x12345678
    for s in range(2):
        m.s.config[s][SCRATCH[1]] = 0x0000F00F
    run(f"CFGSHIFTMASK disable_mask_on_old_val={mask_mode} operation={mode} mask_width={width} "
        f"right_cshift_amt={rot} scratch_sel=3 cfgreg={L1_DEST}", m, thread=1)     # index 3: thread 1's own
    assert m.s.config[0][L1_DEST] == expected


def test_cfgshiftmask_uses_the_threads_config_state():
    m = Tensix()
    set_tcfg(m, 0, "CFG_STATE_ID_StateID", 1)
    m.s.config[1][L1_DEST] = 5
    for s in range(2):
        m.s.config[s][SCRATCH[2]] = 3
    run(f"CFGSHIFTMASK disable_mask_on_old_val=1 operation=7 mask_width=31 right_cshift_amt=0 scratch_sel=2 "
        f"cfgreg={L1_DEST}", m)
    assert (m.s.config[1][L1_DEST], m.s.config[0][L1_DEST]) == (2, 0)
