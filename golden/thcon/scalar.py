"""Scalar Unit (ThCon) GPR instructions: SETDMAREG, ADD/SUB/MUL/SHIFT/BITWOP/CMPDMAREG, FLUSHDMA, REG2FLOP.

Sources: tt-isa-documentation WormholeB0 ScalarUnit.md and the per-instruction pages (functional models;
encodings from Diagrams/Src/Bits32.lua); Blackhole facts from tt-llk assembly.yaml: SHIFTDMAREG's
immediate is 6 bits (blackhole-deltas #16), THCON / GLOBAL configuration bases 64 / 180 (cfg_defines.h).
ttsim implements none of SUBDMAREG, SHIFTDMAREG, BITWOPDMAREG, CMPDMAREG, FLUSHDMA (nor any REG2FLOP on
Blackhole); they are modelled from the documents alone.
"""
from __future__ import annotations

from operator import add, sub

from ..config_words import GLOBAL_BASE, THCON_BASE, write_config
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..state import ADC_UNITS
from .adc import DIMS, WIDTH

M32 = 0xFFFFFFFF


def _reserved(name: str, bits: int, where: str) -> None:
    if bits:
        raise UndefinedBehaviour(f"{name}: bits {where} are reserved (set: {bits:#x})")


# ---- SETDMAREG -----------------------------------------------------------------------------------

_KEEP = (0xFFFF0000, 0x0000FFFF)      # per half: the bits of its register that writing it leaves


def _write_half(gprs: list[int], half: int, value: int) -> None:
    gprs[half >> 1] = (gprs[half >> 1] & _KEEP[half & 1]) | (value & 0xFFFF) << ((half & 1) << 4)


# Tile-header bits SETDMAREG ResultSize 3 replaces, per word (SETDMAREG_Special.md TileHeader).
_TILE_HEADER_FIELDS = (0x0000FFFF, 0x00FF0000, 0xFFFFFFFF, 0x00000000)


def _signals(name: str, source: int) -> list[int]:
    """The 128 bits SetSignalsMode reads. Sources 0..9 are packer state golden does not hold."""
    if source <= 9:
        raise NotModelled(f"{name} SetSignalsMode InputSource={source}: reads packer tile sizes, zero flags or "
                          "exponent statistics, which golden does not model")
    return [0, 0, 0, 0]   # sources 10..15 select nothing: the documented way to zero four GPRs


@semantics("SETDMAREG")
def setdmareg(m, t, f) -> None:
    """SETDMAREG_Immediate.md / SETDMAREG_Special.md (WormholeB0)."""
    gprs = m.s.gpr[t]
    if not f.setsignalsmode:
        _write_half(gprs, f.regindex16b, f.payload_sigselsize << 14 | f.payload_sigsel)
        return
    in_half, source, _packers, spare = (f.payload_sigsel & 7, f.payload_sigsel >> 3 & 0xF,
                                        f.payload_sigsel >> 7 & 0xF, f.payload_sigsel >> 11)
    _reserved("SETDMAREG", spare, "21:19")
    values = _signals("SETDMAREG", source)
    size, out_half = f.payload_sigselsize, f.regindex16b
    if size == 0:
        _write_half(gprs, out_half, values[in_half // 2] >> 16 * (in_half % 2))
    elif size == 1:
        gprs[out_half >> 1] = values[in_half >> 1]
    else:
        base = (out_half >> 1) & 0x3C
        for i, v in enumerate(values):
            keep = 0 if size == 2 else ~_TILE_HEADER_FIELDS[i] & M32
            gprs[base + i] = (gprs[base + i] & keep) | (v & ~keep & M32)


# ---- two-operand GPR arithmetic ------------------------------------------------------------------

def _operands(name: str, m, t, f, imm_bits: int, reg_mask: int = M32) -> tuple[int, int]:
    gprs = m.s.gpr[t]
    left = gprs[f.oparegindex]
    if f.opbisconst:
        if f.opbregindex >> imm_bits:
            raise UndefinedBehaviour(f"{name} immediate {f.opbregindex} does not fit in {imm_bits} bits")
        return left, f.opbregindex
    return left, gprs[f.opbregindex] & reg_mask


def _arith(name: str, m, t, f, op) -> None:
    if f.resultregindex >> 6:
        _reserved(name, f.resultregindex >> 6, "22:18")
    gprs = m.s.gpr[t]
    if f.opbisconst:
        left, right = _operands(name, m, t, f, 6)
    else:                           # two registers (_operands, written out here: the commonest form)
        left, right = gprs[f.oparegindex], gprs[f.opbregindex]
    gprs[f.resultregindex] = op(left, right) & M32


@semantics("ADDDMAREG")
def adddmareg(m, t, f) -> None:
    """ADDDMAREG.md (WormholeB0): Result = Left + Right (register or 6-bit immediate), mod 2**32."""
    _arith("ADDDMAREG", m, t, f, add)


@semantics("SUBDMAREG")
def subdmareg(m, t, f) -> None:
    """SUBDMAREG.md (WormholeB0): Result = Left - Right, mod 2**32 (ttsim: unsupported)."""
    _arith("SUBDMAREG", m, t, f, sub)


@semantics("MULDMAREG")
def muldmareg(m, t, f) -> None:
    """MULDMAREG.md (WormholeB0): Result = (Left & 0xFFFF) * (Right & 0xFFFF), the full 32-bit product."""
    _arith("MULDMAREG", m, t, f, lambda a, b: (a & 0xFFFF) * (b & 0xFFFF))


def _moded(name: str, m, t, f, ops: dict, imm_bits: int, reg_mask: int = M32) -> None:
    _reserved(name, f.opsel >> 3, "22:21")
    op = ops.get(f.opsel)
    if op is None:
        raise UndefinedBehaviour(f"{name} mode {f.opsel} is undefined (defined: {sorted(ops)})")
    left, right = _operands(name, m, t, f, imm_bits, reg_mask)
    m.s.gpr[t][f.resultregindex] = op(left, right) & M32


def _shift(left: int, amount: int, leftwards: bool) -> int:
    if amount >= 32:
        raise UndefinedBehaviour(f"SHIFTDMAREG immediate shift by {amount}: Blackhole's 6-bit immediate "
                                 "(delta #16) reaches 32..63, which no document defines")
    return left << amount if leftwards else left >> amount


@semantics("SHIFTDMAREG")
def shiftdmareg(m, t, f) -> None:
    """SHIFTDMAREG.md (WormholeB0): 0 left, 1 logical right; register amount & 0x1F; BH immediate 6 bits."""
    _moded("SHIFTDMAREG", m, t, f, {0: lambda a, b: _shift(a, b, True), 1: lambda a, b: _shift(a, b, False)},
           6, reg_mask=0x1F)


@semantics("BITWOPDMAREG")
def bitwopdmareg(m, t, f) -> None:
    """BITWOPDMAREG.md (WormholeB0): 0 AND, 1 OR, 2 XOR with a register or 6-bit immediate."""
    _moded("BITWOPDMAREG", m, t, f, {0: lambda a, b: a & b, 1: lambda a, b: a | b, 2: lambda a, b: a ^ b}, 6)


@semantics("CMPDMAREG")
def cmpdmareg(m, t, f) -> None:
    """CMPDMAREG.md (WormholeB0): unsigned 0 GT, 1 LT, 2 EQ; result 1 or 0."""
    _moded("CMPDMAREG", m, t, f, {0: lambda a, b: int(a > b), 1: lambda a, b: int(a < b),
                                   2: lambda a, b: int(a == b)}, 6)


@semantics("FLUSHDMA")
def flushdma(m, t, f) -> None:
    """FLUSHDMA.md (WormholeB0): waits for C0..C3 (0 means all); in the sequential model they always hold."""
    _reserved("FLUSHDMA", f.flushspec >> 4, "23:4")


# ---- REG2FLOP ------------------------------------------------------------------------------------

def _reg2flop_value(value: int, size_sel: int, shift8: int) -> int:
    """REG2FLOP_ADC.md: the part of the GPR that SizeSel / Shift8 select (out-of-range selections give 0)."""
    if size_sel == 0:
        return 0
    if size_sel == 1:
        return value if shift8 == 0 else 0
    if size_sel == 2:
        return {0: value & 0xFFFF, 2: value >> 16}.get(shift8, 0)
    return value >> 8 * shift8 & 0xFF


def _reg2flop_adc(m, t, f) -> None:
    flop = f.flopindex
    _reserved("REG2FLOP", flop >> 6, "15:12")
    dim, cr, sel, channel = DIMS[flop & 3], flop >> 2 & 1, flop >> 3 & 3, flop >> 5 & 1
    value = _reg2flop_value(m.s.gpr[t][f.regindex], f.sizesel, f.byteoffset)
    which = f.contextid_2 if f.targetsel & 1 else t
    if which >= 3 or sel == 3:
        return   # the documented model writes nothing
    ch = m.s.adc[which][ADC_UNITS[sel]][channel]
    setattr(ch, dim + ("_cr" if cr else ""), value & WIDTH[dim])


def _reg2flop_config(m, t, f) -> None:
    if f.byteoffset or f.contextid_2:
        raise NotModelled(f"REG2FLOP configuration form with ByteOffset={f.byteoffset} ContextId_2="
                          f"{f.contextid_2}: only zero is documented")
    index = f.flopindex
    if index >= GLOBAL_BASE - THCON_BASE:
        raise UndefinedBehaviour(f"REG2FLOP ThConCfgIndex={index}: only THCON_ configuration "
                                 f"(index < {GLOBAL_BASE - THCON_BASE}) can be written")
    gprs = m.s.gpr[t]
    if f.sizesel == 0:
        for i in range(4):
            write_config(m, t, THCON_BASE + (index & ~3) + i, gprs[(f.regindex & ~3) + i])
    else:
        write_config(m, t, THCON_BASE + index, gprs[f.regindex])


@semantics("REG2FLOP")
def reg2flop(m, t, f) -> None:
    """REG2FLOP_ADC.md / REG2FLOP_Configuration.md (WormholeB0) with BH bases (ttsim: unsupported on BH)."""
    if f.targetsel >> 1:
        _reg2flop_adc(m, t, f)
    elif f.targetsel:
        raise NotModelled("REG2FLOP TargetSel=1 (local registers): no functional description")
    else:
        _reg2flop_config(m, t, f)



@semantics("DMANOP")
def dmanop(m, t, f) -> None:
    """DMANOP (tt-llk assembly.yaml, ttsim): a no-op issued to the scalar unit (ThCon)."""
