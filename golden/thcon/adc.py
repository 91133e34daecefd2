"""ADC instructions: SETADC, SETADCXX, SETADCXY, SETADCZW, INCADCXY, INCADCZW, ADDRCRXY, ADDRCRZW.

Sources: tt-isa-documentation WormholeB0 ADCs.md and the per-instruction pages (functional models) with
their encodings (Diagrams/Src/Bits32.lua); Blackhole widths X 18, Y 13, Z/W 13 bits (blackhole-deltas #6).
CntSetMask bit 0 / 1 / 2 selects unpacker 0 / unpacker 1 / the packers; a zero mask changes nothing.
ThreadOverride (SETADC value bits 17:16, bits 19:18 of the XY/ZW family) is refused: ttsim treats it
as unsupported and Blackhole's assembly.yaml describes SETADC's value as a full 18-bit counter value
(blackhole-deltas #19), so golden does not guess which thread's counters would change.
"""
from __future__ import annotations

from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..state import ADC_UNITS, ADC_X_MASK, ADC_Y_MASK, ADC_ZW_MASK, AdcChannel

WIDTH = {"x": ADC_X_MASK, "y": ADC_Y_MASK, "z": ADC_ZW_MASK, "w": ADC_ZW_MASK}
DIMS = ("x", "y", "z", "w")


def _channels(m, t: int, cntsetmask: int) -> list[list[AdcChannel]]:
    """The [channel0, channel1] pairs of the units selected by CntSetMask, in thread t's ADCs."""
    return [m.s.adc[t][unit] for bit, unit in enumerate(ADC_UNITS) if cntsetmask >> bit & 1]


def _set(ch: AdcChannel, dim: str, value: int) -> None:
    value &= WIDTH[dim]
    setattr(ch, dim, value)
    setattr(ch, dim + "_cr", value)


def _inc(ch: AdcChannel, dim: str, inc: int) -> None:
    setattr(ch, dim, (getattr(ch, dim) + inc) & WIDTH[dim])


def _carriage_return(ch: AdcChannel, dim: str, inc: int) -> None:
    cr = (getattr(ch, dim + "_cr") + inc) & WIDTH[dim]
    setattr(ch, dim, cr)
    setattr(ch, dim + "_cr", cr)


@semantics("SETADC")
def setadc(m, t, f) -> None:
    """SETADC.md (WormholeB0): set one counter and its checkpoint; BH: deltas #6, #19."""
    if f.value >> 16:
        raise NotModelled(f"SETADC value={f.value:#x}: bits 17:16 are ThreadOverride on Wormhole but part of an "
                          "18-bit value per Blackhole assembly.yaml; ttsim refuses them (delta #19)")
    for pair in _channels(m, t, f.cntsetmask):
        _set(pair[f.channelindex], DIMS[f.dimensionindex], f.value)


def _xy_family(name: str, f, with_mask: bool) -> tuple[int, int, int, int, int]:
    """Decode the shared XY/ZW layout: (mask, v0_lo, v0_hi, v1_lo, v1_hi); fields named as in isa.yaml."""
    override, spare = f.ch1_y >> 3 & 3, f.ch1_y >> 5
    if spare:
        raise UndefinedBehaviour(f"{name}: bit 20 has no documented meaning")
    if override:
        raise NotModelled(f"{name} ThreadOverride={override} (bits 19:18): ttsim refuses it (delta #19)")
    mask = f.bitmask if with_mask else 0xF
    if mask >> 4:
        raise UndefinedBehaviour(f"{name} BitMask={mask:#x}: bits 5:4 have no documented meaning")
    return mask, f.ch0_x, f.ch0_y, f.ch1_x, f.ch1_y & 7


def _apply_xy_family(m, t, name: str, f, dims: tuple[str, str], op, with_mask: bool = True) -> None:
    mask, a0, b0, a1, b1 = _xy_family(name, f, with_mask)
    lo, hi = dims
    for pair in _channels(m, t, f.cntsetmask):
        for bit, ch, dim, v in ((0, 0, lo, a0), (1, 0, hi, b0), (2, 1, lo, a1), (3, 1, hi, b1)):
            if mask >> bit & 1:
                op(pair[ch], dim, v)


@semantics("SETADCXY")
def setadcxy(m, t, f) -> None:
    """SETADCXY.md (WormholeB0): set selected X/Y counters and checkpoints of both channels (3-bit values)."""
    _apply_xy_family(m, t, "SETADCXY", f, ("x", "y"), _set)


@semantics("SETADCZW")
def setadczw(m, t, f) -> None:
    """SETADCZW.md (WormholeB0): set selected Z/W counters and checkpoints of both channels (3-bit values)."""
    _apply_xy_family(m, t, "SETADCZW", f, ("z", "w"), _set)


@semantics("INCADCXY")
def incadcxy(m, t, f) -> None:
    """INCADCXY.md (WormholeB0): add to X/Y of both channels, checkpoints untouched; wraps at BH widths."""
    _apply_xy_family(m, t, "INCADCXY", f, ("x", "y"), _inc, with_mask=False)


@semantics("INCADCZW")
def incadczw(m, t, f) -> None:
    """INCADCZW.md (WormholeB0): add to Z/W of both channels, checkpoints untouched; BH Z/W are 13 bits."""
    _apply_xy_family(m, t, "INCADCZW", f, ("z", "w"), _inc, with_mask=False)


@semantics("ADDRCRXY")
def addrcrxy(m, t, f) -> None:
    """ADDRCRXY.md (WormholeB0): for selected X/Y, checkpoint += increment, counter = checkpoint."""
    _apply_xy_family(m, t, "ADDRCRXY", f, ("x", "y"), _carriage_return)


@semantics("ADDRCRZW")
def addrcrzw(m, t, f) -> None:
    """ADDRCRZW.md (WormholeB0): for selected Z/W, checkpoint += increment, counter = checkpoint."""
    _apply_xy_family(m, t, "ADDRCRZW", f, ("z", "w"), _carriage_return)


@semantics("SETADCXX")
def setadcxx(m, t, f) -> None:
    """SETADCXX.md (WormholeB0): channel 0 X and channel 1 X (10-bit values) with their checkpoints."""
    if f.x_end2 >> 10:
        raise UndefinedBehaviour(f"SETADCXX x_end2={f.x_end2:#x}: bit 20 has no documented meaning")
    for pair in _channels(m, t, f.cntsetmask):
        _set(pair[0], "x", f.x_start)
        _set(pair[1], "x", f.x_end2)
