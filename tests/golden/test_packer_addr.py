"""The packer's output address generator and the PACK-section AddrMod updates (hand-computed from
OutputAddressGenerator.md / InputAddressGenerator.md; the Blackhole Y-stride shift is delta #8, tested in
test_blackhole_deltas_regfiles)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from golden.errors import NotModelled
from golden.isa import encode
from golden.pack.addr import advance_pack_adcs, output_address
from golden.registers import thread_config_field

from regfile_util import machine, set_cfg, set_tcfg

P = 2   # the pack thread


def pacr(**fields):
    base = dict(cfgcontext=0, rowpadzero=0, dstaccessmode=0, addrmode=0, addrcntcontext=0, zerowrite=0,
                readintfsel=0, ovrdthreadid=0, concat=0, ctxtctrl=0, flush=0, last=0)
    return SimpleNamespace(**{**base, **fields})


def packer(l1=0x1000, uncompressed=1, state=0):
    m = machine()
    set_cfg(m, "THCON_SEC0_REG1_L1_Dest_addr", l1, state)
    set_cfg(m, "THCON_SEC0_REG1_Disable_zero_compress", uncompressed, state)
    return m


def test_data_address_is_l1_dest_plus_header():
    a = output_address(packer(), P, pacr())
    assert (a.data, a.exponent, a.rsi, a.adc_thread) == (0x10010, None, None, P)


def test_sub_l1_tile_header_size_drops_the_header():
    m = packer()
    set_cfg(m, "THCON_SEC0_REG1_Sub_l1_tile_header_size", 1)
    assert output_address(m, P, pacr()).data == 0x10000


def test_compression_puts_row_start_section_first():
    m = packer(uncompressed=0)
    set_cfg(m, "THCON_SEC0_REG1_Row_start_section_size", 2)
    a = output_address(m, P, pacr())
    assert (a.rsi, a.data) == (0x10010, 0x10030)


@pytest.mark.parametrize("fmt,has_exp", [(0, False), (1, False), (5, False), (2, True), (6, True), (7, True),
                                         (10, True), (14, True)])
def test_exponent_section_for_formats_under_16_bits(fmt, has_exp):
    m = packer(uncompressed=0)
    set_cfg(m, "THCON_SEC0_REG1_Out_data_format", fmt)
    set_cfg(m, "THCON_SEC0_REG1_Row_start_section_size", 2)
    set_cfg(m, "THCON_SEC0_REG1_Exp_section_size", 4)
    a = output_address(m, P, pacr())
    assert a.rsi == 0x10010
    if has_exp:
        assert (a.exponent, a.data) == (0x10030, 0x10070)
    else:
        assert (a.exponent, a.data) == (None, 0x10030)


def test_fifo_wrap_past_the_limit():
    m = packer(l1=0x1001)                      # Addr 0x1002
    set_cfg(m, "THCON_SEC0_REG9_Pack_0_2_limit_address", 0x800)      # limit*2+1 = 0x1001
    set_cfg(m, "THCON_SEC0_REG9_Pack_0_2_fifo_size", 0x400)
    assert output_address(m, P, pacr()).data == 0x802 << 4
    set_cfg(m, "THCON_SEC0_REG1_L1_Dest_addr", 0x1000)               # Addr 0x1001: not past the limit
    assert output_address(m, P, pacr()).data == 0x1001 << 4


def test_address_wraps_to_17_bits_of_16_byte_units():
    m = packer(l1=0x2FFFF)
    set_cfg(m, "THCON_SEC0_REG9_Pack_0_2_limit_address", 0xFFFF)
    assert output_address(m, P, pacr()).data == 0x10000 << 4


def test_reads_the_threads_config_state_and_adc():
    m = packer(l1=0x2000, state=1)
    set_tcfg(m, P, "CFG_STATE_ID_StateID", 1)
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_1_Ystride", 0x20, state=1)
    m.s.adc[P]["pack"][1].y = 2
    m.s.adc[0]["pack"][1].y = 7
    assert output_address(m, P, pacr()).data == (0x2001 + 4) << 4


@pytest.mark.parametrize("setup", [
    lambda m: (set_cfg(m, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride", 0x10), setattr(m.s.adc[P]["pack"][1], "z", 1)),
    lambda m: (set_cfg(m, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride", 0x10), setattr(m.s.adc[P]["pack"][1], "w", 1)),
    lambda m: set_cfg(m, "PCK0_ADDR_BASE_REG_1_Base", 0x100),
    lambda m: set_cfg(m, "THCON_SEC0_REG1_Add_l1_dest_addr_offset", 1),
    lambda m: set_cfg(m, "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd", 1),
])
def test_undocumented_blackhole_terms_are_not_modelled(setup):
    m = packer()
    setup(m)
    with pytest.raises(NotModelled):
        output_address(m, P, pacr())


def test_zero_terms_with_strides_are_fine():
    m = packer()
    set_cfg(m, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride", 0x10)      # Z is 0
    m.s.adc[P]["pack"][1].w = 3                              # Wstride is 0
    assert output_address(m, P, pacr()).data == 0x10010


@pytest.mark.parametrize("field", ["ovrdthreadid", "addrcntcontext", "cfgcontext", "ctxtctrl"])
def test_context_fields_not_modelled(field):
    with pytest.raises(NotModelled):
        output_address(packer(), P, pacr(**{field: 1}))


# --- PACK-section AddrMod ---
def pack_mod(m, section, t=P, **bits):
    word = 0
    for name, value in bits.items():
        f = thread_config_field(f"ADDR_MOD_PACK_SEC0_{name}")
        word = f.put(word, value)
    m.s.thread_config[t][thread_config_field("ADDR_MOD_PACK_SEC0_YsrcIncr").index + section] = word


def chans(m, t=P):
    return [(c.y, c.y_cr, c.z, c.z_cr) for c in m.s.adc[t]["pack"]]


def test_addr_mod_increments_y_and_z_of_both_channels():
    m = machine()
    pack_mod(m, 2, YsrcIncr=3, YdstIncr=5, ZsrcIncr=1, ZdstIncr=1)
    advance_pack_adcs(m, P, 2)
    advance_pack_adcs(m, P, 2)
    assert chans(m) == [(6, 0, 2, 0), (10, 0, 2, 0)]
    assert chans(m, 0) == [(0, 0, 0, 0), (0, 0, 0, 0)]


def test_addr_mod_cr_and_clear():
    m = machine()
    for c in m.s.adc[P]["pack"]:
        c.y, c.y_cr, c.z, c.z_cr = 9, 4, 5, 6
    pack_mod(m, 1, YsrcIncr=2, YsrcCR=1, YdstIncr=7, YdstCR=1, ZsrcClear=1, ZdstIncr=1)
    advance_pack_adcs(m, P, 1)
    assert chans(m) == [(6, 6, 0, 0), (11, 11, 6, 6)]
    pack_mod(m, 3, YsrcClear=1, YdstClear=1, YsrcIncr=1, ZdstClear=1)
    advance_pack_adcs(m, P, 3)
    assert chans(m) == [(0, 0, 0, 0), (0, 0, 0, 0)]


def test_addr_mod_y_wraps_at_13_bits():
    m = machine()
    m.s.adc[P]["pack"][1].y = 0x1FFF
    pack_mod(m, 0, YdstIncr=1)
    advance_pack_adcs(m, P, 0)
    assert m.s.adc[P]["pack"][1].y == 0


def test_addr_mod_can_advance_another_threads_adc():
    m = machine()
    pack_mod(m, 0, YdstIncr=1)
    advance_pack_adcs(m, P, 0, adc_thread=0)
    assert m.s.adc[0]["pack"][1].y == 1 and m.s.adc[P]["pack"][1].y == 0


def test_pacr_itself_is_not_modelled():
    with pytest.raises(NotModelled):
        packer().run({P: [encode("PACR", {"last": 1})]})
