"""AddrMod application: the post-instruction RWC update selected by an instruction's addr_mode.

Source: tt-isa-documentation WormholeB0 RWCs.md (ApplyAddrMod); Blackhole differences from
blackhole-deltas #1 and #2: the selector is 3 bits and picks section 0..7 directly (no
ADDR_MOD_SET_Base); ExtraAddrModBit is a 1-bit wrap (a toggle) whose effect on section selection is
undocumented for Blackhole, so golden refuses to guess while it is set.
"""
from __future__ import annotations

from functools import lru_cache

from .errors import NotModelled
from .registers import thread_config_field
from .state import DST_MASK, FIDELITY_MASK, SRC_MASK, Rwc


AB_SEC0 = thread_config_field("ADDR_MOD_AB_SEC0_SrcAIncr").index       # ThreadConfig index of section 0
DST_SEC0 = thread_config_field("ADDR_MOD_DST_SEC0_DestIncr").index
BIAS_SEC0 = thread_config_field("ADDR_MOD_BIAS_SEC0_BiasIncr").index


def _bits(word: int, shift: int, size: int) -> int:
    return (word >> shift) & ((1 << size) - 1)


def _update(cur: int, cr: int, incr: int, clear: int, use_cr: int, c_to_cr: int, mask: int) -> tuple[int, int]:
    """One counter and its checkpoint. CToCR is tested first, as ttsim does and RWCs.md implies."""
    if c_to_cr:
        cur = (cur + incr) & mask
        return cur, cur
    if clear:
        return 0, 0
    if use_cr:
        cr = (cr + incr) & mask
        return cr, cr
    return (cur + incr) & mask, cr


@lru_cache(maxsize=4096)
def _section(ab: int, dst: int, bias: int) -> tuple[tuple[int, ...], ...]:
    """One AddrMod section's fields, parsed once per distinct (AB, DST, BIAS) register triple."""
    return ((_bits(ab, 0, 6), _bits(ab, 7, 1), _bits(ab, 6, 1), 0),
            (_bits(ab, 8, 6), _bits(ab, 15, 1), _bits(ab, 14, 1), 0),
            (_bits(dst, 0, 10), _bits(dst, 11, 1), _bits(dst, 10, 1), _bits(dst, 12, 1)),
            (_bits(dst, 15, 1), _bits(dst, 13, 2), _bits(bias, 4, 1), _bits(bias, 0, 4) & 3))


def apply_addr_mod(m, t: int, addr_mode: int, update_fidelity: bool = True) -> None:
    """ApplyAddrMod (update_fidelity=False is ApplyPartialAddrMod, used by SFPLOAD/SFPSTORE)."""
    rwc: Rwc = m.s.rwc[t]
    if rwc.bias:
        raise NotModelled("AddrMod with ExtraAddrModBit set: Blackhole section selection undocumented")
    tc = m.s.thread_config[t]
    ab, dst, bias = tc[AB_SEC0 + addr_mode], tc[DST_SEC0 + addr_mode], tc[BIAS_SEC0 + addr_mode]
    if not (ab or dst or bias):      # an all-zero section changes nothing
        return
    a, b, d, (fid_clear, fid_incr, bias_clear, bias_incr) = _section(ab, dst, bias)

    rwc.srca, rwc.srca_cr = _update(rwc.srca, rwc.srca_cr, *a, SRC_MASK)
    rwc.srcb, rwc.srcb_cr = _update(rwc.srcb, rwc.srcb_cr, *b, SRC_MASK)
    rwc.dst, rwc.dst_cr = _update(rwc.dst, rwc.dst_cr, *d, DST_MASK)
    if update_fidelity:
        if fid_clear:
            rwc.fidelity = 0
        else:
            rwc.fidelity = (rwc.fidelity + fid_incr) & FIDELITY_MASK
    if bias_clear:
        rwc.bias = 0
    elif bias_incr:
        rwc.bias ^= 1
