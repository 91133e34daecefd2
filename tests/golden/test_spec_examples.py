"""Worked examples printed in the shared spec documents, decoded and executed on golden.

rwc-addrmod-adc.txt §4.2-§4.4 and §5.4 (matmul kernel disassembly), scalar-unit-gpr-instructions.txt
(encoding quick reference and functional models). The disassembly prints instruction-stream words; the
Tensix word is rotr(stream, 2) (blackhole-deltas #4), not stream >> 2.
"""
import pytest

from golden import fpu_formats as ff
from golden import isa
from golden.core import Tensix, decode
from golden.errors import NotModelled, UndefinedBehaviour
from golden.registers import thread_config_field
from golden.state import MATRIX_UNIT

from machine_util import adc, run, rwc

MATH, PACK = 1, 2


# ---- §4.4: SETRWC at the loop boundary ------------------------------------------------------------

def test_setrwc_loop_boundary_word_resets_all_counters():
    word = isa.from_stream(0xDC00003C)
    assert isa.disassemble(word) == "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15"
    m = Tensix()
    r = m.s.rwc[MATH]
    r.srca, r.srca_cr, r.srcb, r.srcb_cr, r.dst, r.dst_cr, r.fidelity = 48, 32, 56, 48, 56, 8, 3
    m.run({MATH: [word]})
    assert rwc(m, MATH) == (0,) * 7


# ---- §5.4: packer ADC initialisation --------------------------------------------------------------

def test_packer_adc_words_are_rotated_stream_form():
    xy, zw = isa.from_stream(0x4600002D), isa.from_stream(0x5200003D)
    assert isa.disassemble(xy) == "SETADCXY cntsetmask=4 ch1_y=0 ch1_x=0 ch0_y=0 ch0_x=0 bitmask=11"
    assert isa.disassemble(zw) == "SETADCZW cntsetmask=4 ch1_y=0 ch1_x=0 ch0_y=0 ch0_x=0 bitmask=15"
    # Read as W << 2 the first word decodes as a different instruction and the second as no instruction.
    assert isa.decode(0x4600002D >> 2)[0].name != "SETADCXY"
    with pytest.raises(isa.IsaError):
        isa.decode(0x5200003D >> 2)


def test_packer_adc_initialisation_leaves_channel1_x():
    m = Tensix()
    for ch in m.s.adc[PACK]["pack"]:
        for f in ("x", "x_cr", "y", "y_cr", "z", "z_cr", "w", "w_cr"):
            setattr(ch, f, 5)
    m.run({PACK: [isa.from_stream(0x4600002D), isa.from_stream(0x5200003D)]})
    assert adc(m, "pack", 0, t=PACK) == (0,) * 8
    assert adc(m, "pack", 1, t=PACK) == (5, 5, 0, 0, 0, 0, 0, 0)   # mask 0b1011 skips X1
    assert adc(m, "unpack0", 0, t=PACK) == (0,) * 8


# ---- §4.1-4.3: the matmul kernel's AddrMod configuration and 16-step RWC trace ---------------------

def section_words(section: int, **fields) -> list[int]:
    """SETC16 words setting one AddrMod section's AB and DST registers from named fields."""
    out = []
    for reg, names in (("AB", ("SrcAIncr", "SrcACR", "SrcAClear", "SrcBIncr", "SrcBCR", "SrcBClear")),
                       ("DST", ("DestIncr", "DestCR", "DestClear", "FidelityIncr"))):
        value, index = 0, None
        for name in names:
            f = thread_config_field(f"ADDR_MOD_{reg}_SEC{section}_{name}")
            index = f.index
            value = f.put(value, fields.get(name, 0))
        out.append(isa.encode("SETC16", {"setc16_reg": index, "setc16_value": value}))
    return out


MATMUL_SECTIONS = (
    section_words(0, SrcAIncr=0, SrcBIncr=8, DestIncr=8),
    section_words(1, SrcAIncr=16, SrcBCR=1, SrcBIncr=0, DestIncr=8),
    section_words(2, SrcACR=1, SrcAIncr=0, SrcBCR=1, SrcBIncr=32, DestIncr=8),
    section_words(4, SrcACR=1, SrcAIncr=32, SrcBCR=1, SrcBIncr=48, DestCR=1, DestIncr=0),
    section_words(5, SrcAClear=1, SrcBClear=1, DestClear=1, FidelityIncr=1),
)
REPLAY_BUFFER = [0x98000000, 0x98010000, 0x98000000, 0x98020000, 0x98000000, 0x98010000, 0x98000000, 0x98040000,
                 0x98000000, 0x98010000, 0x98000000, 0x98020000, 0x98000000, 0x98010000, 0x98000000, 0x98050000]
# §4.2 "After" columns: (rwc_a, cr), (rwc_b, cr), (rwc_d, cr)
TRACE = [((0, 0), (8, 0), (8, 0)), ((16, 0), (0, 0), (16, 0)), ((16, 0), (8, 0), (24, 0)),
         ((0, 0), (32, 32), (32, 0)), ((0, 0), (40, 32), (40, 0)), ((16, 0), (32, 32), (48, 0)),
         ((16, 0), (40, 32), (56, 0)), ((32, 32), (16, 16), (0, 0)), ((32, 32), (24, 16), (8, 0)),
         ((48, 32), (16, 16), (16, 0)), ((48, 32), (24, 16), (24, 0)), ((32, 32), (48, 48), (32, 0)),
         ((32, 32), (56, 48), (40, 0)), ((48, 32), (48, 48), (48, 0)), ((48, 32), (56, 48), (56, 0)),
         ((0, 0), (0, 0), (0, 0))]


def test_matmul_replay_buffer_decodes_to_the_listed_addr_modes():
    modes = [decode(isa.from_stream(w)).fields.addr_mode for w in REPLAY_BUFFER]
    assert modes == [0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5]


def test_matmul_rwc_trace_through_mvmul():
    """MVMUL's counter effects (golden/matrix/fpu.py) reproduce every row of the §4.2 table; MVMUL's
    arithmetic may still be refused as NotModelled after the counters have moved."""
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        for bank in src.banks:
            bank.allowed_client, bank.implied_format = MATRIX_UNIT, ff.BF16
    m.run({MATH: [w for sec in MATMUL_SECTIONS for w in sec]})
    for step, (word, (a, b, d)) in enumerate(zip(REPLAY_BUFFER, TRACE), 1):
        try:
            m.step(MATH, decode(isa.from_stream(word)), step)
        except NotModelled as e:
            assert "arithmetic" in str(e), e
        r = m.s.rwc[MATH]
        assert ((r.srca, r.srca_cr), (r.srcb, r.srcb_cr), (r.dst, r.dst_cr)) == (a, b, d), f"row {step}"
        assert r.fidelity == (1 if step == 16 else 0)
    assert m.s.srca.matrix_bank == 0 and m.s.srca.banks[0].allowed_client == MATRIX_UNIT


# ---- scalar-unit-gpr-instructions.txt ----------------------------------------------------------------

@pytest.mark.parametrize("name,opcode", [("BITWOPDMAREG", 0x5B), ("SHIFTDMAREG", 0x5C), ("CMPDMAREG", 0x5D),
                                         ("FLUSHDMA", 0x46)])
def test_scalar_quick_reference_opcodes(name, opcode):
    assert isa.lookup(name).opcode == opcode


@pytest.mark.parametrize("name", ["SHIFTDMAREG", "BITWOPDMAREG", "CMPDMAREG"])
def test_scalar_tt_op_layout(name):
    """TT_OP_<name>(OpBisConst, OpSel, Result, OpB, OpA) places fields at 23, 18, 12, 6, 0."""
    want = isa.lookup(name).opcode << 24 | 1 << 23 | 2 << 18 | 9 << 12 | 33 << 6 | 17
    assert isa.encode(name, {"opbisconst": 1, "opsel": 2, "resultregindex": 9, "opbregindex": 33,
                             "oparegindex": 17}) == want


def test_scalar_functional_models():
    m = Tensix()
    m.s.gpr[0][1], m.s.gpr[0][2] = 0x80000003, 0x24            # register shift amount & 0x1F = 4
    run("SHIFTDMAREG opsel=0 resultregindex=3 opbregindex=2 oparegindex=1;"
        "SHIFTDMAREG opsel=1 resultregindex=4 opbregindex=2 oparegindex=1;"
        "BITWOPDMAREG opbisconst=1 opsel=1 resultregindex=5 opbregindex=0x3C oparegindex=1;"
        "CMPDMAREG opbisconst=1 opsel=0 resultregindex=6 opbregindex=63 oparegindex=2;"
        "CMPDMAREG opsel=1 resultregindex=7 opbregindex=1 oparegindex=2;"
        "SUBDMAREG resultregindex=8 opbregindex=1 oparegindex=2;"
        "FLUSHDMA flushspec=0", m)
    g = m.s.gpr[0]
    assert g[3:9] == [0x30, 0x08000000, 0x8000003F, 0, 1, (0x24 - 0x80000003) & 0xFFFFFFFF]
    with pytest.raises(UndefinedBehaviour):
        run("CMPDMAREG opsel=3")
