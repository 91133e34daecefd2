"""The address side of PACR: the packer's output address generator and the PACK-section AddrMod updates
of the packer ADCs. PACR's data movement is not modelled (PACR stays NotModelled); these functions are
what a PACR model, or a test, builds on.

Facts: tt-isa-documentation WormholeB0 Packers/OutputAddressGenerator.md and InputAddressGenerator.md
(the AddrMod updates of Channel[1] and Channel[0]); BlackholeA0 PACR.md (one packer with four Dst read
interfaces selected by ReadIntfSel, so packer 0's configuration and the issuing thread's ADC are always
used); ttsim v1.10.0's Blackhole PACR and blackhole-deltas #8: the Y/Z/W term is a byte offset added as
``YZW_Addr >> 4`` (Wormhole adds ``YZW_Addr & ~0xf`` to a 16-byte-unit address). ttsim models only the Y
term (it refuses nonzero Z, W and PCK0_ADDR_BASE_REG_1_Base), so golden refuses a nonzero Z, W or base
term rather than guess how it combines.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..dest_view import config_word
from ..errors import NotModelled
from ..registers import RegField, config_field, thread_config_field
from ..state import ADC_Y_MASK, ADC_ZW_MASK, AdcChannel

_C = {n: config_field(n) for n in (
    "THCON_SEC0_REG1_L1_Dest_addr", "THCON_SEC0_REG1_Sub_l1_tile_header_size",
    "THCON_SEC0_REG1_Add_l1_dest_addr_offset", "THCON_SEC0_REG1_Disable_zero_compress",
    "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd", "THCON_SEC0_REG1_Row_start_section_size",
    "THCON_SEC0_REG1_Exp_section_size", "THCON_SEC0_REG1_Out_data_format",
    "THCON_SEC0_REG9_Pack_0_2_limit_address", "THCON_SEC0_REG9_Pack_0_2_fifo_size",
    "PCK0_ADDR_BASE_REG_1_Base", "PCK0_ADDR_CTRL_XY_REG_1_Ystride", "PCK0_ADDR_CTRL_ZW_REG_1_Zstride",
    "PCK0_ADDR_CTRL_ZW_REG_1_Wstride")}
_PACK = {n: thread_config_field(f"ADDR_MOD_PACK_SEC0_{n}") for n in (
    "YsrcIncr", "YsrcCR", "YsrcClear", "YdstIncr", "YdstCR", "YdstClear", "ZsrcIncr", "ZsrcClear", "ZdstIncr",
    "ZdstClear")}
PACK_SEC0 = _PACK["YsrcIncr"].index      # sections 0..3 are consecutive ThreadConfig words
L1_UNIT_MASK = 0x1FFFF      # output addresses are 17-bit counts of 16-byte units


@dataclass(frozen=True)
class OutputAddresses:
    """Byte addresses a PACR that needs new addresses starts its streams at (None: stream unused)."""
    data: int
    exponent: int | None     # output formats under 16 bits (Out_data_format bit 1)
    rsi: int | None          # row-start index stream when compressing
    adc_thread: int          # whose ADCs.Packers supplied Y/Z/W and are advanced


def _get(m, t: int, name: str) -> int:
    f: RegField = _C[name]
    return f.get(config_word(m, t, f.index, f.mask))


def _check_fields(f) -> None:
    if f.ovrdthreadid or f.addrcntcontext or f.cfgcontext or f.ctxtctrl:
        raise NotModelled("PACR OvrdThreadId / AddrCntContext / CfgContext / CtxtCtrl: Blackhole behaviour "
                          "undocumented (ttsim: missing specification)")


def output_address(m, t: int, f) -> OutputAddresses:
    """OutputAddressGenerator.md for Blackhole's single packer, as if NeedsNewAddress (a fresh start, or
    the previous PACR had Last or Flush); no state changes."""
    _check_fields(f)
    if _get(m, t, "THCON_SEC0_REG1_Add_l1_dest_addr_offset"):
        raise NotModelled("PACR with Add_l1_dest_addr_offset: the offset is TDMA-RISC state")
    if _get(m, t, "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd"):
        raise NotModelled("PACR with All_pack_disable_zero_compress_ovrd: no per-packer bits on Blackhole")
    adc: AdcChannel = m.s.adc[t]["pack"][1]
    y_term = adc.y * _get(m, t, "PCK0_ADDR_CTRL_XY_REG_1_Ystride")
    other = (_get(m, t, "PCK0_ADDR_BASE_REG_1_Base"), adc.z * _get(m, t, "PCK0_ADDR_CTRL_ZW_REG_1_Zstride"),
             adc.w * _get(m, t, "PCK0_ADDR_CTRL_ZW_REG_1_Wstride"))
    if any(other):
        raise NotModelled("PACR output address with a nonzero base, Z or W term: Blackhole's combination is "
                          "undocumented (ttsim models the Y term only, blackhole-deltas #8)")
    addr = _get(m, t, "THCON_SEC0_REG1_L1_Dest_addr") + (0 if _get(m, t, "THCON_SEC0_REG1_Sub_l1_tile_header_size")
                                                          else 1)
    addr = (addr + (y_term >> 4)) & 0xFFFFFFFF
    if addr > _get(m, t, "THCON_SEC0_REG9_Pack_0_2_limit_address") * 2 + 1:
        addr = (addr - _get(m, t, "THCON_SEC0_REG9_Pack_0_2_fifo_size") * 2) & 0xFFFFFFFF
    rsi = exponent = None
    if not _get(m, t, "THCON_SEC0_REG1_Disable_zero_compress"):
        rsi = (addr & L1_UNIT_MASK) << 4
        addr += _get(m, t, "THCON_SEC0_REG1_Row_start_section_size")
    if _get(m, t, "THCON_SEC0_REG1_Out_data_format") & 2:
        exponent = (addr & L1_UNIT_MASK) << 4
        addr += _get(m, t, "THCON_SEC0_REG1_Exp_section_size")
    return OutputAddresses((addr & L1_UNIT_MASK) << 4, exponent, rsi, t)


def _advance_y(ch: AdcChannel, incr: int, cr: int, clear: int) -> None:
    if clear:
        ch.y = ch.y_cr = 0
    elif cr:
        ch.y_cr = (ch.y_cr + incr) & ADC_Y_MASK
        ch.y = ch.y_cr
    else:
        ch.y = (ch.y + incr) & ADC_Y_MASK


def _advance_z(ch: AdcChannel, incr: int, clear: int) -> None:
    if clear:
        ch.z = ch.z_cr = 0
    else:
        ch.z = (ch.z + incr) & ADC_ZW_MASK


@lru_cache(maxsize=1024)
def _addr_mod(word: int) -> dict[str, int]:
    """The ADDR_MOD_PACK_SEC fields of a ThreadConfig word (read-only: shared between calls)."""
    return {n: f.get(word) for n, f in _PACK.items()}


def advance_pack_adcs(m, t: int, addr_mode: int, adc_thread: int | None = None) -> None:
    """The AddrMod step of both address generators: ThreadConfig ADDR_MOD_PACK_SEC[addr_mode] advances
    Y and Z of ADCs[adc_thread].Packers Channel[0] (Ysrc/Zsrc) and Channel[1] (Ydst/Zdst)."""
    a = _addr_mod(m.s.thread_config[t][PACK_SEC0 + addr_mode])
    ch0, ch1 = m.s.adc[t if adc_thread is None else adc_thread]["pack"]
    _advance_y(ch0, a["YsrcIncr"], a["YsrcCR"], a["YsrcClear"])
    _advance_y(ch1, a["YdstIncr"], a["YdstCR"], a["YdstClear"])
    _advance_z(ch0, a["ZsrcIncr"], a["ZsrcClear"])
    _advance_z(ch1, a["ZdstIncr"], a["ZdstClear"])
