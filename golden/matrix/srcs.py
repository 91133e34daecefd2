"""SrcA / SrcB bank ownership and whole-bank operations: ZEROSRC, SETDVALID, CLEARDVALID, UNPACR_NOP
(clear-Src / set-dvalid form), TRNSPSRCB.

Facts: tt-isa-documentation WormholeB0 SrcASrcB.md, ZEROSRC.md, SETDVALID.md, CLEARDVALID.md,
UNPACR_NOP_ZEROSRC.md, UNPACR_NOP_SETDVALID.md, TRNSPSRCB.md; Blackhole per ttsim v1.10.0, tt-llk
assembly.yaml and blackhole-deltas #15, #17. "Owned by the matrix unit" is what ttsim calls the bank's
data-valid bit. A Src cell is 19 bits: sign 18, mantissa 17:8, exponent 7:0 (golden.fpu_formats).
"""
from __future__ import annotations

from ..dest_view import config_word
from ..errors import Blocked
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import semantics
from ..registers import config_field, thread_config_field
from ..state import MATRIX_UNIT, UNPACKERS, SrcFile

NEG_INF = 0x7FFFF      # all 19 bits set: "negative infinity" as the matrix unit reads it
_SET_BASE = (thread_config_field("SRCA_SET_Base"), thread_config_field("SRCB_SET_Base"))
_OUT_FORMAT = ("THCON_SEC0_REG2_Out_data_format", "THCON_SEC1_REG2_Out_data_format")


def src_files(m):
    return (m.s.srca, m.s.srcb)


def matrix_bank(src: SrcFile):
    return src.banks[src.matrix_bank]


def wait_matrix_owns(src: SrcFile, name: str) -> None:
    """Wait Gate: block until the matrix unit's current bank of ``src`` is given to the matrix unit."""
    if src.banks[src.matrix_bank].allowed_client != MATRIX_UNIT:
        raise Blocked(f"{name} bank {src.matrix_bank} is not owned by the matrix unit")


def give_to_matrix(m, t: int, which: int, implied_format: int | None) -> None:
    """Hand the unpacker's current bank to the matrix unit, flip the unpacker to the other bank and
    reset the thread's unpack row cursor to SRC{A,B}_SET_Base << 4 (SETDVALID.md)."""
    src = src_files(m)[which]
    bank = src.banks[src.unpacker_bank]
    if bank.allowed_client == MATRIX_UNIT:
        raise UndefinedBehaviour(f"Src{'AB'[which]} bank {src.unpacker_bank} given to the matrix unit "
                                 "while it already owns it (ttsim: non-contractual)")
    bank.allowed_client = MATRIX_UNIT
    bank.implied_format = implied_format
    src.unpacker_bank ^= 1
    f = _SET_BASE[which]
    src.unpacker_row[t] = f.get(m.s.thread_config[t][f.index]) << 4


def _fill(bank, value: int) -> None:
    bank.rows[:] = value


@semantics("ZEROSRC")
def zerosrc(m, t, f) -> None:
    """ZEROSRC.md (WormholeB0); BH: blackhole-deltas #15 (zero_val bit 4, write_mode bit 3, bank_mask bit 2)."""
    if f.zero_val >> 1:
        raise NotModelled(f"ZEROSRC bits 23:5 = {f.zero_val >> 1:#x}: not decoded by ttsim")
    if f.zero_val and f.src_mask & 2:
        raise NotModelled("ZEROSRC -inf fill with SrcB selected: WormholeB0 fills SrcB with 0, "
                          "Blackhole behaviour undocumented")
    for bit, src in ((1, m.s.srca), (2, m.s.srcb)):
        if not f.src_mask & bit:
            continue
        if f.bank_mask:
            banks = src.banks
        elif f.write_mode:
            banks = [src.banks[src.matrix_bank]]
        else:
            banks = [src.banks[src.unpacker_bank]]
        for bank in banks:
            _fill(bank, NEG_INF if f.zero_val else 0)


@semantics("SETDVALID")
def setdvalid(m, t, f) -> None:
    """SETDVALID.md (WormholeB0). BH: ttsim refuses it (its interaction with the implied Src format is
    unspecified), so the bank's implied format becomes unknown (blackhole-deltas #17)."""
    if f.setvalid >> 2:
        raise NotModelled(f"SETDVALID bits 23:2 = {f.setvalid >> 2:#x}: not decoded by ttsim")
    for which in (0, 1):
        if f.setvalid >> which & 1:
            give_to_matrix(m, t, which, None)


@semantics("CLEARDVALID")
def cleardvalid(m, t, f) -> None:
    """CLEARDVALID.md (WormholeB0, with its Blackhole reset of the implied formats, blackhole-deltas #17)."""
    if f.reset >> 2:
        raise NotModelled(f"CLEARDVALID bits 21:2 = {f.reset >> 2:#x}: not decoded by ttsim")
    if f.reset & 1:
        for src in src_files(m):
            src.matrix_bank = src.unpacker_bank = 0
            for bank in src.banks:
                bank.allowed_client = UNPACKERS
                bank.implied_format = 0
        return
    keep_reading = f.reset & 2
    for which, src in enumerate(src_files(m)):
        if f.cleardvalid >> which & 1:
            bank = src.banks[src.matrix_bank]
            if bank.allowed_client != MATRIX_UNIT:
                raise UndefinedBehaviour(f"CLEARDVALID of Src{'AB'[which]} bank {src.matrix_bank}, which the "
                                         "matrix unit does not own (ttsim: non-contractual)")
    for which, src in enumerate(src_files(m)):
        if f.cleardvalid >> which & 1:
            src.banks[src.matrix_bank].allowed_client = UNPACKERS
            if not keep_reading:
                src.matrix_bank ^= 1


UNP_CLR_SRC = 1


@semantics("UNPACR_NOP")
def unpacr_nop(m, t, f) -> None:
    """UNPACR_NOP_ZEROSRC.md / UNPACR_NOP_SETDVALID.md (WormholeB0) in Blackhole's encoding (tt-llk
    assembly.yaml): Unpack_Pop=1 waits, clears the unpacker's bank, then with Set_Dvalid gives it to the
    matrix unit and records THCON_SEC{0,1}_REG2_Out_data_format as its implied format (delta #17).
    The other forms (overlay pop, plain NOP, set-dvalid-only flavour, other clear values) are NotModelled."""
    if f.unpack_pop != UNP_CLR_SRC:
        raise NotModelled(f"UNPACR_NOP Unpack_Pop={f.unpack_pop} (only the clear-Src form is modelled)")
    if f.clr_to1_fmt_ctrl or f.bank_clr_ctrl or f.src_clrval_ctrl > 1 or f.stream_id or f.msg_clr_cnt:
        raise NotModelled("UNPACR_NOP clear-Src form with Clr_to1_fmt_Ctrl, Bank_Clr_Ctrl, Src_ClrVal_Ctrl>1, "
                          "Stream_Id or Msg_Clr_Cnt set")
    if f.set_dvalid >> 1:
        raise NotModelled(f"UNPACR_NOP bits 11:9 = {f.set_dvalid >> 1:#x}: not decoded by ttsim")
    which = f.unpacker_select
    src = src_files(m)[which]
    waited = src.unpacker_bank if f.stall_clr_cntrl else src.matrix_bank
    if src.banks[waited].allowed_client != UNPACKERS:
        raise Blocked(f"Src{'AB'[which]} bank {waited} is not owned by the unpackers")
    bank = src.banks[src.unpacker_bank]
    if f.set_dvalid and bank.allowed_client == MATRIX_UNIT:
        raise UndefinedBehaviour(f"Src{'AB'[which]} bank {src.unpacker_bank} given to the matrix unit while it "
                                 "already owns it (ttsim: non-contractual)")
    _fill(bank, NEG_INF if f.src_clrval_ctrl else 0)
    if f.set_dvalid:
        field = config_field(_OUT_FORMAT[which])
        give_to_matrix(m, t, which, field.get(config_word(m, t, field.index, field.mask)))


@semantics("TRNSPSRCB")
def trnspsrcb(m, t, f) -> None:
    """TRNSPSRCB.md (WormholeB0): transpose the 16x16 block in rows 16..31 of the matrix unit's SrcB bank."""
    src = m.s.srcb
    wait_matrix_owns(src, "SrcB")
    rows = src.banks[src.matrix_bank].rows
    rows[16:32] = rows[16:32].T.copy()


@semantics("GATESRCRST")
def gatesrcrst(m, t, f) -> None:
    """GATESRCRST (no page; ttsim v1.10.0 executes it as a no-op): resets the SrcA/SrcB clock-gating control,
    which holds no state a program can observe, so nothing golden models changes."""
